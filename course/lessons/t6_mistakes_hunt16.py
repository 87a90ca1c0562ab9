"""Lesson T6's mutants of our own from hunt16 (2026-12-05): plausible slips planted across routing, the schedule, the
grouped kernel's parts and the layer (masks, strides, pitches, a copy to float32, a combine summed in torch).  All
were caught; two (combine_topk reading row j * TOP_K + t, or row t * TOP_K every turn) only with 'combine_topk's sum
of them is not' until tests/t6/combine_sums.py learnt their sums (OTHER_ROWS).  A K check made on w's N (a valid
input refused) is told by the refusal's own words and carries no cause beyond them.  Two more planted (a second
route for the down launch, floating ids taken) were already here as fix9-mlp-routes-twice and float-ids-taken, and
are left out.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of t6_mistakes.CAUSES, HUNT16_CAUSES here for the causes no key named before).
t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT16_CAUSES = {
    "x-read-past-k": ("A 的块在 K 处要用掩码挡住", "mask A's load at K"),
    "column-mask-missing": ("列的掩码 cols < N 没挡住", "the column mask cols < N did not stop them"),
    "combine-t-j-swapped": ("t 和 j 在 t * top_k + j 里换了位置", "t and j swapped in t * top_k + j"),
    "combine-without-j": ("地址里没有 j", "j is missing from the address"),
    "combine-column-from-row-start": ("写到了本行的第 0 列", "wrote column 0 counted from its own row's first"),
    "by-slot-without": ("没有 BY_SLOT 时，也把行写到了 slot", "without BY_SLOT, it stored at the slots' rows"),
    "m-blocks-as-tiles": ("m_blocks 已经乘上了 num_pid_n", "m_blocks came back times num_pid_n"),
}

HUNT16 = (
    own(
        'hunt16-x-mask-through-k',
        'T6.3',
        "gathered_product masks A's columns at k0 + cols <= K: one column of x past K read (hunt16)",
        '4.1',
        'mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n        b = w_desc',
        'mask=live[:, None] & (k0 + cols <= K)[None, :], other=0.0)\n        b = w_desc',
        'test_gathered_product_alone[gathered]',
        'x-read-past-k',
    ),
    own(
        'hunt16-store-without-column-mask',
        'T6.3',
        'store_rows masks the rows alone: columns from N on written into the next row (hunt16)',
        '4.3',
        'acc.to(out_ptr.dtype.element_ty), mask=live[:, None] & (cols < N)[None, :])',
        'acc.to(out_ptr.dtype.element_ty), mask=live[:, None])',
        'test_store_rows_alone[plain]',
        'column-mask-missing',
    ),
    own(
        'hunt16-swiglu-sigmoid-of-up',
        'T6.4',
        'swiglu returns gate * sigmoid(up) * up (hunt16)',
        '5.1',
        '    return gate * tl.sigmoid(gate) * up\n',
        '    return gate * tl.sigmoid(up) * up\n',
        'test_gate_up_with_swiglu[torch.float16]',
        'swiglu-on-up',
    ),
    own(
        'hunt16-store-rows-n-apart',
        'T6.3',
        "store_rows puts out's rows N apart, not stride_om (hunt16)",
        '4.3',
        '    tl.store(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on,',
        '    tl.store(out_ptr + out_rows[:, None] * N + cols[None, :] * stride_on,',
        'test_store_rows_alone[plain 16 x 32, out a view]',
        'rows-n-apart',
    ),
    own(
        'hunt16-store-slots-read-unmasked',
        'T6.3',
        'store_rows loads sorted_slots for every lane, past row_end too (hunt16)',
        '4.3',
        '    slots = tl.load(sorted_slots_ptr + rows, mask=live, other=0)\n    if HAS',
        '    slots = tl.load(sorted_slots_ptr + rows)\n    if HAS',
        'test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float16]',
        'outside-tensors',
    ),
    own(
        'hunt16-combine-t-and-j-swapped',
        'T6.3',
        "combine_topk reads row j * TOP_K + t: t and j swapped; told 'combine_topk's sum of them is not' alone "
        "(hunt16)",
        '4.4',
        '        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols',
        '        acc += tl.load(by_slot_ptr + (j * TOP_K + t) * N + cols',
        'test_each_tile_reads_its_own_expert_alone[weighted and combined]',
        'combine-t-j-swapped',
    ),
    own(
        'hunt16-combine-without-j',
        'T6.3',
        "combine_topk reads row t * TOP_K every turn (j left out of the address); told 'combine_topk's sum of them "
        "is not' alone (hunt16)",
        '4.4',
        '        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols',
        '        acc += tl.load(by_slot_ptr + (t * TOP_K) * N + cols',
        'test_each_tile_reads_its_own_expert_alone[weighted and combined]',
        'combine-without-j',
    ),
    own(
        'hunt16-offsets-stored-unmasked',
        'T6.1',
        'scan_counts stores offsets for all E_BLOCK lanes (hunt16)',
        '2.1',
        '    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts)\n',
        '    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0))\n',
        'test_route_is_a_stable_counting_sort[balanced-37-2-5]',
        'outside-tensors',
    ),
    own(
        'hunt16-block-counts-read-unmasked',
        'T6.1',
        "scan_counts loads block_counts with no mask on the batch's rows (hunt16)",
        '2.1',
        '        here = tl.load(block_counts_ptr + where, mask=blocks[:, None] < num_blocks, other=0)\n',
        '        here = tl.load(block_counts_ptr + where)\n',
        'test_route_is_a_stable_counting_sort[balanced-37-2-5]',
        'outside-tensors',
    ),
    own(
        'hunt16-scan-batches-one-block-apart',
        'T6.1',
        'scan_counts starts a batch of SCAN_ROWS blocks at every block (hunt16)',
        '2.1',
        '    for b0 in range(0, num_blocks, SCAN_ROWS):\n',
        '    for b0 in range(0, num_blocks):\n',
        'test_route_is_a_stable_counting_sort[skewed-150-2-9]',
        'scan-batches-overlap',
    ),
    own(
        'hunt16-scatter-tail-lanes-valid',
        'T6.1',
        'scatter_slots leaves slots < num_slots out of valid: the tail lanes stored (hunt16)',
        '2.3',
        '    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts)\n    earlier_same',
        '    valid = (ids >= 0) & (ids < num_experts)\n    earlier_same',
        'test_route_is_a_stable_counting_sort[balanced-37-2-5]',
        'outside-tensors',
    ),
    own(
        'hunt16-block-counts-stored-at-pitch-e',
        'T6.1',
        "count_experts stores block b's counts at b * num_experts, not b * E_BLOCK (hunt16)",
        '2.1',
        '    tl.store(block_counts_ptr + tl.program_id(0) * E_BLOCK + tl.arange(0, E_BLOCK), hist)\n',
        '    tl.store(block_counts_ptr + tl.program_id(0) * num_experts + tl.arange(0, E_BLOCK), hist)\n',
        'test_route_is_a_stable_counting_sort[skewed-150-2-9]',
        'counts-written-at-pitch-e',
    ),
    own(
        'hunt16-k-checked-on-n',
        'T6.3',
        "check_expert_inputs compares w.shape[1] (N) with x's K (hunt16)",
        '4',
        '    if w.shape[2] != x.shape[1]:\n',
        '    if w.shape[1] != x.shape[1]:\n',
        'test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float16]',
        '',  # the refusal's own words: no cause beyond them
    ),
    own(
        'hunt16-mlp-config-only-to-down',
        'T6.4',
        'moe_mlp hands config to the down launch alone (hunt16)',
        '5.2',
        'hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)',
        'hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu")',
        'test_moe_mlp_in_two_launches',
        'mlp-config-dropped',
    ),
    own(
        'hunt16-mlp-gate-up-in-fp32-copies',
        'T6.4',
        'moe_mlp runs gate/up on float32 copies of x and w (hunt16)',
        '5.2',
        'hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)',
        'hidden = grouped_matmul(x.float(), w_gate_up.float(), routing, activation="swiglu", '
        "config=config).to(x.dtype)",
        'test_moe_mlp_in_two_launches',
        'gate-up-not-x',
    ),
    own(
        'hunt16-store-live-through-row-end',
        'T6.3',
        'store_rows takes rows <= row_end as live (hunt16)',
        '4.3',
        '    live = rows < row_end\n    slots',
        '    live = rows <= row_end\n    slots',
        'test_store_rows_alone[plain]',
        'row-mask-missing',
    ),
    own(
        'hunt16-combine-columns-of-block-0',
        'T6.3',
        "combine_topk's columns leave program_id(1) out (hunt16)",
        '4.4',
        '    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)\n    acc',
        '    cols = tl.arange(0, BLOCK_N)\n    acc',
        'test_combine_topk_sums_in_float32_in_slot_order[torch.float16]',
        'combine-column-from-row-start',
    ),
    own(
        'hunt16-gathered-rows-unsorted',
        'T6.3',
        'gathered_rows reads x row i // TOP_K, not sorted_slots[i] // TOP_K (hunt16)',
        '4.1',
        '        x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0) // TOP_K\n',
        '        x_rows = rows // TOP_K\n',
        'test_gathered_product_alone[gathered]',
        'rows-by-position',
    ),
    own(
        'hunt16-weights-after-the-cast',
        'T6.3',
        "store_rows casts acc to out's dtype before the routing weight multiplies it (hunt16)",
        '4.3',
        '        acc = acc * tl.load(weights_ptr + slots, mask=live, other=0.0).to(tl.float32)[:, None]\n',
        "        acc = acc.to(out_ptr.dtype.element_ty) * tl.load(weights_ptr + slots, mask=live, other=0.0)[:, "
        "None]\n",
        'test_store_rows_alone[weighted]',
        'weights-after-cast',
    ),
    own(
        'hunt16-by-slot-turned-round',
        'T6.3',
        "store_rows stores at the slot's row without BY_SLOT and at the sorted row with it (hunt16)",
        '4.3',
        '    out_rows = slots if BY_SLOT else rows\n',
        '    out_rows = rows if BY_SLOT else slots\n',
        'test_store_rows_alone[plain]',
        'by-slot-without',
    ),
    own(
        'hunt16-gate-up-unmasked-at-k',
        'T6.4',
        "gate_up_product masks A's rows alone, not its columns at K (hunt16)",
        '5.1',
        "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n             "
        "       mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n        gate",
        "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n             "
        "       mask=live[:, None], other=0.0)\n        gate",
        'test_gate_up_product_alone',
        'x-read-past-k',
    ),
    own(
        'hunt16-mlp-combine-in-torch',
        'T6.4',
        'moe_mlp sums the top_k rows with torch after an uncombined down launch (hunt16)',
        '5',
        "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, "
        "config=config)\n",
        "    out = grouped_matmul(hidden, w_down, routing, topk_weights, x_sorted=True, config=config)\n    return "
        "out[routing.slot_pos.long()].view(topk_ids.shape[0], topk_ids.shape[1], -1).sum(1)\n",
        'test_moe_mlp_in_two_launches',
        'combine-not-passed',
    ),
    own(
        'hunt16-mlp-swiglu-in-torch',
        'T6.4',
        'moe_mlp launches gate/up without activation and applies SwiGLU in torch between the launches (hunt16)',
        '5',
        '    hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)\n',
        '    gate_up = grouped_matmul(x, w_gate_up, routing, config=config)\n    gate, up = gate_up.chunk(2, '
        'dim=1)\n    hidden = torch.nn.functional.silu(gate) * up\n',
        'test_moe_mlp_in_two_launches',
        'gate-up-no-activation',
    ),
    own(
        'hunt16-m-blocks-times-n',
        'T6.2',
        'expert_tile_counts returns m_blocks already times num_pid_n (the tile counts); told by the expected and '
        'got lists (hunt16), named since session 35',
        '3.3',
        '    m_blocks = tl.cdiv(counts, BLOCK_M)\n    tile_ends = tl.cumsum(m_blocks * num_pid_n, axis=0)\n',
        '    m_blocks = tl.cdiv(counts, BLOCK_M) * num_pid_n\n    tile_ends = tl.cumsum(m_blocks, axis=0)\n',
        'test_tile_counts_and_places_alone',
        'm-blocks-as-tiles',  # named since session 35 (the lead): its m_blocks equal the tiles of each expert
    ),
)
