"""Lesson T4's mutants of our own from the seventh learner's walk (learner7, 2026-12-04): each was let through,
or caught with a message that named a wrong cause or none, until the check named with it was added or mended.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its
cause (a key of t4_mistakes.CAUSES, LEARNER7_CAUSES here).  t4_mistakes.py gathers them last, and their
causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER7_CAUSES = {
    "quotient-remainder-swapped": ("把商和余数用反", "quotient and remainder swapped"),
    "grid-blocks-swapped": ("两个块参数用反了", "the two block sizes swapped"),
    "block0-not-precision": ("和累加器的精度无关", "nothing to do with the accumulator's precision"),
}

LEARNER7 = (
    mutant(
        "learner7-quotient-remainder-swapped",
        "T4.1",
        "2",
        "    pid_m = first_pid_m + pid_in_group % group_size_m\n    pid_n = pid_in_group // group_size_m\n",
        "    pid_m = first_pid_m + pid_in_group // group_size_m\n    pid_n = pid_in_group % group_size_m\n",
        "test_tile_coords_worked_example",
        "quotient-remainder-swapped",
        zh="tile_coords 里 pid_m 取了商、pid_n 取了余数：T4.1 最先显示的检查只说 pid 5 算成了 (2, 1)（learner7）",
        en="tile_coords takes pid_m from the quotient and pid_n from the remainder: T4.1's first check shown said "
        "only that pid 5 got (2, 1) (learner7)",
    ),
    mutant(
        "learner7-grid-blocks-swapped",
        "T4.4",
        "6.2",
        '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)\n',
        '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_N"]) * triton.cdiv(N, meta["BLOCK_M"]),)\n',
        "test_grid_follows_the_config",
        "grid-too-small+grid-blocks-swapped",
        zh="grid 用 BLOCK_N 分 M、用 BLOCK_M 分 N：方形配置下看不出，非方形时只说“它随 meta 变了，"
        "但数得不对”（learner7）",
        en="the grid divides M by BLOCK_N and N by BLOCK_M: square configs hide it, and a non-square one was told "
        "only 'it follows meta, but counts wrong' (learner7)",
    ),
    mutant(
        "learner7-no-advance-fp32-check",
        "T4.2",
        "4.3",
        "        a_ptrs += BLOCK_K * stride_ak\n        b_ptrs += BLOCK_K * stride_bk\n",
        "",
        "test_mainloop_accumulates_in_fp32",
        "pointers-stay+block0-not-precision",
        zh="K 循环里不移动指针：test_mainloop_accumulates_in_fp32 只给出相对误差，"
        "它的名字却让人去查累加器的 dtype（learner7）",
        en="the K loop never moves its pointers: test_mainloop_accumulates_in_fp32 gave a relative error alone, "
        "and its name sent one to the accumulator's dtype (learner7)",
    ),
)
