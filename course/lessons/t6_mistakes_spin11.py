"""Lesson T6's mutants of our own from the endless-loop watch (spin11, 2026-12-04): a k loop that never ends on
the interpreter.  It was caught by pytest-timeout's words alone after 60 s, until course/interpreter_spin.py
counted an access made again with no progress.  Only make check runs it (table=False, not in §8); it must be
caught by its test, whose message names its cause (a key of t6_mistakes.CAUSES, SPIN11_CAUSES here).
t6_mistakes.py gathers it last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
SPIN11_CAUSES = {
    "loop-stopped-advancing": ("在一个不再前进的循环里打转", "it goes round a loop that no longer advances"),
}

SPIN11 = (
    own(
        "spin11-k-loop-never-advances",
        "T6.3",
        "gathered_product's k loop written as k0 = 0; while k0 < K: with no k0 += BLOCK_K: each pass loads the same "
        "boxes; test_gathered_product_alone timed out after 60 s with pytest-timeout's words alone (spin11)",
        "4.2",
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n    cols = tl.arange(0, BLOCK_K)\n"
        "    for k0 in range(0, K, BLOCK_K):\n",
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n    cols = tl.arange(0, BLOCK_K)\n"
        "    k0 = 0\n    while k0 < K:\n",
        "test_gathered_product_alone[gathered]",
        "loop-stopped-advancing",
    ),
)
