"""Lesson T6's mutants of our own from the fix9 hunt (2026-12-04): each was let through, or caught with a
message that named no cause or a wrong one, until the check named with it was added or mended.  Only make
check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a
key of t6_mistakes.CAUSES, FIX9_CAUSES here).  t6_mistakes.py gathers them last, and their causes into its
CAUSES (t6_mistakes_causes.py's silu-in-fp16 names one of them too).
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
FIX9_CAUSES = {
    "swiglu-result-fp16": ("SwiGLU 的结果被舍入成了 fp16", "SwiGLU's result was rounded to fp16"),
    "silu-rounded-fp16": ("silu(gate) 被舍入成了 fp16", "silu(gate) was rounded to fp16"),
    "silu-in-fp16": ("silu 是在 fp16 里算的", "silu was computed in fp16"),
    "base-whole-batch": ("把块 b 所在的整批都数进去了", "took in all of block b's batch"),
    "slot-pos-rank": ("slot_pos 存的是每个 slot 在块内的名次", "slot_pos holds each slot's rank in its block"),
    "n-blocks-by-block-m": ("num_pid_n 算成了 cdiv(N, BLOCK_M)", "num_pid_n was cdiv(N, BLOCK_M)"),
    "rows-scaled-unweighted": (
        "每一行都正好是对的那一行乘上它自己的一个系数",
        "each row is the right row times a factor of its own",
    ),
    "x-sorted-lost": ("好像 X_SORTED 是 False", "as if X_SORTED were False"),
    "gate-up-combined": ("gate/up 那次调用传了 combine=True", "the gate/up call was made with combine=True"),
    "combine-row-pitch": ("第 t 行放在 t * BLOCK_N", "row t placed at t * BLOCK_N"),
    "trace-not-passed": ("grouped_tiles 却让 tile 去算了乘积", "grouped_tiles had its tiles computed"),
    "swiglu-inputs-fp16": (
        "gate 和 up 在 SwiGLU 之前被舍入成了 fp16",
        "gate and up were rounded to fp16 before SwiGLU",
    ),
}

SWIGLU = "    return gate * tl.sigmoid(gate) * up\n"

FIX9 = (
    own(
        'fix9-swiglu-result-in-fp16',
        'T6.4',
        "swiglu rounds its result to fp16 (and back to float32): float32 inputs come out off by fp16's "
        'rounding; the message gave a relative error alone (fix9)',
        '5.1',
        '    return gate * tl.sigmoid(gate) * up\n',
        '    return (gate * tl.sigmoid(gate) * up).to(tl.float16).to(tl.float32)\n',
        'test_gate_up_with_swiglu[torch.float32]',
        'swiglu-result-fp16',
    ),
    own(
        'fix9-silu-rounded-to-fp16',
        'T6.4',
        'swiglu rounds silu(gate) to fp16 before it multiplies up in float32; the message gave a '
        'relative error alone (fix9)',
        '5.1',
        '    return gate * tl.sigmoid(gate) * up\n',
        '    return (gate * tl.sigmoid(gate)).to(tl.float16).to(tl.float32) * up\n',
        'test_gate_up_with_swiglu[torch.float32]',
        'silu-rounded-fp16',
    ),
    own(
        'fix9-swiglu-of-fp16-gate-and-up',
        'T6.4',
        'swiglu rounds gate and up to fp16 first, then computes SwiGLU of them in float32; the message '
        'gave a relative error alone (fix9)',
        '5.1',
        '    return gate * tl.sigmoid(gate) * up\n',
        '    g = gate.to(tl.float16).to(tl.float32)\n    return g * tl.sigmoid(g) * up.to(tl.float16).to(tl.float32)\n',
        'test_gate_up_with_swiglu[torch.float32]',
        'swiglu-inputs-fp16',
    ),
    own(
        'fix9-offsets-row-starts',
        'T6.1',
        "scan_counts stores offsets as the exclusive sum of counts, each expert's row start, not its end (fix9: named)",
        '2.1',
        '    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts)\n',
        '    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0) - running, mask=experts < num_experts)\n',
        'test_route_is_a_stable_counting_sort[balanced-37-2-5]',
        'offsets-are-starts',
    ),
    own(
        'fix9-base-inclusive',
        'T6.1',
        "scan_counts' block_base an inclusive scan down the blocks (- here left out): the message "
        'offered it or a first row at offsets[e], one or the other, where block_base as written tells '
        'which (fix9)',
        '2.1',
        '        before = running[None, :] + tl.cumsum(here, axis=0) - here  # exclusive, down the blocks\n',
        '        before = running[None, :] + tl.cumsum(here, axis=0)\n',
        'test_route_is_a_stable_counting_sort[balanced-37-2-5]',
        'outside-tensors',
    ),
    own(
        'fix9-base-grown-before-store',
        'T6.1',
        "scan_counts grows running by the batch's column sums before it stores the batch's block_base: "
        'the message named an inclusive block_base or a first row at offsets[e], neither of which it is '
        '(fix9)',
        '2.1',
        '        before = running[None, :] + tl.cumsum(here, axis=0) - here  # exclusive, down the '
        'blocks\n'
        '        tl.store(block_base_ptr + where, before, mask=blocks[:, None] < num_blocks)\n'
        '        running += tl.sum(here, axis=0)\n',
        '        running += tl.sum(here, axis=0)\n'
        '        before = running[None, :] + tl.cumsum(here, axis=0) - here\n'
        '        tl.store(block_base_ptr + where, before, mask=blocks[:, None] < num_blocks)\n',
        'test_route_is_a_stable_counting_sort[skewed-150-2-9]',
        'outside-tensors+base-whole-batch',
    ),
    own(
        'fix9-first-row-at-row-end',
        'T6.1',
        "scatter_slots takes an expert's first row as offsets[e], its row end, counts never taken off (fix9: named)",
        '2.1',
        '    first_row = tl.load(offsets_ptr + ids, mask=valid, other=0) - tl.load(counts_ptr + ids, '
        'mask=valid, other=0)\n',
        '    first_row = tl.load(offsets_ptr + ids, mask=valid, other=0)\n',
        'test_route_is_a_stable_counting_sort[balanced-37-2-5]',
        'outside-tensors',
    ),
    own(
        'fix9-rank-counts-itself',
        'T6.1',
        "scatter_slots' rank counts the lanes at or before the slot's own (<=): every place one too far (fix9: named)",
        '2.1',
        '(lane[None, :] < lane[:, None])',
        '(lane[None, :] <= lane[:, None])',
        'test_route_is_a_stable_counting_sort[balanced-37-2-5]',
        'outside-tensors',
    ),
    own(
        'fix9-slot-pos-holds-rank',
        'T6.1',
        "scatter_slots stores each slot's rank in its block into slot_pos, not its place: the message "
        'said slot_pos is not the inverse alone (fix9)',
        '2.1',
        '    tl.store(slot_pos_ptr + slots, pos, mask=valid)\n',
        '    tl.store(slot_pos_ptr + slots, rank, mask=valid)\n',
        'test_route_is_a_stable_counting_sort[balanced-37-2-5]',
        'slot-pos-rank',
    ),
    own(
        'fix9-ids-checked-despite-check-ids',
        'T6.1',
        'check_routing_inputs looks at the ids whatever check_ids says: route(check_ids=False) refuses '
        'ids out of range and waits for the device (fix9: named)',
        '2.3',
        '    if check_ids and topk_ids.numel():\n',
        '    if topk_ids.numel():\n',
        'test_route_ignores_ids_out_of_range',
    ),
    own(
        'fix9-ids-max-only',
        'T6.1',
        'check_routing_inputs checks the greatest id alone: negative ids are routed (fix9: named)',
        '2.3',
        '        lo, hi = (int(v) for v in torch.aminmax(topk_ids))  # one look at the ids: a host sync\n',
        '        lo, hi = 0, int(topk_ids.max())\n',
        'test_route_refuses_bad_input[negative ids]',
    ),
    own(
        'fix9-n-blocks-by-block-m',
        'T6.2',
        "grouped_tiles takes num_pid_n = cdiv(N, BLOCK_M): the message offered 'N // BLOCK_N + 1, say' (fix9)",
        '3.3',
        '    num_pid_n = tl.cdiv(N, BLOCK_N)\n    m_blocks, tile_ends',
        '    num_pid_n = tl.cdiv(N, BLOCK_M)\n    m_blocks, tile_ends',
        'test_every_tile_of_every_expert_once',
        'n-blocks-long+n-blocks-by-block-m',
    ),
    own(
        'fix9-weights-always',
        'T6.2',
        'grouped_tiles hands finish_tile HAS_WEIGHTS=True whatever the call: calls without topk_weights '
        'scale each row by whatever weights_ptr holds; T6.2 passed, and T6.3 said a relative error alone '
        '(fix9)',
        '3.4',
        'row_begin, row_end, N, stride_om, stride_on, HAS_WEIGHTS, BY_SLOT, BLOCK_M, BLOCK_N, TRACE)\n',
        'row_begin, row_end, N, stride_om, stride_on, True, BY_SLOT, BLOCK_M, BLOCK_N, TRACE)\n',
        'test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float16]',
        'rows-scaled-unweighted',
    ),
    own(
        'fix9-x-sorted-dropped-in-loop',
        'T6.2',
        "grouped_tiles hands tile_product X_SORTED=False: a down call (x_sorted=True) gathers h's rows "
        "as if x were per token; T6.3 passed, and T6.4 said 'moe_mlp: off from float64' alone (fix9)",
        '3.4',
        'stride_xk, TOP_K, BLOCK_M, BLOCK_N, BLOCK_K, X_SORTED, ACTIVATION, TRACE)\n',
        'stride_xk, TOP_K, BLOCK_M, BLOCK_N, BLOCK_K, False, ACTIVATION, TRACE)\n',
        'test_grouped_matmul_of_x_in_sorted_order',
        'x-sorted-lost',
    ),
    own(
        'fix9-trace-dropped',
        'T6.2',
        'grouped_tiles hands tile_product TRACE=0: the record-only schedule run computes its tiles on '
        "dummy pointers; the message blamed gathered_product's line (T6.3) (fix9)",
        '3.4',
        'stride_xk, TOP_K, BLOCK_M, BLOCK_N, BLOCK_K, X_SORTED, ACTIVATION, TRACE)\n',
        'stride_xk, TOP_K, BLOCK_M, BLOCK_N, BLOCK_K, X_SORTED, ACTIVATION, 0)\n',
        'test_every_tile_of_every_expert_once',
        'trace-not-passed',
    ),
    own(
        'fix9-store-live-whole-block',
        'T6.3',
        "store_rows' row mask is rows < row_begin + BLOCK_M, the whole block, not the expert's last row (fix9: named)",
        '4.3',
        '    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    live = rows < row_end\n',
        '    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    live = rows < row_begin + BLOCK_M\n',
        'test_store_rows_alone[plain]',
        'row-mask-missing',
    ),
    own(
        'fix9-combine-out-pitch-block-n',
        'T6.3',
        "combine_topk stores token t's row at t * BLOCK_N, not t * N: the message listed the unwritten "
        'rows alone (fix9)',
        '4.4',
        '    tl.store(out_ptr + t * N + cols,',
        '    tl.store(out_ptr + t * BLOCK_N + cols,',
        'test_each_tile_reads_its_own_expert_alone[weighted and combined]',
        'combine-row-pitch',
    ),
    own(
        'fix9-swiglu-odd-rows-taken',
        'T6.3',
        'check_expert_inputs takes a w of odd rows for swiglu (fix9: named)',
        '4',
        '    if activation == "swiglu" and w.shape[1] % 2:\n'
        '        raise ValueError(f"grouped_matmul: w for swiglu holds [gate; up], 2F rows, got '
        '{w.shape[1]}")\n',
        '',
        'test_grouped_matmul_refuses_bad_input',
    ),
    own(
        'fix9-x-sorted-weights-refused',
        'T6.3',
        "check_expert_inputs refuses topk_weights with x_sorted=True, valid input moe_mlp's down launch "
        'makes: T6.3 passed, T6.4 said its call was refused (fix9)',
        '4',
        '    if topk_weights is not None:\n        if not isinstance(topk_weights, torch.Tensor):\n',
        '    if topk_weights is not None:\n'
        '        if x_sorted:\n'
        '            raise ValueError("grouped_matmul: topk_weights go with x in token order")\n'
        '        if not isinstance(topk_weights, torch.Tensor):\n',
        'test_grouped_matmul_of_x_in_sorted_order',
    ),
    own(
        'fix9-weights-dtype-of-x',
        'T6.3',
        "check_expert_inputs wants topk_weights in x's dtype: float32 weights with fp16 x, valid, are "
        'refused (fix9: named)',
        '4',
        '        if not topk_weights.is_floating_point():\n',
        '        if topk_weights.dtype != x.dtype:\n',
        'test_each_tile_reads_its_own_expert_alone[weighted and combined]',
    ),
    own(
        'fix9-offsets-never-checked',
        'T6.3',
        'check_expert_inputs never hands a hand-made Routing to check_offsets (fix9: named)',
        '4',
        '    if not routing.checked:  # made by hand: its offsets must be the row ends of its counts\n'
        '        check_offsets(routing)\n',
        '',
        'test_grouped_matmul_refuses_bad_input',
    ),
    own(
        'fix9-mlp-routes-twice',
        'T6.4',
        'moe_mlp routes again before the down launch: the same numbers, two routings (fix9: named)',
        '5.2',
        '    return grouped_matmul(hidden, w_down, routing, topk_weights,',
        '    routing = route(topk_ids, w_gate_up.shape[0])\n'
        '    return grouped_matmul(hidden, w_down, routing, topk_weights,',
        'test_moe_mlp_in_two_launches',
    ),
    own(
        'fix9-mlp-down-with-swiglu',
        'T6.4',
        "moe_mlp's down call passes activation='swiglu' too (fix9: named by the launches listed)",
        '5.2',
        'combine=True, x_sorted=True, config=config)',
        'combine=True, x_sorted=True, activation="swiglu", config=config)',
        'test_moe_mlp_in_two_launches',
    ),
    own(
        'fix9-mlp-gate-up-combined',
        'T6.4',
        "moe_mlp's gate/up call passes combine=True: h is a row per token, and the down call is refused; "
        'the message named the refusal alone (fix9)',
        '5.2',
        'activation="swiglu", config=config)\n    return',
        'activation="swiglu", combine=True, config=config)\n    return',
        'test_moe_mlp_in_two_launches',
        'gate-up-combined',
    ),
)
