"""Lesson T6's mutants of our own from enlearner13's walk (2026-12-05): an English-reading learner's T6, then
planted mistakes.  Each was caught with a message that named no cause, until the check named here learned it:
a scatter that reads block_base at a row pitch of num_experts after a scan_counts that wrote only the experts'
lanes of block_base (the pattern assumed zeros past E, where such a scan leaves the tests' UNSET), the k-boxes'
products rounded to the input's dtype before they are added into a float32 acc (in gathered_product, and in
gate_up_product's up alone), store_rows weighting the tile where HAS_WEIGHTS is false, the trace written at
each tile's index within its expert, and a combine_topk that leaves out each token's first row or adds rows
t + j (the first failure of make test said only that the sum of the right by-slot rows was wrong).  And two that
the whole suite let through on the CPU: x's or out's row offsets cast to int32, which wrap with WIDE (past 2**31
elements), until test_offsets_from_the_wide_strides_stay_int64 read moe_kernel's IR.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t6_mistakes.CAUSES, ENLEARNER13_CAUSES here).  t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ENLEARNER13_CAUSES = {
    "products-rounded": ("先舍入成 fp16、再加进 float32", "rounded to fp16 before it is added (in float32)"),
    "weights-unasked": ("没有 HAS_WEIGHTS 也乘了路由权重", "were applied without HAS_WEIGHTS"),
    "trace-at-local-index": ("按每个 tile 在它专家里的序号记下的", "recorded at its index within its expert"),
    "wide-narrowed": ("截成了 int32", "narrows a value worked out from them to int32"),
}

# gathered_product's load of A, and the load of w's box after it
GATHER_LOAD = (
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
    "        b = w_desc.load([w_row, k0])"
)

# combine_topk's k loop: its load of row t * TOP_K + j
COMBINE_LOAD = (
    "        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32)\n"
)

# scan_counts' store of block_base, through scatter_slots' read of it (both changed by the first mutant)
SCAN_TO_SCATTER = (
    '        tl.store(block_base_ptr + where, before, mask=blocks[:, None] < num_blocks)\n'
    '        running += tl.sum(here, axis=0)\n'
    '    tl.store(counts_ptr + experts, running, mask=experts < num_experts)\n'
    '    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts)\n'
    '    # ---- T6.1 end ----\n'
    '\n'
    '\n'
    '@triton.jit\n'
    'def scatter_slots(ids_ptr, block_base_ptr, counts_ptr, offsets_ptr, sorted_slots_ptr, slot_pos_ptr, num_slots,\n'
    '                  num_experts, BLOCK: tl.constexpr, E_BLOCK: tl.constexpr):\n'
    '    """Put each slot of block b at its sorted position: its expert\'s first row, '
    'plus the slots of that expert in\n'
    '    earlier blocks (block_base), plus those earlier in this block.  '
    'Stable: an expert\'s slots keep their order."""\n'
    '    # ---- T6.1 begin (§2.1) ----\n'
    '    lane = tl.arange(0, BLOCK)\n'
    '    slots = tl.program_id(0) * BLOCK + lane\n'
    '    ids = tl.load(ids_ptr + slots, mask=slots < num_slots, other=0)\n'
    '    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts)\n'
    '    earlier_same = (ids[:, None] == ids[None, :]) & (lane[None, :] < lane[:, None]) & valid[None, :]\n'
    '    rank = tl.sum(earlier_same.to(tl.int32), axis=1)\n'
    '    first_row = tl.load(offsets_ptr + ids, mask=valid, other=0) - tl.load(counts_ptr + ids, mask=valid, other=0)\n'
    '    pos = first_row + tl.load(block_base_ptr + tl.program_id(0) * E_BLOCK + ids'
)

ENLEARNER13 = (
    own(
        "enlearner13-scatter-pitch-e-after-masked-scan",
        "T6.1",
        "scan_counts stores block_base for the experts' lanes alone (valid: the lanes past E are never read), and "
        "scatter_slots reads it at b * num_experts + ids: the pitch pattern, which took the lanes past E as 0, was "
        "not named where they hold what no one wrote (enlearner13)",
        "2.1",
        SCAN_TO_SCATTER,
        SCAN_TO_SCATTER.replace(
            "before, mask=blocks[:, None] < num_blocks)",
            "before, mask=(blocks[:, None] < num_blocks) & (experts < num_experts)[None, :])",
        ).replace("tl.program_id(0) * E_BLOCK + ids", "tl.program_id(0) * num_experts + ids"),
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "outside-tensors+base-read-at-pitch-e",
    ),
    own(
        "enlearner13-gathered-products-rounded",
        "T6.3",
        "gathered_product adds each k-box's product rounded to x's dtype into its float32 acc (acc += tl.dot(a, "
        "b.T).to(a.dtype)): the message gave a relative error alone, the sum kept in fp16 being another sum "
        "(enlearner13)",
        "4.2",
        "        acc = tl.dot(a, b.T, acc)\n",
        "        acc += tl.dot(a, b.T).to(a.dtype).to(tl.float32)\n",
        "test_gathered_product_alone[gathered]",
        "products-rounded",
    ),
    own(
        "enlearner13-up-products-rounded",
        "T6.4",
        "gate_up_product adds up's k-box products rounded to x's dtype into a float32 up, gate's kept right: the "
        "message gave the two errors alone (enlearner13)",
        "5.1",
        "        up = tl.dot(a, w_desc.load([up_row, k0]).T, up)\n",
        "        up += tl.dot(a, w_desc.load([up_row, k0]).T).to(a.dtype).to(tl.float32)\n",
        "test_gate_up_product_alone",
        "products-rounded",
    ),
    own(
        "enlearner13-weights-without-has-weights",
        "T6.3",
        "store_rows scales by weights[slot] whether or not HAS_WEIGHTS (if True:): store_rows' plain case said a "
        "relative error alone (enlearner13)",
        "4.3",
        "    if HAS_WEIGHTS:\n        acc = acc * tl.load(weights_ptr",
        "    if True:\n        acc = acc * tl.load(weights_ptr",
        "test_store_rows_alone[plain]",
        "weights-unasked",
    ),
    own(
        "enlearner13-trace-at-tile-within-expert",
        "T6.2",
        "grouped_tiles hands finish_tile pid_m * num_pid_n + pid_n, the tile's index within its expert, for tile_id: "
        "the trace's counts said 'tile 0 had 2 epilogues' alone (enlearner13)",
        "3.3",
        "        finish_tile(out_ptr, acc, weights_ptr, sorted_slots_ptr, trace_ptr, tile_id, expert, pid_m, pid_n,\n",
        "        finish_tile(out_ptr, acc, weights_ptr, sorted_slots_ptr, trace_ptr, pid_m * num_pid_n + pid_n,\n"
        "                    expert, pid_m, pid_n,\n",
        "test_every_tile_of_every_expert_once",
        "trace-at-local-index",
    ),
    own(
        "enlearner13-combine-skips-first-choice",
        "T6.3",
        "combine_topk's loop runs over tl.static_range(1, TOP_K): each token's first choice is left out; the first "
        "failure make test shows said only that the sum of the right by-slot rows is wrong (enlearner13)",
        "4.4",
        "    for j in tl.static_range(TOP_K):\n" + COMBINE_LOAD,
        "    for j in tl.static_range(1, TOP_K):\n" + COMBINE_LOAD,
        "test_each_tile_reads_its_own_expert_alone[weighted and combined]",
        "combine-slot-left-out",
    ),
    own(
        "enlearner13-combine-rows-t-plus-j",
        "T6.3",
        "combine_topk loads row t + j of the by-slot buffer, not t * TOP_K + j: the first failure make test shows "
        "said only that the sum of the right by-slot rows is wrong; combine's own test, later, named it (hunt8's "
        "mutant of the same line) (enlearner13)",
        "4.4",
        COMBINE_LOAD,
        COMBINE_LOAD.replace("(t * TOP_K + j) * N", "(t + j) * N"),
        "test_each_tile_reads_its_own_expert_alone[weighted and combined]",
        "rows-t-plus-j",
    ),
    own(
        "enlearner13-wide-gather-offsets-int32",
        "T6.3",
        "gathered_product casts x's row offsets, x_rows * stride_xm, to int32: with WIDE (x past 2**31 elements) "
        "they wrap; the whole suite let it through on the CPU (only test_rows_past_2_31_elements, a GPU's, runs "
        "such offsets) until test_offsets_from_the_wide_strides_stay_int64 read moe_kernel's IR (enlearner13)",
        "4.3",
        GATHER_LOAD,
        GATHER_LOAD.replace("x_rows[:, None] * stride_xm", "(x_rows[:, None] * stride_xm).to(tl.int32)"),
        "test_offsets_from_the_wide_strides_stay_int64",
        "wide-narrowed",
    ),
    own(
        "enlearner13-wide-store-offsets-int32",
        "T6.3",
        "store_rows casts out's row offsets, out_rows * stride_om, to int32: with WIDE (out past 2**31 elements) "
        "they wrap; the whole suite let it through on the CPU until test_offsets_from_the_wide_strides_stay_int64 "
        "read moe_kernel's IR (enlearner13)",
        "4.3",
        "    tl.store(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on,",
        "    tl.store(out_ptr + (out_rows[:, None] * stride_om).to(tl.int32) + cols[None, :] * stride_on,",
        "test_offsets_from_the_wide_strides_stay_int64",
        "wide-narrowed",
    ),
)
