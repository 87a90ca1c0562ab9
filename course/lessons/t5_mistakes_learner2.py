"""Lesson T5's mutants of our own from the t5learner2 walk (2026-12-02): holes the suite let through and
messages that named no cause where the check could tell it.  Only make check runs them (table=False,
not in §8); each must be caught by its test, whose message names its cause (a key of
t5_mistakes.CAUSES).  Kept apart from the other t5_mistakes_*.py files, which are near 400 lines;
t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

LEARNER2 = (
    own(
        "pitch-from-width",
        "T5.2",
        "tma_problem checks rule 2 on the width, shape[1] * element_size(), not on stride(0): a view cut "
        "from wider rows passed every check, and matmul then failed in TensorDescriptor (t5learner2)",
        "3.2",
        "    if (t.stride(0) * size) % 16:\n",
        "    if (t.shape[1] * size) % 16:\n",
        "test_tma_problem_reads_the_row_stride_not_the_width",
        "width-not-stride",
    ),
    own(
        "sk-programs-not-capped",
        "T5.3",
        "stream_k_split returns num_sms programs where the stream-K tiles hold fewer k-blocks: one thin wave "
        "of 10 tiles of 2 k-blocks ran 132 programs, 112 of them with an empty run; no case had shown it in "
        "mode auto (t5learner2)",
        "4.3",
        "    return sk_tiles, min(num_sms, sk_tiles * k_blocks)\n",
        "    return sk_tiles, num_sms\n",
        "test_stream_k_split[10-2-132-auto-want12]",
        "programs-past-k-blocks",
    ),
    own(
        "publish-by-float-atomic-add",
        "T5.3",
        "sk_publish_partial adds the partial to its slot with a float tl.atomic_add instead of storing it: "
        "the message had said only that the slot's cells differ from the partial (t5learner2)",
        "4.2",
        "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n",
        "    tl.atomic_add(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n",
        "test_sk_publish_partial_alone",
        "partial-added",
    ),
    own(
        "subtile-right-half-not-stored",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) never stores the right half: on a C of 5 rows the message had named "
        "a store with its coordinates the other way round, whose every store falls outside C too (t5learner2)",
        "5",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))\n",
        "",
        "test_store_tile_subtiled[5-72-torch.float16]",
    ),
    own(
        "subtile-right-half-a-tile-on",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) stores the right half at pid_n * BLOCK_N + BLOCK_N, where the next "
        "tile's left half overwrites it: the bias test had named the right half's bias, which is right (t5learner2)",
        "5",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))\n",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N], right.to(c_desc.dtype))\n",
        "test_store_tile_subtiled_bias_per_half[none]",
    ),
    own(
        "flag-cas-at-slot-offset",
        "T5.3",
        "sk_publish_partial raises its flag with tl.atomic_cas at flags_ptr + pid * BLOCK_M * BLOCK_N, indexed "
        "like the slot: the address watch did not see atomic_cas (it has no mask), so the stray writes were "
        "made and corrupted the heap, and the step crashed (SIGSEGV, or an abort) in a later check (t5learner2)",
        "4.2",
        '    tl.atomic_xchg(flags_ptr + pid, 1, sem="release")\n',
        '    tl.atomic_cas(flags_ptr + pid * (BLOCK_M * BLOCK_N), 0, 1, sem="release")\n',
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-tail-128-160-96-7]",
        "stray-access",
    ),
    own(
        "subtile-left-cast-fp16",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) casts the left half to tl.float16, not to c_desc.dtype: on an fp32 C the "
        "message had said only that 1024 cells differ from acc cast to torch.float32 (t5learner2)",
        "5",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))\n",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(tl.float16))\n",
        "test_store_tile_subtiled[32-64-torch.float32]",
        "fixed-cast",
    ),
    own(
        "segment-given-pid",
        "T5.1",
        "data_parallel_tiles passes k_segment tl.program_id(0) as the tile's number (T4's habit: a program was a "
        "tile): the message had said only 'tile 0 summed 16 k-blocks, 4 expected' (t5learner2)",
        "2.2",
        "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, 0, k_blocks,\n",
        "        acc = k_segment(a_desc, b_desc, trace_ptr, tl.program_id(0), pid_m, pid_n, 0, k_blocks,\n",
        "test_every_tile_once_over_many_grids[plain]",
        "kb-under-pid",
    ),
)
