"""Lesson T6's mutants of our own from hole hunts (t6holes, t6grade): mistakes the suite once let through,
or caught with a message that pointed elsewhere.  Only make check runs them (table=False, not in
§8).  Each must be caught by its test, whose message names its cause (a key of CAUSES, here or in
t6_mistakes.py) or, for cause "", none.  t6_mistakes.py gathers them after its own, and the last of
them from t6_mistakes_own_late.py: one file would pass 400 lines.
"""

from course.lesson_data import Mistake


def own(key, step, en, section, old, new, test, cause=""):
    """A mutant of our own: make check runs it, §8 does not show it (the words are for make check's report)."""
    return Mistake(key, step, en, en, section, old, new, test, cause, table=False)


# The words a message says when, and only when, it has detected the cause: {key: (Chinese, English)}.
OWN_CAUSES = {
    "combine-past-n": ("越过了第 N - 1 列", "past column N - 1"),
    "slot-as-x-row": ("拿 slot 当 x 的行号", "a slot taken for x's row number"),
    "weights-twice": ("路由权重乘了两次", "the routing weights were applied twice"),
    "weights-by-row": ("不是 weights[slot]", "not weights[slot]"),
    "gate-up-not-x": ("gate/up 那次启动读的不是调用者的 x", "the gate/up launch does not read the caller's x"),
    "ids-narrowed": ("截成 int32 以后", "narrowed to int32"),
    "down-not-h": ("down 那次启动读的不是 gate/up 那次写出的 h", "the down launch does not read the h the gate/up"),
    "down-unsorted": ("没有传 x_sorted=True", "without x_sorted=True"),
    "read-as-contiguous": ("当成连续的来读", "as if it were contiguous"),
    "id-as-index": ("也不能拿来当下标", "is never an index"),
    "not-the-bad-ids": ("不是这些号的问题", "the ids out of range are not the cause"),
    "w-box-turned": ("w 的 box 按反过来的坐标载入", "w's box gives when loaded with its coordinates the other way"),
    "w-box-untransposed": ("w 的 box 不转置就拿去乘", "w's box gives when multiplied without .T"),
    "start-or-step": ("是循环的起点或步长跳过了它", "so the loop's start or step skips it"),
    "ids-written": ("route 改动了调用者的 topk_ids", "of the caller's topk_ids, which it only reads"),
    "loop-words": ("会做出来的", "are those of a loop from"),
    "tile-ends-are-starts": ("这是每个专家的第一个 tile", "these are each expert's first tile"),
    "scatter-stores-swapped": ("互换了内容", "hold each other's values"),
    "row-end-live": ("row_end 本身）也被当成了 live", "(row_end itself) was taken as live"),
    "x-strides-swapped": ("按 stride_xm 和 stride_xk 反过来读 x", "stride_xm and stride_xk the other way round"),
}

# gathered_product's load of w's box, and the line after it
W_BOX = (
    "        b = w_desc.load([w_row, k0])  # past K: zeros; past the expert's N rows: the next expert's, never stored\n"
)

COMBINE_LOAD = "mask=cols < N, other=0.0).to(tl.float32)\n"
COMBINE_STORE_MASK = "acc.to(out_ptr.dtype.element_ty), mask=cols < N)"
# The flat bound of out (rows x N) in place of N: a row's stray columns land in the next row.
FLAT = "t * N + cols < tl.num_programs(0) * N"

LOOP = "for tile_id in tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN):"
A_LOAD = "mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n        b = "
WEIGHTING = "        acc = acc * tl.load(weights_ptr + slots, mask=live, other=0.0).to(tl.float32)[:, None]\n"
GATE_UP_CALL = '    hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)\n'
# check_routing_inputs's dtype check: integers pass, bool and floats do not (§2.3).
DTYPE_CHECK = "    if topk_ids.dtype == torch.bool or topk_ids.is_floating_point() or topk_ids.is_complex():\n"

OWN = (
    own(
        "bool-ids-routed",
        "T6.1",
        "check_routing_inputs refuses floats alone: bool topk_ids are routed, True and False as experts 1 and 0",
        "2.3",
        DTYPE_CHECK,
        "    if topk_ids.is_floating_point() or topk_ids.is_complex():\n",
        "test_route_refuses_bad_input[bool ids]",
    ),
    own(
        "narrow-ids-refused",
        "T6.1",
        "check_routing_inputs takes int32 and int64 alone: int8, uint8 and int16 ids, integer tensors, are refused",
        "2.3",
        DTYPE_CHECK,
        "    if topk_ids.dtype not in (torch.int32, torch.int64):\n",
        "test_route_takes_narrower_integer_ids[torch.int8]",
    ),
    own(
        "combine-mask-on-flat-bound",
        "T6.3",
        "combine_topk masks its load and store with the flat bound rows * N, not cols < N: each row's store "
        "spills into the next token's row, which that token's program writes over when programs run in id order",
        "4.4",
        COMBINE_LOAD + "    tl.store(out_ptr + t * N + cols, " + COMBINE_STORE_MASK,
        f"mask={FLAT}, other=0.0).to(tl.float32)\n    tl.store(out_ptr + t * N + cols, "
        f"acc.to(out_ptr.dtype.element_ty), mask={FLAT})",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "combine-past-n",
    ),
    own(
        "loop-past-total-read-counts",
        "T6.2",
        "the loop runs a row of tiles past the total: those tiles' expert is num_experts, whose counts and offsets "
        "lie past both (test_schedule_reads_only_counts_and_offsets said 'read 4 cells outside', §3.2)",
        "3.4",
        LOOP,
        LOOP.replace("total,", "total + num_pid_n,"),
        "test_schedule_reads_only_counts_and_offsets",
        "past-total",
    ),
    own(
        "loop-to-sum-of-ends",
        "T6.2",
        "the loop runs to the sum of tile_ends, not their last: far past the trace",
        "3.4",
        LOOP,
        LOOP.replace("total,", "tl.sum(tile_ends, axis=0),"),
        "test_schedule_reads_only_counts_and_offsets",
        "past-total",
    ),
    own(
        "a-unmasked-at-k",
        "T6.3",
        "A's load masks the live rows alone, not k0 + cols < K: the last row of x is read past its end (no slot "
        "taken for a row, which the message once said)",
        "4.1",
        A_LOAD,
        A_LOAD.replace(" & (k0 + cols < K)[None, :]", ""),
        "test_each_tile_reads_its_own_expert_alone[plain]",
    ),
    own(
        "slot-as-x-row",
        "T6.3",
        "A's row taken as the slot itself, not slot // top_k: rows past x's last are read",
        "4.1",
        "x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0) // TOP_K",
        "x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0)",
        "test_each_tile_reads_its_own_expert_alone[plain]",
        "slot-as-x-row",
    ),
    own(
        "weights-twice",
        "T6.3",
        "the epilogue multiplies by the routing weight twice",
        "4.3",
        WEIGHTING,
        WEIGHTING + WEIGHTING,
        "test_store_rows_alone[weighted]",
        "weights-twice",
    ),
    own(
        "weights-by-sorted-row",
        "T6.3",
        "the routing weight loaded at the sorted row, weights[row], not at the row's slot",
        "4.3",
        WEIGHTING,
        WEIGHTING.replace("weights_ptr + slots", "weights_ptr + rows"),
        "test_store_rows_alone[weighted]",
        "weights-by-row",
    ),
    own(
        "mlp-gathers-x-on-the-host",
        "T6.4",
        "moe_mlp copies x in sorted order on the host and runs gate/up with x_sorted=True: the same numbers, x copied",
        "5.2",
        GATE_UP_CALL,
        "    xs = x[routing.sorted_slots.long() // routing.top_k]\n"
        + GATE_UP_CALL.replace("(x,", "(xs,").replace("config=config", "x_sorted=True, config=config"),
        "test_moe_mlp_in_two_launches",
        "gate-up-not-x",
    ),
    own(
        "mlp-copies-h",
        "T6.4",
        "moe_mlp hands down a copy of h (float32, say): the same numbers, h written and read once more",
        "5.2",
        GATE_UP_CALL,
        GATE_UP_CALL.replace("config=config)", "config=config).clone()"),
        "test_moe_mlp_in_two_launches",
        "down-not-h",
    ),
    own(
        "x-w-dtypes-unchecked",
        "T6.3",
        "check_expert_inputs does not compare x's dtype with w's: the kernel's tl.dot refuses them (it was shown as "
        "tl.dot's AssertionError at gathered_product, §4.2)",
        "4",
        "    if w.dtype != x.dtype:\n",
        "    if False:\n",
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "activation-unchecked",
        "T6.3",
        "check_expert_inputs lets any activation through: 'gelu' runs as no activation at all",
        "4",
        '    if activation not in (None, "swiglu"):\n',
        "    if False:\n",
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "x-must-be-contiguous",
        "T6.3",
        "check_expert_inputs refuses a non-contiguous x, valid input that the kernel reads through its strides",
        "4",
        "    if w.shape[2] != x.shape[1]:\n",
        '    if not x.is_contiguous():\n        raise ValueError("grouped_matmul: x must be contiguous")\n'
        "    if w.shape[2] != x.shape[1]:\n",
        "test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float16]",
    ),
    own(
        "num-experts-bool",
        "T6.1",
        "check_routing_inputs takes num_experts=True, an int to isinstance",
        "2.3",
        "    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:\n",
        "    if not isinstance(num_experts, int) or num_experts < 1:\n",
        "test_route_refuses_bad_input[num_experts = True]",
        "names-no-argument",  # named since styles15 (t6_mistakes_styles15.py)
    ),
    own(
        "ids-narrowed-before-check",
        "T6.1",
        "count_experts narrows the ids to int32 as it loads them, before the range check: 2^32 + 1 counts as expert 1",
        "2.3",
        "    ids = tl.load(ids_ptr + slots, mask=slots < num_slots, other=0)  # int64 stays int64 until checked\n",
        "    ids = tl.load(ids_ptr + slots, mask=slots < num_slots, other=0).to(tl.int32)\n",
        "test_route_ignores_ids_out_of_range",
        "ids-narrowed",
    ),
    own(
        "mlp-skips-id-check",
        "T6.4",
        "moe_mlp routes with check_ids=False: an id out of range leaves its slot out, and the combine reads a "
        "by-slot row no tile wrote",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "    routing = route(topk_ids, w_gate_up.shape[0], check_ids=False)\n",
        "test_moe_mlp_refuses_ids_out_of_range",
    ),
    own(
        "rank-swaps-pairs",
        "T6.1",
        "the rank in the block compares lanes with their last bit flipped: unstable only where slots 2i and "
        "2i + 1 chose one expert (never with top_k=2 and distinct experts per token)",
        "2.2",
        "(lane[None, :] < lane[:, None])",
        "((lane ^ 1)[None, :] < (lane ^ 1)[:, None])",
        "test_route_is_a_stable_counting_sort[one expert-20-1-4]",
        "unstable",
    ),
    own(
        "mlp-down-without-x-sorted",
        "T6.4",
        "moe_mlp's down call leaves out x_sorted=True: check_expert_inputs refuses h's T*top_k rows, and its "
        "ValueError was shown bare, with no word of moe_mlp nor of §5.2",
        "5.2",
        "combine=True, x_sorted=True, config=config)",
        "combine=True, config=config)",
        "test_moe_mlp_in_two_launches",
        "down-unsorted",
    ),
    own(
        "routing-dtype-unchecked",
        "T6.3",
        "check_expert_inputs checks the routing's tensors' device and shape, not their dtype: a hand-made Routing "
        "of int64 reaches the kernel, whose tile_coords asserts on it",
        "4",
        "        if t.dtype != torch.int32 or t.device != x.device or t.dim() != 1:\n",
        "        if t.device != x.device or t.dim() != 1:\n",
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "w-experts-unchecked",
        "T6.3",
        "check_expert_inputs does not compare w's expert count with the routing's: the kernel reads counts past "
        "their end (that stray read, stopped, was once blamed on expert_tile_counts, T6.2, not on the missing check)",
        "4",
        "    if w.shape[0] != routing.num_experts:\n",
        "    if False:\n",
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "tile-counts-unmasked",
        "T6.2",
        "expert_tile_counts loads counts without the mask experts < num_experts: E_BLOCK's spare lanes read past "
        "counts (named at its line, with its step, by the watch on every launch)",
        "3.3",
        "    counts = tl.load(counts_ptr + experts, mask=experts < num_experts, other=0)\n",
        "    counts = tl.load(counts_ptr + experts)\n",
        "test_tile_counts_and_places_alone",
        "outside-tensors",
    ),
    own(
        "combine-load-unmasked",
        "T6.3",
        "combine_topk loads the by-slot rows without a mask: the last token's last row reads past the buffer, in "
        "a test that launches combine_topk itself (no watch of its own)",
        "4.4",
        ", " + COMBINE_LOAD,
        ").to(tl.float32)\n",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "outside-tensors",
    ),
    own(
        "block-base-store-unmasked",
        "T6.1",
        "scan_counts stores block_base without the mask of its batch's blocks: the last batch's rows past "
        "num_blocks land past block_base",
        "2.1",
        "        tl.store(block_base_ptr + where, before, mask=blocks[:, None] < num_blocks)\n",
        "        tl.store(block_base_ptr + where, before)\n",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "outside-tensors",
    ),
)
