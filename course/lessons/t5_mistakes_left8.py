"""Lesson T5's mutants of our own from the leftovers session (left8, 2026-12-04): each was let through, or
caught with a message that named no cause, until the check named with it was added or mended.  Only make
check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a
key of t5_mistakes.CAUSES, LEFT8_CAUSES here).  t5_mistakes.py gathers them last, and their causes into its
CAUSES.  An error raised by the learner's own line (tl.arnage) names its body's sections now too, but is no
mutant here: make check wants a mutant's one-line reason in the learner's language, and a raised error's
is Python's own words (tools/tests/test_learner_loop.py tests the note).
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT8_CAUSES = {
    "half-without-bias": ("半块没有 bias", "halves got no bias"),
    "copied-more-than-once": ("写了不止一份副本的量", "more than one copy's worth"),
}

RIGHT_HALF_FLAGS = "BLOCK_N // 2, HAS_BIAS,\n                                    ACTIVATION)"

COPY = "            operands[name] = aligned_copy(t)\n"

LEFT8 = (
    own(
        "left8-contiguous-before-copy",
        "T5.2",
        "tma_ready copies an offender as aligned_copy(t.contiguous()): a column-major operand is copied twice, "
        "the values and the rules right; the whole of T5.2 passed (left8)",
        "3.2",
        COPY,
        COPY.replace("aligned_copy(t)", "aligned_copy(t.contiguous())"),
        "test_tma_ready_copies_or_refuses[column-major a-<lambda>-<lambda>-a]",
        "copied-more-than-once",
    ),
    own(
        "left8-copied-twice",
        "T5.2",
        "tma_ready copies an offender as aligned_copy(aligned_copy(t)); the whole of T5.2 passed (left8)",
        "3.2",
        COPY,
        COPY.replace("aligned_copy(t)", "aligned_copy(aligned_copy(t))"),
        "test_tma_ready_copies_or_refuses[fp16 with odd K = 33-<lambda>-<lambda>-a]",
        "copied-more-than-once",
    ),
    own(
        "left8-right-half-without-bias",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) gives the right half's bias_and_activation HAS_BIAS=False: the bias on the "
        "left half only; T5.4's first failure said a relative error alone (left8)",
        "5",
        RIGHT_HALF_FLAGS,
        RIGHT_HALF_FLAGS.replace("HAS_BIAS", "False"),
        "test_store_tile_rounds_once_after_the_bias[2]",
        "half-without-bias",
    ),
    own(
        "left8-left-half-without-bias",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) gives the left half's bias_and_activation HAS_BIAS=False: the bias on the "
        "right half only (left8)",
        "5",
        "left = bias_and_activation(left, bias_ptr, N, stride_bias, 2 * pid_n, BLOCK_N // 2, HAS_BIAS, ACTIVATION)",
        "left = bias_and_activation(left, bias_ptr, N, stride_bias, 2 * pid_n, BLOCK_N // 2, False, ACTIVATION)",
        "test_matmul_subtiled_with_bias_and_gelu[dp]",
        "half-without-bias",
    ),
)
