"""Lesson T6's mutants of our own from the hunt for unplanted mistakes (2026-12-03): each was let
through, or its first message named another cause, until the check named with it was added.  Only
make check runs them (table=False, not in §8); each must be caught by its test, whose message names
its cause (a key of t6_mistakes.CAUSES, HUNTER_CAUSES here) or, for cause "", none.  t6_mistakes.py
gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNTER_CAUSES = {
    "row-pitch-k": ("都是按行距 K 数出来的", "at a row pitch of K"),
    "mlp-kept": ("第一次调用的东西（比如路由）被留下来又用了", "so something of that call (its routing, say) was kept"),
    "dead-rows-not-zero": ("不 live 的行却不是 0", "the rows not live are not 0"),
    "one-box-for-both": ("的 box 是从", "(its box was read at"),
    "m-blocks-plus-one": ("正是 counts // BLOCK_M + 1", "is counts // BLOCK_M + 1"),
    "swiglu-no-sigmoid": ("算的是 gate * up", "it is gate * up"),
    "swiglu-sigmoid-only": ("算的是 sigmoid(gate) * up", "it is sigmoid(gate) * up"),
    "w-box-first-k": ("每一步都乘 w 的第一个 k 块", "multiplying by w's first k-box in every step"),
    "acc-overwritten": ("acc 每一步被覆盖了", "acc was overwritten in each step"),
}

HUNTER = (
    own(
        "ids-checked-in-first-row",
        "T6.1",
        "check_routing_inputs looks at the first token's ids alone, torch.aminmax(topk_ids[0]): an id out of "
        "range in any later row is routed as check_ids=False would, left out; every bad id of the suite's "
        "cases sat in row 0, and it passed (hunter)",
        "2.3",
        "torch.aminmax(topk_ids)",
        "torch.aminmax(topk_ids[0])",
        "test_route_refuses_bad_input[an id >= num_experts in the last row]",
    ),
    own(
        "x-row-pitch-k",
        "T6.3",
        "gathered_product steps x's rows by K, x_rows * K, not by stride_xm: right for a contiguous x alone; "
        "on a padded view the message had said to mask A's load at K, which it did (hunter)",
        "4.1",
        "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        b = w_desc",
        "        a = tl.load(x_ptr + x_rows[:, None] * K + (k0 + cols)[None, :] * stride_xk,\n"
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        b = w_desc",
        "test_gathered_product_alone[gathered]",
        "row-pitch-k",
    ),
    own(
        "k-loop-stops-at-k-minus-one",
        "T6.3",
        "gathered_product loops k0 over range(0, K - 1, BLOCK_K): the last k-box is left out where it is one "
        "column wide (K % BLOCK_K == 1); no K of the suite was, and it passed (hunter)",
        "4.2",
        "    for k0 in range(0, K, BLOCK_K):\n        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)"
        "[None, :] * stride_xk,\n                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        b = w_desc",
        "    for k0 in range(0, K - 1, BLOCK_K):\n        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)"
        "[None, :] * stride_xk,\n                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        b = w_desc",
        "test_grouped_matmul_in_sorted_order[skewed-21-2-4-33-24-torch.float32]",
        "k-box-left-out",
    ),
    own(
        "mlp-routing-kept",
        "T6.4",
        "moe_mlp keeps the routing per (topk_ids' shape, E) on the function and uses it again: a later call of "
        "the same shapes with other ids is routed as the first; each test had called it once per shape, and it "
        "passed (hunter)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "    kept = moe_mlp.__dict__.setdefault('kept', {})\n"
        "    key = (tuple(topk_ids.shape), w_gate_up.shape[0])\n"
        "    if key not in kept:\n        kept[key] = route(topk_ids, w_gate_up.shape[0])\n"
        "    routing = kept[key]\n",
        "test_moe_mlp_in_two_launches",
        "mlp-kept",
    ),
    own(
        "gate-up-k-loop-stops-at-k-minus-one",
        "T6.4",
        "gate_up_product loops k0 over range(0, K - 1, BLOCK_K): the last k-box is left out where it is one "
        "column wide; no K of T6.4 was, and it passed (hunter)",
        "5.1",
        "    for k0 in range(0, K, BLOCK_K):\n        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)"
        "[None, :] * stride_xk,\n                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        gate",
        "    for k0 in range(0, K - 1, BLOCK_K):\n        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)"
        "[None, :] * stride_xk,\n                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        gate",
        "test_gate_up_with_swiglu[torch.float16]",
        "k-box-left-out",
    ),
    own(
        "a-load-without-live",
        "T6.3",
        "gathered_product masks A's load at K alone, not with live: the rows not live read x's row 0 into the "
        "accumulator; the store's mask keeps them out of the output, and the message gave only the error and a "
        "count of nonzero cells, pointing to §4.2 (zhlearner)",
        "4.1",
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n        b = w_desc",
        "                    mask=(k0 + cols < K)[None, :], other=0.0)\n        b = w_desc",
        "test_gathered_product_alone[gathered]",
        "dead-rows-not-zero",
    ),
    own(
        "up-read-at-gate-row",
        "T6.4",
        "gate_up_product loads up's box at gate_row too: up is a second copy of gate; the message said only that "
        "up was off from float64 (zhlearner)",
        "5.1",
        "        up = tl.dot(a, w_desc.load([up_row, k0]).T, up)",
        "        up = tl.dot(a, w_desc.load([gate_row, k0]).T, up)",
        "test_gate_up_product_alone",
        "one-box-for-both",
    ),
    own(
        "m-blocks-floor-plus-one",
        "T6.2",
        "expert_tile_counts takes counts // BLOCK_M + 1 m-blocks: an expert with no rows gets one (and one whose "
        "rows are a multiple of BLOCK_M one too many); the message gave the wrong m_blocks alone (zhlearner)",
        "3.3",
        "    m_blocks = tl.cdiv(counts, BLOCK_M)",
        "    m_blocks = counts // BLOCK_M + 1",
        "test_tile_counts_and_places_alone",
        "m-blocks-plus-one",
    ),
    own(
        "swiglu-without-sigmoid",
        "T6.4",
        "swiglu returns gate * up, silu's sigmoid left out; the message gave the error alone (zhlearner)",
        "5.1",
        "    return gate * tl.sigmoid(gate) * up",
        "    return gate * up",
        "test_gate_up_with_swiglu[torch.float16]",
        "swiglu-no-sigmoid",
    ),
    own(
        "swiglu-sigmoid-for-silu",
        "T6.4",
        "swiglu returns sigmoid(gate) * up, sigmoid taken for silu; the message gave the error alone (zhlearner)",
        "5.1",
        "    return gate * tl.sigmoid(gate) * up",
        "    return tl.sigmoid(gate) * up",
        "test_gate_up_with_swiglu[torch.float16]",
        "swiglu-sigmoid-only",
    ),
    own(
        "w-box-at-k-zero",
        "T6.3",
        "gathered_product loads w's box at [w_row, 0] in every step: each k-block of A meets w's first k-block; "
        "the message gave the error alone (zhlearner)",
        "4.2",
        "        b = w_desc.load([w_row, k0])",
        "        b = w_desc.load([w_row, 0])",
        "test_gathered_product_alone[gathered]",
        "w-box-first-k",
    ),
    own(
        "acc-overwritten-each-k",
        "T6.3",
        "gathered_product writes acc = tl.dot(a, b.T): each step overwrites the sum, the last k-block's product "
        "alone is left; the message gave the error alone (zhlearner)",
        "4.2",
        "        acc = tl.dot(a, b.T, acc)",
        "        acc = tl.dot(a, b.T)",
        "test_gathered_product_alone[gathered]",
        "acc-overwritten",
    ),
)
