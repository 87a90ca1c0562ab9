"""Lesson T6's mutants of our own from the hunt for calls a real model makes (2026-12-03): views of
topk_ids are valid input (one column of a top-2 router's output, an expanded tensor), which the
given host hands the kernels contiguous; a check that refuses them refuses a real model's call (one
that refuses views of topk_weights is caught by test_combine's transposed weights already).  Only
make check runs them (table=False, not in §8); each must be caught by its test, whose message names
no cause (cause "").  t6_mistakes.py gathers them after the hunter's.
"""

from course.lesson_data import Mistake


def calls(key, step, en, section, old, new, test):
    """A mutant of our own, run by make check only; en says what it does (make check's report)."""
    return Mistake(key, step, en, en, section, old, new, test, "", table=False)


CALLS = (
    calls(
        "calls-ids-must-be-contiguous",
        "T6.1",
        "check_routing_inputs refuses topk_ids that is not contiguous, as if the kernels read it as it is: "
        "topk_ids[:, :1] of a top-2 router's output is refused, though route hands the kernels a copy",
        "2.3",
        "    if topk_ids.dtype == torch.bool or",
        "    if not topk_ids.is_contiguous():\n"
        '        raise ValueError("route: topk_ids must be contiguous")\n'
        "    if topk_ids.dtype == torch.bool or",
        "test_route_reads_ids_through_their_strides",
    ),
)
