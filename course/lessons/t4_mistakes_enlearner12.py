"""Lesson T4's mutants of our own from the twelfth English-reading learner's walk (enlearner12, 2026-12-05): each
was let through by its step, or caught with a message that named a wrong cause, none, or only Triton's or torch's
own words, until the check named with it was added or mended.  Only make check runs them (table=False, not in
§8); each must be caught by its test, whose message names its cause (a key of t4_mistakes.CAUSES,
ENLEARNER12_CAUSES here).  t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ENLEARNER12_CAUSES = {
    "tuned-launch-sizes": ("autotune 版的 launch 拿到的却是", "the autotuned launch got M="),
    "advance-grows": ("越走越远", "each move longer than the one before"),
    "bias-left-out": ("没加 bias 的结果", "the result without the bias"),
    "gelu-without-one-plus": ("少了 erf 前面的 1 +", "without the 1 + before the erf"),
    # own-group-of-num-pid-m (t4_mistakes_own.py) is this mistake: its message named nothing until this walk
    "group-sized-by-num-pid-m": (
        "这正是 num_pid_in_group = GROUP_M * num_pid_m 的结果",
        "It is what num_pid_in_group = GROUP_M * num_pid_m gives",
    ),
}

SIZES = "    M, K = a.shape\n    N = b.shape[1]\n"
ADVANCE = "        a_ptrs += BLOCK_K * stride_ak\n        b_ptrs += BLOCK_K * stride_bk\n"
LAUNCH_ARGS = "c.stride(0), c.stride(1), 0 if bias is None else bias.stride(0))"

# acc.to(c_ptr.dtype), a cast to the pointer's own type, is no mutant here: its first line is Triton's own English
# (which §8's language check refuses), now cut to a few values and followed by a note naming the element type
# (tools/core/failure_words.py's pointer_cast_note; tools/tests/test_learner_loop.py tests both).
ENLEARNER12 = (
    mutant(
        "enlearner12-n-from-b-rows",
        "T4.4",
        "6.2",
        SIZES,
        SIZES.replace("b.shape[1]", "b.shape[0]"),
        "test_default_launch_path_off_the_interpreter",
        "tuned-launch-sizes",
        zh="N = b.shape[0]（其实是 K）：off-interpreter 的测试说网格「只数了 tile 的行数」，可网格公式是对的，"
        "错的是传进去的 N（enlearner12）",
        en="N = b.shape[0] (which is K): the off-interpreter check said the grid 'counts the rows of tiles alone', "
        "where the grid's formula was right and the N it was handed wrong (enlearner12)",
    ),
    mutant(
        "enlearner12-m-from-b",
        "T4.4",
        "6.2",
        SIZES,
        "    K, N = b.shape\n    M = a.shape[1]\n",
        "test_default_launch_path_off_the_interpreter",
        "tuned-launch-sizes",
        zh="M = a.shape[1]（其实是 K）：同一个检查说网格「只数了 tile 的列数」，原因说错了（enlearner12）",
        en="M = a.shape[1] (which is K): the same check said the grid 'counts the columns of tiles alone', a "
        "wrong cause (enlearner12)",
    ),
    mutant(
        "enlearner12-bias-stride-one-in-t4-4",
        "T4.4",
        "6.2",
        LAUNCH_ARGS,
        LAUNCH_ARGS.replace("bias.stride(0))", "1)"),
        "test_each_call_launches_with_its_own_bias_and_activation",
        "launch-strides",
        zh="launch 的 stride_bias 写成 1：T4.4 全部通过，只有选做的 T4.5 才抓到（enlearner12）",
        en="the launch's stride_bias written as 1: T4.4 passed whole, only the optional T4.5 caught it (enlearner12)",
    ),
    mutant(
        "enlearner12-has-bias-the-tensor",
        "T4.4",
        "6.2",
        "HAS_BIAS=bias is not None",
        "HAS_BIAS=bias",
        "test_each_call_launches_with_its_own_bias_and_activation",
        zh="HAS_BIAS=bias（传了张量本身）：检查自己抛出 torch 的 RuntimeError「Boolean value of Tensor ... is "
        "ambiguous」，没说在哪、读哪一节（enlearner12）",
        en="HAS_BIAS=bias (the tensor itself): the check raised torch's own RuntimeError 'Boolean value of Tensor "
        "... is ambiguous', saying neither where nor what to read (enlearner12)",
    ),
    mutant(
        "enlearner12-advance-grows-k-plus-1",
        "T4.2",
        "4.3",
        ADVANCE,
        ADVANCE.replace("+= BLOCK_K", "+= (k + 1) * BLOCK_K"),
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "advance-grows",
        zh="指针每次前移 (k + 1) * BLOCK_K 个 stride：消息只说「少了掩码或用错了 stride」，两个都不是（enlearner12）",
        en="the pointers moved (k + 1) * BLOCK_K strides at iteration k: the message said 'a mask is missing or a "
        "pointer block uses the wrong stride', neither of which it was (enlearner12)",
    ),
    mutant(
        "enlearner12-advance-grows-k",
        "T4.2",
        "4.3",
        ADVANCE,
        ADVANCE.replace("+= BLOCK_K", "+= k * BLOCK_K"),
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "advance-grows",
        zh="指针每次前移 k * BLOCK_K 个 stride：消息只给了相对误差（enlearner12）",
        en="the pointers moved k * BLOCK_K strides at iteration k: the message gave a relative error alone "
        "(enlearner12)",
    ),
    mutant(
        "enlearner12-bias-only-with-gelu",
        "T4.5",
        "5.2",
        "    if HAS_BIAS:\n",
        '    if HAS_BIAS and ACTIVATION == "gelu":\n',
        "test_bias_and_activation[40-16-True-none-torch.float16]",
        "bias-left-out",
        zh="bias 只在 GELU 时才加：没有激活时 bias 被漏掉了，消息只给了相对误差（enlearner12）",
        en="the bias added only with the GELU: without an activation it was left out, and the message gave a "
        "relative error alone (enlearner12)",
    ),
    mutant(
        "enlearner12-gelu-without-one-plus",
        "T4.5",
        "5.2",
        "acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))",
        "acc = 0.5 * acc * tl.erf(acc * 0.7071067811865476)",
        "test_bias_and_activation[40-16-False-gelu-torch.float16]",
        "gelu-without-one-plus",
        zh="GELU 写成 0.5 * x * erf(x / sqrt(2))，少了 1 +：消息只给了相对误差（enlearner12）",
        en="the GELU written 0.5 * x * erf(x / sqrt(2)), the 1 + left out: the message gave a relative error alone "
        "(enlearner12)",
    ),
)
