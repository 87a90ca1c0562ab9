"""Lesson T5's mutants of our own from a walk of a learner who reads Chinese (zhlearner12, 2026-12-05): each was
caught, but with a message that named no cause (or steered to the wrong line), until the check named with it
learnt to tell it apart.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose
message names its cause (a key of t5_mistakes.CAUSES, ZHLEARNER12_CAUSES here).  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_fixup import K_LOOP
from course.lessons.t5_mistakes_own import LOOP, WHOLE_TILE_EPILOGUE, own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ZHLEARNER12_CAUSES = {
    "grid-waves": ("这是波数 cdiv(num_tiles, num_sms)", "the number of waves, cdiv(num_tiles, num_sms)"),
    "loop-stops-short": ("却停在 num_tiles - first_tile", "that stops at num_tiles - first_tile"),
    "loop-carried-type": ("循环带着的变量", "the loop-carried variable"),
    "bias-column-times-block-n": (
        "bias 从第 pid_n * BLOCK_N * BLOCK_N 列取",
        "a bias taken from column pid_n * BLOCK_N * BLOCK_N",
    ),
    "b-at-off-m": ("B 的 box 用 off_m 作 tile 偏移", "B's boxes give with off_m as their tile offset"),
    "skipped-unready": ("没等到旗举起来就跳过了", "skipped it without waiting for its flag"),
    "run-end-closed": ("每段的 end 都是段里最后一个 k-block", "each end is the run's last k-block"),
    "shapes-apart": ("形状对不上", "shapes that do not match"),  # Triton's words said again (course.messages)
}

COLLECT_WAIT_AND_ADD = (
    '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:  # an integer read that waits\n'
    "            pass\n"
    '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n'
)

# stream_k_tiles in the reference, from a segment's first k-block to the owner's collect
SEGMENT_AND_COLLECT = (
    "        it_begin = tl.maximum(tile_begin, run_begin)\n"
    "        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)\n"
    "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, it_begin - tile_begin,\n"
    "                        it_end - tile_begin, BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)\n"
    "        if it_end == tile_begin + k_blocks:  # this run holds the tile's last k-block: the owner\n"
    "            first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n"
    "            acc = sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid, BLOCK_M, BLOCK_N)\n"
)

ZHLEARNER12 = (
    own(
        "zhlearner12-grid-is-waves",
        "T5.1",
        "persistent_grid returns triton.cdiv(num_tiles, num_sms), the waves, not min(num_tiles, num_sms): the check "
        "said only 'expected 64, got 1' (zhlearner12)",
        "2.2",
        "    return min(num_sms, num_tiles)\n",
        "    return triton.cdiv(num_tiles, num_sms)\n",
        "test_persistent_grid[64-132-64]",
        "grid-waves",
    ),
    own(
        "zhlearner12-loop-stops-at-tiles-after-first",
        "T5.1",
        "the tile loop ends at num_tiles - first_tile (num_tiles read as how many tiles follow first_tile): the last "
        "first_tile tiles are never done; the check said 'each tile exactly once: start at first_tile + pid, step "
        "NUM_PROGS', of which both were right (zhlearner12)",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS", "num_tiles - first_tile, NUM_PROGS"),
        "test_every_tile_once_over_many_grids[plain]",
        "loop-stops-short",
    ),
    own(
        "zhlearner12-k-acc-in-a-dtype",
        "T5.2",
        "k_block_loop's accumulator starts in A's dtype (tl.zeros(..., dtype=a_desc.dtype), the descriptor carries "
        "its type, §3.3) and grows by acc += tl.dot(a, b): the interpreter's checks pass, the Hopper compile refuses "
        "it, and the scorecard row was the compiler's 'at 9:4:' in Triton's English alone (zhlearner12)",
        "3.1",
        K_LOOP,
        K_LOOP.replace("dtype=tl.float32", "dtype=a_desc.dtype").replace(
            "acc = tl.dot(a, b, acc)", "acc += tl.dot(a, b)"
        ),
        "test_the_kernel_compiles_for_a_hopper_gpu",
        "gpu-refuses+loop-carried-type",
    ),
    own(
        "zhlearner12-bias-given-column",
        "T5.2",
        "store_tile hands bias_and_activation pid_n * BLOCK_N for pid_n (§3.3 said 'it counts columns as pid_n * "
        "BLOCK_N'): the tiles past the first column of tiles lose their bias; the check said a relative error alone "
        "(zhlearner12)",
        "3.3",
        WHOLE_TILE_EPILOGUE,
        WHOLE_TILE_EPILOGUE.replace("stride_bias, pid_n, BLOCK_N", "stride_bias, pid_n * BLOCK_N, BLOCK_N"),
        "test_store_tile_bias_and_activation[none]",
        "bias-column-times-block-n",
    ),
    own(
        "zhlearner12-k-loop-b-at-off-m",
        "T5.2",
        "k_block_loop loads B's box at [off_k, off_m]: the check said 'add k-blocks kb_begin..kb_end-1 only, at "
        "offset kb * BLOCK_K', which sent the learner to the k offsets, right all along (zhlearner12)",
        "3.1",
        "            b = b_desc.load([off_k, off_n])\n",
        "            b = b_desc.load([off_k, off_m])\n",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "b-at-off-m",
    ),
    own(
        "zhlearner12-collect-looks-once",
        "T5.3",
        "sk_collect_partials looks at each flag once and adds the partial only if it is up (an if for the while): "
        "partials not yet published are left out; the check said only how many cells differ in their bits "
        "(zhlearner12)",
        "4.2",
        COLLECT_WAIT_AND_ADD,
        '        if tl.atomic_add(flags_ptr + p, 0, sem="acquire") == 1:  # looked at once\n'
        '            acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n',
        "test_fix_up_waits_and_adds_in_program_order[reversed]",
        "skipped-unready",
    ),
    own(
        "zhlearner12-segment-from-tile-begin",
        "T5.3",
        "stream_k_tiles takes it_begin = tile_begin, not max(tile_begin, run_begin), and collects only where "
        "it_begin > tile_begin (never, now): an owner sums its whole tile, the product is right, and the partials "
        "published for it are never collected; the check after the trace's had said 'the owner puts a flag back to 0 "
        "after adding a partial', a cause it had not seen (zhlearner12)",
        "4.2",
        SEGMENT_AND_COLLECT,
        SEGMENT_AND_COLLECT.replace("tl.maximum(tile_begin, run_begin)", "tile_begin").replace(
            "            first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n"
            "            acc = sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid, BLOCK_M, BLOCK_N)\n",
            "            if it_begin > tile_begin:  # others hold part of this tile\n"
            "                first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n"
            "                acc = sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid,"
            " BLOCK_M, BLOCK_N)\n",
        ),
        "test_stream_k_in_any_program_order[32-32-320-5-reversed]",
    ),
    own(
        "zhlearner12-walk-while-at-run-begin",
        "T5.3",
        "stream_k_tiles walks while it_end >= run_begin: at it_end == run_begin a segment of no k-blocks is published "
        "again and again, for good (zhlearner12)",
        "4.2",
        "    while it_end > run_begin:\n",
        "    while it_end >= run_begin:\n",
        "test_stream_k_every_tile_once",
        "loop-stopped-advancing",
    ),
    own(
        "zhlearner12-run-end-closed",
        "T5.3",
        "sk_run returns end as the run's last k-block, [begin, end] read as a closed range: every run one k-block "
        "short; the check said only what it expected and got (zhlearner12)",
        "4.1",
        "    end = begin + base + (pid < extra).to(tl.int32)\n",
        "    end = begin + base + (pid < extra).to(tl.int32) - 1\n",
        "test_sk_runs_cover_every_k_block_once[13-3]",
        "run-end-closed",
    ),
    own(
        "zhlearner12-halves-given-block-n",
        "T5.4",
        "the subtiled epilogue hands bias_and_activation BLOCK_N for each half, not BLOCK_N // 2: the bias block is "
        "twice the half's width, and the learner got Triton's 'Cannot make_shape_compatible: incompatible dimensions "
        "at index 1: 16 and 32' in English alone, here and in make test's first check of it (zhlearner12)",
        "5",
        "stride_bias, 2 * pid_n, BLOCK_N // 2, HAS_BIAS, ACTIVATION)",
        "stride_bias, 2 * pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)",
        "test_matmul_subtiled_with_bias_and_gelu[dp]",
        "shapes-apart",
    ),
)
