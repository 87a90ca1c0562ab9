"""Lesson T5's mutants of our own from the styles session (styles8, 2026-12-04): test_tma_ready_copies_or_refuses
now counts the bytes tma_ready copies out of tensors (tests/t5/copies.py), so that a zeroed buffer the operand is
assigned into (torch.zeros, then buf[:, :K] = t) is one copy, as aligned_copy's is, where it had counted the zero
fill as a copy too and failed a correct tma_ready.  The assignment is counted now (before, buf[...] = t counted
nothing, and the zero fill stood in for it), so an operand made contiguous first, then assigned, is still two
copies: the mutant here keeps that caught.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t5_mistakes.CAUSES).  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}; the cause
# here is left8's (t5_mistakes_left8.py), already in t5_mistakes.CAUSES.
STYLES8_CAUSES = {}

COPY = "            operands[name] = aligned_copy(t)\n"

ASSIGNED_AFTER_CONTIGUOUS = (
    "            rows, cols = t.shape\n"
    "            buf = torch.zeros((rows, cols + (-cols) % 64), device=t.device, dtype=t.dtype)\n"
    "            buf[:, :cols] = t.contiguous()\n"
    "            operands[name] = buf[:, :cols]\n"
)

STYLES8 = (
    own(
        "styles8-assigned-after-contiguous",
        "T5.2",
        "tma_ready copies an offender into a zeroed, padded buffer by buf[:, :K] = t.contiguous(): a column-major "
        "operand is copied twice (the zero fill is no copy, the assignment is one) (styles8)",
        "3.2",
        COPY,
        ASSIGNED_AFTER_CONTIGUOUS,
        "test_tma_ready_copies_or_refuses[column-major a-<lambda>-<lambda>-a]",
        "copied-more-than-once",
    ),
)
