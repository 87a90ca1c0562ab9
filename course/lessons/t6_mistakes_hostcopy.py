"""Lesson T6's mutant of our own for a copy to the host (session 27, 2026-12-04): route(check_ids=False) must
look at no value of the ids, and its host-read check (test_route_reads_nothing_back_but_one_look_at_the_ids)
had counted a .cpu() copy only as a wait for the device, never as a read, so a check_routing_inputs that
copied the ids to the host on every call, check_ids or not, passed it.  A copy to the host made by the graded
code is now a read back as well (host_reads), unless it runs inside a function the check allows.  Only make
check runs it (table=False, not in §8); it must be caught by its test.  t6_mistakes.py gathers it last.
"""

from course.lessons.t6_mistakes_own import own

HOSTCOPY_CAUSES = {}

HOSTCOPY = (
    own(
        "hostcopy-ids-copied-every-call",
        "T6.1",
        "check_routing_inputs copies the ids to the host (topk_ids.cpu()) on every call, check_ids or not: "
        "route(check_ids=False) then waits for the device, and a CUDA graph cannot capture it (session 27)",
        "2.3",
        "    if check_ids and topk_ids.numel():\n",
        "    ids_seen = topk_ids.cpu()  # kept to look at below\n    if check_ids and topk_ids.numel():\n",
        "test_route_reads_nothing_back_but_one_look_at_the_ids",
    ),
)
