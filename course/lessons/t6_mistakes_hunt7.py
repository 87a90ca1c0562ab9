"""Lesson T6's mutants of our own from the seventh hunt (hunt7b, 2026-12-04): mistakes planted in a copy of
the reference that the suite let through, or caught with a message that named no cause it could have named
(a stray access told by its line alone, Triton's errors wrapped in InterpreterError, numbers alone), until the
check named with each was added or mended; and a few caught as they should be, kept so that they stay so
(ids at the range's edge, tiles cut at the wrong end, config and weights in moe_mlp, a host sync in the
checks).  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of HUNT7_CAUSES here, or of t6_mistakes.CAUSES) or, for cause "", none.
t6_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT7_CAUSES = {
    "host-read-equal-ids": ("拿专家号去和留下的比较", "comparing the ids with kept ones reads them back"),
    "rank-all-others": ("数了除它以外的所有同专家 slot", "every other slot of the expert"),
    "lanes-stored": ("不是 slot 号本身", "not the slot number itself"),
    "last-count-zero": ("的计数不对，是 0", "the last expert's count alone is wrong"),
    "ids-changed-not-refused": ("就地改动了调用者的 topk_ids", "changed the caller's topk_ids in place"),
    "one-row-block-lost": ("只有一行的专家（counts % BLOCK_M == 1）上少了 1", "whose last m-block holds one row"),
    "last-expert-left-out": ("的 tile 一个也没做", "none of the last expert's"),
    "first-row-twice": ("那一行加了两次", "row j = 0 added twice"),
    "whole-block-live": ("行都被当成了 live", "rows of the block were taken as live"),
    "x-sorted-no-division": ("不再除以 top_k", "not i // top_k"),
    "tile-transposed": ("整个 tile 是转置过的", "the whole tile is transposed"),
    "bf16-refused-by-check": ("先拒绝了它", "refused it first"),
    "sigmoid-negated": ("sigmoid 的参数多了个负号", "sigmoid's argument has its sign flipped"),
    "gate-up-no-activation": ('没有传 activation="swiglu"', 'made without activation="swiglu"'),
    "result-overwritten": ("改动了第一次返回的结果", "changed the result the first returned"),
    "weights-by-column": ("第 j 列乘的是第 j 行的权重", "column j was scaled by row j's weight"),
    "out-turned": ("写下的单元正是行列互换后的位置", "the cells written are those with row and column swapped"),
    "row-begin-from-pid-n": ("算 row_begin 时用了 pid_n", "row_begin was worked out from pid_n"),
    "weights-changed": ("moe_mlp 改动了调用者的 topk_weights", "moe_mlp changed the caller's topk_weights"),
}

HUNT7 = (
    own(
        "counts-store-unmasked",
        "T6.1",
        "scan_counts stores counts without the mask experts < num_experts: E_BLOCK's spare lanes write "
        "past counts; the message named the line alone, now the tensor it runs past and that every lane "
        "was on (hunt7b)",
        "2.1",
        "tl.store(counts_ptr + experts, running, mask=experts < num_experts)",
        "tl.store(counts_ptr + experts, running)",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "outside-tensors",
    ),
    own(
        "offsets-store-e-block",
        "T6.1",
        "scan_counts stores offsets with the mask experts < E_BLOCK, a mask that lets every lane through: "
        "past offsets' end; the message named the line alone (hunt7b)",
        "2.1",
        "tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts)",
        "tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < E_BLOCK)",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "outside-tensors",
    ),
    own(
        "running-summed-along-axis-1",
        "T6.1",
        "scan_counts adds tl.sum(here, axis=1) into running: a shape error inside Triton, which the stable "
        "sort's test showed as 'route raised InterpreterError: ValueError(...)', with no line (hunt7b)",
        "2.1",
        "running += tl.sum(here, axis=0)",
        "running += tl.sum(here, axis=1)",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
    ),
    own(
        "histogram-bins-num-experts",
        "T6.1",
        "count_experts calls tl.histogram with num_experts bins, not the constexpr E_BLOCK: numpy's "
        "TypeError from inside the interpreter, shown as 'route raised InterpreterError: TypeError(...)' "
        "with no line (hunt7b)",
        "2.1",
        "hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)",
        "hist = tl.histogram(ids.to(tl.int32), num_experts, mask=valid)",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
    ),
    own(
        "arange-not-pow2",
        "T6.3",
        "gathered_rows takes tl.arange(0, BLOCK_M - 1): Triton refuses a range not a power of 2, and the "
        "views test showed it as InterpreterError('InterpreterError(...)') three times nested, with no "
        "line (hunt7b)",
        "4.1",
        "    rows = row_begin + tl.arange(0, BLOCK_M)\n    live = rows < row_end\n    if X_SORTED:",
        "    rows = row_begin + tl.arange(0, BLOCK_M - 1)\n    live = rows < row_end\n    if X_SORTED:",
        "test_grouped_matmul_reads_views_of_weights_and_of_a_hand_made_routing",
    ),
    own(
        "mlp-routing-kept-when-equal",
        "T6.4",
        "moe_mlp keeps its last routing and uses it again when torch.equal says the ids are the same: the "
        "numbers are right, but the comparison is a host sync; the host-read test called the layer once, "
        "and it passed (hunt7b)",
        "3.4",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "    kept = moe_mlp.__dict__.setdefault('kept', [])\n    if kept and kept[0].shape == "
        "topk_ids.shape and torch.equal(kept[0], topk_ids) and kept[1] == w_gate_up.shape[0]:\n"
        "        routing = kept[2]\n    else:\n        routing = route(topk_ids, w_gate_up.shape[0])\n"
        "        kept[:] = [topk_ids.clone(), w_gate_up.shape[0], routing]\n",
        "test_moe_mlp_reads_nothing_back_but_the_id_check",
        "host-read-equal-ids",
    ),
    own(
        "rank-counts-all-others",
        "T6.1",
        "scatter_slots' rank counts every other slot of its expert in the block (lane != lane), not the "
        "earlier ones alone: the message gave the first wrong place alone (hunt7b)",
        "2.1",
        "(lane[None, :] < lane[:, None])",
        "(lane[None, :] != lane[:, None])",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "rank-all-others",
    ),
    own(
        "scatter-stores-lane",
        "T6.1",
        "scatter_slots stores each slot's lane in its block into sorted_slots, not the slot: right for "
        "block 0 alone; the message said slots were missing (hunt7b)",
        "2.1",
        "tl.store(sorted_slots_ptr + pos, slots, mask=valid)",
        "tl.store(sorted_slots_ptr + pos, lane, mask=valid)",
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "lanes-stored",
    ),
    own(
        "count-drops-last-expert",
        "T6.1",
        "count_experts' range check is ids < num_experts - 1: the last expert's slots are counted for no "
        "expert; the message gave the counts alone (hunt7b)",
        "2.1",
        "    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts)\n    hist",
        "    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts - 1)\n    hist",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "last-count-zero",
    ),
    own(
        "negative-ids-zeroed-in-place",
        "T6.1",
        "check_routing_inputs clamps the caller's topk_ids to 0 in place before its check: negative ids "
        "pass, mended; the message said nothing was raised, not that the caller's ids changed (hunt7b)",
        "2.3",
        "        lo, hi = (int(v) for v in torch.aminmax(topk_ids))",
        "        topk_ids.clamp_(min=0)\n        lo, hi = (int(v) for v in torch.aminmax(topk_ids))",
        "test_route_refuses_bad_input[negative ids]",
        "ids-changed-not-refused",
    ),
    own(
        "m-blocks-round-minus-one",
        "T6.2",
        "expert_tile_counts takes (counts + BLOCK_M - 2) // BLOCK_M m-blocks: one short where the last "
        "m-block holds one row (a one-row expert gets none); the message gave the numbers alone (hunt7b)",
        "3.3",
        "m_blocks = tl.cdiv(counts, BLOCK_M)",
        "m_blocks = (counts + BLOCK_M - 2) // BLOCK_M",
        "test_tile_counts_and_places_alone",
        "one-row-block-lost",
    ),
    own(
        "tile-counts-skip-last-expert",
        "T6.2",
        "expert_tile_counts masks counts' load at experts < num_experts - 1: the last expert's tiles are "
        "never done; the probe's last expert was empty, and the schedule's test said 'a tile count or a "
        "loop bound too small, say' (hunt7b)",
        "3.3",
        "counts = tl.load(counts_ptr + experts, mask=experts < num_experts, other=0)",
        "counts = tl.load(counts_ptr + experts, mask=experts < num_experts - 1, other=0)",
        "test_every_tile_of_every_expert_once",
        "last-expert-left-out",
    ),
    own(
        "combine-first-twice",
        "T6.3",
        "combine_topk starts its accumulator from row j = 0 and then adds every row: that row twice; the "
        "message said 'check which rows are added' (hunt7b)",
        "4.4",
        "    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)\n    for j in",
        "    acc = tl.load(by_slot_ptr + t * TOP_K * N + cols, mask=cols < N, other=0.0).to(tl.float32)\n    for j in",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "first-row-twice",
    ),
    own(
        "gather-live-whole-block",
        "T6.3",
        "gathered_rows takes live as rows < row_begin + BLOCK_M: the whole block, past the expert's last "
        "row; the message listed the rows alone (hunt7b)",
        "4.1",
        "    live = rows < row_end\n    if X_SORTED:",
        "    live = rows < row_begin + BLOCK_M\n    if X_SORTED:",
        "test_gathered_product_alone[gathered]",
        "whole-block-live",
    ),
    own(
        "x-sorted-rows-by-top-k",
        "T6.3",
        "gathered_rows reads row i // TOP_K of x with X_SORTED, where h holds one row per slot already; "
        "the message listed the rows alone (hunt7b)",
        "4.1",
        "x_rows = tl.where(live, rows, 0)",
        "x_rows = tl.where(live, rows // TOP_K, 0)",
        "test_gathered_product_alone[x sorted]",
        "x-sorted-no-division",
    ),
    own(
        "dot-operands-swapped",
        "T6.3",
        "gathered_product computes tl.dot(b, a.T, acc): a shape error for tiles not square, the transposed "
        "tile for square ones; gathered_product's own test (square) said 'relative error' alone (hunt7b)",
        "4.2",
        "        acc = tl.dot(a, b.T, acc)",
        "        acc = tl.dot(b, a.T, acc)",
        "test_gathered_product_alone[gathered]",
        "tile-transposed",
    ),
    own(
        "bf16-refused",
        "T6.3",
        "check_expert_inputs takes fp16 and fp32 alone: bf16 is refused by the learner's check before the "
        "host's own refusal on the interpreter; the learner saw their ValueError bare, with no word of why "
        "it failed (hunt7b)",
        "4",
        "if x.dtype not in (torch.float16, torch.bfloat16, torch.float32):",
        "if x.dtype not in (torch.float16, torch.float32):",
        "test_bf16_is_refused_on_the_interpreter",
        "bf16-refused-by-check",
    ),
    own(
        "silu-negated-sigmoid",
        "T6.4",
        "swiglu returns gate * sigmoid(-gate) * up; the message gave the error alone (hunt7b)",
        "5.1",
        "return gate * tl.sigmoid(gate) * up",
        "return gate * tl.sigmoid(-gate) * up",
        "test_gate_up_with_swiglu[torch.float16]",
        "sigmoid-negated",
    ),
    own(
        "mlp-no-swiglu",
        "T6.4",
        "moe_mlp's gate/up call leaves out activation='swiglu': h has 2F columns and the down call is "
        "refused for its K; the message named the refused call, not the one that made h (hunt7b)",
        "5.2",
        "activation=\"swiglu\", config=config)",
        "config=config)",
        "test_moe_mlp_in_two_launches",
        "gate-up-no-activation",
    ),
    own(
        "mlp-out-kept",
        "T6.4",
        "moe_mlp returns one buffer it keeps per shape, copied into at each call: a second call overwrites "
        "the result the caller holds from the first; every test passed (hunt7b)",
        "5.2",
        "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, config=config)",
        "    y = grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, "
        "config=config)\n    kept = moe_mlp.__dict__.setdefault('out', {})\n"
        "    key = (tuple(y.shape), y.dtype, y.device)\n    if key not in kept:\n"
        "        kept[key] = torch.empty_like(y)\n    return kept[key].copy_(y)",
        "test_moe_mlp_reads_x_as_given_and_routes_each_call",
        "result-overwritten",
    ),
    own(
        "id-equal-e-taken",
        "T6.1",
        "check_routing_inputs refuses ids above num_experts alone (hi > num_experts): an id equal to "
        "num_experts, the range's edge, is routed (hunt7b)",
        "2.3",
        "if lo < 0 or hi >= num_experts:",
        "if lo < 0 or hi > num_experts:",
        "test_route_refuses_bad_input[an id >= num_experts]",
    ),
    own(
        "rows-cut-at-total",
        "T6.2",
        "grouped_tiles cuts a tile's rows at the last expert's end, offsets[num_experts - 1], not its own: "
        "tiles run into the next expert's rows (hunt7b)",
        "3.2",
        "row_end = tl.minimum(row_begin + BLOCK_M, expert_end)",
        "row_end = tl.minimum(row_begin + BLOCK_M, tl.load(offsets_ptr + num_experts - 1))",
        "test_every_tile_of_every_expert_once",
        "mixes-experts",
    ),
    own(
        "row-end-full-tile-one-short",
        "T6.2",
        "grouped_tiles cuts row_end at min(row_begin + BLOCK_M - 1, expert_end): a full tile (rows a "
        "multiple of BLOCK_M) loses its last row (hunt7b)",
        "3.2",
        "row_end = tl.minimum(row_begin + BLOCK_M, expert_end)",
        "row_end = tl.minimum(row_begin + BLOCK_M - 1, expert_end)",
        "test_every_tile_of_every_expert_once",
        "row-end-one-short",
    ),
    own(
        "mlp-config-down-dropped",
        "T6.4",
        "moe_mlp hands the caller's config to the gate/up call alone, not to down (hunt7b)",
        "5.2",
        "topk_weights, combine=True, x_sorted=True, config=config)",
        "topk_weights, combine=True, x_sorted=True)",
        "test_moe_mlp_in_two_launches",
        "mlp-config-dropped",
    ),
    own(
        "rows-checked-against-counts",
        "T6.3",
        "check_expert_inputs compares the sum of routing.counts with the slots: int() of a device tensor, "
        "a host sync on every call (hunt7b)",
        "3.4",
        "    if x.shape[0] != rows:\n",
        "    if int(routing.counts.sum()) > routing.num_tokens * routing.top_k:\n"
        "        raise ValueError('grouped_matmul: routing.counts sum past the slots')\n"
        "    if x.shape[0] != rows:\n",
        "test_grouped_matmul_reads_nothing_back",
    ),
    own(
        "mlp-weights-renormalised-in-place",
        "T6.4",
        "moe_mlp divides the caller's topk_weights by their sum in place before the down launch (hunt7b)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "    topk_weights.div_(topk_weights.sum(dim=1, keepdim=True))\n"
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "test_moe_mlp_in_two_launches",
        "weights-changed",
    ),
    own(
        "weights-broadcast-along-columns",
        "T6.3",
        "store_rows multiplies acc by the weights as [None, :]: each column by a row's weight (a shape error "
        "where BLOCK_M != BLOCK_N); store_rows' own square test said 'off by' alone (hunt7b)",
        "4.3",
        ".to(tl.float32)[:, None]",
        ".to(tl.float32)[None, :]",
        "test_store_rows_alone[weighted]",
        "weights-by-column",
    ),
    own(
        "out-strides-swapped",
        "T6.3",
        "store_rows addresses out with stride_on for rows and stride_om for columns; store_rows' own test "
        "said how many cells were written elsewhere, not where (hunt7b)",
        "4.3",
        "tl.store(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on,",
        "tl.store(out_ptr + out_rows[:, None] * stride_on + cols[None, :] * stride_om,",
        "test_store_rows_alone[plain]",
        "out-turned",
    ),
    own(
        "row-begin-by-pid-n",
        "T6.2",
        "grouped_tiles starts a tile at the expert's first row + pid_n * BLOCK_M: the message gave one "
        "tile's rows alone (hunt7b)",
        "3.2",
        "row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_M",
        "row_begin = expert_end - tl.load(counts_ptr + expert) + pid_n * BLOCK_M",
        "test_every_tile_of_every_expert_once",
        "row-begin-from-pid-n",
    ),
    own(
        "scan-mask-inclusive",
        "T6.1",
        "scan_counts loads block_counts with the mask blocks <= num_blocks: a row past the last block is "
        "read, past block_counts (hunt7b)",
        "2.1",
        "here = tl.load(block_counts_ptr + where, mask=blocks[:, None] < num_blocks, other=0)",
        "here = tl.load(block_counts_ptr + where, mask=blocks[:, None] <= num_blocks, other=0)",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "outside-tensors",
    ),
    own(
        "mlp-weights-both-launches",
        "T6.4",
        "moe_mlp hands topk_weights to both launches: h scaled and the output scaled again (hunt7b)",
        "5.2",
        "hidden = grouped_matmul(x, w_gate_up, routing, activation=\"swiglu\", config=config)",
        "hidden = grouped_matmul(x, w_gate_up, routing, topk_weights, activation=\"swiglu\", config=config)",
        "test_moe_mlp_in_two_launches",
        "weights-in-gate-up",
    ),
    own(
        "float-ids-taken",
        "T6.1",
        "check_routing_inputs does not check the ids' dtype: float ids reach count_experts, whose error the "
        "test of bad input showed as Triton's InterpreterError wrapper, not the error inside it (hunt7b)",
        "2.3",
        "    if topk_ids.dtype == torch.bool or topk_ids.is_floating_point() or topk_ids.is_complex():\n"
        '        raise ValueError(f"route: topk_ids must hold integer expert ids, got {topk_ids.dtype}")\n',
        "",
        "test_route_refuses_bad_input[float ids]",
    ),
)
