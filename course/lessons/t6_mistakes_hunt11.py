"""Lesson T6's mutants of our own from the eleventh mistake hunt (hunt11, 2026-12-04): off-grid inputs (top_k = 1,
no tokens, a power-of-two expert count), legal views refused, operands rounded before tl.dot and a layer written
into its own input.  Some were let through, or caught with a message that named no cause, until the check named
with them was added or mended; the others were caught well and are kept so.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t6_mistakes.CAUSES, HUNT11_CAUSES here) or, for cause "", says what it saw.  t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT11_CAUSES = {
    "int64-coordinate": ("坐标是 int64", "coordinate is an int64"),
    "tail-into-one-expert": ("它们全被算给了专家", "they were all counted for expert"),
    "operands-to-fp16": ("操作数在 tl.dot 之前被转成了 float16", "the operands were cast to float16 before tl.dot"),
    "top1-sorted-order": ("行是按路由排好的顺序返回的", "the rows came back in the routing's sorted order"),
    "top1-reordered-outside": ("行的顺序是在两次启动之外", "put back in token order outside the launches"),
}

DOWN = "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, config=config)\n"
ROUTE = "    routing = route(topk_ids, w_gate_up.shape[0])\n"
NUM_EXPERTS_CHECK = "    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:\n"

HUNT11 = (
    own(
        "hunt11-route-zero-tokens-aminmax",
        "T6.1",
        "check_routing_inputs looks at the ids with torch.aminmax whatever their count: a batch of no tokens "
        "raises RuntimeError (hunt11)",
        "2.3",
        "    if check_ids and topk_ids.numel():\n",
        "    if check_ids:\n",
        "test_route_of_no_tokens",
    ),
    own(
        "hunt11-ids-view-refused",
        "T6.1",
        "check_routing_inputs refuses topk_ids that are not contiguous: a column of a wider tensor is legal (hunt11)",
        "2.3",
        NUM_EXPERTS_CHECK,
        '    if not topk_ids.is_contiguous():\n        raise ValueError("route: topk_ids must be contiguous")\n'
        + NUM_EXPERTS_CHECK,
        "test_route_reads_ids_through_their_strides",
    ),
    own(
        "hunt11-tail-lanes-into-last-bin",
        "T6.1",
        "count_experts histograms tl.where(valid, ids, E_BLOCK - 1) without a mask: the lanes past the last slot "
        "(and ids out of range) go to bin E_BLOCK - 1, no expert's unless the expert count is a power of two; the "
        "message said only which counts it got (hunt11)",
        "2.1",
        "    hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)\n",
        "    hist = tl.histogram(tl.where(valid, ids, E_BLOCK - 1).to(tl.int32), E_BLOCK)\n",
        "test_route_is_a_stable_counting_sort[one expert-20-1-4]",
        "tail-as-expert-0+tail-into-one-expert",
    ),
    own(
        "hunt11-gathered-operands-to-fp16",
        "T6.3",
        "gathered_product casts x's tile and w's box to float16 before tl.dot: right for fp16, float32 loses "
        "precision; the message said only how far off it was (hunt11)",
        "4.2",
        "        acc = tl.dot(a, b.T, acc)\n",
        "        acc = tl.dot(a.to(tl.float16), b.T.to(tl.float16), acc)\n",
        "test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float32]",
        "operands-to-fp16",
    ),
    own(
        "hunt11-weights-view-refused",
        "T6.3",
        "check_expert_inputs refuses topk_weights that are not contiguous: a transposed view is legal (hunt11)",
        "4",
        "        if not topk_weights.is_floating_point():\n",
        "        if not topk_weights.is_contiguous():\n"
        '            raise ValueError("grouped_matmul: topk_weights must be contiguous")\n'
        "        if not topk_weights.is_floating_point():\n",
        "test_routing_weights_and_the_combine[sorted]",
    ),
    own(
        "hunt11-mlp-result-into-x",
        "T6.4",
        "moe_mlp copies its output into x where the shapes allow (an in-place layer): the caller's x is "
        "overwritten (hunt11)",
        "5.2",
        DOWN,
        DOWN.replace("    return grouped_matmul(", "    y = grouped_matmul(")
        + "    return x.copy_(y) if y.shape == x.shape else y\n",
        "test_moe_mlp_in_two_launches",
    ),
    own(
        "hunt11-mlp-top1-no-combine",
        "T6.4",
        "moe_mlp combines only for top_k > 1: with top_k = 1 the down launch writes in sorted order and the rows "
        "come back in the routing's order; every T6.4 test had top_k = 2, and the suite passed (hunt11)",
        "5.2",
        DOWN,
        DOWN.replace("combine=True", "combine=topk_ids.shape[1] > 1"),
        "test_moe_mlp_with_one_expert_per_token",
        "top1-sorted-order",
    ),
    own(
        "hunt11-mlp-top1-unsorted-in-torch",
        "T6.4",
        "moe_mlp with top_k = 1 launches down in sorted order and puts the rows back in token order in torch "
        "(y[slot_pos]), combine_topk never launched; the suite passed (hunt11)",
        "5.2",
        DOWN,
        "    if topk_ids.shape[1] == 1:\n"
        "        y = grouped_matmul(hidden, w_down, routing, topk_weights, x_sorted=True, config=config)\n"
        "        return y[routing.slot_pos.long()]\n" + DOWN,
        "test_moe_mlp_with_one_expert_per_token",
        "top1-reordered-outside",
    ),
    own(
        "hunt11-mlp-no-tokens-float32",
        "T6.4",
        "moe_mlp returns torch.zeros((0, K')) for a batch of no tokens: float32 whatever x's dtype; the suite "
        "passed (hunt11)",
        "5.2",
        ROUTE,
        "    if x.shape[0] == 0:\n        return torch.zeros((0, w_down.shape[1]), device=x.device)\n" + ROUTE,
        "test_moe_mlp_of_no_tokens",
    ),
    own(
        "hunt11-w-row-int64",
        "T6.3",
        "gathered_product loads w's box at an int64 row (w_row.to(tl.int64)): descriptor coordinates are 32-bit; "
        "the interpreter's own assertion said so at the load, raw, in English alone (hunt11)",
        "4.2",
        "        b = w_desc.load([w_row, k0])",
        "        b = w_desc.load([w_row.to(tl.int64), k0])",
        "test_gathered_product_alone[gathered]",
        "int64-coordinate",
    ),
)
