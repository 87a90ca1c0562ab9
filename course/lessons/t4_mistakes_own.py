"""Lesson T4's mutants of our own: mistakes that only `make check` runs (table=False, not in §8).

At least three per step, among them each hole and each message that named a cause not the
learner's (issue 17).  Each must be caught by its test, whose message names its cause (a key of
t4_mistakes.CAUSES) or, for cause "", none.
"""

from course.lesson_data import Mistake


def mutant(key, step, section, old, new, test, cause="", zh="", en=""):
    """A mistake of our own, run by make check only; zh and en say what it does."""
    return Mistake(key, step, zh, en, section, old, new, test, cause, table=False)


BIAS_OFFSETS = "        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n        bias ="
RANK_CHECK = "    if a.ndim != 2 or b.ndim != 2:\n"
EXACT_GELU = "acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))"
# A's and B's loads in the reference's mainloop.  Mistakes are made with its speed-only lines cut
# (tools/core/mistakes.without_speed_only), so a mistaken load runs in both of B's layouts, as in a learner's.
A_LOAD = "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining), other=0.0)\n"
B_LOAD = "        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_remaining) & (offs_n[None, :] < N), other=0.0)\n"


OWN = (
    # T4.3: Python the interpreter runs and no GPU compiler takes; the numbers stay right.
    mutant(
        "own-break-in-k-loop",
        "T4.3",
        "4",
        "        k_remaining = K - k * BLOCK_K\n",
        "        k_remaining = K - k * BLOCK_K\n        if k_remaining <= 0:  # never true here\n            break\n",
        "test_the_kernel_compiles_for_a_hopper_gpu",
        "gpu-refuses",
        zh="K 循环里有 break（解释器能跑，GPU 编译不收）",
        en="a break in the K loop (the interpreter runs it, a GPU compile refuses it)",
    ),
    # T4.1: orders that are no grouped order; none is the short last group, so none may say so.
    mutant(
        "own-row-major-order",
        "T4.1",
        "2",
        "pid_m = first_pid_m + pid_in_group % group_size_m\n    pid_n = pid_in_group // group_size_m",
        "pid_m = pid // num_pid_n\n    pid_n = pid % num_pid_n",
        "test_tile_coords_exact_map[4-4-2]",
        "row-major-order",  # named since learner9 (t4_mistakes_learner9.py)
        zh="按行优先顺序，忽略 GROUP_M",
        en="row-major order, GROUP_M ignored",
    ),
    mutant(
        "own-group-of-num-pid-m",
        "T4.1",
        "2",
        "num_pid_in_group = GROUP_M * num_pid_n",
        "num_pid_in_group = GROUP_M * num_pid_m",
        "test_tile_coords_exact_map[5-3-2]",
        "group-sized-by-num-pid-m",  # named since enlearner12 (t4_mistakes_enlearner12.py)
        zh="组的大小用了 num_pid_m",
        en="a group sized with num_pid_m",
    ),
    mutant(
        "own-last-group-unclamped",
        "T4.1",
        "2.2",
        "group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)",
        "group_size_m = num_pid_m - first_pid_m",
        "test_tile_coords_exact_map[5-3-2]",
        zh="组的行数没有取 min",
        en="the group's rows not clamped to GROUP_M",
    ),
    # T4.2: wrong results that are no precision loss, and the causes the messages detect.
    mutant(
        "own-b-strides-swapped",
        "T4.2",
        "3.1",
        "offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn",
        "offs_k[:, None] * stride_bn + offs_n[None, :] * stride_bk",
        "test_mainloop_accumulates_in_fp32",
        zh="B 的两个 stride 对调",
        en="B's strides swapped",
    ),
    mutant(
        "own-k-offsets-from-pid-m",
        "T4.2",
        "3",
        "    offs_k = tl.arange(0, BLOCK_K)\n",
        "    offs_k = pid_m * BLOCK_K + tl.arange(0, BLOCK_K)\n",
        "test_mainloop_accumulates_in_fp32",
        zh="K 的偏移从 pid_m * BLOCK_K 开始",
        en="K offsets from pid_m * BLOCK_K",
    ),
    mutant(
        "own-k-tail-dropped",
        "T4.2",
        "4.1",
        "k_steps = tl.cdiv(K, BLOCK_K)\n",
        "k_steps = K // BLOCK_K\n",
        "test_mainloop[45-37-83-16-32-16-column-major-torch.float16]",
        "k-tail-dropped",
        zh="循环没有跑到 K 的尾部",
        en="the loop stops before the K tail",
    ),
    mutant(
        "own-acc-rounded-each-step",
        "T4.2",
        "4.2",
        "acc = tl.dot(a, b, acc)",
        "acc = tl.dot(a, b, acc).to(tl.float16).to(tl.float32)",
        "test_mainloop_accumulates_in_fp32",
        "fp16-accumulator",
        zh="累加器每步都舍入成 fp16",
        en="the running sum rounded to fp16 each step",
    ),
    mutant(
        "own-b-advance-wrong-stride",
        "T4.2",
        "4.3",
        "        b_ptrs += BLOCK_K * stride_bk\n",
        "        b_ptrs += BLOCK_K * stride_bn\n",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "wrong-advance",
        zh="b_ptrs 按 stride_bn 前进",
        en="b_ptrs advanced by stride_bn",
    ),
    mutant(
        "own-b-unit-stride",
        "T4.2",
        "3.1",
        "offs_n[None, :] * stride_bn",
        "offs_n[None, :]",
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float32]",
        "layout-dependent",
        zh="B 的列方向假定步长为 1",
        en="unit stride assumed along B's columns",
    ),
    # T4.3
    mutant(
        "own-store-mask-rows-only",
        "T4.3",
        "5.1",
        "c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
        "c_mask = offs_m[:, None] < M",
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "store-unmasked+mask-lacks-columns",  # the second named since zhlearner10
        zh="写回的掩码只管行",
        en="a store mask on the rows only",
    ),
    mutant(
        "own-store-columns-by-block-m",
        "T4.3",
        "5.1",
        "    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    c_ptrs",
        "    offs_n = pid_n * BLOCK_M + tl.arange(0, BLOCK_N)\n    c_ptrs",
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "store-columns-by-block-m",
        zh="C 的列偏移用了 BLOCK_M",
        en="C's columns offset by BLOCK_M",
    ),
    mutant(
        "own-store-cast-to-fp16",
        "T4.3",
        "5.1",
        "acc.to(c_ptr.dtype.element_ty)",
        "acc.to(tl.float16)",
        "test_epilogue[37-45-16-32-row-major-torch.float32]",
        "wrong-cast",
        zh="写回前总是转换成 fp16",
        en="the tile always cast to fp16",
    ),
    # T4.4: the holes of issue 17
    mutant(
        "own-no-rank-check-on-b",
        "T4.4",
        "6.3",
        RANK_CHECK,
        "    if a.ndim != 2:\n",
        "test_input_validation[3-D b]",
        zh="不检查 b 的维数",
        en="b's rank not checked",
    ),
    mutant(
        "own-no-rank-check-on-a",
        "T4.4",
        "6.3",
        RANK_CHECK,
        "    if b.ndim != 2:\n",
        "test_input_validation[1-D a]",
        zh="不检查 a 的维数",
        en="a's rank not checked",
    ),
    mutant(
        "own-contiguous-copies",
        "T4.4",
        "3.1",
        "    M, K = a.shape\n",
        "    a, b = a.contiguous(), b.contiguous()\n    M, K = a.shape\n",
        "test_matmul_of_plain_tensors_and_linear_weights",
        "copied-operand",
        zh="启动前用 .contiguous() 拷贝输入",
        en="the inputs copied with .contiguous() before the launch",
    ),
    mutant(
        "own-group-m-1-everywhere",
        "T4.4",
        "6.1",
        "GROUP_M=group_m)",
        "GROUP_M=1)",
        "test_autotune_configs_use_the_grouped_order",
        zh="每个配置都是 GROUP_M = 1",
        en="GROUP_M = 1 in every config",
    ),
    # T4.5: wrong GELUs and bias offsets that are no tanh GELU (the sigmoid GELU, named since session 17)
    mutant(
        "own-sigmoid-gelu",
        "T4.5",
        "5.2",
        EXACT_GELU,
        "acc = acc * tl.sigmoid(1.702 * acc)",
        "test_bias_and_gelu[48-48-40-True-gelu-torch.float32]",
        "sigmoid-gelu",
        zh="sigmoid 近似的 GELU",
        en="the sigmoid GELU",
    ),
    mutant(
        "own-bias-without-pid-n",
        "T4.5",
        "5.2",
        BIAS_OFFSETS,
        "        offs_n = tl.arange(0, BLOCK_N)\n        bias =",
        "test_bias_and_gelu[48-48-40-True-gelu-torch.float32]",
        "bias-wrong-tile",
        zh="bias 的偏移里没有 pid_n",
        en="bias offsets without pid_n",
    ),
    mutant(
        "own-bias-by-program-id",
        "T4.5",
        "5.2",
        BIAS_OFFSETS,
        "        offs_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)\n        bias =",
        "test_bias_and_gelu[48-48-40-True-None-torch.float16]",
        "bias-wrong-tile",
        zh="bias 的偏移用了 tl.program_id(0)",
        en="bias offsets from tl.program_id(0)",
    ),
    # T4.5: a NaN that no read of the bias made (the message had blamed the bias's padding, bias or none)
    mutant(
        "own-tanh-from-exp",
        "T4.5",
        "5.2",
        EXACT_GELU,
        "e = tl.exp(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))\n"
        "        acc = 0.5 * acc * (1.0 + (e - 1.0) / (e + 1.0))",
        "test_bias_and_gelu[48-48-40-True-gelu-torch.float32]",
        "nan-not-from-bias",
        zh="用 tl.exp 拼出的 tanh GELU：acc 大时 exp 溢出成 inf，inf / inf 是 NaN",
        en="a tanh GELU built from tl.exp: for a large acc the exp overflows to inf, and inf / inf is NaN",
    ),
    mutant(
        "own-tanh-from-exp-no-bias",
        "T4.5",
        "5.2",
        EXACT_GELU,
        "e = tl.exp(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))\n"
        "        acc = 0.5 * acc * (1.0 + (e - 1.0) / (e + 1.0))",
        "test_bias_and_gelu[48-48-40-False-gelu-torch.float32]",
        "nan-not-from-bias",
        zh="用 tl.exp 拼出的 tanh GELU，没有 bias",
        en="a tanh GELU built from tl.exp, with no bias",
    ),
    mutant(
        "own-bias-unit-stride-fused",
        "T4.5",
        "5.2",
        "bias_ptr + offs_n * stride_bias",
        "bias_ptr + offs_n",
        "test_bias_and_gelu[37-70-33-True-None-torch.float16]",
        zh="bias 的 stride 被忽略，在融合的 matmul 里看（NaN 确实来自 bias 的填充）",
        en="the bias stride ignored, seen in the fused matmul (the NaN does come from the bias's padding)",
    ),
    # T4.2 seen through T4.4's products: a NaN in C is traced to A's and B's padding only by a re-run
    # with that padding made 0 (the message had said so for any NaN, with or without padding to read)
    mutant(
        "own-a-k-tail-unmasked-in-matmul",
        "T4.2",
        "4.1",
        "a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining), other=0.0)",
        "a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)",
        "test_matmul[45-37-83-row-major-torch.float16]",
        "nan-from-padding",
        zh="A 的加载不挡 K 尾部，在 matmul 的乘积里看（NaN 确实来自 A 外面的填充）",
        en="A's load leaves the K tail unmasked, seen in matmul's product (the NaN does come from A's padding)",
    ),
    mutant(
        "own-nan-computed-in-epilogue",
        "T4.3",
        "5.1",
        "    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)",
        "    tl.store(c_ptrs, (acc + (acc - acc) / (acc - acc)).to(c_ptr.dtype.element_ty), mask=c_mask)",
        "test_matmul[45-37-83-row-major-torch.float16]",
        "nan-not-from-padding",
        zh="epilogue 加上 (acc - acc) / (acc - acc)：NaN 是算出来的，不是读来的",
        en="the epilogue adds (acc - acc) / (acc - acc): the NaN is computed, not read",
    ),
    # T4.4: a C kept between calls (the message said 'one buffer' without looking at the storage)
    mutant(
        "own-c-kept-between-calls",
        "T4.4",
        "6.2",
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)",
        "    c = matmul.__dict__.setdefault((M, N, a.dtype), torch.empty((M, N), device=a.device, dtype=a.dtype))",
        "test_every_call_returns_a_new_c",
        "one-buffer",
        zh="C 按形状留在函数里，下次调用接着用",
        en="C kept on the function per shape and used again by the next call",
    ),
    # T4.4: sizes in the wrong order write past C: stopped before the kernel runs (it crashed the run)
    mutant(
        "own-launch-m-k-n",
        "T4.4",
        "6.2",
        "    args = (a, b, c, bias, M, N, K, a.stride(0)",
        "    args = (a, b, c, bias, M, K, N, a.stride(0)",
        "test_matmul[45-37-83-row-major-torch.float16]",
        "launch-sizes",
        zh="launch 的尺寸按 M、K、N 传，内核要的是 M、N、K",
        en="the launch's sizes passed as M, K, N where the kernel takes M, N, K",
    ),
    # T4.3: C += acc; the cells where acc rounded away next to the fill read as 'never written'
    mutant(
        "own-epilogue-adds-into-c",
        "T4.3",
        "5.1",
        "    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)",
        "    tl.store(c_ptrs, (acc + tl.load(c_ptrs, mask=c_mask, other=0.0)).to(c_ptr.dtype.element_ty), mask=c_mask)",
        "test_matmul[45-37-83-row-major-torch.float16]",
        "added-into-c",
        zh="epilogue 把 acc 加到 C 原来的内容上再存",
        en="the epilogue adds acc to what C held and stores that",
    ),
)
