"""Lesson T4's mutants of our own from the eleventh mistake hunt (hunt11, 2026-12-04): shortcuts, results kept
across calls, copies in another dtype, legal views refused and other wrapper mistakes planted in matmul and
check_inputs.  Some were let through, or caught with a message that named a wrong cause, until the check named
with them was added or mended; the others were caught well and are kept so.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t4_mistakes.CAUSES, HUNT11_CAUSES here) or, for cause "", says what it saw.  t4_mistakes.py gathers them last.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT11_CAUSES = {
    "result-kept": ("它返回的 C 不是这次 launch 算出来的", "computed by no launch of its own, but kept from"),
    "operands-converted": ("内核乘的是转换成另一种 dtype 的副本", "copies converted to another dtype"),
    "legal-view-refused": ("这是合法的输入（torch.matmul 也接受）", "a legal input (torch.matmul takes it)"),
}

EMPTY = "    if M == 0 or N == 0:\n"
ALLOC = "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n"
LAUNCHED = "        return c  # no tiles, so no programs to launch\n"
FLAGS = '    flags = dict(HAS_BIAS=bias is not None, ACTIVATION=activation or "none")\n'
ACTIVATION_CHECK = "    if activation not in ACTIVATIONS:\n"
GRAD = "    if needs_grad and torch.is_grad_enabled():  # C would come back without a grad_fn: gradients silently"

HUNT11 = (
    mutant(
        "hunt11-k-zero-early-return",
        "T4.4",
        "6.2",
        EMPTY,
        "    if M == 0 or N == 0 or K == 0:\n",
        "test_empty_dimensions[6-5-0]",
        zh="K = 0 时也不 launch，直接返回 torch.empty 的 C：C 的内容没有定义，本该全是 0（hunt11）",
        en="no launch for K = 0 either, C returned straight from torch.empty: undefined, where it must be all zeros "
        "(hunt11)",
    ),
    mutant(
        "hunt11-one-row-by-broadcast",
        "T4.4",
        "6.2",
        EMPTY,
        "    if M == 1 and bias is None and activation is None:\n"
        "        return (a[0, :, None].float() * b.float()).sum(0, keepdim=True).to(a.dtype)\n" + EMPTY,
        "test_matmul[1-50-70-row-major-torch.float16]",
        zh="只有一行的 A 在 torch 里用广播乘再求和（不是 torch 的矩阵乘），不 launch 内核（hunt11）",
        en="a one-row A multiplied in torch by a broadcast product and a sum (no torch matmul), with no launch "
        "(hunt11)",
    ),
    mutant(
        "hunt11-result-kept-by-address",
        "T4.4",
        "6.2",
        LAUNCHED,
        LAUNCHED + "    memo = globals().setdefault('_MEMO', {})\n"
        "    key = (a.data_ptr(), b.data_ptr(), tuple(a.shape), tuple(b.shape), a.dtype, bias is None, activation)\n"
        "    if key in memo:\n"
        "        return memo[key].clone()\n"
        "    memo[key] = c\n",
        "test_each_call_launches_with_its_own_bias_and_activation",
        "result-kept",
        zh="matmul 按 a、b 的地址、形状和标志记下每次的 C，同样的张量再来就交回一份拷贝，不再 launch：张量的值就地"
        "变了也照旧；消息原先只说 5 次调用 launch 了 4 次（hunt11）",
        en="matmul keeps each C by a's and b's addresses, shapes and the flags, and hands back a copy for the same "
        "tensors without a launch, even when their values changed in place; the message had said only that 5 calls "
        "launched 4 times (hunt11)",
    ),
    mutant(
        "hunt11-grad-dropped-in-place",
        "T4.4",
        "6.3",
        GRAD,
        GRAD + " lost\n        for t in tensors.values():\n            t.requires_grad_(False)\n    if False:  #",
        "test_input_validation[a requires grad]",
        "requires-grad-cleared",  # named since hunt15 (test_input_validation's caller_changed)
        zh="要梯度的输入不拒绝，而是就地把调用者张量的 requires_grad 关掉（hunt11）",
        en="inputs that require grad are not refused: the caller's tensors get requires_grad switched off in place "
        "(hunt11)",
    ),
    mutant(
        "hunt11-fp32-through-fp16",
        "T4.4",
        "6.2",
        FLAGS,
        FLAGS + "    if a.dtype == torch.float32:\n        args = (a.half(), b.half()) + args[2:]\n",
        "test_matmul[64-64-64-row-major-torch.float32]",
        "operands-converted",
        zh="float32 的 a、b 先转成 float16 的副本再 launch：float16 对，float32 丢了精度；消息原先说 stride "
        "不是张量自己的、不要假定张量连续（hunt11）",
        en="float32 a and b launched as float16 copies: right in float16, float32's precision lost; the message had "
        "said the strides were not the tensors' own, never assume a tensor is contiguous (hunt11)",
    ),
    mutant(
        "hunt11-c-written-into-a",
        "T4.4",
        "6.2",
        ALLOC,
        "    c = a if tuple(a.shape) == (M, N) and a.is_contiguous() and K > 0 else "
        "torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "test_every_call_returns_a_new_c",
        zh="a 的形状正好是 (M, N) 时把 C 写进 a：方阵时改了调用者的 a，也读到自己写过的 A（hunt11）",
        en="C written into a where a's shape is (M, N): square products change the caller's a, and read the A "
        "they have overwritten (hunt11)",
    ),
    mutant(
        "hunt11-strided-bias-refused",
        "T4.4",
        "6.3",
        ACTIVATION_CHECK,
        "    if bias is not None and bias.stride(0) != 1:\n"
        '        raise ValueError(f"matmul: bias must be contiguous, got stride {bias.stride(0)}")\n'
        + ACTIVATION_CHECK,
        "test_views_of_any_strides_are_taken",
        "legal-view-refused",
        zh="check_inputs 拒绝 stride 不是 1 的 bias：合法的视图被拒；整个 T4 都放过了它（hunt11）",
        en="check_inputs refuses a bias whose stride is not 1: a legal view refused; the whole of T4 let it through "
        "(hunt11)",
    ),
    mutant(
        "hunt11-broadcast-operand-refused",
        "T4.4",
        "6.3",
        ACTIVATION_CHECK,
        "    if 0 in a.stride() or 0 in b.stride():\n"
        '        raise ValueError("matmul: a and b must hold their own elements (no stride 0)")\n' + ACTIVATION_CHECK,
        "test_views_of_any_strides_are_taken",
        "legal-view-refused",
        zh="check_inputs 拒绝 stride 为 0 的 a 或 b（广播出来的视图）：合法输入被拒；整个 T4 都放过了它（hunt11）",
        en="check_inputs refuses an a or b with a stride of 0 (a broadcast view): a legal input refused; the whole of "
        "T4 let it through (hunt11)",
    ),
    mutant(
        "hunt11-group-size-without-min",
        "T4.1",
        "2",
        "    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)  # the last group may be short\n",
        "    group_size_m = GROUP_M if num_pid_m >= GROUP_M else num_pid_m\n",
        "test_tile_coords_exact_map[5-3-2]",
        "short-last-group",
        zh="组的行数取 GROUP_M（网格比一组还矮时取 num_pid_m）：只在行数是 GROUP_M 的倍数时对（hunt11）",
        en="a group's rows taken as GROUP_M (num_pid_m for a grid shorter than one group): right only where the rows "
        "are a multiple of GROUP_M (hunt11)",
    ),
)
