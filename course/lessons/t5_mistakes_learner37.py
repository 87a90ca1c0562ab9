"""Lesson T5's mutants of our own from learner37 (2026-12-05): slips a new learner of T5 makes, planted one at a time
in the reference and run through `make test STEP=...`.  k_block_loop looping over range(kb_begin, kb_end) with its
offsets taken from the run's start, (kb - kb_begin) * BLOCK_K, sums k-blocks 0.. as a loop over
range(kb_end - kb_begin) does, and was told that it was that loop, 'the loop is range(kb_begin, kb_end)', the very
loop it had; tests/t5/k_ranges.py now says both ways that give the sum.  tma_problem testing storage_offset() % 16
(elements, where rule 3 counts bytes of data_ptr()) was named already and had no mutant.  A stream-K walk that steps
back one k-block at a time was told 'tile 0 summed 15 k-blocks, 5 expected' alone; tests/t5/sk_counts.py's
walked_by_one_words names it.  A walk that carries acc from one segment to the next (zeros before it, acc += in it)
was told a relative error and the tiles off alone; tests/t5/sk_carried.py works out its product.  Only make check
runs them (table=False, not in §8); each must be caught by its test, whose message names its cause
(LEARNER37_CAUSES here, or t5_mistakes.CAUSES that the same detectors name).
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER37_CAUSES = {
    "walk-by-one": ("it_end 每次只退一个 k-block", "a walk that steps it_end back by one k-block"),
    "acc-carried": ("acc 在走过的各段之间一路累加下去", "a walk whose acc ran on from one segment to the next"),
    "split-axis-not-last": ("tl.split 只拆长度为 2 的最后一维", "tl.split splits a last dimension of length 2"),
}

# stream_k_tiles' walk from its first line to its k_segment call, and the same with acc set to zeros before the loop
# and each segment added into it (acc +=): acc carried from one segment to the next
WALK = (
    '    it_end = run_end\n'
    '    while it_end > run_begin:\n'
    '        tile_id = (it_end - 1) // k_blocks\n'
    '        tile_begin = tile_id * k_blocks\n'
    '        it_begin = tl.maximum(tile_begin, run_begin)\n'
    '        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)\n'
    '        acc = k_segment('
)
WALK_CARRIED = WALK.replace(
    "    it_end = run_end\n", "    it_end = run_end\n    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
).replace("        acc = k_segment(", "        acc += k_segment(")

LEARNER37 = (
    own(
        "learner37-k-offsets-from-run-start",
        "T5.2",
        "k_block_loop loops over range(kb_begin, kb_end) but takes off_k = (kb - kb_begin) * BLOCK_K: k-blocks "
        "0.. summed; told 'the loop counts kb from 0 ... the loop is range(kb_begin, kb_end)' before, of that very "
        "loop (learner37)",
        "3.1",
        "        off_k = kb * BLOCK_K\n",
        "        off_k = (kb - kb_begin) * BLOCK_K\n",
        "test_k_block_loop[24-40-200-2-5-True-torch.float16]",
        "kb-from-zero",
    ),
    own(
        "learner37-base-offset-in-elements",
        "T5.2",
        "tma_problem tests rule 3 as t.storage_offset() % 16, elements of the view's offset, where the base "
        "address in bytes, data_ptr(), is meant (named already; no mutant before, learner37)",
        "3.2",
        '    if t.data_ptr() % 16:\n        return f"{name}: the base',
        '    if t.storage_offset() % 16:\n        return f"{name}: the base',
        "test_tma_problem_reads_the_base_address_itself",
        "storage-offset-only",
    ),
    own(
        "learner37-sk-walk-steps-by-one",
        "T5.3",
        "stream_k_tiles steps its walk back one k-block at a time (it_end = it_end - 1), not to the segment's start: "
        "each step sums the segment again; 'tile 0 summed 15 k-blocks, 5 expected' alone before (learner37)",
        "4.2",
        "        it_end = it_begin\n",
        "        it_end = it_end - 1\n",
        "test_stream_k_every_tile_once",
        "walk-by-one",
    ),
    own(
        "learner37-sk-acc-carried",
        "T5.3",
        "stream_k_tiles sets acc to zeros before its walk and adds each segment into it (acc += k_segment(...)): an "
        "owner's tile gets the segments its run walked before; 'relative error 3.94e-01; 3 of the 4 tiles are off' "
        "alone before (learner37)",
        "4.2",
        WALK,
        WALK_CARRIED,
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-45-37-160-3]",
        "acc-carried",
    ),
    own(
        "learner37-subtile-split-without-permute",
        "T5.4",
        "store_tile reshapes acc to (BLOCK_M, 2, BLOCK_N // 2) and splits it without the permute: Triton's "
        "'expected last dimension to be 2 for split, got 16' alone before; course/messages.py's split_axis_words "
        "says which axis tl.split takes (learner37)",
        "5",
        "        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))\n",
        "        halves = tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2))\n",
        "test_matmul_subtiled_with_bias_and_gelu[dp]",
        "split-axis-not-last",
    ),
)
