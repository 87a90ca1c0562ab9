"""Lesson T6's mutants of our own from the eighth hunt (hunt8, 2026-12-04): mistakes planted in a copy of the
reference that the suite let through, or caught with a message that named no cause or a wrong one, until the
check named with each was added or mended: a store's columns from pid_n * BLOCK_M and its rows N apart (both
unseen in a square tile of a contiguous out), A's row offsets broadcast along the wrong axis, a rank over every
expert's slots, a schedule right only where experts have as many tiles each (or none are empty), the loop's
bound from the total rows, a tile's first row as if the rows were padded, tiles handed out from the last one
down or from below 0, a combine in another order or over rows t + j, SwiGLU without up, the weights put in
sorted order, a hand-made Routing checked once and kept, the ids looked at twice.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
HUNT8_CAUSES, or of t6_mistakes.CAUSES).  t6_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT8_CAUSES = {
    "cols-by-block-m": ("列从 pid_n * BLOCK_M 开始了", "the columns started at pid_n * BLOCK_M"),
    "rows-n-apart": ("第 r 行在 r * stride_om，不是 r * N", "row r is at r * stride_om, not r * N"),
    "a-rows-one-row": ("x_rows[None, :] 配上 (k0 + cols)[None, :]", "x_rows[None, :] with (k0 + cols)[None, :]"),
    "a-rows-turned": ("x_rows[None, :] 配上 (k0 + cols)[:, None]", "x_rows[None, :] with (k0 + cols)[:, None]"),
    "rank-any-expert": ("不管选的是哪个专家", "whatever expert it chose"),
    "largest-m-blocks": ("给 tile_coords 的是最大的 m_blocks", "tile_coords was given the largest m_blocks"),
    "bound-from-rows": ("循环的上界是从总行数算的", "the loop's bound was worked out from the total row count"),
    "empty-expert-given": (
        "一个 tile 也没有（它的 tile_ends 和前一个专家的相同）",
        "so no tiles at all (its tile_ends",
    ),
    "combine-order": ("浮点加法的结果随顺序而变", "a float sum changes with its order"),
    "rows-t-plus-j": ("token 号直接加上了 j", "j added to the token's number"),
    "up-left-out": ("没有乘 up", "up never multiplied in"),
    "gate-up-dead-rows": ("应当全是 0：A 的加载要用 live", "where all must be 0: A's load must mask them with live"),
    "weights-sorted": ("先把 topk_weights 排成排好序的顺序", "topk_weights first put in sorted order"),
    "routing-check-kept": ("查过一次就不再查了", "was not checked again"),
    "tiles-from-last": ("tile 是从最后一个往前分的", "the tiles were handed out from the last one down"),
    "tile-below-zero": ("做了小于 0 的 tile 号", "tile ids below 0 were done"),
    "ids-waited-twice": (
        "读一个在上一次读值之后才算出来的张量就要等设备",
        "a read of a tensor computed after the read before",
    ),
    "begin-from-padded-end": ("算起了，好像行补齐过", "less its m-blocks times BLOCK_M, as if its rows were padded"),
}

# gathered_product's load of A, and the line after it
A_LOAD = (
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n        b = "
)
LOCATE = "expert = tl.sum((tile_ends <= tile_id).to(tl.int32), axis=0)"
COMBINE_ADD = (
    "    for j in tl.static_range(TOP_K):\n"
    "        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32)\n"
)
DOWN_CALL = "    return grouped_matmul(hidden, w_down, routing, topk_weights,"

HUNT8 = (
    own(
        "store-cols-by-block-m",
        "T6.3",
        "store_rows takes its columns from pid_n * BLOCK_M: right in a square tile, the one store_rows' own test "
        "had; the grouped tests saw an error in numbers alone (hunt8)",
        "4.3",
        "cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    live = rows < row_end",
        "cols = pid_n * BLOCK_M + tl.arange(0, BLOCK_N)\n    live = rows < row_end",
        "test_store_rows_alone[plain 16 x 32, out a view]",
        "cols-by-block-m",
    ),
    own(
        "store-rows-pitch-n",
        "T6.3",
        "store_rows places row r at r * N, not r * stride_om (an int32 product too): every out of the suite was "
        "contiguous, and the whole suite passed (hunt8)",
        "4.3",
        "tl.store(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on,",
        "tl.store(out_ptr + out_rows[:, None] * N + cols[None, :],",
        "test_store_rows_alone[plain 16 x 32, out a view]",
        "rows-n-apart",
    ),
    own(
        "a-rows-broadcast-wrong",
        "T6.3",
        "gathered_product's A pointers take x_rows[None, :]: every row of the box reads x[x_rows[k], k0 + k]; the "
        "message gave a relative error alone (hunt8)",
        "4.1",
        A_LOAD,
        A_LOAD.replace("x_rows[:, None] * stride_xm", "x_rows[None, :] * stride_xm"),
        "test_gathered_product_alone[gathered]",
        "a-rows-one-row",
    ),
    own(
        "a-rows-cols-transposed",
        "T6.3",
        "gathered_product's A pointers take x_rows[None, :] and (k0 + cols)[:, None]: the box transposed under "
        "the mask as written; the message said to mask A's load at K, which it was (hunt8)",
        "4.1",
        A_LOAD,
        A_LOAD.replace(
            "x_rows[:, None] * stride_xm + (k0 + cols)[None, :]", "x_rows[None, :] * stride_xm + (k0 + cols)[:, None]"
        ),
        "test_gathered_product_alone[gathered]",
        "a-rows-turned",
    ),
    own(
        "rank-ignores-expert",
        "T6.1",
        "scatter_slots' rank counts every earlier slot of the block in range, whatever its expert; the message "
        "took the first wrong slot apart alone (hunt8)",
        "2.1",
        "earlier_same = (ids[:, None] == ids[None, :]) & (lane[None, :] < lane[:, None]) & valid[None, :]",
        "earlier_same = (lane[None, :] < lane[:, None]) & valid[None, :]",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "outside-tensors+rank-any-expert",
    ),
    own(
        "first-tile-uniform",
        "T6.2",
        "locate_tile takes an expert's first tile as expert * its own tiles: right where every expert has as many; "
        "the message named two causes, one or the other; now the index below 0 alone (hunt8)",
        "3.3",
        "first_tile = tl.sum(tl.where(this, tile_ends, 0), axis=0) - expert_m_blocks * num_pid_n",
        "first_tile = expert * expert_m_blocks * num_pid_n",
        "test_tile_counts_and_places_alone",
        "index-outside-expert",
    ),
    own(
        "coords-over-max-m-blocks",
        "T6.2",
        "locate_tile hands tile_coords the largest m_blocks, not the expert's own: the message said pid_m and "
        "pid_n were swapped, since on the test's counts the swapped places were every tile once too (hunt8)",
        "3.3",
        "pid_m, pid_n = tile_coords(tile_id - first_tile, expert_m_blocks, num_pid_n, GROUP_M)",
        "pid_m, pid_n = tile_coords(tile_id - first_tile, tl.max(m_blocks, axis=0), num_pid_n, GROUP_M)",
        "test_tile_counts_and_places_alone",
        "largest-m-blocks",
    ),
    own(
        "total-from-total-rows",
        "T6.2",
        "grouped_tiles loops up to cdiv(total rows, BLOCK_M) * num_pid_n: the tiles of the rows unsplit by expert; "
        "the message said a count or a bound too small, say (hunt8)",
        "3.4",
        "    total = tl.max(tile_ends, axis=0)\n",
        "    total = tl.cdiv(tl.load(offsets_ptr + num_experts - 1), BLOCK_M) * num_pid_n\n",
        "test_every_tile_of_every_expert_once",
        "bound-from-rows",
    ),
    own(
        "locate-argmax-first-of-ties",
        "T6.2",
        "locate_tile takes the expert after the first of the largest ends not above the tile: with an empty expert "
        "in the ties, that one; the message gave the expert alone (hunt8)",
        "3.3",
        LOCATE,
        "last = tl.argmax(tl.where(tile_ends <= tile_id, tile_ends, -1), axis=0)\n"
        "    expert = tl.where(tile_id < tl.min(tile_ends, axis=0), 0, last + 1)",
        "test_tile_counts_and_places_alone",
        "empty-expert-given",
    ),
    own(
        "locate-skips-empty",
        "T6.2",
        "locate_tile counts the ends not above the tile of the experts with m-blocks alone: every empty expert "
        "before it shifts the expert by one; the message gave the expert alone (hunt8)",
        "3.3",
        LOCATE,
        "expert = tl.sum(((tile_ends <= tile_id) & (m_blocks > 0)).to(tl.int32), axis=0)",
        "test_tile_counts_and_places_alone",
        "empty-expert-given",
    ),
    own(
        "combine-pairwise",
        "T6.3",
        "combine_topk adds the even j first, then the odd: deterministic, not in j order; the message said the "
        "bits differ alone (hunt8)",
        "4.4",
        COMBINE_ADD,
        COMBINE_ADD.replace("tl.static_range(TOP_K)", "tl.static_range(0, TOP_K, 2)")
        + COMBINE_ADD.replace("tl.static_range(TOP_K)", "tl.static_range(1, TOP_K, 2)"),
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "combine-order",
    ),
    own(
        "combine-slot-t-plus-j",
        "T6.3",
        "combine_topk reads row t + j of by_slot, not t * TOP_K + j; the message said to check which rows are "
        "added (hunt8)",
        "4.4",
        "acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols,",
        "acc += tl.load(by_slot_ptr + (t + j) * N + cols,",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "rows-t-plus-j",
    ),
    own(
        "swiglu-without-up",
        "T6.4",
        "swiglu returns gate * sigmoid(gate): up left out; the message gave the error alone (hunt8)",
        "5.1",
        "return gate * tl.sigmoid(gate) * up",
        "return gate * tl.sigmoid(gate)",
        "test_gate_up_with_swiglu[torch.float16]",
        "up-left-out",
    ),
    own(
        "gate-up-a-without-live",
        "T6.4",
        "gate_up_product's A load masks at K alone, not with live: the message counted the rows not live that "
        "were not 0, and said no more (hunt8)",
        "5.1",
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n        gate",
        "                    mask=(k0 + cols < K)[None, :], other=0.0)\n        gate",
        "test_gate_up_product_alone",
        "gate-up-dead-rows",
    ),
    own(
        "mlp-weights-pre-sorted",
        "T6.4",
        "moe_mlp puts topk_weights in sorted order (weights[sorted_slots]) before the down launch, which reads "
        "weights[slot] itself; the message gave the error alone (hunt8)",
        "5.2",
        DOWN_CALL,
        "    topk_weights = topk_weights.flatten()[routing.sorted_slots.long()].view(topk_weights.shape)\n" + DOWN_CALL,
        "test_moe_mlp_in_two_launches",
        "weights-sorted",
    ),
    own(
        "offsets-check-kept",
        "T6.3",
        "check_expert_inputs checks a hand-made Routing's offsets once per offsets tensor, kept by address: "
        "changed in place, they are taken unchecked; the whole suite passed (hunt8)",
        "4",
        "    if not routing.checked:  # made by hand: its offsets must be the row ends of its counts\n"
        "        check_offsets(routing)",
        "    seen = check_expert_inputs.__dict__.setdefault('seen', set())\n"
        "    if not routing.checked and routing.offsets.data_ptr() not in seen:\n"
        "        check_offsets(routing)\n"
        "        seen.add(routing.offsets.data_ptr())",
        "test_grouped_matmul_refuses_bad_input",
        "routing-check-kept",
    ),
    own(
        "row-begin-padded-end",
        "T6.2",
        "grouped_tiles starts a tile at the expert's row end less cdiv(count, BLOCK_M) * BLOCK_M: rows early by the "
        "last m-block's padding; the message gave the tile's rows alone (hunt8)",
        "3.2",
        "row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_M",
        "row_begin = expert_end - tl.cdiv(tl.load(counts_ptr + expert), BLOCK_M) * BLOCK_M + pid_m * BLOCK_M",
        "test_every_tile_of_every_expert_once",
        "begin-from-padded-end",
    ),
    own(
        "tiles-backwards",
        "T6.2",
        "grouped_tiles hands the tiles out from the last one down (program p: total - 1 - p, then NUM_PROGS less): "
        "every tile once, by another program than p mod NUM_PROGS; the message named one tile's program alone "
        "(hunt8)",
        "3.4",
        "for tile_id in tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN):",
        "for tile_id in tl.range(total - 1 - tl.program_id(0), -1, -NUM_PROGS, flatten=FLATTEN):",
        "test_every_tile_of_every_expert_once",
        "tiles-from-last",
    ),
    own(
        "spare-programs-clamped",
        "T6.2",
        "grouped_tiles starts each program at min(pid, total - 1), so that no program idles: where there are no "
        "tiles it does tile -1; the message said tile ids past the bound were written past the trace, and the "
        "loop must stop at the total (hunt8)",
        "3.4",
        "for tile_id in tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN):",
        "for tile_id in tl.range(tl.minimum(tl.program_id(0), total - 1), total, NUM_PROGS, flatten=FLATTEN):",
        "test_every_tile_of_every_expert_once",
        "tile-below-zero",
    ),
    own(
        "ids-checked-with-two-syncs",
        "T6.1",
        "check_routing_inputs reads int(topk_ids.min()), then int(topk_ids.max()): two waits for the device where "
        "one torch.aminmax, read once, is one; the whole suite passed (hunt8)",
        "2.3",
        "        lo, hi = (int(v) for v in torch.aminmax(topk_ids))  # one look at the ids: a host sync",
        "        lo, hi = int(topk_ids.min()), int(topk_ids.max())",
        "test_route_reads_nothing_back_but_one_look_at_the_ids",
        "ids-waited-twice",
    ),
)
