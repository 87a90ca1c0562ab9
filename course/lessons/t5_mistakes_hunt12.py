"""Lesson T5's mutants of our own from the twelfth mistake hunt (hunt12, 2026-12-05): the fix-up's flags raised
with acquire or waited on with release, the barrier after the flag, partials collected backwards, from program 0
or published into the owner's slot, segments that overlap, tile loops that step by half, grids of a program per
tile, and host mistakes in tma_ready, make_descriptors and stream_k_split.  All were caught.  Only make check runs
them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t5_mistakes.CAUSES, HUNT12_CAUSES here) or, for cause "", says what it saw.  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT12_CAUSES = {
    "collect-backwards": ("这是倒着加的结果", "this is their sum added backwards"),
}

HUNT12 = (
    own(
        "hunt12-wait-with-release",
        "T5.3",
        "the owner waits on each flag with sem='release', not acquire (hunt12, caught)",
        "4.2",
        'while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:',
        'while tl.atomic_add(flags_ptr + p, 0, sem="release") != 1:',
        "test_publish_and_collect_memory_order",
        "not-acquire",
    ),
    own(
        "hunt12-flag-raised-with-acquire",
        "T5.3",
        "the flag raised with sem='acquire', not release (hunt12, caught)",
        "4.2",
        'tl.atomic_xchg(flags_ptr + pid, 1, sem="release")',
        'tl.atomic_xchg(flags_ptr + pid, 1, sem="acquire")',
        "test_publish_and_collect_memory_order",
        "not-release",
    ),
    own(
        "hunt12-barrier-after-flag",
        "T5.3",
        "sk_publish_partial puts its tl.debug_barrier() after the flag, not between store and flag (hunt12, caught)",
        "4.2",
        "    tl.debug_barrier()  # every thread's part of the tile is written before the flag goes up\n"
        '    tl.atomic_xchg(flags_ptr + pid, 1, sem="release")\n',
        '    tl.atomic_xchg(flags_ptr + pid, 1, sem="release")\n    tl.debug_barrier()\n',
        "test_publish_and_collect_memory_order",
        "no-barrier",
    ),
    own(
        "hunt12-collect-backwards",
        "T5.3",
        "sk_collect_partials adds the partials from pid - 1 down to first_pid: deterministic, another "
        "order (hunt12, caught)",
        "4.2",
        "    for p in range(first_pid, pid):\n",
        "    for p in range(pid - 1, first_pid - 1, -1):\n",
        "test_sk_collect_partials_alone",
        "collect-backwards",
    ),
    own(
        "hunt12-segment-from-tile-begin",
        "T5.3",
        "a segment starts at its tile's first k-block, not max(tile_begin, run_begin): two programs sum "
        "the same k-blocks (hunt12, caught)",
        "4.2",
        "        it_begin = tl.maximum(tile_begin, run_begin)\n",
        "        it_begin = tile_begin\n",
        "test_stream_k_every_tile_once",
        "segment-from-tile-begin",  # named since left13 (t5_mistakes_left13.py)
    ),
    own(
        "hunt12-owner-waits-from-program-0",
        "T5.3",
        "the owner collects from program 0 on, not from the program holding its tile's first k-block (hunt12, caught)",
        "4.2",
        "            first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n",
        "            first_pid = 0\n",
        "test_stream_k_every_tile_once",
        "waits-forever",
    ),
    own(
        "hunt12-publish-into-owner-slot",
        "T5.3",
        "a segment is published into the slot and flag of the program holding its tile's end, not its own "
        "(hunt12, caught)",
        "4.2",
        "            sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)\n",
        "            sk_publish_partial(acc, partials_ptr, flags_ptr, sk_program_of(it_end, total, "
        "NUM_PROGS), BLOCK_M, BLOCK_N)\n",
        "test_stream_k_every_tile_once",
        "waits-forever",
    ),
    own(
        "hunt12-grid-one-per-tile",
        "T5.1",
        "persistent_grid returns num_tiles: one program per tile, not persistent (hunt12, caught)",
        "2.2",
        "    return min(num_sms, num_tiles)\n",
        "    return num_tiles\n",
        "test_persistent_grid[1376-132-132]",
        "grid-is-tiles",  # named since session 34 (t5_mistakes_lead34.py)
    ),
    own(
        "hunt12-dp-step-half",
        "T5.1",
        "the tile loop steps by NUM_PROGS // 2: tiles done by two programs each (hunt12, caught)",
        "2.2",
        "num_tiles, NUM_PROGS, flatten=FLATTEN):",
        "num_tiles, tl.maximum(NUM_PROGS // 2, 1), flatten=FLATTEN):",
        "test_every_tile_once_over_many_grids[plain]",
        "loop-counts",
    ),
    own(
        "hunt12-flatten-inverted",
        "T5.1",
        "the tile loop's tl.range(..., flatten=not FLATTEN) (hunt12, caught)",
        "2.2",
        "num_tiles, NUM_PROGS, flatten=FLATTEN):",
        "num_tiles, NUM_PROGS, flatten=not FLATTEN):",
        "test_the_tile_loop_passes_flatten_on",
        "",
    ),
    own(
        "hunt12-ready-contiguous-copy",
        "T5.2",
        "tma_ready replaces an offender by t.contiguous(), not aligned_copy(t): rows of 66 bytes still "
        "break rule 2 (hunt12, caught)",
        "3.2",
        "            operands[name] = aligned_copy(t)\n",
        "            operands[name] = t.contiguous()\n",
        "test_tma_ready_copies_or_refuses[fp16 with odd K = 33-<lambda>-<lambda>-a]",
        "",
    ),
    own(
        "hunt12-c-box-by-block-k",
        "T5.2",
        "c_desc's box [BLOCK_M, BLOCK_K // EPILOGUE_SUBTILE] (hunt12, caught)",
        "3.1",
        "    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])\n",
        "    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_K // EPILOGUE_SUBTILE])\n",
        "test_make_descriptors_boxes",
        "",
    ),
    own(
        "hunt12-split-one-program-more",
        "T5.3",
        "stream_k_split gives stream-K one program more than its k-blocks (hunt12, caught)",
        "4.3",
        "    return sk_tiles, min(num_sms, sk_tiles * k_blocks)\n",
        "    return sk_tiles, min(num_sms, sk_tiles * k_blocks + 1)\n",
        "test_stream_k_split[10-4-132-sk-want6]",
        "",
    ),
    own(
        "hunt12-single-thin-wave-dp",
        "T5.3",
        "stream_k_split keeps a single thin wave data-parallel (hunt12, caught)",
        "4.3",
        "        sk_tiles = num_tiles if full_waves == 0 else rest + num_sms\n",
        "        sk_tiles = 0 if full_waves == 0 else rest + num_sms\n",
        "test_stream_k_split[64-8-132-auto-want0]",
        "",
    ),
    own(
        "hunt12-thin-wave-all-tiles",
        "T5.3",
        "stream_k_split sends every tile to stream-K behind a thin last wave, not that wave and one full "
        "one (hunt12, caught)",
        "4.3",
        "        sk_tiles = num_tiles if full_waves == 0 else rest + num_sms\n",
        "        sk_tiles = num_tiles\n",
        "test_stream_k_split[300-8-132-auto-want3]",
        "every-wave-to-sk",  # named since enlearner14 (t5_mistakes_enlearner14.py)
    ),
)
