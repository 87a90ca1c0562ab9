"""Lesson T4's mutants of our own from the tenth Chinese-reading learner's walk (zhlearner10, 2026-12-04): each was
caught with a message that named no cause, or a wrong one, until the check named with it was added.  Only make
check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key
of t4_mistakes.CAUSES, ZHLEARNER10_CAUSES here).  t4_mistakes.py gathers them last, and their causes into its
CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ZHLEARNER10_CAUSES = {
    "first-row-is-group-id": ("first_pid_m 取成 group_id", "first_pid_m = group_id gives"),
    "offs-n-on-pid-m": ("offs_n 用 pid_m 算出来", "offs_n built on pid_m"),
    "mask-lacks-columns": ("掩码里少了列的条件", "the mask lacks the columns'"),
    "mask-lacks-rows": ("掩码里少了行的条件", "the mask lacks the rows'"),
}

C_MASK = "    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)\n"
OFFS_N = "    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    offs_k = tl.arange(0, BLOCK_K)\n"

ZHLEARNER10 = (
    mutant(
        "zhlearner10-first-row-is-group-id",
        "T4.1",
        "2",
        "    first_pid_m = group_id * GROUP_M\n",
        "    first_pid_m = group_id\n",
        "test_tile_coords_exact_map[4-4-2]",
        "first-row-is-group-id",
        zh="first_pid_m = group_id（漏乘 GROUP_M）：消息只画出了两张图，没说错在哪（zhlearner10）",
        en="first_pid_m = group_id (GROUP_M left out): the message drew the two maps and named nothing (zhlearner10)",
    ),
    mutant(
        "zhlearner10-offs-n-on-pid-m",
        "T4.2",
        "3",
        OFFS_N,
        OFFS_N.replace("pid_n * BLOCK_N", "pid_m * BLOCK_N"),
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "offs-n-on-pid-m",
        zh="offs_n = pid_m * BLOCK_N + ...（抄 offs_m 那一行时忘了改 pid）：第一条消息只给了相对误差，M=24 N=16 的用例"
        "还说成了 A 的行掩码拿 offs_m 和 N 比（zhlearner10）",
        en="offs_n = pid_m * BLOCK_N + ... (offs_m's line copied, its pid left): the first message gave a relative "
        "error alone, and the M=24 N=16 case said A's row mask compares offs_m with N (zhlearner10)",
    ),
    mutant(
        "zhlearner10-store-mask-columns-only",
        "T4.3",
        "5.1",
        C_MASK,
        C_MASK.replace("(offs_m[:, None] < M) & ", ""),
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "store-unmasked+mask-lacks-rows",
        zh="写回的掩码只管列：消息说了要带的整个掩码，没说少的是行的条件（zhlearner10；只管行的那一个是 "
        "own-store-mask-rows-only，现在也说出少的是列的条件）",
        en="a store mask on the columns only: the message gave the whole mask to use, not that the rows' condition "
        "was the one missing (zhlearner10; own-store-mask-rows-only, the rows alone, now names the columns')",
    ),
)
