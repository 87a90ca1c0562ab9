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
)
