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

POS = "    pos = first_row + tl.load(block_base_ptr + tl.program_id(0) * E_BLOCK + ids, mask=valid, other=0) + rank\n"

LEFT11B = (
    own(
        "left11b-scatter-claims-from-offsets",
        "T6.1",
        "scatter_slots takes each slot's place as a textbook counting sort does, tl.atomic_add(offsets_ptr + ids, -1) "
        "- 1: it writes into offsets, scan_counts' output that scatter_slots only reads (and the order within an "
        "expert is not kept); told after the routing, from the values left in offsets, and now by the address "
        "watch at the atomic's line, for every kernel with inputs (left11b)",
        "2.1",
        POS,
        "    pos = tl.atomic_add(offsets_ptr + ids, -1, mask=valid) - 1\n",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "writes-an-input",
    ),
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
