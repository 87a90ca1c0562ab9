"""Lesson T5's mutants of our own from left36 (2026-12-05): counts in the wrong unit (k elements where k-blocks
are meant, or the other way round) and a wrong dtype in an epilogue.  hunt16's stream-K total of sk_tiles * K was
caught with the stray-access words alone; tests/t5/sk_counts.py now reads the learner's stream_k_tiles at the
first stray access and names a total counted in K's elements.  Only make check runs them (table=False, not in
§8); each must be caught by its test, whose message names its cause (LEFT36_CAUSES here, gathered into
t5_mistakes.CAUSES).
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT36_CAUSES = {
    "total-in-elements": (
        "stream-K 部分的总数数成了 K 的元素个数",
        "the stream-K part's total was counted in K's elements",
    ),
    "k-blocks-in-elements": ("k_blocks 数成了 K 的元素个数", "k_blocks was counted in K's elements"),
}

TOTAL = "    total = sk_tiles * k_blocks\n"
DP_K_BLOCKS = "    k_blocks = tl.cdiv(K, BLOCK_K)\n    for tile_id in tl.range(first_tile"
SK_K_BLOCKS = "    k_blocks = tl.cdiv(K, BLOCK_K)\n    total = sk_tiles * k_blocks\n"

LEFT36 = (
    own(
        "left36-total-by-padded-k",
        "T5.3",
        "stream_k_tiles takes total = sk_tiles * k_blocks * BLOCK_K (K's elements, rounded up to whole k-blocks): "
        "the runs reach BLOCK_K times too far (left36)",
        "4.2",
        TOTAL,
        "    total = sk_tiles * k_blocks * BLOCK_K\n",
        "test_stream_k_every_tile_once",
        "stray-access+total-in-elements",
    ),
    own(
        "left36-dp-k-blocks-as-k",
        "T5.1",
        "data_parallel_tiles takes k_blocks = K: each tile's k_segment runs over K k-blocks (all but the first "
        "cdiv(K, BLOCK_K) read as TMA's zeros); told 'tile 0 summed 123 k-blocks, 4 expected' alone (left36)",
        "2.2",
        DP_K_BLOCKS,
        "    k_blocks = K\n    for tile_id in tl.range(first_tile",
        "test_every_tile_once_over_many_grids[plain]",
        "k-blocks-in-elements",
    ),
    own(
        "left36-dp-k-blocks-padded-k",
        "T5.1",
        "data_parallel_tiles takes k_blocks = tl.cdiv(K, BLOCK_K) * BLOCK_K, K rounded up in elements: the "
        "count alone before (left36)",
        "2.2",
        DP_K_BLOCKS,
        "    k_blocks = tl.cdiv(K, BLOCK_K) * BLOCK_K\n    for tile_id in tl.range(first_tile",
        "test_every_tile_once_over_many_grids[plain]",
        "k-blocks-in-elements",
    ),
    own(
        "left36-sk-k-blocks-as-k",
        "T5.3",
        "stream_k_tiles takes k_blocks = K: every stream-K tile is K k-blocks long, the runs laid over them; "
        "the count alone before (left36)",
        "4.2",
        SK_K_BLOCKS,
        "    k_blocks = K\n    total = sk_tiles * k_blocks\n",
        "test_stream_k_every_tile_once",
        "k-blocks-in-elements",
    ),
)
