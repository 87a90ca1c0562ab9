"""Lesson T4's mutants of our own from the third hunt for unplanted mistakes (styles45, 2026-12-03): each
was let through until the check named with it was added.  Only make check runs them (table=False, not
in §8); each must be caught by its test, whose message names its cause (a key of t4_mistakes.CAUSES,
HUNT3_CAUSES here) or, for cause "", none.  t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT3_CAUSES = {
    "config-off-interpreter": ("INTERPRET_CONFIG 只给解释器用", "which is the interpreter's alone"),
    "k-step-past-end": ("的 a 和 b 全是 0（每个 lane 都被掩码挡住了）", "multiplied all-zero a and b"),
}

HUNT3 = (
    # one step past the last k-block: every lane masked off, a tl.dot of zeros; C stays right, and on a
    # GPU the step costs a whole k-block (twice the work where K fits one block)
    mutant(
        "hunt3-k-loop-one-step-more",
        "T4.2",
        "4",
        "    k_steps = tl.cdiv(K, BLOCK_K)\n",
        "    k_steps = tl.cdiv(K, BLOCK_K) + 1\n",
        "test_mainloop_takes_cdiv_k_steps[64]",
        "k-step-past-end",
        zh="K 循环多跑一步：最后一步的 load 全被掩码挡住，tl.dot 乘的是 0；结果对，GPU 上白算一个 k-block（hunt3）",
        en="the K loop takes one step more than tl.cdiv(K, BLOCK_K): that step's loads are all masked off and its "
        "tl.dot multiplies zeros; C stays right, and a GPU spends a k-block's work on it (hunt3)",
    ),
    # the GPU path never autotunes; every check of the default path ran under the interpreter, where
    # INTERPRET_CONFIG is right, and the GPU-only one does not run on a CPU
    mutant(
        "hunt3-interpret-config-on-gpu",
        "T4.4",
        "6.2",
        "    if config is None and INTERPRETING:\n",
        "    if config is None:\n",
        "test_default_launch_path_off_the_interpreter",
        "config-off-interpreter",
        zh="没给 config 时总用 INTERPRET_CONFIG 启动普通内核，GPU 上也一样：autotune 从不运行（hunt3）",
        en="without a config matmul always launches the plain kernel with INTERPRET_CONFIG, on a GPU too: the "
        "autotuner never runs; the one check of that path needs a GPU (hunt3)",
    ),
    # a (N, 1) bias: bias.shape[0] == N takes it, and len(bias) == N too
    mutant(
        "hunt3-bias-shape-first-dim",
        "T4.4",
        "6.3",
        "    if bias is not None and tuple(bias.shape) != (b.shape[1],):\n",
        "    if bias is not None and bias.shape[0] != b.shape[1]:\n",
        "test_input_validation[bias of shape (3, 1)]",
        zh="check_inputs 只比较 bias.shape[0]：形状 (N, 1) 的 bias 也被接受（hunt3）",
        en="check_inputs compares bias.shape[0] alone: a bias of shape (N, 1) is taken; the suite's 2-D bias "
        "was (1, N) (hunt3)",
    ),
)
