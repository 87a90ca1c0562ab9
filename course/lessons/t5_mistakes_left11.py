"""Lesson T5's mutants of our own from the eleventh round of leftovers (left11, 2026-12-04): each was caught with a
message that said what it saw and no cause, though its check could tell the cause, until that message was mended.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause
(a key of t5_mistakes.CAUSES).  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

LEFT11_CAUSES = {}  # the words these messages say are t5_mistakes.CAUSES' own

LEFT11 = (
    own(
        "left11-collect-puts-back-last-flag-only",
        "T5.3",
        "sk_collect_partials puts program p's flag back to 0 only for p == pid - 1: where three programs share a "
        "tile, the first one's flag stays up although its owner read it; test_stream_k_every_tile_once said only "
        "'flags left raised [0, 1, 0, 0, 0]' (left11)",
        "4.2",
        '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n',
        '        if p == pid - 1:\n            tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")\n',
        "test_stream_k_every_tile_once",
        "flags-left-up",
    ),
)
