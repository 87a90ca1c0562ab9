"""Lesson T4's mutants of our own from the thirteenth mistake hunt (hunt13, 2026-12-05).  HAS_BIAS set only when an
activation is given too: a call with a bias and no activation launched with the flags the call before had needed,
and the message said they were kept from that call; it now says so only when the same call, made again right after
one with other flags, launches with other flags (or every call launched with one set of flags), and otherwise lets
check_flags say which flag this call needed.  Only make check runs them (table=False, not in §8); each must be
caught by its test, whose message names its cause (a key of t4_mistakes.CAUSES, HUNT13_CAUSES here) or, for cause
"", says what it saw.  t4_mistakes.py gathers them last.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT13_CAUSES = {}


def own(key, step, en, section, old, new, test, cause=""):
    """One of this hunt's mutants: the same words in both languages' report (make check's alone)."""
    return mutant(key, step, section, old, new, test, cause, en, en)


HUNT13 = (
    own(
        "hunt13-bias-flag-needs-activation",
        "T4.4",
        "HAS_BIAS is bias is not None and activation is not None: a bias without an activation is never added; "
        "the message said the flags were an earlier call's, kept between calls (hunt13)",
        "6.2",
        '    flags = dict(HAS_BIAS=bias is not None, ACTIVATION=activation or "none")\n',
        '    flags = dict(HAS_BIAS=bias is not None and activation is not None, ACTIVATION=activation or "none")\n',
        "test_each_call_launches_with_its_own_bias_and_activation",
    ),
)
