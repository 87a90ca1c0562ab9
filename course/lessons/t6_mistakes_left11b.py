"""Lesson T6's mutants of our own from the second half of the eleventh round of leftovers (left11b, 2026-12-04):
mistakes the suite caught with a message of its own kind, or let through, until the check named with each was
added.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names
its cause (a key of t6_mistakes.CAUSES, LEFT11B_CAUSES here).  t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT11B_CAUSES = {
    "writes-an-input": ("是它的输入，它只该读，不该写", "an input it should only read"),
}

LEFT11B = (
    own(
        "left11b-combine-sums-into-by-slot",
        "T6.3",
        "combine_topk keeps its running sum in the token's first by-slot row (a store into by_slot, which it only "
        "reads) as well as in acc: the result is right; told only that the by-slot buffer changed after moe_kernel "
        "wrote it, now named at the store's line (left11b)",
        "4.4",
        "        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32)\n",
        "        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32)\n"
        "        tl.store(by_slot_ptr + t * TOP_K * N + cols, acc.to(by_slot_ptr.dtype.element_ty), mask=cols < N)\n",
        "test_each_tile_reads_its_own_expert_alone[weighted and combined]",
        "writes-an-input",
    ),
)
