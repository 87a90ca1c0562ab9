"""Lesson T5's mutants of our own from the second half of the eleventh round of leftovers (left11b, 2026-12-04):
each was caught with a message that named a wrong cause, or gave a hint that did not fit, until its check was
mended.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names
its cause (a key of t5_mistakes.CAUSES, LEFT11B_CAUSES here).  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT11B_CAUSES = {
    "acc-in-half": (
        "累加器每个 float32 格子的低 16 位",
        "the low 16 bits of each float32 cell of the accumulator",
    ),
    "waits-own-flag": ("也就是它自己的旗", "its own: the owner waits on the flags of programs"),
}

LEFT11B = (
    own(
        "left11b-dp-loop-from-pid-any-order",
        "T5.3",
        "data_parallel_tiles loops from tl.program_id(0), first_tile left out (left11's dp-loop-from-pid): "
        "test_stream_k_in_any_program_order said the program read other runs' k-blocks and that 'the owner adds "
        "those, it does not sum them again itself', a cause it had not seen; it now runs data_parallel_tiles alone "
        "and names the data-parallel pass (left11b)",
        "2.2",
        "    for tile_id in tl.range(first_tile + tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN):\n",
        "    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN):\n",
        "test_stream_k_in_any_program_order[32-32-320-5-reversed]",
        "dp-redoes-sk",
    ),
    own(
        "left11b-k-loop-fp16-acc",
        "T5.2",
        "k_block_loop starts acc as tl.zeros(..., dtype=tl.float16): the float16 cases are named by the probe's "
        "static check, but the float32 ones (tl.dot's float16 bits stored 2 bytes a cell into float32 words) were "
        "told 'add k-blocks kb_begin..kb_end-1 only, at offset kb * BLOCK_K' (left11b)",
        "3.1",
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n    for kb in range(kb_begin, kb_end):\n",
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)\n    for kb in range(kb_begin, kb_end):\n",
        "test_k_block_loop[32-32-96-1-3-False-torch.float32]",
        "acc-in-half",
    ),
    own(
        "left11b-collect-waits-own-flag",
        "T5.3",
        "sk_collect_partials loops over range(first_pid, pid + 1): the owner waits on its own flag, which nobody "
        "raises; the whole kernel ended in the spin watch's general words ('a flag nobody has raised yet, ...'); "
        "T5's address watch now tells interpreter_spin which tensor and element the spinning program read, and the "
        "message names flags_ptr[pid], its own (left11b)",
        "4.2",
        "    for p in range(first_pid, pid):\n",
        "    for p in range(first_pid, pid + 1):\n",
        "test_stream_k_with_w_t_bias_and_gelu",
        "waits-forever+waits-own-flag",
    ),
)
