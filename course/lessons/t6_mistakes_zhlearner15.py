"""Lesson T6's mutants of our own from the fifteenth Chinese-reading learner's walk (zhlearner15, 2026-12-05): each
was caught with a message that named no cause, or a wrong one, until its check was mended.  Only make check runs
them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
ZHLEARNER15_CAUSES here).  t6_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ZHLEARNER15_CAUSES = {
    "ids-compared-as-tensors": ("这样的比较每个都是设备上新算出来的张量", "each comparison such as lo < 0"),
    "offsets-are-counts": ("这正是每个专家自己的行数", "these are each expert's own count"),
    "row-begin-no-pid-m": ("不管 pid_m 是几", "whatever its pid_m"),
    "product-pid-m-as-pid-n": ("正是这个 tile 的 pid_m", "is the tile's pid_m"),
    "weight-cast-to-out": ("acc 乘上先舍入成 fp16 的权重", "acc times the weight rounded to fp16 first"),
    "reglu": ("算的是 relu(gate) * up（ReGLU）", "it is relu(gate) * up (ReGLU)"),
    "empty-ids-refused": (
        "（0 个 token）是合法的，这里错的只有 num_experts",
        "(no tokens) are valid, and num_experts alone",
    ),
    "bound-rows-or-upper": ("分不清循环的上界是哪一个", "cannot tell which the loop stopped at"),
    "first-row-dead": ("tile 的第一行）没有被当成 live", "the tile's first) was not taken as live"),
}

# grouped_tiles' call of tile_product (its first line)
PRODUCT_CALL = (
    "        acc = tile_product(x_ptr, w_desc, sorted_slots_ptr, row_begin, row_end, expert, pid_n, N, K, stride_xm,\n"
)

# store_rows' product with the routing weights
WEIGHTED = "        acc = acc * tl.load(weights_ptr + slots, mask=live, other=0.0).to(tl.float32)[:, None]\n"

ZHLEARNER15 = (
    own(
        "zhlearner15-ids-compared-as-tensors",
        "T6.1",
        "check_routing_inputs keeps torch.aminmax's two tensors and compares them in an if (lo < 0 or hi >= "
        "num_experts): two waits for the device; the message advised one torch.aminmax, which the walk already had "
        "(zhlearner15)",
        "2.3",
        "        lo, hi = (int(v) for v in torch.aminmax(topk_ids))  # one look at the ids: a host sync\n",
        "        lo, hi = torch.aminmax(topk_ids)\n",
        "test_route_reads_nothing_back_but_one_look_at_the_ids",
        "ids-waited-twice+ids-compared-as-tensors",
    ),
    own(
        "zhlearner15-offsets-are-counts",
        "T6.1",
        "scan_counts stores counts where offsets go (no tl.cumsum): the message showed the two lists alone "
        "(zhlearner15)",
        "2.1",
        "    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts)\n",
        "    tl.store(offsets_ptr + experts, running, mask=experts < num_experts)\n",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "offsets-are-counts",
    ),
    own(
        "zhlearner15-scan-rows-below-scan-rows",
        "T6.1",
        "scan_counts masks the batch's rows with blocks < SCAN_ROWS, not < num_blocks: on 18 blocks, counts of the "
        "first 16 alone; the message said the loop had stopped after the first batch, which it had not; it now says "
        "either (zhlearner15)",
        "2.1",
        "        here = tl.load(block_counts_ptr + where, mask=blocks[:, None] < num_blocks, other=0)\n",
        "        here = tl.load(block_counts_ptr + where, mask=blocks[:, None] < SCAN_ROWS, other=0)\n",
        "test_route_is_a_stable_counting_sort[skewed-1100-2-9]",
        "first-batch-only",
    ),
    own(
        "zhlearner15-row-begin-no-pid-m",
        "T6.2",
        "grouped_tiles starts every tile at its expert's first row, pid_m * BLOCK_M left out: the message gave the "
        "rows alone (zhlearner15)",
        "3.2",
        "        row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_M\n",
        "        row_begin = expert_end - tl.load(counts_ptr + expert)\n",
        "test_every_tile_of_every_expert_once",
        "row-begin-no-pid-m",
    ),
    own(
        "zhlearner15-tile-product-gets-pid-m",
        "T6.2",
        "grouped_tiles hands tile_product pid_m where pid_n goes (finish_tile gets pid_n): T6.2's record-only trace "
        "passed, and T6.3 showed a relative error alone; test_tile_handoff.py now pairs the two calls (zhlearner15)",
        "3.3",
        PRODUCT_CALL,
        PRODUCT_CALL.replace("expert, pid_n,", "expert, pid_m,"),
        "test_tile_product_gets_the_tile_finish_tile_gets",
        "product-pid-m-as-pid-n",
    ),
    own(
        "zhlearner15-weight-cast-to-out-dtype",
        "T6.3",
        "store_rows casts the routing weight to out's dtype before multiplying the float32 acc: the message said only "
        "that cells were not bit for bit acc times the weight rounded once (zhlearner15)",
        "4.3",
        WEIGHTED,
        WEIGHTED.replace("tl.float32", "out_ptr.dtype.element_ty"),
        "test_store_rows_alone[weighted]",
        "weight-cast-to-out",
    ),
    own(
        "zhlearner15-relu-for-silu",
        "T6.4",
        "swiglu returns max(gate, 0) * up (ReGLU): the message gave the relative error alone (zhlearner15)",
        "5.1",
        "    return gate * tl.sigmoid(gate) * up\n",
        "    return tl.maximum(gate, 0.0) * up\n",
        "test_gate_up_with_swiglu[torch.float16]",
        "reglu",
    ),
    own(
        "zhlearner15-empty-ids-refused",
        "T6.1",
        "check_routing_inputs refuses topk_ids of no tokens: the case 'num_experts = 0 for no tokens', shown first, "
        "said only that the error did not name num_experts (zhlearner15)",
        "2.3",
        "    if topk_ids.dim() != 2:\n",
        "    if topk_ids.dim() != 2 or topk_ids.numel() == 0:\n",
        "test_route_refuses_bad_input[num_experts = 0 for no tokens]",
        "empty-ids-refused",
    ),
    own(
        "zhlearner15-bound-is-the-rows",
        "T6.2",
        "grouped_tiles loops to offsets[num_experts - 1], the row count, read on the device: the message said the "
        "loop must stop at the total read on the device, which the walk thought it did (zhlearner15)",
        "3.4",
        "    total = tl.max(tile_ends, axis=0)\n",
        "    total = tl.load(offsets_ptr + num_experts - 1)\n",
        "test_every_tile_of_every_expert_once",
        "bound-rows-or-upper",
    ),
    own(
        "zhlearner15-first-row-dead",
        "T6.3",
        "gathered_rows takes rows > row_begin as live, the tile's first row left out: the message listed the rows "
        "read alone (zhlearner15)",
        "4.1",
        "    live = rows < row_end\n    if X_SORTED:\n",
        "    live = (rows > row_begin) & (rows < row_end)\n    if X_SORTED:\n",
        "test_gathered_product_alone[gathered]",
        "first-row-dead",
    ),
)
