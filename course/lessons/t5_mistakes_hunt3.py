"""Lesson T5's mutants of our own from the third hunt for unplanted mistakes (styles45, 2026-12-03): each
was let through until the check named with it was added.  Only make check runs them (table=False, not in
§8); each must be caught by its test, whose message names its cause (a key of t5_mistakes.CAUSES,
HUNT3_CAUSES here).  t5_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT3_CAUSES = {
    "storage-offset-only": ("所以它查的只是 storage_offset()", "so it checks storage_offset() alone"),
}

HUNT3 = (
    own(
        "hunt3-base-by-storage-offset",
        "T5.2",
        "tma_problem checks storage_offset() * element_size() for 16-byte alignment, not data_ptr(): every "
        "unaligned tensor of the suite was a slice of an aligned buffer, where the two agree; memory shared "
        "through DLPack starts its own storage unaligned (hunt3)",
        "3.2",
        "    if t.data_ptr() % 16:",
        "    if t.storage_offset() * size % 16:",
        "test_tma_problem_reads_the_base_address_itself",
        "storage-offset-only",
    ),
)
