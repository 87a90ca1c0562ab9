"""Lesson T4's mutants of our own from the ninth mistake hunt (hunt9, 2026-12-04): each was let through, caught
with a message that named no cause or a crash, until the check named with it was added or mended; a few that
were caught well are kept too.  Only make check runs them (table=False, not in §8); each must be caught by its
test, whose message names its cause (a key of t4_mistakes.CAUSES, HUNT9_CAUSES here).  t4_mistakes.py gathers
them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import A_LOAD, B_LOAD, mutant

# hunt9-store-mask-n-against-m, the same substitution and test as learner9-epilogue-cols-masked-with-m
# (t4_mistakes_learner9.py), is not kept: the two were merged with learner9's check and words.
# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT9_CAUSES = {
    "a-mask-against-n": ("A 的行掩码拿 offs_m 和 N", "A's row mask compares offs_m with N"),
    "b-mask-against-m": ("B 的列掩码拿 offs_n 和 M", "B's column mask compares offs_n with M"),
    "masks-lack": ("load 的掩码里少了", "the loads' masks lack"),
    "pid-n-by-group-m": ("pid_n 却用 pid_in_group // GROUP_M", "with pid_n = pid_in_group // GROUP_M"),
    "gelu-rounded": ("这正是精确的 GELU 先舍入成", "it is the exact GELU rounded to"),
    "large-to-torch": ("matmul 把这个大乘积交给了 torch", "matmul handed this large product to torch"),
    "two-gpus": ("两块 GPU 上的输入要抛出 ValueError", "inputs on two GPUs must raise ValueError"),
}

C_MASK = "    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)\n"
SHAPE = "    M, K = a.shape\n    N = b.shape[1]\n"
MAINLOOP_CASE = "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]"

HUNT9 = (
    # T4.2: masks against the other dimension's size, or missing; the message had listed every mask it might be
    mutant(
        "hunt9-b-mask-n-against-m",
        "T4.2",
        "4.1",
        B_LOAD,
        B_LOAD.replace("(offs_n[None, :] < N)", "(offs_n[None, :] < M)"),
        MAINLOOP_CASE,
        "b-mask-against-m",
        zh="B 的列掩码写成 offs_n < M：N < M 时读到 B 之外，消息只列出了可能少掉的每一个掩码（hunt9）",
        en="B's column mask written offs_n < M: where N < M it reads past B, and the message had listed every mask "
        "that might be missing (hunt9)",
    ),
    mutant(
        "hunt9-a-mask-m-against-n",
        "T4.2",
        "4.1",
        A_LOAD,
        A_LOAD.replace("(offs_m[:, None] < M)", "(offs_m[:, None] < N)"),
        MAINLOOP_CASE,
        "a-mask-against-n",
        zh="A 的行掩码写成 offs_m < N：M > N 时第 N 行以后全是 0，消息只给了相对误差和出错的行（hunt9）",
        en="A's row mask written offs_m < N: where M > N the rows from N on come out 0, and the message gave only "
        "a relative error and the rows (hunt9)",
    ),
    mutant(
        "hunt9-a-load-without-row-mask",
        "T4.2",
        "4.1",
        A_LOAD,
        A_LOAD.replace("(offs_m[:, None] < M) & ", ""),
        MAINLOOP_CASE,
        "masks-lack",
        zh="A 的 load 掩码里没有行的条件：读到 A 第 M 行以后（hunt9）",
        en="A's load without the row condition in its mask: it reads A's rows from M on (hunt9)",
    ),
    mutant(
        "hunt9-b-load-without-column-mask",
        "T4.2",
        "4.1",
        B_LOAD,
        B_LOAD.replace(" & (offs_n[None, :] < N)", ""),
        MAINLOOP_CASE,
        "masks-lack",
        zh="B 的 load 掩码里没有列的条件：读到 B 第 N 列以后（hunt9）",
        en="B's load without the column condition in its mask: it reads B's columns from N on (hunt9)",
    ),
    mutant(
        "hunt9-k-masks-against-k",
        "T4.2",
        "4.1",
        "        k_remaining = K - k * BLOCK_K\n",
        "        k_remaining = K\n",
        MAINLOOP_CASE,
        "k-tail-lanes-on",  # left11's words (t4_mistakes_left11.py): the tail's lanes seen on
        zh="K 的掩码拿 offs_k 和 K 比，而不是和剩下的 K - k * BLOCK_K 比：最后一块读过 K 尾部（hunt9）",
        en="the K masks compare offs_k with K, not with what is left, K - k * BLOCK_K: the last block reads past "
        "the K tail (hunt9)",
    ),
    # T4.1: pid_n divided by GROUP_M where pid_m takes the group's real rows; the message had drawn the map alone
    mutant(
        "hunt9-pid-n-by-group-m",
        "T4.1",
        "2",
        "    pid_n = pid_in_group // group_size_m\n",
        "    pid_n = pid_in_group // GROUP_M\n",
        "test_tile_coords_exact_map[5-3-2]",
        "pid-n-by-group-m",
        zh="pid_n = pid_in_group // GROUP_M，而 pid_m 用了最后一组实有的行数：消息只画出了图（hunt9）",
        en="pid_n = pid_in_group // GROUP_M where pid_m takes the last group's real rows: the message had drawn the "
        "map alone (hunt9)",
    ),
    # T4.5: the GELU's result rounded to fp16 inside bias_and_activation; the message gave a relative error alone
    mutant(
        "hunt9-gelu-rounded-to-fp16",
        "T4.5",
        "5.2",
        "acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))",
        "acc = (0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))).to(tl.float16).to(tl.float32)",
        "test_bias_and_activation[40-16-False-gelu-torch.float16]",
        "gelu-rounded",
        zh="bias_and_activation 把 GELU 的结果先舍入成 fp16：消息只给了相对误差（hunt9）",
        en="bias_and_activation rounds the GELU's result to fp16: the message gave a relative error alone (hunt9)",
    ),
    # T4.4: a shortcut the CPU's small products never reach
    mutant(
        "hunt9-large-products-to-torch",
        "T4.4",
        "6.2",
        SHAPE,
        SHAPE + "    if M * N * K >= 2**27:\n        return torch.nn.functional.linear(a, b.t(), bias)\n",
        "test_large_products_launch_the_kernel_too",
        "large-to-torch+torch-product",
        zh="matmul 把 M * N * K >= 2**27 的乘积交给 torch.nn.functional.linear：CPU 上的乘积都小，整个 T4.4 都放过了"
        "（hunt9）",
        en="matmul hands products with M * N * K >= 2**27 to torch.nn.functional.linear: every product on the CPU is "
        "small, and the whole of T4.4 passed (hunt9)",
    ),
    # T4.4: B's strides swapped at the launch: the interpreter crashed (SIGSEGV) before any check could speak
    mutant(
        "hunt9-launch-b-strides-swapped",
        "T4.4",
        "6.2",
        "a.stride(0), a.stride(1), b.stride(0), b.stride(1),",
        "a.stride(0), a.stride(1), b.stride(1), b.stride(0),",
        "test_matmul[64-64-64-row-major-torch.float16]",
        "launch-strides",
        zh="launch 时把 b.stride(1)、b.stride(0) 传反：内核读到 B 之外很远，解释器崩溃（SIGSEGV），没有一条检查说出原因"
        "（hunt9）",
        en="the launch passes b.stride(1), b.stride(0), swapped: the kernel read far outside B and the interpreter "
        "crashed (SIGSEGV) before any check could say why (hunt9)",
    ),
    # caught, and named, before: kept as they are
    mutant(
        "hunt9-grid-by-area",
        "T4.4",
        "6.2",
        'grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)',
        'grid = lambda meta: (triton.cdiv(M * N, meta["BLOCK_M"] * meta["BLOCK_N"]),)',
        "test_matmul[45-37-83-row-major-torch.float16]",
        "grid-too-small",
        zh="网格按面积取整：cdiv(M * N, BLOCK_M * BLOCK_N)，边上没填满的 tile 没有程序（hunt9）",
        en="the grid rounds the area up as a whole, cdiv(M * N, BLOCK_M * BLOCK_N): part-filled edge tiles get no "
        "program (hunt9)",
    ),
    mutant(
        "hunt9-store-mask-or",
        "T4.3",
        "5.1",
        C_MASK,
        C_MASK.replace(") & (", ") | ("),
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "store-unmasked",
        zh="写回的掩码用 | 连接行和列的条件：边上的 tile 伸出 C 的部分也写了（hunt9）",
        en="the store's mask joins the row and column conditions with |: edge tiles write where they stick out of C "
        "(hunt9)",
    ),
    mutant(
        "hunt9-launch-c-strides-swapped",
        "T4.4",
        "6.2",
        "c.stride(0), c.stride(1),",
        "c.stride(1), c.stride(0),",
        "test_matmul[64-64-64-row-major-torch.float16]",
        "launch-strides",
        zh="launch 时把 c.stride(1)、c.stride(0) 传反：C 被转置着写（hunt9）",
        en="the launch passes c.stride(1), c.stride(0), swapped: C is written transposed (hunt9)",
    ),
    # T4.4: devices compared by type: cuda:0 and cuda:1 taken together; only a machine with two GPUs saw it
    mutant(
        "hunt9-devices-compared-by-type",
        "T4.4",
        "6.3",
        "    devices = {name: str(t.device) for name, t in tensors.items()}\n",
        "    devices = {name: t.device.type for name, t in tensors.items()}\n",
        "test_check_inputs_off_the_interpreter",
        "two-gpus",
        zh="check_inputs 只比较设备类型：cuda:0 上的 a 和 cuda:1 上的 b 一起被放过；CPU 上整个 T4.4 都放过了，"
        "只有两块 GPU 的机器看得到（hunt9）",
        en="check_inputs compares the devices' type alone: a on cuda:0 with b on cuda:1 is taken; on the CPU the whole "
        "of T4.4 passed, only a machine with two GPUs saw it (hunt9)",
    ),
    # T4.5: acc rounded to the bias's dtype and the bias added there; a relative error alone before
    mutant(
        "hunt9-bias-added-in-fp16",
        "T4.5",
        "5.2",
        "acc = acc + bias.to(tl.float32)[None, :]",
        "acc = (acc.to(bias.dtype) + bias[None, :]).to(tl.float32)",
        "test_bias_and_activation[40-16-True-none-torch.float16]",
        "acc-rounded-before-bias",
        zh="bias_and_activation 把 acc 转成 bias 的 dtype，在 fp16 里加 bias：消息只给了相对误差（hunt9）",
        en="bias_and_activation casts acc to the bias's dtype and adds the bias in fp16: the message gave a relative "
        "error alone (hunt9)",
    ),
    # caught, and named, after the strides check before the launch (97ed73f); caught as it was
    mutant(
        "hunt9-launch-bias-stride-from-b",
        "T4.5",
        "5.2",
        "c.stride(0), c.stride(1), 0 if bias is None else bias.stride(0))",
        "c.stride(0), c.stride(1), 0 if bias is None else b.stride(1))",
        "test_bias_and_gelu[48-48-40-True-None-torch.float16]",
        "launch-strides",
        zh="launch 的 stride_bias 取的是 b.stride(1)：连续的 B 是 1，步长为 2 的 bias 就读错了（hunt9）",
        en="the launch's stride_bias taken from b.stride(1): 1 for a contiguous B, wrong for a bias of stride 2 "
        "(hunt9)",
    ),
    mutant(
        "hunt9-c-padded-to-tiles",
        "T4.4",
        "6.2",
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "    c = torch.empty((-(-M // 64) * 64, -(-N // 64) * 64), device=a.device, dtype=a.dtype)[:M, :N]\n",
        "test_matmul[45-37-83-row-major-torch.float16]",
        "c-not-contiguous",
        zh="C 分配成补齐到 64 的倍数的缓冲区再切片：数值对，可 C 不是连续的（hunt9）",
        en="C allocated padded to multiples of 64 and sliced: the values are right, but C is not contiguous (hunt9)",
    ),
)
