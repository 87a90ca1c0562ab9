"""Lesson T5's mutants of our own from the fifteenth styles round (styles15, 2026-12-05): a tile loop that does
every tile once, so C comes out right, but shares the tiles out otherwise than §2.2's stride.  The check failed
it as 'tile 1 was finished by program 0, program 1 expected' alone, which reads as a wrong product; it now says
that every tile was done once and how the share-out differs.  Only make check runs them (table=False, not in
§8); each must be caught by its test, whose message names its cause (a key of t5_mistakes.CAUSES,
STYLES15_CAUSES here).  t5_mistakes.py gathers them last, and their causes into its CAUSES.  The run of
consecutive tiles per program is hunt9's mutant hunt9-dp-blocked-chunks, whose entry names its cause now.
"""

from course.lessons.t5_mistakes_own import LOOP, own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
STYLES15_CAUSES = {
    # tests/t5/shares.py: every tile once, each program's tiles one run of consecutive tile numbers
    "tiles-in-runs": ("每个程序做的是一段连续的 tile", "each program took a run of consecutive tiles"),
    # tests/t5/shares.py: every tile once, by another share-out than a stride and not in runs
    "tiles-shared-otherwise": ("分给程序的方式和 §2.2 的不同", "shared out among the programs otherwise than in §2.2"),
}

HEAD = "    k_blocks = tl.cdiv(K, BLOCK_K)\n    " + LOOP

STYLES15 = (
    own(
        "styles15-dp-tiles-from-the-end",
        "T5.1",
        "data_parallel_tiles strides from the last tile down (program p takes num_tiles - 1 - p, ...): every tile "
        "once, C right, told only 'expected program p' (styles15)",
        "2.2",
        HEAD,
        "    k_blocks = tl.cdiv(K, BLOCK_K)\n"
        "    for back in tl.range(first_tile + tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN):\n"
        "        tile_id = num_tiles - 1 - (back - first_tile)\n",
        "test_every_tile_once_over_many_grids[plain]",
        "tiles-shared-otherwise",
    ),
)
