"""Lesson T6's mutants of our own from the eleventh round of leftovers (left11, 2026-12-04): mistakes the suite let
through on the CPU, caught since by the check named with each.  Only make check runs them (table=False, not in §8);
each must be caught by its test, whose message names its cause (a key of t6_mistakes.CAUSES, LEFT11_CAUSES here).
t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT11_CAUSES = {
    "reads-values": ("读了一个张量的值，当时还没有拒绝它", "read a tensor's value before refusing it"),
    "zeroed-by-another-program": (
        "同一次启动的两个程序之间没有先后",
        "nothing orders two programs of one launch",
    ),
    "zeroed-without-barrier": (
        "两者之间没有 tl.debug_barrier()",
        "with no tl.debug_barrier() between the two",
    ),
}

HISTOGRAM = (
    "    hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)\n"
    "    tl.store(block_counts_ptr + tl.program_id(0) * E_BLOCK + tl.arange(0, E_BLOCK), hist)\n"
)

LEFT11 = (
    own(
        "left11-histogram-zeroed-by-program-0",
        "T6.1",
        "count_experts: program 0 zeroes every row of block_counts, then each program adds its slots into its own "
        "row with tl.atomic_add: right in id order, and the reversed order said only that the counts depend on the "
        "order; on a GPU program 0's zeros can land after another program's atomics (left11)",
        "2.1",
        HISTOGRAM,
        "    if tl.program_id(0) == 0:\n"
        "        for b in range(0, tl.num_programs(0)):\n"
        "            tl.store(block_counts_ptr + b * E_BLOCK + tl.arange(0, E_BLOCK), tl.zeros((E_BLOCK,), tl.int32))\n"
        "    tl.atomic_add(block_counts_ptr + tl.program_id(0) * E_BLOCK + ids, 1, mask=valid)\n",
        "test_route_in_any_program_order",
        "zeroed-by-another-program",
    ),
    own(
        "left11-histogram-zeroed-without-barrier",
        "T6.1",
        "count_experts zeroes its own row of block_counts with a store, then adds its slots into it with "
        "tl.atomic_add, no tl.debug_barrier() between: the whole of T6.1 passed (the interpreter runs a program's "
        "operations in order); on a GPU the store's lanes and the atomic's are other threads, in no set order "
        "(left11)",
        "2.1",
        HISTOGRAM,
        "    row = block_counts_ptr + tl.program_id(0) * E_BLOCK\n"
        "    tl.store(row + tl.arange(0, E_BLOCK), tl.zeros((E_BLOCK,), dtype=tl.int32))\n"
        "    tl.atomic_add(row + ids, 1, mask=valid)\n",
        "test_route_in_any_program_order",
        "zeroed-without-barrier",
    ),
    own(
        "left11-check-expert-reads-offsets",
        "T6.3",
        "check_expert_inputs checks that routing.offsets do not decrease, bool((offs[1:] >= offs[:-1]).all()), before "
        "the device checks: the Routing on the meta device made it raise RuntimeError, told as 'grouped_matmul raised "
        "RuntimeError (Tensor.item() cannot be called on meta tensors) ...: refuse such input in check_expert_inputs', "
        "the function that raised it (left11)",
        "4",
        "    if x.dim() != 2:\n",
        "    offs = routing.offsets\n"
        "    if offs.numel() > 1 and not bool((offs[1:] >= offs[:-1]).all()):\n"
        '        raise ValueError("grouped_matmul: routing.offsets must not decrease")\n'
        "    if x.dim() != 2:\n",
        "test_grouped_matmul_refuses_bad_input",
        "reads-values",
    ),
)
