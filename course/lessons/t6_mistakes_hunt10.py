"""Lesson T6's mutants of our own from the tenth mistake hunt (hunt10, 2026-12-04): a routing race that the whole
of T6.1 let through, caught since by the check named with it; and the words that now name hunt3's scan without
other= (scan-without-other, t6_mistakes_hunt3.py).  Only make check runs them (table=False, not in §8); each must
be caught by its test, whose message names its cause (a key of t6_mistakes.CAUSES).  t6_mistakes.py gathers them
last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT10_CAUSES = {
    "atomic-lane-order": (
        "结果取决于同一个 atomic 里各 lane 执行的先后",
        "the result depends on the order one atomic takes its lanes in",
    ),
    "scan-rows-undefined": (
        "block_counts 里 num_blocks 之后那些被掩码挡住的行也加了进来",
        "block_counts' rows past num_blocks, masked off, were added in",
    ),
}

PLACE = "    pos = first_row + tl.load(block_base_ptr + tl.program_id(0) * E_BLOCK + ids, mask=valid, other=0) + rank\n"

HUNT10 = (
    own(
        "hunt10-scatter-rank-by-atomic-cursor",
        "T6.1",
        "scatter_slots takes each slot's place from tl.atomic_add on its block's row of block_base, a counter per "
        "expert: the interpreter takes an atomic's lanes in order, so the places came out stable and the whole of "
        "T6.1 passed; a GPU takes them in no set order.  The routing now also runs with every atomic's lanes taken "
        "last first (hunt10)",
        "2.2",
        PLACE,
        "    pos = first_row + tl.atomic_add(block_base_ptr + tl.program_id(0) * E_BLOCK + ids, 1, mask=valid)\n",
        "test_route_in_any_program_order",
        "atomic-lane-order",
    ),
)
