"""Lesson T6's mutants of our own from the hunt for messages that named a symptom alone (2026-12-03):
each was caught, but its message said what differed, not why, where the test could see why.  Only
make check runs them (table=False, not in §8); each must be caught by its test, whose message names
its cause (a key of t6_mistakes.CAUSES, DETECTED_CAUSES here) or, for cause "", none: where the test
cannot tell the cause from others by what the code did, the message stays a symptom.  t6_mistakes.py
gathers them last, and their causes into its CAUSES (some name the causes of its own mistakes too).
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
DETECTED_CAUSES = {
    "base-no-carry": ("没有把前面各批", "did not carry the running sum of the earlier batches"),
    "base-no-batch-sum": ("漏了同一批里块 b 之前的那几块", "without the blocks before b in b's own batch"),
    "counts-written-at-pitch-e": ("count_experts 写出的 block_counts", "count_experts wrote the right count"),
    "counts-read-at-pitch-e": ("正是按行距 num_experts", "counts are their sum read at a row pitch"),
    "base-read-at-pitch-e": (
        "scatter_slots 按行距 num_experts",
        "scatter_slots read block_base[b, e] at b * num_experts",
    ),
    "running-never-grew": ("running 一直没有增长", "its running sum never grew"),
    "tiles-in-runs": ("每个程序做的是一段连续的 tile", "each program did one contiguous run of tiles"),
    "combine-slot-left-out": ("逐位等于漏掉了 j =", "the sum that leaves out j ="),
    "combine-in-dtype": ("每一行、每一个部分和都舍入成", "each row and each partial sum rounded to"),
    "combine-reversed": ("倒着加的和", "a loop run backwards"),
    "rows-by-position": ("读的是 i // top_k", "they are i // top_k"),
    "swiglu-on-up": ("算的是 silu(up) * gate", "it is silu(up) * gate"),
    "k-box-left-out": ("最后那个 k 块没有加进去", "the last k-box left out"),
    "down-unweighted": ("down 那次启动没有收到路由权重", "the down launch got no routing weights"),
    "row-mask-missing": ("行的掩码 rows < row_end 没挡住", "the row mask rows < row_end did not stop it"),
}

SCHEDULE_LOOP = "for tile_id in tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN):"
COMBINE_ADD = "acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32)"

CAUSES_NAMED = (
    own(
        "counts-written-at-pitch-e",
        "T6.1",
        "count_experts stores block b's histogram at b * num_experts, not b * E_BLOCK: scan_counts reads rows "
        "E_BLOCK wide and sums the counts of the wrong blocks; the message gave the wrong counts alone",
        "2.1",
        "tl.store(block_counts_ptr + tl.program_id(0) * E_BLOCK + tl.arange(0, E_BLOCK), hist)",
        "tl.store(block_counts_ptr + tl.program_id(0) * num_experts + tl.arange(0, E_BLOCK), hist,\n"
        "             mask=tl.arange(0, E_BLOCK) < num_experts)",
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "counts-written-at-pitch-e",
    ),
    own(
        "scan-reads-at-pitch-e",
        "T6.1",
        "scan_counts addresses block_counts and block_base at blocks * num_experts, not blocks * E_BLOCK: count_"
        "experts' rows are E_BLOCK wide; the message gave the wrong counts alone",
        "2.1",
        "        where = blocks[:, None] * E_BLOCK + experts[None, :]",
        "        where = blocks[:, None] * num_experts + experts[None, :]",
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "counts-read-at-pitch-e",
    ),
    own(
        "scatter-reads-base-at-pitch-e",
        "T6.1",
        "scatter_slots loads block_base at tl.program_id(0) * num_experts + ids, not * E_BLOCK: from block 1 on "
        "each slot's place is off, some past sorted_slots; the message named the stray stores and one slot",
        "2.1",
        "pos = first_row + tl.load(block_base_ptr + tl.program_id(0) * E_BLOCK + ids",
        "pos = first_row + tl.load(block_base_ptr + tl.program_id(0) * num_experts + ids",
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "outside-tensors+base-read-at-pitch-e",
    ),
    own(
        "schedule-starts-one-late",
        "T6.2",
        "grouped_tiles' loop starts at tl.program_id(0) + 1: tile 0 is never done and the others go to the "
        "program after theirs",
        "3.4",
        SCHEDULE_LOOP,
        SCHEDULE_LOOP.replace("tl.program_id(0),", "tl.program_id(0) + 1,"),
        "test_every_tile_of_every_expert_once",
        "start-or-step",
    ),
    own(
        "schedule-in-runs",
        "T6.2",
        "grouped_tiles gives each program one contiguous run of cdiv(total, NUM_PROGS) tiles, not tiles p, "
        "p + NUM_PROGS, ...: every tile done once, by another program than §3.3's; the message named the "
        "program alone",
        "3.4",
        SCHEDULE_LOOP,
        "for tile_id in tl.range(tl.program_id(0) * tl.cdiv(total, NUM_PROGS),\n"
        "                             tl.minimum(total, (tl.program_id(0) + 1) * tl.cdiv(total, NUM_PROGS)), 1,\n"
        "                             flatten=FLATTEN):",
        "test_every_tile_of_every_expert_once",
        "tiles-in-runs",
    ),
    own(
        "combine-skips-last-slot",
        "T6.3",
        "combine_topk loops j over tl.static_range(TOP_K - 1): each token's last slot is never added; the "
        "message said to check which rows are added",
        "4.4",
        "for j in tl.static_range(TOP_K):",
        "for j in tl.static_range(TOP_K - 1):",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "combine-slot-left-out",
    ),
    own(
        "combine-sums-in-out-dtype",
        "T6.3",
        "combine_topk rounds each row and each partial sum to out's dtype (fp16) as it adds",
        "4.4",
        COMBINE_ADD,
        "acc = (acc.to(out_ptr.dtype.element_ty)\n"
        "               + tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0)\n"
        "               .to(out_ptr.dtype.element_ty)).to(tl.float32)",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
        "combine-in-dtype",
    ),
    own(
        "silu-in-fp16",
        "T6.4",
        "swiglu rounds gate and sigmoid(gate) to fp16 and multiplies them there: fp32 inputs come out off by "
        "fp16's rounding.  Symptom only: an error of that size has other causes (operands or sums rounded to "
        "fp16) that the result alone cannot tell apart; fp16 inputs pass, the layer rounds to fp16 anyway",
        "5.1",
        "    return gate * tl.sigmoid(gate) * up",
        "    return (gate.to(tl.float16) * tl.sigmoid(gate).to(tl.float16)).to(tl.float32) * up",
        "test_gate_up_with_swiglu[torch.float32]",
        "silu-in-fp16",  # named since fix9 (t6_mistakes_fix9.py's FIX9_CAUSES)
    ),
)
