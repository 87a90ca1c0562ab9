"""Lesson T5's mutants of our own from the fourteenth mistake hunt (hunt14, 2026-12-05): tma_ready looking at its
operands' values (torch.isfinite(a).all()), a host sync on every matmul call, was told by test_tma_ready's copy
count alone, as bytes written (its bool tensor), with no cause; tests/t5/test_tma_reads_nothing_back.py now runs
tma_ready and make_descriptors under tests/host_reads.py's watch and names the read.  Only make check runs it
(table=False, not in §8); it must be caught by its test, whose message names its cause (a key of
t5_mistakes.CAUSES, HUNT14_CAUSES here).  t5_mistakes.py gathers it last, and its cause too.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT14_CAUSES = {
    "host-read": ("在主机上读了张量的值", "read tensor values back to the host"),
}

HUNT14 = (
    own(
        "hunt14-ready-checks-finite-values",
        "T5.2",
        "tma_ready refuses operands holding inf or NaN, read with bool(torch.isfinite(a).all()): a host sync on "
        "every matmul call, and a full read of both operands (hunt14)",
        "3.2",
        "    b_kmajor = False\n",
        "    if not bool(torch.isfinite(a).all()) or not bool(torch.isfinite(b).all()):\n"
        '        raise ValueError("matmul: a and b must be finite")\n'
        "    b_kmajor = False\n",
        "test_tma_ready_and_descriptors_read_no_value",
        "host-read",
    ),
)
