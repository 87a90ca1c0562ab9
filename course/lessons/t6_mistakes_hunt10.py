"""Lesson T6's mutants of our own from the tenth mistake hunt (hunt10, 2026-12-04): a routing race that the whole
of T6.1 let through, and a scan caught without its cause, each caught since by the check named with it.  Only
make check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a
key of t6_mistakes.CAUSES).  t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT10_CAUSES = {
    "atomic-lane-order": (
        "结果取决于同一个 atomic 里各 lane 执行的先后",
        "the result depends on the order one atomic takes its lanes in",
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
    own(
        "hunt10-scan-loads-without-other",
        "T6.1",
        "scan_counts loads its SCAN_ROWS rows of block_counts with the mask of rows < num_blocks and no other=: on a "
        "GPU the rows past num_blocks are undefined and go into every count; the suite's undefined lanes made the "
        "counts wrong, and its message said only which counts it got (hunt10)",
        "2.1",
        "        here = tl.load(block_counts_ptr + where, mask=blocks[:, None] < num_blocks, other=0)\n",
        "        here = tl.load(block_counts_ptr + where, mask=blocks[:, None] < num_blocks)\n",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "scan-rows-undefined",
    ),
)
