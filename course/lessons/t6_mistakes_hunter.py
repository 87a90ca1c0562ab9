"""Lesson T6's mutants of our own from the hunt for unplanted mistakes (2026-12-03): each was let
through until the check named with it was added.  Only make check runs them (table=False, not in
§8); each must be caught by its test, whose message names its cause (a key of t6_mistakes.CAUSES)
or, for cause "", none.  t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

HUNTER = (
    own(
        "ids-checked-in-first-row",
        "T6.1",
        "check_routing_inputs looks at the first token's ids alone, torch.aminmax(topk_ids[0]): an id out of "
        "range in any later row is routed as check_ids=False would, left out; every bad id of the suite's "
        "cases sat in row 0, and it passed (hunter)",
        "2.3",
        "torch.aminmax(topk_ids)",
        "torch.aminmax(topk_ids[0])",
        "test_route_refuses_bad_input[an id >= num_experts in the last row]",
    ),
)
