"""Lesson T6's mutants of our own from the twelfth round of leftovers (left12, 2026-12-05): each was caught with a
message that named a cause its check had not detected, until that check was added.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t6_mistakes.CAUSES; those used here are left11b's and hunt11's, already there).  t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT12_CAUSES = {}

HIST = "    hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)\n"

LEFT12 = (
    own(
        "left12-count-clears-bad-ids-in-place",
        "T6.1",
        "count_experts stores its ids back into topk_ids with those out of range made 0 (tl.where(valid, ids, 0)): "
        "the caller's ids change; test_route_ignores_ids_out_of_range said counts should be [156, ...] where the ids "
        "given held 108 of expert 0, expectations taken from the ids as count_experts left them; the address watch "
        "now stops a routing kernel's write into its inputs there too, and names it (left12)",
        "2.1",
        HIST,
        HIST + "    tl.store(ids_ptr + slots, tl.where(valid, ids, 0), mask=slots < num_slots)\n",
        "test_route_ignores_ids_out_of_range",
        "writes-an-input",
    ),
    own(
        "left12-gate-row-int64",
        "T6.4",
        "gate_up_product loads the gate box at row gate_row.to(tl.int64): an int64 descriptor coordinate; the failure "
        "was 'Triton 的解释器运行你的 kernel 时报错，Triton 的英文原话：AssertionError: Expected a 32-bit integer', "
        "Triton's English alone after a Chinese line (left12)",
        "5.1",
        "        gate = tl.dot(a, w_desc.load([gate_row, k0]).T, gate)\n",
        "        gate = tl.dot(a, w_desc.load([gate_row.to(tl.int64), k0]).T, gate)\n",
        "test_gate_up_product_alone",
        "int64-coordinate",
    ),
)
