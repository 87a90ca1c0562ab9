"""Lesson T6's mutants of our own from the thirteenth mistake hunt (hunt13, 2026-12-05): a rank in the block
reshaped from a kept dimension with can_reorder=True.  The interpreter keeps numpy's order, so every check passed;
on a GPU the compiler may hand the ranks to other lanes.  tests/t6/test_route_reorders.py now routes once more with
such reshapes (and tl.cat) giving their elements last first (tests/reorder.py), and names them where the routing
changes.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names
its cause (a key of t6_mistakes.CAUSES, HUNT13_CAUSES here).  t6_mistakes.py gathers them last, and their causes
into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT13_CAUSES = {
    "reorder-taken": ("代码里有可以重排元素的操作", "an op free to reorder its elements ran"),
}

HUNT13 = (
    own(
        "hunt13-rank-reshape-can-reorder",
        "T6.1",
        "scatter_slots sums its rank with keep_dims=True and reshapes it to (BLOCK,) with can_reorder=True: each "
        "lane gets its own rank on the interpreter alone; the whole suite passed (hunt13)",
        "2.2",
        "    rank = tl.sum(earlier_same.to(tl.int32), axis=1)\n",
        "    rank = tl.reshape(tl.sum(earlier_same.to(tl.int32), axis=1, keep_dims=True), (BLOCK,), "
        "can_reorder=True)\n",
        "test_route_keeps_no_order_a_reorder_may_change",
        "reorder-taken+outside-tensors",  # the run with the ranks reordered wrote past sorted_slots: both seen
    ),
)
