"""Lesson T6's mutants of our own from learner37 (2026-12-05): slips a new learner of T6.3 and T6.4 makes, planted
one at a time in the reference and run through `make test STEP=...`.  Three were told by numbers alone before and
are named now: A's block loaded once before the k loop (gathered_product and gate_up_product; tests/t6/products.py
weight_box_mistakes models it), and a combine whose loop replaced acc at each turn, so the last row alone is left
(tests/t6/combine_sums.py sums_seen, from top_k = 3 on).  Two passed every test: w of an odd N refused
without swiglu (test_grouped_matmul_takes_an_odd_n_without_swiglu, new) and a Routing's sorted_slots and slot_pos
left unchecked (bad_inputs' int64 slots of torch.argsort, new).  The others were named already and had no mutant: a
gathered_rows load of sorted_slots without its mask, A's K mask without k0, the X_SORTED branches swapped,
store_rows' slots loaded with the block's mask, combine_topk's store at row t * TOP_K, x's row count checked
as R whatever x_sorted, w with more experts than the routing let through.
sorted_slots read at the tile's own rows 0..BLOCK_M - 1 (gathered_rows, store_rows) was told by the rows or values
alone; test_kernel_parts.py, products.weights_seen and test_store_rows.py name it now.  gate_up_product returning
(up, gate) was told 'gate_row and up_row swapped', which its rows were not; both ways
that give those sums are said now (test_expert_mlp.py).  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (LEARNER37_CAUSES here,
or the causes of other files that the same detector names).
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER37_CAUSES = {
    "a-loaded-once": ("A 的块只在 k 循环之前载入了一次", "A's block was loaded once, before the k loop"),
    "combine-acc-replaced": ("循环每一轮都把 acc 换掉了", "each turn of the loop replaced acc"),
    "parity-without-swiglu": (
        "偶数行的规则（[gate; up]，2F 行）用在了没有 swiglu 的乘法上",
        "the even row count rule ([gate; up], 2F rows) was applied without swiglu",
    ),
    "slots-from-start": ("sorted_slots 从头读起", "sorted_slots was read from its start"),
}

# gathered_product's and gate_up_product's k loop with its A load, and what follows it in each
A_LOOP = (
    "    for k0 in range(0, K, BLOCK_K):\n"
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
)
# the same A block loaded once, at columns 0..BLOCK_K - 1, before the loop
A_ONCE = (
    "    a = tl.load(x_ptr + x_rows[:, None] * stride_xm + cols[None, :] * stride_xk,\n"
    "                mask=live[:, None] & (cols < K)[None, :], other=0.0)\n"
    "    for k0 in range(0, K, BLOCK_K):\n"
)
A_MASK = "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
A_MASK_NO_K0 = "                    mask=live[:, None] & (cols < K)[None, :], other=0.0)\n"
SLOTS = "    slots = tl.load(sorted_slots_ptr + rows, mask=live, other=0)\n"
# sorted_slots read at the tile's own row numbers 0..BLOCK_M - 1, not at the sorted rows
SLOTS_LOCAL = "    slots = tl.load(sorted_slots_ptr + tl.arange(0, BLOCK_M), mask=live, other=0)\n"
GATHER = "        x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0) // TOP_K\n"
COMBINE_LOOP = "    for j in tl.static_range(TOP_K):\n        acc += tl.load("
# acc set to zeros at the top of each turn: each turn replaces it
COMBINE_RESET = (
    "    for j in tl.static_range(TOP_K):\n"
    "        acc = tl.zeros((BLOCK_N,), dtype=tl.float32)\n"
    "        acc += tl.load("
)

LEARNER37 = (
    own(
        "learner37-a-loaded-once",
        "T6.3",
        "gathered_product loads A's block once, before the k loop (columns 0..BLOCK_K - 1), and multiplies it by "
        "every k-block of w: 'relative error 1.20e+00 on the live rows' alone before (learner37)",
        "4.2",
        A_LOOP + "        b = w_desc",
        A_ONCE + "        b = w_desc",
        "test_gathered_product_alone[gathered]",
        "a-loaded-once",
    ),
    own(
        "learner37-gate-up-a-loaded-once",
        "T6.4",
        "gate_up_product loads A's block once, before the k loop, for every k-block of gate and up: 'gate is off "
        "from float64 by 1.27e+00 and up by 1.26e+00' alone before (learner37)",
        "5.1",
        A_LOOP + "        gate =",
        A_ONCE + "        gate =",
        "test_gate_up_product_alone",
        "a-loaded-once",
    ),
    own(
        "learner37-combine-acc-reset-each-turn",
        "T6.3",
        "combine_topk sets acc to zeros inside its j loop, so each turn replaces it and the last row alone is "
        "stored: 'off by far more than a rounding ... check which rows are added' alone before at top_k = 4 "
        "(learner37)",
        "4.4",
        COMBINE_LOOP,
        COMBINE_RESET,
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
        "combine-acc-replaced",
    ),
    own(
        "learner37-combine-acc-reset-top3",
        "T6.3",
        "the same combine, met by the whole call with top_k = 3: 'combine_topk's sum of them is not' alone before "
        "(learner37)",
        "4.4",
        COMBINE_LOOP,
        COMBINE_RESET,
        "test_routing_weights_and_the_combine[combined]",
        "combine-acc-replaced",
    ),
    own(
        "learner37-gather-slots-unmasked",
        "T6.3",
        "gathered_rows loads sorted_slots without live as its mask: the last tile reads past sorted_slots' end "
        "(named already; no mutant before, learner37)",
        "4.1",
        GATHER,
        "        x_rows = tl.load(sorted_slots_ptr + rows) // TOP_K\n",
        "test_each_tile_reads_its_own_expert_alone[plain]",
    ),
    own(
        "learner37-k-mask-without-k0",
        "T6.3",
        "A's mask at K is cols < K, without k0: every k-block's columns pass, and the K tail reads past each row "
        "(named already; no mutant before, learner37)",
        "4.1",
        A_MASK + "        b = w_desc",
        A_MASK_NO_K0 + "        b = w_desc",
        "test_gathered_product_alone[gathered]",
        "x-read-past-k",
    ),
    own(
        "learner37-x-sorted-branches-swapped",
        "T6.3",
        "gathered_rows reads rows i themselves without X_SORTED and through sorted_slots with it (if not X_SORTED) "
        "(named already; no mutant before, learner37)",
        "4.1",
        "    if X_SORTED:\n        x_rows = tl.where(live, rows, 0)\n",
        "    if not X_SORTED:\n        x_rows = tl.where(live, rows, 0)\n",
        "test_gathered_product_alone[gathered]",
    ),
    own(
        "learner37-store-slots-block-mask",
        "T6.3",
        "store_rows loads sorted_slots under the whole block's mask, rows < row_begin + BLOCK_M, not live: the "
        "last tile reads past sorted_slots' end (named already; no mutant before, learner37)",
        "4.3",
        "    slots = tl.load(sorted_slots_ptr + rows, mask=live, other=0)\n",
        "    slots = tl.load(sorted_slots_ptr + rows, mask=rows < row_begin + BLOCK_M, other=0)\n",
        "test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float16]",
        "outside-tensors",
    ),
    own(
        "learner37-combine-stores-at-slot-row",
        "T6.3",
        "combine_topk stores token t's sum at row t * TOP_K of out, by_slot's row, not row t (named already; no "
        "mutant before, learner37)",
        "4.4",
        "    tl.store(out_ptr + t * N + cols,",
        "    tl.store(out_ptr + t * TOP_K * N + cols,",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
    ),
    own(
        "learner37-x-rows-always-slots",
        "T6.3",
        "check_expert_inputs wants R = T * top_k rows of x whatever x_sorted, and refuses every x in token order "
        "(its own ValueError shown; no mutant before, learner37)",
        "4",
        "    rows = routing.num_tokens * routing.top_k if x_sorted else routing.num_tokens\n",
        "    rows = routing.num_tokens * routing.top_k\n",
        "test_grouped_matmul_takes_weights_that_are_views",
    ),
    own(
        "learner37-more-experts-let-through",
        "T6.3",
        "check_expert_inputs refuses w with fewer experts than the routing alone (w.shape[0] < num_experts): more "
        "are let through (named already; no mutant before, learner37)",
        "4",
        "    if w.shape[0] != routing.num_experts:\n",
        "    if w.shape[0] < routing.num_experts:\n",
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "learner37-odd-n-refused-without-swiglu",
        "T6.3",
        "check_expert_inputs refuses w of an odd row count whatever the activation, the [gate; up] rule applied "
        "without swiglu: it passed every test before (learner37)",
        "4",
        '    if activation == "swiglu" and w.shape[1] % 2:\n',
        "    if w.shape[1] % 2:\n",
        "test_grouped_matmul_takes_an_odd_n_without_swiglu",
        "parity-without-swiglu",
    ),
    own(
        "learner37-routing-two-fields-checked",
        "T6.3",
        "check_expert_inputs checks counts and offsets alone for 1-D int32 on x's device, not sorted_slots and "
        "slot_pos: a hand-made Routing with torch.argsort's int64 slots passed every test before (learner37)",
        "4",
        '    for name in ("counts", "offsets", "sorted_slots", "slot_pos"):\n',
        '    for name in ("counts", "offsets"):\n',
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "learner37-gate-up-returned-swapped",
        "T6.4",
        "gate_up_product returns (up, gate): its rows are right, yet it was told 'gate_row and up_row swapped', "
        "which gives the same sums; the message says both ways now (learner37)",
        "5.1",
        "    # ---- T6.4 end ----\n    return gate, up\n",
        "    # ---- T6.4 end ----\n    return up, gate\n",
        "test_gate_up_product_alone",
        "gate-up-rows-swapped",
    ),
    own(
        "learner37-gather-slots-from-start",
        "T6.3",
        "gathered_rows reads sorted_slots at tl.arange(0, BLOCK_M), the tile's own row numbers, not at row_begin + "
        "...: 'should read rows [...], got [...]' alone before (learner37)",
        "4.1",
        GATHER,
        "        x_rows = tl.load(sorted_slots_ptr + tl.arange(0, BLOCK_M), mask=live, other=0) // TOP_K\n",
        "test_gathered_product_alone[gathered]",
        "slots-from-start",
    ),
    own(
        "learner37-store-slots-from-start",
        "T6.3",
        "store_rows reads sorted_slots at tl.arange(0, BLOCK_M): each row weighted by another slot's weight; 'the "
        "stored values are off by 5.73e-01' alone before (learner37)",
        "4.3",
        SLOTS,
        SLOTS_LOCAL,
        "test_store_rows_alone[weighted]",
        "slots-from-start",
    ),
    own(
        "learner37-store-slots-from-start-by-slot",
        "T6.3",
        "the same store_rows storing by slot: its rows land at rows sorted_slots[0..]; 'cells written outside this "
        "tile's cells' alone before (learner37)",
        "4.3",
        SLOTS,
        SLOTS_LOCAL,
        "test_store_rows_alone[weighted by slot]",
        "slots-from-start",
    ),
)
