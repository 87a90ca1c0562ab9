"""Lesson T4's mutants of our own from the fifth hunt for unplanted mistakes (hunt5a, 2026-12-03): each
was let through, or caught with a message that named no cause, until the check named with it was added or
mended.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of t4_mistakes.CAUSES, HUNT5_CAUSES here).  t4_mistakes.py gathers them last, and
their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT5_CAUSES = {
    "flags-of-an-earlier-call": ("这是前面某次调用的标志", "the flags of an earlier call"),
    "tensors-held": ("还被留着（列表、缓存或默认参数里）", "still held (in a list, a cache or"),
    "empty-refused": ("可这是合法的乘积", "yet it is a legal product"),
    "gelu-twice": ("结果正好是 GELU 做了两次", "it is exactly the GELU applied twice"),
    "acc-rounded-before-bias": (
        "再加 bias：在 float32 里加 bias",
        "before the bias was added: add the bias in float32",
    ),
    "bias-rounded-to-fp16": ("float32 的 bias 先舍入成 float16", "the float32 bias rounded to float16"),
    "operands-rounded": ("A、B 先舍入成 fp16 再相乘", "it matches A and B rounded to fp16 before they are multiplied"),
}

FLAGS = '    flags = dict(HAS_BIAS=bias is not None, ACTIVATION=activation or "none")\n'
EXACT_GELU = "        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))  # exact GELU: x * Phi(x)\n"
ADD_BIAS = "acc = acc + bias.to(tl.float32)[None, :]"

HUNT5 = (
    # every T4.4 call of the suite came without a bias and an activation, and T4.5's with the same flags
    # call after call, so a flags dict kept from the first call was always right
    mutant(
        "hunt5-flags-kept-from-first-call",
        "T4.4",
        "6.2",
        FLAGS,
        FLAGS.replace("flags = dict(", "flags = matmul.__dict__.setdefault('flags', dict(").replace(
            '"none")', '"none"))'
        ),
        "test_each_call_launches_with_its_own_bias_and_activation",
        "flags-of-an-earlier-call",
        zh="matmul 把第一次调用的 HAS_BIAS 和 ACTIVATION 存在自己身上，以后每次都用："
        "后面带 bias 的调用不加 bias（hunt5）",
        en="matmul keeps the first call's HAS_BIAS and ACTIVATION on itself and launches every later call with them: "
        "a later call's bias is never added; only T4.5's fused products saw it, naming §5.2 (hunt5)",
    ),
    mutant(
        "hunt5-check-inputs-holds-tensors",
        "T4.4",
        "6.3",
        "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n",
        "    check_inputs.__dict__.setdefault('seen', []).append(tensors)\n"
        "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n",
        "test_matmul_keeps_no_reference_to_its_tensors",
        "tensors-held",
        zh="check_inputs 把每次收到的张量都存进自己身上的列表：调用者的每个输入都一直占着内存（hunt5）",
        en="check_inputs appends the tensors of every call to a list on itself: every input a caller passed stays "
        "in memory; nothing in the suite looked (hunt5)",
    ),
    mutant(
        "hunt5-k-zero-refused",
        "T4.4",
        "6.3",
        "    if a.shape[1] != b.shape[0]:\n",
        "    if a.shape[1] == 0:\n        raise ValueError('matmul: K is 0')\n    if a.shape[1] != b.shape[0]:\n",
        "test_empty_dimensions[0-0-0]",
        "empty-refused",
        zh="check_inputs 拒绝 K = 0 的输入：合法的乘积（C 全是 0）被当成错误（hunt5）",
        en="check_inputs refuses K = 0: a legal product (C all zeros) raised, and the learner saw only their own "
        "ValueError, with no word that the product is legal (hunt5)",
    ),
    mutant(
        "hunt5-gelu-twice",
        "T4.5",
        "5.2",
        EXACT_GELU,
        EXACT_GELU + "        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))\n",
        "test_bias_and_activation[40-16-False-gelu-torch.float16]",
        "gelu-twice",
        zh="bias_and_activation 做了两次 GELU：只给出相对误差（hunt5）",
        en="bias_and_activation applies the GELU twice: caught with a relative error alone (hunt5)",
    ),
    mutant(
        "hunt5-acc-rounded-before-bias",
        "T4.5",
        "5.2",
        ADD_BIAS,
        "acc = acc.to(bias.dtype).to(tl.float32) + bias.to(tl.float32)[None, :]",
        "test_bias_and_activation[40-16-True-none-torch.float16]",
        "acc-rounded-before-bias",
        zh="bias_and_activation 先把 acc 舍入成 bias 的 dtype 再加 bias：多舍入了一次，只给出相对误差（hunt5）",
        en="bias_and_activation rounds acc to the bias's dtype before adding it: one rounding too many, caught with "
        "a relative error alone (hunt5)",
    ),
    mutant(
        "hunt5-bias-rounded-to-fp16",
        "T4.5",
        "5.2",
        ADD_BIAS,
        "acc = acc + bias.to(tl.float16).to(tl.float32)[None, :]",
        "test_bias_and_activation[40-16-True-none-torch.float32]",
        "bias-rounded-to-fp16",
        zh="bias_and_activation 把 bias 先转成 float16：float32 的 bias 被舍入，只给出相对误差（hunt5）",
        en="bias_and_activation casts the bias to float16 first: a float32 bias is rounded, caught with a relative "
        "error alone (hunt5)",
    ),
    mutant(
        "hunt5-operands-to-fp16",
        "T4.2",
        "4.2",
        "acc = tl.dot(a, b, acc)  # acc += a @ b",
        "acc = tl.dot(a.to(tl.float16), b.to(tl.float16), acc)  # acc += a @ b",
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float32]",
        "operands-rounded",
        zh="mainloop 把 A、B 的块先转成 float16 再 tl.dot：float32 的输入被舍入，只给出相对误差（hunt5）",
        en="mainloop casts the A and B blocks to float16 before tl.dot: float32 inputs are rounded, caught with a "
        "relative error alone (hunt5)",
    ),
)
