"""Lesson T6's mutants of our own from the twelfth mistake hunt (hunt12, 2026-12-05): a Routing made in torch
(argsort, bincount, cumsum, or sort and searchsorted) instead of route's kernels, which the whole of T6.4 let
through when the ids were checked first, until test_moe_mlp_in_two_launches looked at which tensor scatter_slots
wrote; the tile loop's flatten=True where FLATTEN is False (forced or inverted), which the whole of T6 let
through until test_the_tile_loop_flattens_only_when_told read it from moe_kernel's IR (flatten left out is a
style: solutions/other_style/t6_moe.py's while loop); top_k = E refused where E > 1, let through until
test_route_is_a_stable_counting_sort got a case of top_k = E = 3; and outputs or h kept across calls, T5's
matmul per expert, a schedule of step 1, a clamped expert, top_k = E refused, weights rounded (caught).  Only
make check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause
(a key of t6_mistakes.CAUSES, HUNT12_CAUSES here) or, for cause "", says what it saw.  t6_mistakes.py gathers
them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT12_CAUSES = {
    "routing-not-route": ("route 的三个 kernel 都没有跑", "none of route's three kernels ran"),
}

# moe_mlp's Routing made in torch: a stable argsort of the ids, a bincount, a cumsum, and the inverse permutation
TORCH_ROUTING = (
    "    flat_ids = topk_ids.reshape(-1).long()\n"
    "    order = torch.argsort(flat_ids, stable=True)\n"
    "    counts = torch.bincount(flat_ids, minlength=w_gate_up.shape[0]).to(torch.int32)\n"
    "    routing = Routing(counts, torch.cumsum(counts, 0).to(torch.int32), order.to(torch.int32),\n"
    "                      torch.argsort(order).to(torch.int32), topk_ids.shape[0], topk_ids.shape[1], checked=True)\n"
)

HUNT12 = (
    own(
        "hunt12-mlp-routes-in-torch",
        "T6.4",
        "moe_mlp builds its Routing in torch (argsort, bincount, cumsum), route never called: the id "
        "check's test said route was not called; now the first check says so (hunt12)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        TORCH_ROUTING,
        "test_moe_mlp_in_two_launches",
        "routing-not-route",
    ),
    own(
        "hunt12-mlp-routes-in-torch-checked",
        "T6.4",
        "as above, with check_routing_inputs called first: the whole of T6.4 passed (hunt12: let through)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "    check_routing_inputs(topk_ids, w_gate_up.shape[0])\n" + TORCH_ROUTING,
        "test_moe_mlp_in_two_launches",
        "routing-not-route",
    ),
    own(
        "hunt12-mlp-routes-by-sort-checked",
        "T6.4",
        "moe_mlp checks the ids, then sorts them with torch.sort and searchsorted into a Routing of its "
        "own: the whole of T6.4 passed (hunt12: let through)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "    check_routing_inputs(topk_ids, w_gate_up.shape[0])\n"
        "    E = w_gate_up.shape[0]\n"
        "    sorted_ids, order = torch.sort(topk_ids.reshape(-1), stable=True)\n"
        "    ends = torch.searchsorted(sorted_ids, torch.arange(E, device=x.device), right=True).to(torch.int32)\n"
        "    counts = torch.diff(ends, prepend=ends.new_zeros(1))\n"
        "    slot_pos = torch.empty_like(order)\n"
        "    slot_pos[order] = torch.arange(order.numel(), device=x.device)\n"
        "    routing = Routing(counts, ends, order.to(torch.int32), slot_pos.to(torch.int32), topk_ids.shape[0],\n"
        "                      topk_ids.shape[1], checked=True)\n",
        "test_moe_mlp_in_two_launches",
        "routing-not-route",
    ),
    own(
        "hunt12-mlp-down-per-expert-t5",
        "T6.4",
        "moe_mlp runs down as T5's matmul per expert and combines in torch (hunt12, caught)",
        "1.2",
        "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, "
        "config=config)\n",
        "    from .t5_persistent import matmul as t5_matmul\n"
        "    y = torch.empty((hidden.shape[0], w_down.shape[1]), device=x.device, dtype=x.dtype)\n"
        "    start = 0\n"
        "    for e, end in enumerate(routing.offsets.tolist()):\n"
        "        if end > start:\n"
        "            y[start:end] = t5_matmul(hidden[start:end], w_down[e].t())\n"
        "        start = end\n"
        "    y = y[routing.slot_pos.long()].float() * topk_weights.reshape(-1, 1).float()\n"
        "    return y.view(topk_ids.shape[0], topk_ids.shape[1], -1).sum(1).to(x.dtype)\n",
        "test_moe_mlp_in_two_launches",
        "moe-mlp-called",
    ),
    own(
        "hunt12-mlp-out-kept-by-address",
        "T6.4",
        "moe_mlp keeps each output by its inputs' addresses and shapes and hands back a copy (hunt12, caught)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n"
        '    hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)\n'
        "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, "
        "config=config)\n",
        "    kept = moe_mlp.__dict__.setdefault('kept', {})\n"
        "    key = tuple((t.data_ptr(), tuple(t.shape)) for t in (x, w_gate_up, w_down, topk_ids, topk_weights))\n"
        "    if key in kept:\n"
        "        return kept[key].clone()\n"
        "    routing = route(topk_ids, w_gate_up.shape[0])\n"
        '    hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)\n'
        "    y = grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, config=config)\n"
        "    kept[key] = y\n"
        "    return y.clone()\n",
        "test_moe_mlp_reads_x_as_given_and_routes_each_call",
        "mlp-kept",
    ),
    own(
        "hunt12-mlp-h-kept-by-identity",
        "T6.4",
        "moe_mlp skips the gate/up launch when x, w_gate_up and topk_ids are the objects of its last call "
        "(hunt12, caught)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n"
        '    hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)\n'
        "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, "
        "config=config)\n",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n"
        "    last = moe_mlp.__dict__.get('last')\n"
        "    if last is not None and last[0] is x and last[1] is w_gate_up and last[2] is topk_ids:\n"
        "        hidden = last[3]\n"
        "    else:\n"
        "        hidden = grouped_matmul(x, w_gate_up, routing, activation='swiglu', config=config)\n"
        "        moe_mlp.last = (x, w_gate_up, topk_ids, hidden)\n"
        "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, "
        "config=config)\n",
        "test_moe_mlp_reads_x_as_given_and_routes_each_call",
        "",
    ),
    own(
        "hunt12-schedule-step-one",
        "T6.2",
        "grouped_tiles steps by 1: every tile from pid on done by each program (hunt12, caught)",
        "3.4",
        "    for tile_id in tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN):\n",
        "    for tile_id in tl.range(tl.program_id(0), total, 1, flatten=FLATTEN):\n",
        "test_every_tile_of_every_expert_once",
        "loop-words",
    ),
    own(
        "hunt12-flatten-always",
        "T6.2",
        "grouped_tiles' tl.range with flatten=True whatever FLATTEN: the whole of T6 passed (hunt12: let through)",
        "3.4",
        "total, NUM_PROGS, flatten=FLATTEN):",
        "total, NUM_PROGS, flatten=True):",
        "test_the_tile_loop_flattens_only_when_told",
        "",
    ),
    own(
        "hunt12-flatten-inverted",
        "T6.2",
        "grouped_tiles' tl.range with flatten=not FLATTEN: the whole of T6 passed (hunt12: let through)",
        "3.4",
        "total, NUM_PROGS, flatten=FLATTEN):",
        "total, NUM_PROGS, flatten=not FLATTEN):",
        "test_the_tile_loop_flattens_only_when_told",
        "",
    ),
    own(
        "hunt12-locate-expert-clamped",
        "T6.2",
        "locate_tile clamps the expert to E_BLOCK - 2: all rows on the last expert of a full E_BLOCK go to "
        "the one before (hunt12, caught)",
        "3.3",
        "    expert = tl.sum((tile_ends <= tile_id).to(tl.int32), axis=0)\n",
        "    expert = tl.minimum(tl.sum((tile_ends <= tile_id).to(tl.int32), axis=0), E_BLOCK - 2)\n",
        "test_every_tile_of_every_expert_once",
        "",
    ),
    own(
        "hunt12-top-k-at-e-refused",
        "T6.1",
        "check_routing_inputs refuses top_k >= num_experts: top_k equal to E is valid (hunt12, caught)",
        "2.3",
        "    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:\n"
        '        raise ValueError(f"route: num_experts must be a positive int, got {num_experts!r}")\n',
        "    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:\n"
        '        raise ValueError(f"route: num_experts must be a positive int, got {num_experts!r}")\n'
        "    if topk_ids.shape[1] >= num_experts:\n"
        '        raise ValueError(f"route: top_k {topk_ids.shape[1]} must be below num_experts {num_experts}")\n',
        "test_route_of_one_expert",
        "",
    ),
    own(
        "hunt12-top-k-equal-e-refused",
        "T6.1",
        "check_routing_inputs refuses top_k >= num_experts where there is more than one expert: the whole "
        "of T6 passed, no routing of the suite had top_k = E >= 2 (hunt12: a case of 3 tokens' top-3 over "
        "3 experts added)",
        "2.3",
        "    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:\n"
        '        raise ValueError(f"route: num_experts must be a positive int, got {num_experts!r}")\n',
        "    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:\n"
        '        raise ValueError(f"route: num_experts must be a positive int, got {num_experts!r}")\n'
        "    if topk_ids.shape[1] >= num_experts and num_experts > 1:\n"
        '        raise ValueError(f"route: top_k {topk_ids.shape[1]} must be below num_experts {num_experts}")\n',
        "test_route_is_a_stable_counting_sort[balanced-5-3-3]",
        "",
    ),
    own(
        "hunt12-weights-rounded-to-fp16",
        "T6.3",
        "store_rows rounds each routing weight to fp16 before scaling (hunt12, caught; named since zhlearner15)",
        "4.3",
        "        acc = acc * tl.load(weights_ptr + slots, mask=live, other=0.0).to(tl.float32)[:, None]\n",
        "        acc = acc * tl.load(weights_ptr + slots, mask=live, "
        "other=0.0).to(tl.float16).to(tl.float32)[:, None]\n",
        "test_store_rows_alone[weighted]",
        "weight-cast-to-out",
    ),
)
