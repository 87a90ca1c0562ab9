"""Lesson T6's mutants of our own from the en-learner walk-through (2026-12-03): a learner wrote T6 from
the English explainer alone (it passed at the first run of each step) and planted 55 mistakes of their
own, in two rounds.  One passed: a k loop stepping by BLOCK_N, right wherever BLOCK_N equals BLOCK_K, as
in every tile of T6.3's tests (test_gathered_product_alone now also runs a k-box of 32).  Four were caught
by a message naming a cause its check had not seen (route's check of the ids turned off, for a route
given another expert count; a slot out of range placed, for a token stored as a slot; cells not written,
for cells added into; rows added, for a combine that never stored some columns), and six by a symptom
alone where the cause shows.  Each test now tells them apart and names a cause only where it has seen
it.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of EN_LEARNER_CAUSES here, or of t6_mistakes.CAUSES) or, for cause "", none.
t6_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
EN_LEARNER_CAUSES = {
    "k-step-not-block-k": ("而不是按 BLOCK_K", "not by BLOCK_K"),
    "route-other-experts": ("不是 w_gate_up 的", "not w_gate_up's"),
    "bad-slot-placed": ("越界的 slot 不占任何一行", "such a slot gets no row"),
    "added-not-stored": ("tl.atomic_add，或 out 加 acc", "tl.atomic_add, or out plus acc"),
    "scan-batches-overlap": ("只隔一块就开始", "that start one block apart"),
    "bad-ids-as-expert-0": ("直方图把越界的号当成了专家 0", "the histogram counted those ids as expert 0"),
    "slot-mod-top-k": ("读的是 slot % top_k", "they are slot % top_k"),
    "rounded-narrow": ("存之前被舍入成了", "on its way to out"),
    "n-blocks-short": ("num_pid_n 少算了", "num_pid_n came out too small"),
    "combine-never-stored": ("没有程序存过它们", "stored by no program"),
    "sum-in-fp16": ("这正是在 fp16 里累加的和", "it is the sum kept in fp16"),
}

# gathered_product's first lines: its accumulator, the k-box's columns, the k loop
K_LOOP = "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n    cols = tl.arange(0, BLOCK_K)\n"
# store_rows' one store
STORE = (
    "    tl.store(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on,\n"
    "             acc.to(out_ptr.dtype.element_ty), mask=live[:, None] & (cols < N)[None, :])\n"
)

EN_LEARNER = (
    own(
        "k-loop-steps-by-block-n",
        "T6.3",
        "gathered_product's k loop steps by BLOCK_N, not BLOCK_K: right wherever the two are equal, as in every "
        "tile of T6.3's tests (the interpreter's config and the probe's square boxes); it passed (en-learner)",
        "4.2",
        K_LOOP + "    for k0 in range(0, K, BLOCK_K):\n",
        K_LOOP + "    for k0 in range(0, K, BLOCK_N):\n",
        "test_gathered_product_alone[gathered k-box 32]",
        "k-step-not-block-k",
    ),
    own(
        "mlp-routes-experts-from-ids",
        "T6.4",
        "moe_mlp routes over int(topk_ids.max()) + 1 experts, not w_gate_up's: an id past the experts makes one "
        "expert more, refused by check_expert_inputs; the message said to keep route's check of the ids on "
        "(check_ids=False), which was on (en-learner)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "    routing = route(topk_ids, int(topk_ids.max()) + 1)\n",
        "test_moe_mlp_refuses_ids_out_of_range",
        "route-other-experts",
    ),
    own(
        "scatter-stores-tokens",
        "T6.1",
        "scatter_slots stores slot // 2 (the token, at top_k = 2) into sorted_slots, not the slot: the test of "
        "ids out of range said slots out of range were placed, as some of those numbers are (en-learner)",
        "2.3",
        "    tl.store(sorted_slots_ptr + pos, slots, mask=valid)\n",
        "    tl.store(sorted_slots_ptr + pos, slots // 2, mask=valid)\n",
        "test_route_ignores_ids_out_of_range",
    ),
    own(
        "store-adds-by-slot",
        "T6.3",
        "store_rows adds the by-slot rows into out with tl.atomic_add instead of storing them: the message said "
        "the cells where the sum rounds back to the sentinel were not written (en-learner)",
        "4.3",
        STORE,
        "    if BY_SLOT:\n"
        "        tl.atomic_add(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on, acc,\n"
        "                      mask=live[:, None] & (cols < N)[None, :])\n"
        "    else:\n    " + STORE.replace("\n ", "\n     "),
        "test_store_rows_alone[weighted by slot]",
        "added-not-stored",
    ),
    own(
        "scan-batches-one-block-apart",
        "T6.1",
        "scan_counts starts a batch of SCAN_ROWS rows at every block, range(0, num_blocks, 1): block b is counted "
        "min(b + 1, SCAN_ROWS) times; the message gave the wrong counts alone (en-learner)",
        "2.1",
        "    for b0 in range(0, num_blocks, SCAN_ROWS):\n",
        "    for b0 in range(0, num_blocks, 1):\n",
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "scan-batches-overlap",
    ),
    own(
        "bad-ids-counted-as-expert-0",
        "T6.1",
        "count_experts makes the ids out of range 0 with tl.where and masks the histogram at slot < num_slots "
        "alone: they are counted as expert 0; the message gave the wrong counts alone (en-learner)",
        "2.3",
        "    hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)\n",
        "    hist = tl.histogram(tl.where(valid, ids, 0).to(tl.int32), E_BLOCK, mask=slots < num_slots)\n",
        "test_route_ignores_ids_out_of_range",
        "bad-ids-as-expert-0",
    ),
    own(
        "x-row-slot-mod-top-k",
        "T6.3",
        "gathered_rows takes x's row as slot % top_k, not slot // top_k; the message gave the rows alone (en-learner)",
        "4.1",
        "x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0) // TOP_K",
        "x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0) % TOP_K",
        "test_gathered_product_alone[gathered]",
        "slot-mod-top-k",
    ),
    own(
        "store-casts-to-fp16",
        "T6.3",
        "store_rows casts the tile to tl.float16, not to out's dtype: a float32 result rounded to fp16; the "
        "message gave the error alone (en-learner)",
        "4.3",
        "acc.to(out_ptr.dtype.element_ty), mask=live[:, None] & (cols < N)[None, :])",
        "acc.to(tl.float16), mask=live[:, None] & (cols < N)[None, :])",
        "test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float32]",
        "rounded-narrow",
    ),
    own(
        "n-blocks-floor",
        "T6.2",
        "grouped_tiles takes N // BLOCK_N column blocks, not cdiv(N, BLOCK_N): the last, partial one is never "
        "done; the message said a tile count or a loop bound was too small, say (en-learner)",
        "3.3",
        "    num_pid_n = tl.cdiv(N, BLOCK_N)\n",
        "    num_pid_n = N // BLOCK_N\n",
        "test_every_tile_of_every_expert_once",
        "n-blocks-short",
    ),
    own(
        "combine-columns-by-n",
        "T6.3",
        "combine_topk's column block c starts at c * N, not c * BLOCK_N: with N past BLOCK_N the columns from "
        "BLOCK_N on are never stored; the message said to check which rows are added (en-learner)",
        "4.4",
        "    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)\n    acc = tl.zeros((BLOCK_N,)",
        "    cols = tl.program_id(1) * N + tl.arange(0, BLOCK_N)\n    acc = tl.zeros((BLOCK_N,)",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
        "combine-never-stored",
    ),
    own(
        "gathered-sum-in-fp16",
        "T6.3",
        "gathered_product rounds each k-box's product to fp16 and keeps the sum there; the message gave the "
        "error alone (en-learner)",
        "4.2",
        "        acc = tl.dot(a, b.T, acc)\n",
        "        acc = (acc + tl.dot(a, b.T).to(a.dtype).to(tl.float32)).to(a.dtype).to(tl.float32)\n",
        "test_gathered_product_alone[gathered]",
        "sum-in-fp16",
    ),
)
