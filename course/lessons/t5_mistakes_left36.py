"""Lesson T5's mutants of our own from left36 (2026-12-05): counts in the wrong unit (k elements where k-blocks
are meant, or the other way round), and a cast to a fixed bf16 in the epilogue.  hunt16's stream-K total of
sk_tiles * K was caught with the stray-access words alone; tests/t5/sk_counts.py now reads the learner's
stream_k_tiles at the first stray access and names a total, or a tile's first k-block, counted in K's elements,
and check_trace names a tile's k-block count made in elements.  left36b's: BLOCK_K taken for the tile's k-block
count in the stream-K walk (tests/t5/sk_block_k.py launches it once more to tell), k_block_loop's k-blocks
numbered in elements (k_ranges.py) and sk_program_of handed a tile's number (first_pid.py).  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (LEFT36_CAUSES here,
gathered into t5_mistakes.CAUSES).
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT36_CAUSES = {
    "total-in-elements": (
        "stream-K 部分的总数数成了 K 的元素个数",
        "the stream-K part's total was counted in K's elements",
    ),
    "k-blocks-in-elements": ("k_blocks 数成了 K 的元素个数", "k_blocks was counted in K's elements"),
    "tile-begin-in-elements": ("tile 的第一个 k-block 按元素算了", "the tile's first k-block was counted in elements"),
    "block-k-as-k-blocks": ("BLOCK_K 当成了 tile 的 k-block 个数", "BLOCK_K was taken for the tile's k-block count"),
    "k-block-numbers-times-bk": ("每个 k-block 的号都乘了 BLOCK_K", "each k-block's number was taken times BLOCK_K"),
    "program-of-tile-id": ("sk_program_of 拿到的是 tile 号", "sk_program_of was handed the tile's number"),
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
    own(
        "left36-sk-tile-begin-by-bk",
        "T5.3",
        "stream_k_tiles takes tile_begin = tile_id * BLOCK_K: segments cut at element counts, the walk runs into "
        "tiles past the stream-K ones; the stray-access words alone before (left36)",
        "4.2",
        "        tile_begin = tile_id * k_blocks\n",
        "        tile_begin = tile_id * BLOCK_K\n",
        "test_stream_k_every_tile_once",
        "stray-access+tile-begin-in-elements",
    ),
    # a wrong dtype in the epilogue: bf16's fixed cast went unnamed, as the interpreter rounds float32 to bf16
    # toward zero and the check compared with torch's round to nearest alone (tests/t5/stored.py, rounded_through)
    own(
        "left36-store-as-bf16",
        "T5.2",
        "store_tile stores acc.to(tl.bfloat16) into an fp16 C: 'cells of C differ from acc cast to float16' "
        "alone before (left36)",
        "3.3",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))\n",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.bfloat16))\n",
        "test_store_tile[37-48-torch.float16]",
        "fixed-cast",
    ),
    own(
        "left36-left-half-as-bf16",
        "T5.4",
        "store_tile's subtiled epilogue stores its left half as bf16 into an fp16 C (left36)",
        "5",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))\n",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(tl.bfloat16))\n",
        "test_store_tile_subtiled[32-64-torch.float16]",
        "fixed-cast",
    ),
    own(
        "left36b-sk-owner-at-bk",
        "T5.3",
        "stream_k_tiles tests it_end == tile_begin + BLOCK_K for the owner, BLOCK_K where the tile's k-block count "
        "is meant: 'tile 0 had 0 epilogues' alone before (left36b)",
        "4.2",
        "        if it_end == tile_begin + k_blocks:",
        "        if it_end == tile_begin + BLOCK_K:",
        "test_stream_k_every_tile_once",
        "block-k-as-k-blocks",
    ),
    own(
        "left36b-sk-tile-id-by-bk",
        "T5.3",
        "stream_k_tiles takes tile_id = (it_end - 1) // BLOCK_K, BLOCK_K where the tile's k-block count is meant: "
        "'tile 0 had 0 epilogues' alone before (left36b)",
        "4.2",
        "        tile_id = (it_end - 1) // k_blocks\n",
        "        tile_id = (it_end - 1) // BLOCK_K\n",
        "test_stream_k_every_tile_once",
        "block-k-as-k-blocks",
    ),
    own(
        "left36b-k-loop-in-elements",
        "T5.2",
        "k_block_loop loops over range(kb_begin * BLOCK_K, kb_end * BLOCK_K, BLOCK_K), k in elements where k-block "
        "numbers are meant, and loads at kb * BLOCK_K: 'a sum none of the mistakes this check knows gives' alone "
        "before (left36b)",
        "3.1",
        "    for kb in range(kb_begin, kb_end):\n        off_k = kb * BLOCK_K\n",
        "    for kb in range(kb_begin * BLOCK_K, kb_end * BLOCK_K, BLOCK_K):\n        off_k = kb * BLOCK_K\n",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "k-block-numbers-times-bk",
    ),
    own(
        "left36b-first-pid-of-tile-id",
        "T5.3",
        "stream_k_tiles takes first_pid = sk_program_of(tile_id, total, NUM_PROGS), a tile's number where its first "
        "k-block (tile_begin, an iteration index) is meant: the general waits-forever words alone before (left36b)",
        "4.2",
        "            first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n",
        "            first_pid = sk_program_of(tile_id, total, NUM_PROGS)\n",
        "test_stream_k_every_tile_once",
        "waits-forever+program-of-tile-id",
    ),
)
