"""Lesson T5's mutants of our own from the eleventh round of leftovers (left11, 2026-12-04): each was caught with a
message that said what it saw and no cause, though its check could tell the cause, until that message was mended.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause
(a key of t5_mistakes.CAUSES).  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT11_CAUSES = {
    "dp-redoes-sk": (
        "整块算的那一趟把 stream-K 已经做完的 tile 又做了一遍",
        "the data-parallel pass did again the tiles stream-K had done",
    ),
}

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
    own(
        "left11-dp-loop-from-pid",
        "T5.3",
        "data_parallel_tiles loops from tl.program_id(0), first_tile left out: T5.1 names it, but make test STEP=T5.3 "
        "first showed the stream-K products' trace, 'tile 0 had 2 epilogues, exactly 1 expected (0: no program "
        "finished it as its owner; more: more than one did; ...)'; it now runs data_parallel_tiles alone with "
        "first_tile = sk_tiles and names the data-parallel pass (left11)",
        "2.2",
        "    for tile_id in tl.range(first_tile + tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN):\n",
        "    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN):\n",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-45-37-160-3]",
        "dp-redoes-sk",
    ),
)
