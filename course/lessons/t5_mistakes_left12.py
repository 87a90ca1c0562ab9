"""Lesson T5's mutants of our own from the twelfth round of leftovers (left12, 2026-12-05): each was caught with a
message in Triton's English alone, after a line in the reader's language, until a message said what was seen in
both.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its
cause (a key of t5_mistakes.CAUSES: hunt11's int64-coordinate, already there).  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT12_CAUSES = {}

LEFT = "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))\n"

LEFT12 = (
    own(
        "left12-subtile-store-row-int64",
        "T5.4",
        "the left half stored at row pid_m.to(tl.int64) * BLOCK_M: an int64 descriptor coordinate; store_tile's own "
        "checks named it, but matmul's (test_matmul_subtiled_with_bias_and_gelu) said 'matmul 在 ... 崩溃了：Expected "
        "a 32-bit integer; add a `.to(tl.int32)` ...', Triton's English after a Chinese line (left12)",
        "5",
        LEFT,
        LEFT.replace("[pid_m * BLOCK_M,", "[pid_m.to(tl.int64) * BLOCK_M,"),
        "test_matmul_subtiled_with_bias_and_gelu[dp]",
        "int64-coordinate",
    ),
)
