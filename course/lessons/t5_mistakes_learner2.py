"""Lesson T5's mutants of our own from the t5learner2 walk (2026-12-02): holes the suite let through and
messages that named no cause where the check could tell it.  Only make check runs them (table=False,
not in §8); each must be caught by its test, whose message names its cause (a key of
t5_mistakes.CAUSES).  Kept apart from the other t5_mistakes_*.py files, which are near 400 lines;
t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

LEARNER2 = (
    own(
        "pitch-from-width",
        "T5.2",
        "tma_problem checks rule 2 on the width, shape[1] * element_size(), not on stride(0): a view cut "
        "from wider rows passed every check, and matmul then failed in TensorDescriptor (t5learner2)",
        "3.2",
        "    if (t.stride(0) * size) % 16:\n",
        "    if (t.shape[1] * size) % 16:\n",
        "test_tma_problem_reads_the_row_stride_not_the_width",
        "width-not-stride",
    ),
    own(
        "sk-programs-not-capped",
        "T5.3",
        "stream_k_split returns num_sms programs where the stream-K tiles hold fewer k-blocks: one thin wave "
        "of 10 tiles of 2 k-blocks ran 132 programs, 112 of them with an empty run; no case had shown it in "
        "mode auto (t5learner2)",
        "4.3",
        "    return sk_tiles, min(num_sms, sk_tiles * k_blocks)\n",
        "    return sk_tiles, num_sms\n",
        "test_stream_k_split[10-2-132-auto-want12]",
        "programs-past-k-blocks",
    ),
    own(
        "publish-by-float-atomic-add",
        "T5.3",
        "sk_publish_partial adds the partial to its slot with a float tl.atomic_add instead of storing it: "
        "the message had said only that the slot's cells differ from the partial (t5learner2)",
        "4.2",
        "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n",
        "    tl.atomic_add(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n",
        "test_sk_publish_partial_alone",
        "partial-added",
    ),
)
