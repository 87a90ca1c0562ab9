"""Lesson T6's mutants of our own from the sixth hunt (hunt6b, 2026-12-04): mistakes planted in a copy of
the reference that the suite let through, or caught with a message that named another cause (or none
where one could be seen).  Each here was let through, or so named, until the check named with it was
added or mended.  Only make check runs them (table=False, not in §8); each must be caught by its test,
whose message names its cause (a key of HUNT6_CAUSES here, or of t6_mistakes.CAUSES) or, for cause "",
none.  t6_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT6_CAUSES = {
    "base-across-experts": ("数的是块 b 里专家 e 之前各专家的 slot", "held block b's slots of the experts before e"),
    "ends-without-n": ("漏乘了 N 方向的块数", "without the blocks along N"),
    "empty-expert-m-block": ("m_blocks 只在没有行的专家上错了", "wrong only for the experts with no rows"),
    "index-outside-expert": ("所以它拿到的是这些以外的序号", "so it was given an index outside them"),
    "row-begin-without-first-row": ("算 row_begin 时漏了专家的行首", "row_begin left out the expert's first row"),
    "row-end-at-count": ("截在了专家的行数 counts[e]", "cut at the expert's count"),
    "row-end-one-short": ("少了最后一行：row_end 是 tile 之后的第一行", "its last row is missing: row_end is"),
    "loop-one-short": ("循环的上界比 tile 总数少了 1", "stops one tile short of the total"),
    "offsets-past-end": ("读了 offsets[num_experts]", "read offsets[num_experts]"),
    "x-sorted-direct": ("X_SORTED 时 x 已经是排好序的", "with X_SORTED, x is in sorted order already"),
    "last-offset": ("只有最后一个不对", "the last alone is wrong"),
    "gather-by-two": ("好像 top_k 总是 2", "as if top_k were always 2"),
    "combine-first-rows": ("循环要走满 TOP_K", "the loop runs over all TOP_K"),
    "ids-rechecked": ("每次调用都要重新检查专家号", "the ids are checked at every call"),
    "ids-clamped-last": ("这些号被截成了最后一个专家", "those ids were clamped to the last expert"),
    "last-batch-counts": ("正是只有最后一批", "the sum of the last batch alone"),
    "swiglu-added": ("算的是 silu(gate) + up", "it is silu(gate) + up"),
    "weights-renormalised": ("先归一化到和为 1", "first scaled to sum to 1"),
    "up-into-gate": ("up 的 tl.dot 拿 gate 当了累加器", "up's tl.dot was given gate as its accumulator"),
    "weights-copied": ("不是调用者的 topk_weights，而是一份副本", "not the caller's topk_weights but a copy"),
    "row-begin-from-end": ("row_begin 从专家的行尾 offsets[e] 算起了", "row_begin was taken from the expert's row end"),
    "k-loop-from-block-k": ("少了第一个 k 块", "the sum without the first k-box"),
}

BASE = "        before = running[None, :] + tl.cumsum(here, axis=0) - here  # exclusive, down the blocks\n"
M_BLOCKS = "    m_blocks = tl.cdiv(counts, BLOCK_M)\n"
TILE_ENDS = "    tile_ends = tl.cumsum(m_blocks * num_pid_n, axis=0)\n"
FIRST_TILE = "    first_tile = tl.sum(tl.where(this, tile_ends, 0), axis=0) - expert_m_blocks * num_pid_n\n"
COORDS = "    pid_m, pid_n = tile_coords(tile_id - first_tile, expert_m_blocks, num_pid_n, GROUP_M)\n"
ROW_BEGIN = "        row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_M\n"
ROW_END = "        row_end = tl.minimum(row_begin + BLOCK_M, expert_end)\n"
LOOP = "    for tile_id in tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN):\n"
EVERY_TILE = "test_every_tile_of_every_expert_once"
A_LOAD = (  # A's load, in gathered_product and gate_up_product alike
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
)
PLACES = "test_tile_counts_and_places_alone"

HUNT6 = (
    own(
        "base-summed-across-experts",
        "T6.1",
        "scan_counts takes block_base's tl.cumsum along axis 1: block b's slots of the experts before e, not expert "
        "e's in the blocks before b; the message gave the first wrong slot alone (hunt6)",
        "2.1",
        BASE,
        BASE.replace("tl.cumsum(here, axis=0)", "tl.cumsum(here, axis=1)"),
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "base-across-experts+outside-tensors",
    ),
    own(
        "tile-ends-without-n",
        "T6.2",
        "expert_tile_counts sums m_blocks alone into tile_ends, num_pid_n left out; the message gave the numbers "
        "alone (hunt6)",
        "3.3",
        TILE_ENDS,
        "    tile_ends = tl.cumsum(m_blocks, axis=0)\n",
        PLACES,
        "ends-without-n",
    ),
    own(
        "m-blocks-minus-one-truncated",
        "T6.2",
        "expert_tile_counts takes (counts - 1) // BLOCK_M + 1 m-blocks: right but for an expert with no rows, which "
        "gets 1 (Triton's division rounds toward 0); the message said counts // BLOCK_M + 1, which the test's counts "
        "(none a multiple of BLOCK_M) could not tell from it (hunt6)",
        "3.3",
        M_BLOCKS,
        "    m_blocks = (counts - 1) // BLOCK_M + 1\n",
        PLACES,
        "empty-expert-m-block",
    ),
    own(
        "first-tile-without-n",
        "T6.2",
        "locate_tile takes an expert's first tile as tile_ends[e] - m_blocks[e], num_pid_n left out: the index within "
        "the expert comes out below 0; the message gave the place alone (hunt6)",
        "3.3",
        FIRST_TILE,
        FIRST_TILE.replace(" * num_pid_n", ""),
        PLACES,
        "index-outside-expert",
    ),
    own(
        "coords-of-the-global-tile",
        "T6.2",
        "locate_tile hands tile_coords the global tile id, not tile_id - the expert's first tile: right for the "
        "first expert alone; the message gave the place alone (hunt6)",
        "3.3",
        COORDS,
        COORDS.replace("tile_id - first_tile", "tile_id"),
        PLACES,
        "index-outside-expert",
    ),
    own(
        "row-begin-without-first-row",
        "T6.2",
        "grouped_tiles starts a tile at pid_m * BLOCK_M, the expert's first row (offsets - counts) left out; the "
        "message gave the rows alone (hunt6)",
        "3.2",
        ROW_BEGIN,
        "        row_begin = pid_m * BLOCK_M\n",
        EVERY_TILE,
        "row-begin-without-first-row",
    ),
    own(
        "row-end-at-count",
        "T6.2",
        "grouped_tiles cuts row_end at counts[expert], the expert's row count, not its row end offsets[expert]; the "
        "message gave the rows alone (hunt6)",
        "3.2",
        ROW_END,
        "        row_end = tl.minimum(row_begin + BLOCK_M, tl.load(counts_ptr + expert))\n",
        EVERY_TILE,
        "row-end-at-count",
    ),
    own(
        "row-end-inclusive",
        "T6.2",
        "grouped_tiles takes row_end as the tile's last row, min(row_begin + BLOCK_M, expert_end) - 1: each tile "
        "loses its last row; the message gave the rows alone (hunt6)",
        "3.2",
        ROW_END,
        "        row_end = tl.minimum(row_begin + BLOCK_M, expert_end) - 1\n",
        EVERY_TILE,
        "row-end-one-short",
    ),
    own(
        "loop-to-total-minus-one",
        "T6.2",
        "grouped_tiles loops to total - 1: the last tile is never done; the message said a tile count or a loop bound "
        "too small, 'say' (hunt6)",
        "3.4",
        LOOP,
        LOOP.replace("total, NUM_PROGS", "total - 1, NUM_PROGS"),
        EVERY_TILE,
        "loop-one-short",
    ),
    own(
        "expert-end-of-the-next",
        "T6.2",
        "grouped_tiles reads the expert's end at offsets[expert + 1]: the last expert's reads offsets[num_experts], "
        "past its end; the message gave the stray read alone (hunt6)",
        "3.2",
        "        expert_end = tl.load(offsets_ptr + expert)\n",
        "        expert_end = tl.load(offsets_ptr + expert + 1)\n",
        "test_schedule_reads_only_counts_and_offsets",
        "offsets-past-end",
    ),
    own(
        "x-sorted-rows-through-slots",
        "T6.3",
        "gathered_rows reads x's row as sorted_slots[row] when X_SORTED: the slot, where x (h) is in sorted order "
        "already; the message gave the rows alone (hunt6)",
        "4.1",
        "        x_rows = tl.where(live, rows, 0)\n",
        "        x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0)\n",
        "test_gathered_product_alone[x sorted]",
        "x-sorted-direct",
    ),
    own(
        "a-box-offset-k0-unstrided",
        "T6.3",
        "gathered_product offsets A's k-box at k0 + cols * stride_xk, k0 not times the stride: right for the first "
        "k-box, and for any x whose stride along K is 1; the transposed x of the suite met one k-box alone, and "
        "every x of more k-boxes was contiguous along K (hunt6)",
        "4.1",
        "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        b = w_desc",
        "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + k0 + cols[None, :] * stride_xk,\n"
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        b = w_desc",
        "test_routing_weights_and_the_combine[sorted]",
        "read-as-contiguous",
    ),
    own(
        "last-offset-unstored",
        "T6.1",
        "scan_counts stores offsets with the mask experts < num_experts - 1: the last expert's row end is never "
        "written; the message gave the numbers alone, and where the last expert held every row it said these were "
        "the row starts (hunt6)",
        "2.1",
        "    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts)\n",
        "    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts - 1)\n",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "last-offset",
    ),
    own(
        "gather-by-two",
        "T6.3",
        "gathered_rows takes x's row as sorted_slots >> 1, top_k = 2 taken for granted: right at top_k = 2 alone; the "
        "message gave the error alone (hunt6)",
        "4.1",
        "        x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0) // TOP_K\n",
        "        x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0) >> 1\n",
        "test_grouped_matmul_in_sorted_order[one expert-20-1-4-32-40-torch.float16]",
        "gather-by-two",
    ),
    own(
        "combine-two-rows",
        "T6.3",
        "combine_topk loops j over tl.static_range(2): right at top_k = 2 alone; the message said to check which rows "
        "are added (hunt6)",
        "4.4",
        "    for j in tl.static_range(TOP_K):\n",
        "    for j in tl.static_range(2):\n",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "combine-first-rows",
    ),
    own(
        "ids-check-kept",
        "T6.1",
        "check_routing_inputs checks a tensor's ids once, kept by id(topk_ids): the same tensor with an id out of "
        "range written in place (a CUDA graph's static input) is routed unchecked; every bad input of the suite was "
        "a new tensor (hunt6)",
        "2.3",
        "    if check_ids and topk_ids.numel():\n",
        "    seen = check_routing_inputs.__dict__.setdefault('seen', set())\n"
        "    if check_ids and topk_ids.numel() and (id(topk_ids), num_experts) not in seen:\n"
        "        seen.add((id(topk_ids), num_experts))\n",
        "test_route_of_one_expert",
        "ids-rechecked",
    ),
    own(
        "bad-ids-clamped-to-last",
        "T6.1",
        "count_experts clamps the ids to num_experts - 1 and masks the negative ones alone: with check_ids=False an "
        "id at or past num_experts is counted as the last expert; the message gave the counts alone (hunt6)",
        "2.3",
        "    hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)\n",
        "    hist = tl.histogram(tl.minimum(ids, num_experts - 1).to(tl.int32), E_BLOCK,\n"
        "                        mask=(slots < num_slots) & (ids >= 0))\n",
        "test_route_ignores_ids_out_of_range",
        "ids-clamped-last",
    ),
    own(
        "counts-of-the-last-batch",
        "T6.1",
        "scan_counts stores counts as the last batch's tl.sum(here, axis=0), not running: right up to SCAN_ROWS "
        "blocks (2048 slots); the message gave the counts alone (hunt6)",
        "2.1",
        "    tl.store(counts_ptr + experts, running, mask=experts < num_experts)\n",
        "    tl.store(counts_ptr + experts, tl.sum(here, axis=0), mask=experts < num_experts)\n",
        "test_route_is_a_stable_counting_sort[skewed-1100-2-9]",
        "last-batch-counts",
    ),
    own(
        "swiglu-adds-up",
        "T6.4",
        "swiglu returns silu(gate) + up, the halves added; the message gave the error alone (hunt6)",
        "5.1",
        "    return gate * tl.sigmoid(gate) * up\n",
        "    return gate * tl.sigmoid(gate) + up\n",
        "test_gate_up_with_swiglu[torch.float16]",
        "swiglu-added",
    ),
    own(
        "mlp-weights-renormalised",
        "T6.4",
        "moe_mlp scales each token's topk_weights to sum to 1 before the down launch (a router's step, done again "
        "here on weights a caller gave); the message gave the error alone (hunt6)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n"
        "    topk_weights = topk_weights / topk_weights.sum(-1, keepdim=True)\n",
        "test_moe_mlp_in_two_launches",
        "weights-renormalised",
    ),
    own(
        "up-accumulates-into-gate",
        "T6.4",
        "gate_up_product writes up = tl.dot(a, up's box, gate): up's sum starts from gate's at every step, so up comes "
        "out as gate plus the last k-box's up product; the message said up was off alone (hunt6)",
        "5.1",
        "        up = tl.dot(a, w_desc.load([up_row, k0]).T, up)\n",
        "        up = tl.dot(a, w_desc.load([up_row, k0]).T, gate)\n",
        "test_gate_up_product_alone",
        "up-into-gate",
    ),
    own(
        "gate-up-box-offset-k0-unstrided",
        "T6.4",
        "gate_up_product offsets A's k-box at k0 + cols * stride_xk, k0 not times the stride: right for any x whose "
        "stride along K is 1; the message gave the error alone (hunt6)",
        "5.1",
        "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        gate = tl.dot(",
        "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + k0 + cols[None, :] * stride_xk,\n"
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        gate = tl.dot(",
        "test_gate_up_with_swiglu[torch.float16]",
        "read-as-contiguous",
    ),
    own(
        "mlp-weights-cast-to-x-dtype",
        "T6.4",
        "moe_mlp hands the down launch topk_weights.to(x.dtype): a copy, rounded to fp16, within the layer's "
        "tolerance; it passed every test (hunt6)",
        "5.2",
        "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True",
        "    return grouped_matmul(hidden, w_down, routing, topk_weights.to(x.dtype), combine=True",
        "test_moe_mlp_in_two_launches",
        "weights-copied",
    ),
    own(
        "row-begin-at-the-expert-end",
        "T6.2",
        "grouped_tiles starts a tile at expert_end + pid_m * BLOCK_M, the count never taken off; the message gave the "
        "rows alone (hunt6)",
        "3.2",
        ROW_BEGIN,
        "        row_begin = expert_end + pid_m * BLOCK_M\n",
        EVERY_TILE,
        "row-begin-from-end",
    ),
    own(
        "k-loop-from-block-k",
        "T6.3",
        "gathered_product loops k0 over range(BLOCK_K, K, BLOCK_K): the first k-box is never added; the message gave "
        "the error alone (hunt6)",
        "4.2",
        "    for k0 in range(0, K, BLOCK_K):\n" + A_LOAD + "        b = w_desc",
        "    for k0 in range(BLOCK_K, K, BLOCK_K):\n" + A_LOAD + "        b = w_desc",
        "test_gathered_product_alone[gathered]",
        "k-loop-from-block-k",
    ),
)
