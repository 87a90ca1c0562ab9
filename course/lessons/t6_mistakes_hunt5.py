"""Lesson T6's mutants of our own from the fifth hunt (hunt5b, 2026-12-03): mistakes planted in a copy of
the reference that the suite let through, or caught with a message that named another cause (or none
where one could be seen).  Each here was let through, or so named, until the check named with it was
added or mended.  Only make check runs them (table=False, not in §8); each must be caught by its test,
whose message names its cause (a key of HUNT5_CAUSES here, or of t6_mistakes.CAUSES) or, for cause "",
none.  t6_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT5_CAUSES = {
    "scaled-without-weights": ("而调用者没给 topk_weights", "though the caller gave no topk_weights"),
    "first-row-left-out": ("算位置时漏了专家的行首", "the expert's first row, offsets[e] - counts[e], were left out"),
    "rank-counts-later": ("排在它后面、专家号相同的 lane", "counted the lanes after the slot with its id"),
    "m-blocks-of-row-ends": ("用它的行尾 offsets[e] 算 m 块", "those m-blocks taken from its row end"),
    "buffer-read-j-major": ("即把缓冲区当成了 [top_k, T, N]", "the buffer read as [top_k, T, N]"),
    "padded-starts": ("补齐到 BLOCK_M 的倍数时的位置", "where padding each expert's rows to a multiple of BLOCK_M"),
}

NUM_EXPERTS = "or num_experts < 1:\n"
W_EXPERTS = "    if w.shape[0] != routing.num_experts:\n"
WEIGHTING = "    if HAS_WEIGHTS:\n        acc = acc * tl.load(weights_ptr"
ROUTE = "    routing = route(topk_ids, w_gate_up.shape[0])\n"
ID_CHECK = "    if check_ids and topk_ids.numel():\n"
WEIGHTS_SHAPE = (
    "        if tuple(topk_weights.shape) != (routing.num_tokens, routing.top_k) or topk_weights.device != x.device:\n"
)
PLACE = "    pos = first_row + tl.load(block_base_ptr + tl.program_id(0) * E_BLOCK + ids, mask=valid, other=0) + rank\n"
ROW_BEGIN = "        row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_M\n"

HUNT5 = (
    own(
        "one-expert-route-refused",
        "T6.1",
        "check_routing_inputs refuses num_experts below 2: a layer of one expert (every token's top-2 on expert 0, "
        "twice) is valid input, and no test routed E = 1 (hunt5)",
        "2.3",
        NUM_EXPERTS,
        NUM_EXPERTS.replace("< 1", "< 2"),
        "test_route_of_one_expert",
    ),
    own(
        "one-expert-matmul-refused",
        "T6.3",
        "check_expert_inputs refuses a w of one expert; no grouped_matmul case had E = 1 (hunt5)",
        "4",
        W_EXPERTS,
        '    if w.shape[0] < 2:\n        raise ValueError("grouped_matmul: w needs 2 experts at least")\n' + W_EXPERTS,
        "test_grouped_matmul_in_sorted_order[one expert-7-2-1-32-24-torch.float16]",
    ),
    own(
        "weights-read-when-by-slot",
        "T6.3",
        "store_rows scales by weights[slot] when HAS_WEIGHTS or BY_SLOT: a combine with no topk_weights reads the "
        "placeholder weights_ptr (the by-slot buffer itself) as weights; no test combined without weights, and "
        "once one did, watched_call named it an add into the output (a few products of the sentinel land near it) "
        "(hunt5)",
        "4.3",
        WEIGHTING,
        WEIGHTING.replace("if HAS_WEIGHTS:", "if HAS_WEIGHTS or BY_SLOT:"),
        "test_a_combine_without_routing_weights",
        "scaled-without-weights",
    ),
    own(
        "x-1d-taken",
        "T6.3",
        "check_expert_inputs refuses more than 2 dimensions alone (x.dim() > 2): a 1-D x gets IndexError from "
        "x.shape[1]; the suite's bad x had 3-D alone (hunt5)",
        "4",
        "    if x.dim() != 2:\n",
        "    if x.dim() > 2:\n",
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "w-4d-taken",
        "T6.3",
        "check_expert_inputs refuses fewer than 3 dimensions alone (w.dim() < 3): a 4-D w passes, and the host's "
        "unpacking of its shape raises a ValueError that names no argument; the suite's bad w had 2-D alone (hunt5)",
        "4",
        "    if w.dim() != 3:\n",
        "    if w.dim() < 3:\n",
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "mlp-x-made-contiguous",
        "T6.4",
        "moe_mlp hands gate/up x.contiguous(): a copy of any view of x, where the kernel reads x through its "
        "strides; moe_mlp's tests gave a contiguous x alone, for which it is x itself (hunt5)",
        "5.2",
        ROUTE,
        ROUTE + "    x = x.contiguous()\n",
        "test_moe_mlp_reads_x_as_given_and_routes_each_call",
        "gate-up-not-x",
    ),
    own(
        "mlp-routing-kept-by-address",
        "T6.4",
        "moe_mlp keeps its routing per (topk_ids.data_ptr(), shape, E) and uses it again: ids changed in place "
        "(a CUDA graph's static input) are routed as the first call's; the suite's second call had a new tensor "
        "(hunt5)",
        "5.2",
        ROUTE,
        "    kept = moe_mlp.__dict__.setdefault('kept', {})\n"
        "    key = (topk_ids.data_ptr(), tuple(topk_ids.shape), w_gate_up.shape[0])\n"
        "    if key not in kept:\n"
        "        kept[key] = route(topk_ids, w_gate_up.shape[0])\n"
        "    routing = kept[key]\n",
        "test_moe_mlp_reads_x_as_given_and_routes_each_call",
        "mlp-kept",
    ),
    own(
        "weights-dtypes-narrowed",
        "T6.3",
        "check_expert_inputs takes topk_weights of fp16, bf16 and fp32 alone: float64 weights, floating and valid, "
        "are refused; every weight of the suite was float32 (hunt5)",
        "4",
        "        if not topk_weights.is_floating_point():\n",
        "        if topk_weights.dtype not in (torch.float16, torch.bfloat16, torch.float32):\n",
        "test_routing_weights_of_another_floating_dtype[torch.float64]",
    ),
    own(
        "place-without-first-row",
        "T6.1",
        "scatter_slots places a slot at block_base + rank, its expert's first row (offsets - counts) left out; "
        "the message gave the first wrong slot alone (hunt5)",
        "2.1",
        PLACE,
        PLACE.replace("pos = first_row + ", "pos = 0 * first_row + "),
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "first-row-left-out",
    ),
    own(
        "rank-summed-along-axis-0",
        "T6.1",
        "scatter_slots sums the earlier-same matrix along axis 0: each slot's rank counts the later lanes of its "
        "id, the tail's (id loaded as 0) among them; the message gave the first wrong slot alone (hunt5)",
        "2.1",
        "    rank = tl.sum(earlier_same.to(tl.int32), axis=1)\n",
        "    rank = tl.sum(earlier_same.to(tl.int32), axis=0)\n",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "rank-counts-later",
    ),
    own(
        "m-blocks-from-offsets",
        "T6.2",
        "grouped_tiles hands expert_tile_counts offsets_ptr for counts_ptr: m-blocks of each expert's row end, "
        "the total grown past the bound; the message said the loop must stop at the total read on the device, "
        "which it did (hunt5)",
        "3.3",
        "    m_blocks, tile_ends = expert_tile_counts(counts_ptr, num_experts",
        "    m_blocks, tile_ends = expert_tile_counts(offsets_ptr, num_experts",
        "test_every_tile_of_every_expert_once",
        "m-blocks-of-row-ends",
    ),
    own(
        "rows-start-padded",
        "T6.2",
        "grouped_tiles starts a tile's rows at (the m-blocks of the experts before + pid_m) * BLOCK_M, as if each "
        "expert's rows were padded to BLOCK_M; the message gave the rows alone (hunt5)",
        "3.2",
        ROW_BEGIN,
        "        row_begin = (tl.sum(tl.where(tl.arange(0, E_BLOCK) < expert, m_blocks, 0), axis=0) + pid_m)"
        " * BLOCK_M\n",
        "test_every_tile_of_every_expert_once",
        "padded-starts",
    ),
    own(
        "top-k-over-experts-refused",
        "T6.1",
        "check_routing_inputs refuses a top_k above num_experts: a token may choose one expert twice (§7), as "
        "every token does with one expert and top-2; every routing of the suite had top_k <= E (hunt5)",
        "2.3",
        ID_CHECK,
        "    if topk_ids.shape[1] > num_experts:\n"
        '        raise ValueError(f"route: top_k {topk_ids.shape[1]} exceeds num_experts {num_experts}")\n' + ID_CHECK,
        "test_route_of_one_expert",
    ),
    own(
        "repeated-experts-refused",
        "T6.1",
        "check_routing_inputs refuses a token whose top_k repeat an expert, valid input (§7); the stable sort's "
        "test let route's ValueError through bare, no failure message of the suite's (hunt5)",
        "2.3",
        ID_CHECK,
        "    if topk_ids.numel() and (topk_ids.sort(dim=1).values.diff(dim=1) == 0).any():\n"
        '        raise ValueError("route: a token\'s topk_ids repeat an expert")\n' + ID_CHECK,
        "test_route_is_a_stable_counting_sort[empty experts-29-2-6]",
    ),
    own(
        "weights-rows-unchecked",
        "T6.3",
        "check_expert_inputs compares topk_weights' dimensions and top_k alone, not its rows: [5, 2] weights for 6 "
        "tokens pass, and the epilogue reads past them; the suite's bad weights had a wrong top_k or were "
        "transposed (hunt5)",
        "4",
        WEIGHTS_SHAPE,
        WEIGHTS_SHAPE.replace(
            "tuple(topk_weights.shape) != (routing.num_tokens, routing.top_k)",
            "topk_weights.dim() != 2 or topk_weights.shape[1] != routing.top_k",
        ),
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "combine-reads-j-major",
        "T6.3",
        "combine_topk reads token t's row j at j * T + t, the by-slot buffer taken as [top_k, T, N]; the message said "
        "to check which rows are added (hunt5)",
        "4.4",
        "        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols,",
        "        acc += tl.load(by_slot_ptr + (j * tl.num_programs(0) + t) * N + cols,",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
        "buffer-read-j-major",
    ),
)
