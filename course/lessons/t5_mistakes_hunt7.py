"""Lesson T5's mutants of our own from the seventh hunt for unplanted mistakes (hunt7, 2026-12-04): each was
let through, or caught with a message that named no cause, until the check named with it was added or mended.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its
cause (a key of t5_mistakes.CAUSES, HUNT7_CAUSES here).  t5_mistakes.py gathers them last, and their causes
into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT7_CAUSES = {
    "collect-one-slot": ("循环每一轮读的是同一个槽", "every turn of the loop read the same slot"),
}

HUNT7 = (
    own(
        "hunt7-collect-reads-first-slot-only",
        "T5.3",
        "sk_collect_partials adds the slot of first_pid on every turn, not program p's: collect's own check said "
        "only how many cells differ (hunt7)",
        "4.2",
        "acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs",
        "acc += tl.load(partials_ptr + first_pid * (BLOCK_M * BLOCK_N) + offs",
        "test_sk_collect_partials_alone",
        "collect-one-slot",
    ),
    own(
        "hunt7-subtile-right-half-on-the-left",
        "T5.4",
        "the right half stored at pid_n * BLOCK_N, over the left one: on 16 x 64 tiles the check of tiles that are "
        "not square said only how many cells were never written; it now says they are the right halves (hunt7)",
        "5",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], right",
        "test_store_tile_subtiled_of_a_tile_that_is_not_square",
    ),
)
