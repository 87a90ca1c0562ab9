"""Lesson T6's mutants of our own from the eighth learner's walk (learner8, 2026-12-04): a learner who reads
Chinese wrote T6 from content/t6.md alone (each step passed at its first run) and planted 64 changes: 60
mistakes, all caught, and four pieces of legal code the suite rightly passed (row-major order within an
expert, slot_pos written for ignored slots, counts kept in a float32 vector, an fp16 zero that the first
float32 add widens).  These five were caught by a first failure that named no cause its check could see:
an id past 2**32 placed by a scatter that narrowed it first; a tile's rows from offsets[expert + 1], told as
rows alone while the next test named the read; route given another expert count, told as
check_expert_inputs' refusal alone; the combine done in torch, or h weighted in torch between the launches,
told as the launches alone.  The checks named with them were mended.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
LEARNER8_CAUSES here, or of t6_mistakes.CAUSES).  t6_mistakes.py gathers them last, and their causes into
its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER8_CAUSES = {
    "combine-not-passed": ("没有传 combine=True", "made without combine=True"),
    "h-weighted-between": ("h 每一行乘上了这个 slot 的路由权重", "h with each row times its slot's routing weight"),
}

# scatter_slots' load of the ids and the range check that follows it
SCATTER_IDS = (
    "    ids = tl.load(ids_ptr + slots, mask=slots < num_slots, other=0)\n"
    "    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts)\n"
    "    earlier_same = "
)
MLP_DOWN = (
    "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, config=config)\n"
)

LEARNER8 = (
    own(
        "learner8-scatter-narrows-ids",
        "T6.1",
        "scatter_slots loads the ids .to(tl.int32) before its range check (count_experts checks the int64 ids): "
        "2**32 + 1 becomes expert 1 and its slot is placed; the message said such a slot gets no row, not why "
        "(learner8)",
        "2.3",
        SCATTER_IDS,
        SCATTER_IDS.replace("other=0)\n", "other=0).to(tl.int32)\n", 1),
        "test_route_ignores_ids_out_of_range",
        "bad-slot-placed+ids-narrowed",
    ),
    own(
        "learner8-row-end-from-next-offsets",
        "T6.2",
        "grouped_tiles cuts a tile's rows at offsets[expert + 1]: test_every_tile_of_every_expert_once, the first "
        "failure make test shows, said the rows alone ('5..-1, should be 5..8'); the read of offsets[num_experts] "
        "was named by the next test only (learner8)",
        "3.2",
        "row_end = tl.minimum(row_begin + BLOCK_M, expert_end)",
        "row_end = tl.minimum(row_begin + BLOCK_M, tl.load(offsets_ptr + expert + 1))",
        "test_every_tile_of_every_expert_once",
        "offsets-past-end",
    ),
    own(
        "learner8-mlp-experts-from-w-down",
        "T6.4",
        "moe_mlp routes over w_down.shape[1] experts (K', w_down's rows per expert), not w_gate_up.shape[0]: "
        "grouped_matmul refuses the routing, and the message quoted the refusal alone (learner8; the same cause "
        "as en-learner's routing over topk_ids.max() + 1, whose refusal depended on the seed's ids)",
        "5.2",
        "    routing = route(topk_ids, w_gate_up.shape[0])\n",
        "    routing = route(topk_ids, w_down.shape[1])\n",
        "test_moe_mlp_reads_nothing_back_but_the_id_check",
        "route-other-experts",
    ),
    own(
        "learner8-combine-in-torch",
        "T6.4",
        "moe_mlp's down call without combine=True, its sorted rows summed per token in torch: the message listed "
        "the two launches (BY_SLOT=False) and not the missing combine=True (learner8)",
        "5.2",
        MLP_DOWN,
        "    y = grouped_matmul(hidden, w_down, routing, topk_weights, x_sorted=True, config=config)\n"
        "    return y[routing.slot_pos.long()].view(routing.num_tokens, routing.top_k, -1).float().sum(1)"
        ".to(x.dtype)\n",
        "test_moe_mlp_in_two_launches",
        "combine-not-passed",
    ),
    own(
        "learner8-h-weighted-in-torch",
        "T6.4",
        "moe_mlp multiplies h by each sorted row's routing weight in torch and calls down without topk_weights: "
        "the message said down does not read gate/up's h, not that it reads h weighted (learner8)",
        "5.2",
        MLP_DOWN,
        "    hidden = (hidden.float() * topk_weights.reshape(-1)[routing.sorted_slots.long()].float()[:, None]).to(\n"
        "        hidden.dtype\n"
        "    )\n"
        "    return grouped_matmul(hidden, w_down, routing, None, combine=True, x_sorted=True, config=config)\n",
        "test_moe_mlp_in_two_launches",
        "down-not-h+h-weighted-between",
    ),
)
