"""Lesson T4's mutants of our own from the fourth hunt for unplanted mistakes (hunt4a, 2026-12-03): each
was let through until the check named with it was added.  Only make check runs them (table=False, not
in §8); each must be caught by its test, whose message names its cause (a key of t4_mistakes.CAUSES,
HUNT4_CAUSES here).  t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT4_CAUSES = {
    "activation-flag-unknown": ("bias_and_activation 只认 'gelu'", "knows 'gelu' alone"),
    "c-on-default-device": ("torch 的默认设备设成 meta 时", "with torch's default device set to meta"),
    "caller-changed-in-place": ("不要对输入用 set_、t_、resize_", "no set_, t_, resize_ or assignment to .data"),
    "c-shape-not-mn": ("C 要建成 (M, N)", "make C (M, N), with M = a.shape[0]"),
    "bias-tile-start-unscaled": ("tile 的起点没乘 stride_bias", "the tile's start not multiplied by stride_bias"),
    "config-not-launched": ("给了 config 就用它启动", "a config given is the one to launch with"),
    "requires-grad-cleared": ("不再 requires_grad 了", "no longer require grad"),
    "bf16-refused-off-interpreter": (
        "bf16 只在 TRITON_INTERPRET 下拒绝",
        "bf16 is refused only under TRITON_INTERPRET",
    ),
    "cpu-taken-beside-a-gpu": ("不管有没有 GPU", "whether or not a GPU is there"),
    "tuned-grid-fixed": ("网格不随配置变", "the grid stays the same whatever the config"),
    "epilogue-offsets-wrapped": ("伸出去的部分绕回来写在了开头", "so what sticks out was stored over the start"),
}

HUNT4 = (
    # "GELU" passes a check that folds case, and reaches the kernel as ACTIVATION="GELU": bias_and_activation
    # compares with "gelu", so C comes back without its GELU and without an error
    mutant(
        "hunt4-activation-case-folded",
        "T4.4",
        "6.3",
        "    if activation not in ACTIVATIONS:\n",
        '    if activation is not None and activation.lower() != "gelu":\n',
        "test_an_activation_the_kernel_does_not_know_never_reaches_it[GELU]",
        "activation-flag-unknown",
        zh="check_inputs 先 .lower() 再比较 activation：'GELU' 被接受，内核收到 ACTIVATION='GELU'，"
        "不做 GELU 也不报错（hunt4）",
        en="check_inputs compares activation.lower() with 'gelu': 'GELU' is taken, the kernel gets "
        "ACTIVATION='GELU' and applies no GELU, without an error; the suite asked only for 'relu' (hunt4)",
    ),
    # under the interpreter every tensor is a CPU tensor, torch's default device too: C made without
    # device= was always where a was
    mutant(
        "hunt4-c-on-default-device",
        "T4.4",
        "6.2",
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "    c = torch.empty((M, N), dtype=a.dtype)\n",
        "test_c_is_made_on_the_inputs_device",
        "c-on-default-device",
        zh="C 用 torch.empty((M, N), dtype=a.dtype) 建，没给 device：C 落在 torch 的默认设备上，"
        "不一定是输入所在的设备（hunt4）",
        en="C made as torch.empty((M, N), dtype=a.dtype), without device=: it lands on torch's default "
        "device, not necessarily the inputs'; under the interpreter both were always the CPU (hunt4)",
    ),
    # every value stays and the launch gets the caller's tensor object, so neither the copy check nor the
    # launch watch saw it; the caller's view now has other strides and storage
    mutant(
        "hunt4-set-contiguous-into-caller",
        "T4.4",
        "6.2",
        "    M, K = a.shape\n    N = b.shape[1]\n",
        "    for t in (a, b):\n        if not t.is_contiguous():\n            t.set_(t.contiguous())\n"
        "    M, K = a.shape\n    N = b.shape[1]\n",
        "test_matmul[64-64-64-column-major-torch.float16]",
        "caller-changed-in-place",
        zh="matmul 用 t.set_(t.contiguous()) 把不连续的输入就地换成连续的：值不变，"
        "调用者的视图却换了步长和存储（hunt4）",
        en="matmul makes a non-contiguous input contiguous in place, t.set_(t.contiguous()): every value stays, "
        "and the caller's view gets other strides and storage (hunt4)",
    ),
    # C of a's shape (M, K): where K > N the kernel wrote inside it and the grid check blamed the grid (it
    # counted C's tiles), where K < N the interpreter crashed writing past it
    mutant(
        "hunt4-c-empty-like-a",
        "T4.4",
        "6.2",
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "    c = torch.empty_like(a)\n",
        "test_matmul[45-37-83-row-major-torch.float16]",
        "c-shape-not-mn",
        zh="C 用 torch.empty_like(a) 建：形状是 (M, K)，不是 (M, N)；消息曾说网格太小，或解释器直接崩溃（hunt4）",
        en="C made as torch.empty_like(a): shape (M, K), not (M, N); the message had said the grid was too small "
        "(it counted C's tiles), or the interpreter crashed writing past C (hunt4)",
    ),
    # the first tile right, every later one off: the message had said which cells were wrong, not why
    mutant(
        "hunt4-bias-tile-start-unscaled",
        "T4.5",
        "5.2",
        "        bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)",
        "        bias = tl.load(bias_ptr + pid_n * BLOCK_N + tl.arange(0, BLOCK_N) * stride_bias, mask=offs_n < N, "
        "other=0.0)",
        "test_bias_and_activation[40-16-True-none-torch.float16]",
        "bias-tile-start-unscaled",
        zh="bias 的地址写成 bias_ptr + pid_n * BLOCK_N + arange * stride_bias：tile 的起点没乘步长（hunt4）",
        en="the bias addressed as bias_ptr + pid_n * BLOCK_N + arange * stride_bias: the tile's start is not "
        "multiplied by the stride; the message had given the wrong cells alone (hunt4)",
    ),
    # the message had said config.kwargs dropped num_warps and num_stages: the whole config was dropped
    mutant(
        "hunt4-config-ignored-on-interpreter",
        "T4.4",
        "6.2",
        "    if config is None and INTERPRETING:\n",
        "    if INTERPRETING:\n",
        "test_wrapper_launches_the_kernel",
        "config-not-launched",
        zh="解释器下不管给没给 config 都用 INTERPRET_CONFIG 启动；消息曾说是 **config.kwargs 丢了 num_warps（hunt4）",
        en="under the interpreter matmul launches with INTERPRET_CONFIG whatever config it is given; the message had "
        "said **config.kwargs dropped num_warps and num_stages (hunt4)",
    ),
    # group_size_m written, but from group_id: it is GROUP_M again in the short last group; the message had
    # said "use group_size_m, not GROUP_M" to a body that used group_size_m
    mutant(
        "hunt4-group-size-by-group-id",
        "T4.1",
        "2.2",
        "group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)",
        "group_size_m = tl.minimum(num_pid_m - group_id, GROUP_M)",
        "test_tile_coords_exact_map[5-3-2]",
        "short-last-group",
        zh="group_size_m 用 num_pid_m - group_id 算：最后一组照样是 GROUP_M 行（hunt4）",
        en="group_size_m computed from num_pid_m - group_id: the short last group still gets GROUP_M rows (hunt4)",
    ),
    # under no_grad the inputs pass, and the caller's Parameters come back without requires_grad
    mutant(
        "hunt4-no-grad-clears-requires-grad",
        "T4.4",
        "6.3",
        "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n",
        "    if not torch.is_grad_enabled():\n        for t in tensors.values():\n            t.requires_grad_(False)\n"
        "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n",
        "test_inputs_that_require_grad_are_taken_without_grad_mode",
        "requires-grad-cleared",
        zh="check_inputs 在 no_grad 下把输入的 requires_grad 就地关掉：调用者的权重从此不再训练（hunt4）",
        en="check_inputs turns the inputs' requires_grad off in place under no_grad: the caller's weights stop "
        "training from then on (hunt4)",
    ),
    # the bias's values and its tensor object stay, so neither the copy check nor the launch watch saw it
    mutant(
        "hunt4-bias-data-made-contiguous",
        "T4.5",
        "6.2",
        "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n",
        "    if bias is not None and not bias.is_contiguous():\n        bias.data = bias.data.contiguous()\n"
        "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n",
        "test_bias_and_gelu[48-48-40-True-None-torch.float16]",
        "caller-changed-in-place",
        zh="check_inputs 把不连续的 bias 就地换成连续的（bias.data = ...）：调用者的 bias 换了步长和存储（hunt4）",
        en="check_inputs makes a strided bias contiguous in place (bias.data = bias.data.contiguous()): the caller's "
        "bias gets other strides and storage (hunt4)",
    ),
    # both held on the CPU, where INTERPRETING is True and no GPU is there; only the GPU's run of the suite
    # had seen them
    mutant(
        "hunt4-bf16-refused-everywhere",
        "T4.4",
        "6.3",
        "    if a.dtype == torch.bfloat16 and INTERPRETING:\n",
        "    if a.dtype == torch.bfloat16:\n",
        "test_check_inputs_off_the_interpreter",
        "bf16-refused-off-interpreter",
        zh="check_inputs 不管在不在解释器下都拒绝 bf16：GPU 上 bf16 也用不了（hunt4）",
        en="check_inputs refuses bf16 whether or not it runs under the interpreter: bf16 is lost on a GPU too (hunt4)",
    ),
    mutant(
        "hunt4-cpu-check-by-cuda-available",
        "T4.4",
        "6.3",
        '    if a.device.type == "cpu" and not INTERPRETING:\n',
        '    if a.device.type == "cpu" and not INTERPRETING and not torch.cuda.is_available():\n',
        "test_check_inputs_off_the_interpreter",
        "cpu-taken-beside-a-gpu",
        zh="check_inputs 只在没有 GPU 时拒绝 CPU 张量：GPU 机器上不开解释器的 CPU 张量被放过（hunt4）",
        en="check_inputs refuses CPU tensors only where no GPU is there: on a GPU machine, CPU tensors without the "
        "interpreter get through to the launch (hunt4)",
    ),
    # the autotuned launch never runs on the CPU, and its grid was never read: 32 x 32 tiles' worth of programs
    # for every config, most of them running a K loop of masked loads on a GPU
    mutant(
        "hunt4-autotuned-fixed-grid",
        "T4.4",
        "6.2",
        "        matmul_kernel_autotuned[grid](*args, **flags)\n",
        "        matmul_kernel_autotuned[(triton.cdiv(M, 32) * triton.cdiv(N, 32),)](*args, **flags)\n",
        "test_default_launch_path_off_the_interpreter",
        "tuned-grid-fixed",
        zh="autotune 版用固定的网格（按 32x32 的 tile 数）启动：每个配置都是这么多程序（hunt4）",
        en="the autotuned kernel launched on a fixed grid, 32 x 32 tiles' worth: every config gets that many "
        "programs (hunt4)",
    ),
    # every bad input of the suite had elements
    mutant(
        "hunt4-empty-inputs-skip-checks",
        "T4.4",
        "6.3",
        "    if a.ndim != 2 or b.ndim != 2:\n",
        "    if a.numel() == 0 or b.numel() == 0:\n        return  # nothing to compute, nothing to check\n"
        "    if a.ndim != 2 or b.ndim != 2:\n",
        "test_input_validation[inner dims differ, a with 0 rows]",
        zh="check_inputs 遇到没有元素的输入就直接返回：(0, 5) @ (6, 3) 得到一个空的 C，而不是报错（hunt4）",
        en="check_inputs returns at once for an input with no elements: (0, 5) @ (6, 3) gives an empty C instead "
        "of an error (hunt4)",
    ),
    # the mainloop may wrap its offsets (§4); the epilogue may not: the message had given the wrong cells alone
    mutant(
        "hunt4-epilogue-columns-wrapped",
        "T4.3",
        "5.1",
        "    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    c_ptrs = c_ptr",
        "    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N\n    c_ptrs = c_ptr",
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "epilogue-offsets-wrapped",
        zh="epilogue 的列偏移取了 % N（照搬 mainloop 的写法）：伸出 C 的列绕回来写在了前几列上（hunt4）",
        en="the epilogue's column offsets taken % N, as the mainloop may: the columns past C are stored over its "
        "first ones (hunt4)",
    ),
    mutant(
        "hunt4-epilogue-rows-wrapped",
        "T4.3",
        "5.1",
        "    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
        "    c_ptrs = c_ptr",
        "    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M\n"
        "    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    c_ptrs = c_ptr",
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "epilogue-offsets-wrapped",
        zh="epilogue 的行偏移取了 % M：伸出 C 的行绕回来写在了前几行上（hunt4）",
        en="the epilogue's row offsets taken % M: the rows past C are stored over its first ones (hunt4)",
    ),
)
