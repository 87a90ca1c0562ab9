"""Lesson T6's mutants of our own from the eleventh learner's walk (learner11b, 2026-12-04, reading the English
explainer): each was caught, some with a message that named a wrong cause or none, until the check named with it
was added or mended; the rest are the walk's own wrong versions in forms the registry did not hold yet.  Only make
check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t6_mistakes.CAUSES, LEARNER11B_CAUSES here) or, for cause "", none.  t6_mistakes.py gathers them last, and their
causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER11B_CAUSES = {
    "counts-wrong-first": ("那时 counts 就已经错了", "there the counts are wrong already"),
    "rows-on-one-grid": ("落在整个排序后行的 BLOCK_M 网格上", "lie on one BLOCK_M grid across all the sorted rows"),
    "one-grid-for-all": ("给 tile_coords 的是所有专家共用的一个块数", "given one block count for every expert"),
    "slot-0-zeroed": ("只有 slot 0 那一行错了，全是 0", "slot 0's alone is wrong, all zeros"),
    "rows-rounded-first": ("先把每一行 float32 舍入成", "the sum of the rows each rounded to"),
    "gate-up-rows-swapped": ("gate_row 和 up_row 用反了，或者", "gate_row and up_row swapped, or gate and up handed"),
}

STORES = (
    "    tl.store(sorted_slots_ptr + pos, slots, mask=valid)\n    tl.store(slot_pos_ptr + slots, pos, mask=valid)\n"
)
SWAPPED = (
    "    tl.store(sorted_slots_ptr + slots, pos, mask=valid)\n    tl.store(slot_pos_ptr + pos, slots, mask=valid)\n"
)
HIST = "    hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)\n"
ROW_BEGIN = "        row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_M\n"
COMBINE_ROW = "acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32)\n"
STORE_MASK = "acc.to(out_ptr.dtype.element_ty), mask=live[:, None] & (cols < N)[None, :])"
GATE_UP = (
    "        gate = tl.dot(a, w_desc.load([gate_row, k0]).T, gate)\n"
    "        up = tl.dot(a, w_desc.load([up_row, k0]).T, up)\n"
)

LEARNER11B = (
    own(
        "learner11b-stores-swapped-ids-ignored",
        "T6.1",
        "scatter_slots stores sorted_slots[slot] = pos and slot_pos[pos] = slot: with ids out of range, "
        "test_route_ignores_ids_out_of_range read the positions as slots and said that slots out of range got rows, "
        "a cause not made (learner11b)",
        "2.1",
        STORES,
        SWAPPED,
        "test_route_ignores_ids_out_of_range",
        "scatter-stores-swapped",
    ),
    own(
        "learner11b-histogram-of-where-ids-ignored",
        "T6.1",
        "count_experts counts tl.where(valid, ids, 0) without the histogram's mask: the tail lanes count as expert "
        "0's, and with ids out of range the scatter's places run past sorted_slots; the message pointed at the "
        "scatter's line alone, whose addresses come from the wrong counts (learner11b)",
        "2.1",
        HIST,
        "    hist = tl.histogram(tl.where(valid, ids, 0).to(tl.int32), E_BLOCK)\n",
        "test_route_ignores_ids_out_of_range",
        "outside-tensors+not-the-bad-ids+counts-wrong-first",
    ),
    own(
        "learner11b-m-blocks-plus-one-bound",
        "T6.2",
        "expert_tile_counts takes counts // BLOCK_M + 1 m-blocks: test_schedule_reads_only_counts_and_offsets said "
        "counts' lanes past num_experts must count 0, which they did; every count-0 lane's extra m-block was the "
        "cause (learner11b)",
        "3.3",
        "    m_blocks = tl.cdiv(counts, BLOCK_M)\n",
        "    m_blocks = counts // BLOCK_M + 1\n",
        "test_schedule_reads_only_counts_and_offsets",
        "m-blocks-plus-one+spare-ends-not-total",
    ),
    own(
        "learner11b-rows-on-one-grid",
        "T6.2",
        "grouped_tiles rounds the expert's first row down to a multiple of BLOCK_M: its m-blocks lie on one grid "
        "across all experts, and a tile begins in the rows of the expert before; the message gave the rows alone "
        "(learner11b)",
        "3.2",
        ROW_BEGIN,
        "        row_begin = ((expert_end - tl.load(counts_ptr + expert)) // BLOCK_M + pid_m) * BLOCK_M\n",
        "test_every_tile_of_every_expert_once",
        "rows-on-one-grid",
    ),
    own(
        "learner11b-tile-coords-all-m-blocks",
        "T6.2",
        "locate_tile hands tile_coords the sum of every expert's m-blocks as the grid's rows: the message said the "
        "index was outside the expert's tiles, or the block counts wrong, the first not made (learner11b)",
        "3.3",
        "tile_coords(tile_id - first_tile, expert_m_blocks, num_pid_n, GROUP_M)",
        "tile_coords(tile_id - first_tile, tl.sum(m_blocks, axis=0), num_pid_n, GROUP_M)",
        "test_tile_counts_and_places_alone",
        "one-grid-for-all",
    ),
    own(
        "learner11b-store-row-end-inclusive-combined",
        "T6.3",
        "store_rows masks rows <= row_end: by slot, the row past the tile (its slot loaded as 0, its A as zeros) "
        "zeroes slot 0's row; test_a_combine_without_routing_weights named a scaling by weights never read "
        "(learner11b)",
        "4.3",
        STORE_MASK,
        "acc.to(out_ptr.dtype.element_ty), mask=(rows <= row_end)[:, None] & (cols < N)[None, :])",
        "test_a_combine_without_routing_weights",
        "slot-0-zeroed",
    ),
    own(
        "learner11b-combine-rows-rounded",
        "T6.3",
        "combine_topk rounds each float32 row to the output's dtype before adding it into its float32 sum: the "
        "message said the cells are not the float32 sum, and no cause (learner11b)",
        "4.4",
        COMBINE_ROW,
        COMBINE_ROW.replace(".to(tl.float32)\n", ".to(out_ptr.dtype.element_ty)\n"),
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
        "rows-rounded-first",
    ),
    own(
        "learner11b-combine-index-backwards",
        "T6.3",
        "combine_topk loops j upwards but reads row t * TOP_K + TOP_K - 1 - j: the sum in the order j = top_k - 1..0 "
        "(learner11b)",
        "4.4",
        COMBINE_ROW,
        COMBINE_ROW.replace("(t * TOP_K + j)", "(t * TOP_K + TOP_K - 1 - j)"),
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "combine-reversed",
    ),
    own(
        "learner11b-gate-up-rows-swapped",
        "T6.4",
        "gate_up_product multiplies A by the up box into gate and by the gate box into up (learner11b)",
        "5.1",
        GATE_UP,
        "        gate = tl.dot(a, w_desc.load([up_row, k0]).T, gate)\n"
        "        up = tl.dot(a, w_desc.load([gate_row, k0]).T, up)\n",
        "test_gate_up_product_alone",
        "gate-up-rows-swapped",
    ),
    own(
        "learner11b-silu-by-exp",
        "T6.4",
        "swiglu written gate / (1 + exp(gate)) * up: silu with the exponent's sign flipped (learner11b)",
        "5.1",
        "    return gate * tl.sigmoid(gate) * up\n",
        "    return gate / (1 + tl.exp(gate)) * up\n",
        "test_gate_up_with_swiglu[torch.float16]",
        "sigmoid-negated",
    ),
    own(
        "learner11b-weights-to-both-launches",
        "T6.4",
        "moe_mlp hands topk_weights to the gate/up launch as well as to down: each slot scaled twice (learner11b)",
        "5.2",
        '    hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)\n',
        '    hidden = grouped_matmul(x, w_gate_up, routing, topk_weights, activation="swiglu", config=config)\n',
        "test_moe_mlp_in_two_launches",
        "weights-in-gate-up",
    ),
)
