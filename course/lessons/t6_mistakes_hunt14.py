"""Lesson T6's mutants of our own from the fourteenth mistake hunt (hunt14, 2026-12-05): count_experts adding its
counts onto block_counts with bare atomics, as route hands it over from torch.empty (never zeroed): caught by the
counts alone, with no cause, until check_block_counts (tests/t6/block_counts.py) learned to see every cell off by
the start value; and moe_mlp handing grouped_matmul copies of the caller's weights (w.clone()), which the whole
suite let through, until test_moe_mlp_in_two_launches compared each launch's weights with the caller's memory.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause
(a key of t6_mistakes.CAUSES, HUNT14_CAUSES here).  t6_mistakes.py gathers them last, and their causes too.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT14_CAUSES = {
    "added-onto-unset": ("加到这一行原有的值上", "added onto the row as it was"),
    "weights-not-callers": ("读的权重不在调用者的", "reads its weights from other memory than the caller's"),
}

GATE_UP_CALL = '    hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)\n'
DOWN_CALL = (
    "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, config=config)\n"
)

HUNT14 = (
    own(
        "hunt14-count-atomics-onto-unset-rows",
        "T6.1",
        "count_experts adds each slot into its block's row with tl.atomic_add, never writing the row first: route "
        "allocates block_counts with torch.empty, so every count is off by what the memory held (hunt14)",
        "2.1",
        "    hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)\n"
        "    tl.store(block_counts_ptr + tl.program_id(0) * E_BLOCK + tl.arange(0, E_BLOCK), hist)\n",
        "    tl.atomic_add(block_counts_ptr + tl.program_id(0) * E_BLOCK + ids, 1, mask=valid)\n",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "added-onto-unset",
    ),
    own(
        "hunt14-mlp-gate-up-weights-cloned",
        "T6.4",
        "moe_mlp hands the gate/up grouped_matmul w_gate_up.clone(): right numbers, every expert's weights copied on "
        "each call; the whole suite passed (hunt14)",
        "5.2",
        GATE_UP_CALL,
        GATE_UP_CALL.replace("(x, w_gate_up,", "(x, w_gate_up.clone(),"),
        "test_moe_mlp_in_two_launches",
        "weights-not-callers",
    ),
    own(
        "hunt14-mlp-down-weights-contiguous-copy",
        "T6.4",
        "moe_mlp hands the down grouped_matmul w_down.clone(memory_format=torch.contiguous_format): a copy of a "
        "tensor already contiguous, made on each call; the whole suite passed (hunt14)",
        "5.2",
        DOWN_CALL,
        DOWN_CALL.replace("(hidden, w_down,", "(hidden, w_down.clone(memory_format=torch.contiguous_format),"),
        "test_moe_mlp_in_two_launches",
        "weights-not-callers",
    ),
)
