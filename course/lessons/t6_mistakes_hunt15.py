"""Lesson T6's mutants of our own from the fifteenth mistake hunt (hunt15, 2026-12-05): moe_mlp clearing
requires_grad on the caller's weights (nn.Linear's Parameters, which an inference hands over under
torch.no_grad() and which train on afterwards), caught by test_moe_mlp_takes_parameters_under_no_grad.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its
cause (a key of t6_mistakes.CAUSES, HUNT15_CAUSES here).  t6_mistakes.py gathers them last, and their causes too.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT15_CAUSES = {
    "requires-grad-cleared": ("不再 requires_grad 了", "no longer require grad"),
}

ROUTE_LINE = "    routing = route(topk_ids, w_gate_up.shape[0])\n"

HUNT15 = (
    own(
        "hunt15-mlp-clears-weights-requires-grad",
        "T6.4",
        "moe_mlp calls requires_grad_(False) on the caller's w_gate_up and w_down (to get past grouped_matmul's "
        "refusal of inputs that require grad): the model's Parameters no longer train (hunt15)",
        "5.2",
        ROUTE_LINE,
        "    w_gate_up.requires_grad_(False)\n    w_down.requires_grad_(False)\n" + ROUTE_LINE,
        "test_moe_mlp_takes_parameters_under_no_grad",
        "requires-grad-cleared",
    ),
)
