"""Lesson T5's mutants of our own from left37 (2026-12-05): slips learner37 planted that failed with no cause named.
tma_problem testing rule 2 on t.stride(1) * element_size(), not stride(0), refuses every fp16 and fp32 tensor that
keeps rule 1 (stride(1) is 1 there, so the test reads the element's size alone): the learner was shown their own
refusal ('got 48 elements of 2 bytes = 96 bytes') and nothing more; tests/t5/rule_two.py tells it now by rows of
32 to 256 bytes all refused and complex128 (16-byte elements) taken.  T5.1: k_segment handed tile_id - first_tile
was told 'tile 0 is not this loop's, yet it was done' alone (test_tile_loop.py's fail_if_counted_from_first names
it), and persistent_grid capped at min(num_sms, cdiv(num_tiles, 2)) the counts alone (GRID_FORMULAS names it, k = 2
to 4).  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its
cause (LEFT37_CAUSES here).
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT37_CAUSES = {
    "rule-2-on-stride-1": ("规矩 2 查在了 stride(1) 上", "rule 2 was checked on stride(1)"),
    "tile-minus-first": ("k_segment 拿到的是 tile_id - first_tile", "k_segment was handed tile_id - first_tile"),
    "grid-a-fraction": ("程序数被封顶在 tile 数的几分之一", "the grid capped at a fraction of the tiles"),
}

RULE_2 = "    if (t.stride(0) * size) % 16:\n"

LEFT37 = (
    own(
        "left37-rule-2-on-stride-1",
        "T5.2",
        "tma_problem tests rule 2 as (t.stride(1) * size) % 16: every tensor that keeps rule 1 is refused; its own "
        "'got 48 elements of 2 bytes = 96 bytes' alone before (learner37's plant, left37)",
        "3.2",
        RULE_2,
        "    if (t.stride(1) * size) % 16:\n",
        "test_tma_problem_accepts_legal_tensors",
        "rule-2-on-stride-1",
    ),
    own(
        "left37-rule-2-on-element-size",
        "T5.2",
        "the same test written size % 16 (the element's size alone, what stride(1) * size is once rule 1 holds): "
        "told the same way (left37)",
        "3.2",
        RULE_2,
        "    if size % 16:\n",
        "test_tma_problem_accepts_legal_tensors",
        "rule-2-on-stride-1",
    ),
    own(
        "left37-k-segment-tile-minus-first",
        "T5.1",
        "data_parallel_tiles hands k_segment tile_id - first_tile: the trace counts each tile's k-blocks first_tile "
        "tiles early; 'tile 0 is not this loop's, yet it was done (0 epilogues, 3 k-blocks)' alone before "
        "(learner37's plant, left37)",
        "2.2",
        "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, 0, k_blocks,\n",
        "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id - first_tile, pid_m, pid_n, 0, k_blocks,\n",
        "test_every_tile_once_over_many_grids[plain]",
        "tile-minus-first",
    ),
    own(
        "left37-grid-capped-at-half-the-tiles",
        "T5.1",
        "persistent_grid returns min(num_sms, triton.cdiv(num_tiles, 2)): '64 persistent programs expected, got 32' "
        "alone before (learner37's plant, left37)",
        "2.2",
        "    return min(num_sms, num_tiles)\n",
        "    return min(num_sms, triton.cdiv(num_tiles, 2))\n",
        "test_persistent_grid[64-132-64]",
        "grid-a-fraction",
    ),
)
