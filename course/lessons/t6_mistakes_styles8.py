"""Lesson T6's mutants of our own from the styles session (styles8, 2026-12-04): the host-read check of route
(test_route_reads_nothing_back_but_one_look_at_the_ids) now takes a copy to the host (.cpu(), .to("cpu")) as
the one wait it is, and what the code computes from such copies alone as host work, which waits for nothing: a
check_routing_inputs that copies the ids to the host once and looks at their least and greatest there waited
once, where the check had counted two waits and failed it.  Each copy to the host is still a wait of its own.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its
cause (a key of t6_mistakes.CAUSES).  t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}; the cause
# here is hunt8's (t6_mistakes_hunt8.py), already in t6_mistakes.CAUSES.
STYLES8_CAUSES = {}

STYLES8 = (
    own(
        "styles8-ids-to-host-twice",
        "T6.1",
        "check_routing_inputs copies the ids' least and greatest to the host one at a time, "
        "int(topk_ids.min().cpu()), then int(topk_ids.max().cpu()): two waits for the device (styles8)",
        "2.3",
        "        lo, hi = (int(v) for v in torch.aminmax(topk_ids))  # one look at the ids: a host sync",
        "        lo, hi = int(topk_ids.min().cpu()), int(topk_ids.max().cpu())",
        "test_route_reads_nothing_back_but_one_look_at_the_ids",
        "ids-waited-twice",
    ),
)
