"""Lesson T4's mutants of our own from the fifteenth mistake hunt (hunt15, 2026-12-05): check_inputs changing the
caller's tensors to get past its own refusals, which test_input_validation told only as "matmul accepted it" until
it compared the caller's tensors before and after the call (caller_changed): a bias of shape (1, N) squeezed in
place here; requires_grad cleared with grad enabled is hunt11's hunt11-grad-dropped-in-place, which now names its
cause too.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of t4_mistakes.CAUSES, hunt4's).  t4_mistakes.py gathers them last.
"""

from course.lessons.t4_mistakes_own import mutant

HUNT15_CAUSES = {}  # the cause named is hunt4's: caller-changed-in-place


def own(key, step, en, section, old, new, test, cause=""):
    """One of this hunt's mutants: the same words in both languages' report (make check's alone)."""
    return mutant(key, step, section, old, new, test, cause, en, en)


BIAS_CHECK = "    if bias is not None and tuple(bias.shape) != (b.shape[1],):\n"

HUNT15 = (
    own(
        "hunt15-bias-squeezed-in-place",
        "T4.4",
        "check_inputs mends a bias of shape (1, N) with bias.squeeze_(0) before checking its shape: it is taken, and "
        "the caller's bias is (N,) afterwards (hunt15)",
        "6.3",
        BIAS_CHECK,
        "    if bias is not None and bias.dim() == 2 and bias.shape[0] == 1:\n        bias.squeeze_(0)\n" + BIAS_CHECK,
        "test_input_validation[bias of shape (1, 3)]",
        "caller-changed-in-place",
    ),
)
