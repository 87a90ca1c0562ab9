"""Lesson T6's mutants of our own from the fifteenth styles round (styles15, 2026-12-05): an expert id not below
num_experts is as much a num_experts too small for those ids, so test_route_refuses_bad_input takes an error naming
either argument there (a correct check_routing_inputs saying 'expert 4 is not below num_experts = 4' had been failed
for not naming topk_ids); an error naming neither is still caught, and named so, as the same words of two earlier
rounds' mutants are now (num-experts-bool, t6_mistakes_own.py; ids-3d-taken, hunt4).  Likewise x's rows or
topk_weights' shape against the routing's tokens and top_k: test_grouped_matmul_refuses_bad_input takes x or
topk_weights, or routing (a correct check saying 'the routing is made for 6 rows, got 5' had been failed for not
naming x).  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of t6_mistakes.CAUSES, STYLES15_CAUSES here).  t6_mistakes.py gathers them last, and their
causes too.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
STYLES15_CAUSES = {
    # tests/t6/test_routing_refuses.py: an error raised for bad input whose message names no argument it may
    "names-no-argument": ("但信息没有说出出错的参数", "but its message does not name the argument"),
    # tests/t6/test_grouped_matmul_refuses.py: x's rows refused in words that name neither x nor the routing
    "rows-named-by-neither": ("但信息没有说出 x 或 routing", "but its message does not name x or routing"),
}

RANGE_RAISE = (
    '            raise ValueError(f"route: topk_ids holds expert {bad}, outside [0, {num_experts}) for num_experts")\n'
)

STYLES15 = (
    own(
        "styles15-id-range-names-no-argument",
        "T6.1",
        "check_routing_inputs refuses an id out of range in words that name neither topk_ids nor num_experts "
        "('expert 4 is outside [0, 4)') (styles15)",
        "2.3",
        RANGE_RAISE,
        '            raise ValueError(f"route: expert {bad} is outside [0, {num_experts})")\n',
        "test_route_refuses_bad_input[an id >= num_experts]",
        "names-no-argument",
    ),
    own(
        "styles15-rows-names-no-argument",
        "T6.3",
        "check_expert_inputs refuses x's rows in words that name neither x nor routing ('5 rows for 6 tokens') "
        "(styles15)",
        "4",
        '        raise ValueError(f"grouped_matmul: x has {x.shape[0]} rows, the routing needs {rows}")\n',
        '        raise ValueError(f"grouped_matmul: {x.shape[0]} rows for {rows} tokens")\n',
        "test_grouped_matmul_refuses_bad_input",
        "rows-named-by-neither",
    ),
)
