"""Lesson T6's mutants of our own from left37 (2026-12-05): slips learner37 planted in T6.3 that failed with no cause
named.  combine_topk reading by_slot with a row pitch of BLOCK_N, not N: its stray reads were named, but its own test
said 'check which rows are added' alone; tests/t6/combine_sums.py's pitch_seen works out that sum now (and those with
BLOCK_N in the token's part of the address alone, or in j's).  store_rows storing by slot at the token's row
(sorted_slots[i] // 2, a top_k of 2 written in) was told only the rule, 'row i goes to its slot's row';
test_store_rows.py's token_rows names it.  Only make check runs them (table=False, not in §8); each must be caught by
its test, whose message names its cause (LEFT37_CAUSES here).
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT37_CAUSES = {
    "pitch-block-n": ("行距当成了 BLOCK_N", "the row pitch taken as BLOCK_N"),
    "by-slot-token-row": ("写到了 token 的那一行（slot // top_k）", "stored at the token's row (slot // top_k)"),
}

COMBINE_READ = "        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols,"
OUT_ROWS = "    out_rows = slots if BY_SLOT else rows\n"

LEFT37 = (
    own(
        "left37-combine-pitch-block-n",
        "T6.3",
        "combine_topk reads by_slot at (t * TOP_K + j) * BLOCK_N + cols, BLOCK_N taken for the row pitch N: 'off by "
        "far more than a rounding ... check which rows are added' alone before (learner37's plant, left37)",
        "4.4",
        COMBINE_READ,
        "        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * BLOCK_N + cols,",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
        "pitch-block-n",
    ),
    own(
        "left37-combine-token-pitch-block-n",
        "T6.3",
        "combine_topk reads by_slot at t * TOP_K * BLOCK_N + j * N + cols: BLOCK_N taken for the pitch in the token's "
        "part of the address alone; told the same way (left37)",
        "4.4",
        COMBINE_READ,
        "        acc += tl.load(by_slot_ptr + t * TOP_K * BLOCK_N + j * N + cols,",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "pitch-block-n",
    ),
    own(
        "left37-by-slot-at-token-row",
        "T6.3",
        "store_rows with BY_SLOT stores row i at sorted_slots[i] // 2, the token's row, not the slot's: '72 cells "
        "written outside this tile's cells ... row i goes to its slot's row' alone before (learner37's plant, left37)",
        "4.4",
        OUT_ROWS,
        "    out_rows = slots // 2 if BY_SLOT else rows\n",
        "test_store_rows_alone[weighted by slot]",
        "by-slot-token-row",
    ),
    own(
        "left37-by-slot-at-token-row-where",
        "T6.3",
        "the same store written with tl.where(BY_SLOT, slots // 4, rows) (a top_k of 4): told the same way (left37)",
        "4.4",
        OUT_ROWS,
        "    out_rows = tl.where(BY_SLOT, slots // 4, rows)\n",
        "test_store_rows_alone[weighted by slot]",
        "by-slot-token-row",
    ),
)
