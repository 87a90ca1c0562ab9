"""Lesson T6's mutants of our own from the learner6 walk-through (2026-12-03): a learner wrote T6 from the
explainer alone and planted 30-odd mistakes of their own; the suite caught every one it can see on a CPU,
but these were caught by a message that named a cause the test had not seen (the loop's bound, the
weights' views, new topk_ids, which rows are added), or by a symptom alone where the cause shows (counts
off by the last block's spare lanes).  Each test now tells the causes apart and names one only where it
has seen it.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose
message names its cause (a key of LEARNER_CAUSES here, or of t6_mistakes.CAUSES).  t6_mistakes.py
gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER_CAUSES = {
    "spare-ends-not-total": (
        "循环的上界 tl.max(tile_ends) 就越过了真正的 tile 数",
        "so the loop's bound, tl.max(tile_ends), passes the real tiles",
    ),
    "tail-as-expert-0": ("最后一块里最后一个 slot 之后的", "lanes of the last block past the last slot"),
    "acc-in-dtype": ("的累加器（每加一行", "into an accumulator of"),
    "view-not-cause": ("所以不是视图的问题", "so the view is not the cause"),
    "config-block-sizes": ("错在 pick_config 给的块大小上", "what breaks it is the block sizes pick_config gave"),
    "combine-mean": ("行的平均", "the mean of the"),
}

# combine_topk's one store, of the float32 sum cast to out's dtype
COMBINE_STORE = "    tl.store(out_ptr + t * N + cols, acc.to(out_ptr.dtype.element_ty), mask=cols < N)\n"

LEARNER = (
    own(
        "tail-lanes-as-expert-0",
        "T6.1",
        "count_experts' mask drops slots < num_slots: the ids load's other=0 makes the lanes of the last block "
        "past the last slot expert 0's, and the histogram counts them; the message said only that counts were "
        "wrong (learner6)",
        "2.1",
        "    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts)\n    hist",
        "    valid = (ids >= 0) & (ids < num_experts)\n    hist",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "tail-as-expert-0",
    ),
    own(
        "tile-counts-unmasked-total",
        "T6.2",
        "expert_tile_counts loads counts with no mask at all (t6_mistakes_own.py's tile-counts-unmasked, seen here "
        "in the schedule's test): the lanes past the experts read past counts and the loop ran past the real "
        "total; the test said the loop must stop at the total read on the device, which it did.  Now the test "
        "reads tile_ends' spare lanes, and the watch names the read at its line (learner6)",
        "3.3",
        "counts = tl.load(counts_ptr + experts, mask=experts < num_experts, other=0)",
        "counts = tl.load(counts_ptr + experts)",
        "test_every_tile_of_every_expert_once",
        "outside-tensors",
    ),
    own(
        "tile-counts-no-other-total",
        "T6.2",
        "expert_tile_counts loads counts with the mask and no other=0 (hunt3's tile-counts-without-other, seen here "
        "in the schedule's test): the spare lanes read 3 rows each, tl.max(tile_ends) passes the real total, and "
        "the test said the loop must stop at the total read on the device, which it did (learner6)",
        "3.3",
        "counts = tl.load(counts_ptr + experts, mask=experts < num_experts, other=0)",
        "counts = tl.load(counts_ptr + experts, mask=experts < num_experts)",
        "test_every_tile_of_every_expert_once",
        "spare-ends-not-total",
    ),
    own(
        "by-slot-ignored",
        "T6.3",
        "store_rows always stores at the sorted row, BY_SLOT or not: the combine then sums rows of other "
        "tokens; the test of weights given as views said each slot's weight must be read as its value, though "
        "the same weights contiguous were as wrong (learner6)",
        "4.4",
        "    out_rows = slots if BY_SLOT else rows\n",
        "    out_rows = rows\n",
        "test_grouped_matmul_reads_views_of_weights_and_of_a_hand_made_routing",
        "view-not-cause",
    ),
    own(
        "up-rows-after-gate",
        "T6.4",
        "gate_up_product reads up's box at gate_row + BLOCK_N instead of up_row: right only where BLOCK_N equals "
        "F, as with the config moe_mlp's test gives its first call; its second call, with pick_config's block "
        "sizes, was said to differ by its topk_ids alone (learner6)",
        "5.1",
        "up = tl.dot(a, w_desc.load([up_row, k0]).T, up)",
        "up = tl.dot(a, w_desc.load([gate_row + BLOCK_N, k0]).T, up)",
        "test_moe_mlp_in_two_launches",
        "config-block-sizes",
    ),
    own(
        "combine-acc-in-out-dtype",
        "T6.3",
        "combine_topk adds each float32 row into an accumulator rounded to out's dtype (fp16) after every add; "
        "the message named no cause, as only rows and sums both rounded were told apart (learner6)",
        "4.4",
        "acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32)",
        "acc = (acc + tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32))"
        ".to(out_ptr.dtype.element_ty).to(tl.float32)",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
        "acc-in-dtype",
    ),
    own(
        "combine-mean",
        "T6.3",
        "combine_topk divides the sum by TOP_K, averaging the rows that the routing weights scale already; the "
        "message said to check which rows are added (learner6)",
        "4.4",
        COMBINE_STORE,
        "    acc = acc / TOP_K\n" + COMBINE_STORE,
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
        "combine-mean",
    ),
)
