"""Lesson T5's mutants of our own from a walk of a learner who reads Chinese (zhlearner15b, 2026-12-05): each was
caught, but with a message that only described it (a relative error), until the check named with it learnt to tell
it apart.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names
its cause (a key of t5_mistakes.CAUSES, ZHLEARNER15B_CAUSES here).  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ZHLEARNER15B_CAUSES = {
    "dp-lost-has-bias": (
        "data_parallel_tiles 交给 finish_tile 的 HAS_BIAS 不是",
        "data_parallel_tiles handed finish_tile another HAS_BIAS",
    ),
    "dp-lost-activation": (
        "data_parallel_tiles 交给 finish_tile 的 ACTIVATION 不是",
        "data_parallel_tiles handed finish_tile another ACTIVATION",
    ),
    "c-box-rows-split": ("切的是行", "the rows split"),
    "b-box-kmajor-shape": ("那是 K-major 的 B 的 box", "the box of a K-major B"),
    "begins-as-if-longer": (
        "每段都从 pid * (total // NUM_PROGS + 1) 开始",
        "each run starts at pid * (total // NUM_PROGS + 1)",
    ),
    "owners-one-length": ("这是 it // (total // NUM_PROGS", "it is it // (total // NUM_PROGS"),
    "kmajor-untransposed": (
        "返回的 b 却还是传进来的 b 的形状 (K, N)",
        "the b returned has the shape (K, N) of the b passed in",
    ),
    "collect-replaced": ("每一轮读到的 partial 都换掉了 acc", "each turn the partial read replaced acc"),
    "flag-next": ("每个程序举的都是下一个程序的旗", "each program raised the next program's flag"),
    "reset-own-flag": ("放回 0 的只有 owner 自己的旗", "the owner's own flag alone went down"),
    "split-all-tiles": ("这正是把全部", "it is what laying the k-blocks of all"),
    "empty-last-wave": ("根本没有最后那一薄波", "there is no thin last wave at all"),
    "your-persistent-grid": ("正是你的 persistent_grid", "is what your persistent_grid"),
    "tiles-chunked": ("程序 p 做的是连在一起的", "program p did a run of"),
    "one-load-k-offset-by-other-block": ("的 k 偏移写成 kb * BLOCK_", "with their k offset kb * BLOCK_"),
    "dp-lost-kmajor": (
        "data_parallel_tiles 交给 k_segment 的 B_KMAJOR 不是",
        "data_parallel_tiles handed k_segment another B_KMAJOR",
    ),
}

# data_parallel_tiles in the reference: its two calls, with the config's constants passed on
DP_CALLS = (
    "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, 0, k_blocks,\n"
    "                        BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)\n"
    "        finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,\n"
    "                    BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)\n"
    "    # ---- T5.1 end ----\n"
)

ZHLEARNER15B = (
    own(
        "zhlearner15b-dp-has-bias-false",
        "T5.2",
        "data_parallel_tiles hands finish_tile False for HAS_BIAS: T5.1's counting launches cannot see it, and T5.2's "
        "whole-kernel check said only 'relative error 1.00e-01' (zhlearner15b)",
        "2.3",
        DP_CALLS,
        DP_CALLS.replace("EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION", "EPILOGUE_SUBTILE, False, ACTIVATION"),
        "test_matmul_whole_tile_with_bias_and_gelu[dp]",
        "dp-lost-has-bias",
    ),
    own(
        "zhlearner15b-dp-activation-none",
        "T5.2",
        "data_parallel_tiles hands finish_tile the literal 'none' for ACTIVATION: the product has its bias and no "
        "GELU; the check said only its relative error (zhlearner15b)",
        "2.3",
        DP_CALLS,
        DP_CALLS.replace("HAS_BIAS, ACTIVATION, TRACE", 'HAS_BIAS, "none", TRACE'),
        "test_matmul_whole_tile_with_bias_and_gelu[dp]",
        "dp-lost-activation",
    ),
    own(
        "zhlearner15b-dp-kmajor-false",
        "T5.2",
        "data_parallel_tiles hands k_segment False for B_KMAJOR: with b = W.t() the K-major descriptor is read as if "
        "it held a row-major B; the check said only 'relative error 1.19e+00' and the Hopper compile pointed at "
        "k_block_loop's tl.dot (zhlearner15b)",
        "2.3",
        DP_CALLS,
        DP_CALLS.replace("BLOCK_K, B_KMAJOR, TRACE", "BLOCK_K, False, TRACE"),
        "test_matmul_data_parallel[45-37-83-3-b = W.t()-torch.float16]",
        "dp-lost-kmajor",
    ),
    own(
        "zhlearner15b-c-box-rows-split",
        "T5.2",
        "make_descriptors splits C's box by rows, [BLOCK_M // EPILOGUE_SUBTILE, BLOCK_N]: the check said only the box "
        "it got and the one it wanted (zhlearner15b)",
        "3.1",
        "    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])\n",
        "    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M // EPILOGUE_SUBTILE, BLOCK_N])\n",
        "test_make_descriptors_boxes",
        "c-box-rows-split",
    ),
    own(
        "zhlearner15b-b-box-kmajor-always",
        "T5.2",
        "make_descriptors gives a row-major B the K-major box [BLOCK_N, BLOCK_K]: A's box turned round was named, "
        "B's said only the box it got (zhlearner15b)",
        "3.1",
        "[BLOCK_N, BLOCK_K] if b_kmajor else [BLOCK_K, BLOCK_N])",
        "[BLOCK_N, BLOCK_K])",
        "test_make_descriptors_boxes",
        "b-box-kmajor-shape",
    ),
    own(
        "zhlearner15b-run-begins-as-if-longer",
        "T5.3",
        "sk_run starts run pid at pid * (base + 1), as if every earlier run had the extra k-block: the runs leave "
        "gaps; the check said only what it expected and got (zhlearner15b)",
        "4.1",
        "    begin = pid * base + tl.minimum(pid, extra)\n",
        "    begin = pid * (base + 1)\n",
        "test_sk_runs_cover_every_k_block_once[12-3]",
        "begins-as-if-longer+begin-by-maximum",  # total % NUM_PROGS == 0: the same runs (waits15)
    ),
    own(
        "zhlearner15b-owner-of-long-runs",
        "T5.3",
        "sk_program_of is it // (base + 1) alone, every run taken as a long one: with total % NUM_PROGS == 0 the check "
        "said only the owners it expected and got (zhlearner15b)",
        "4.1",
        "    owner = tl.where(it < big, it // (base + 1), extra + (it - big) // tl.maximum(base, 1))\n",
        "    owner = it // (base + 1)\n",
        "test_sk_runs_cover_every_k_block_once[12-3]",
        "owners-one-length",
    ),
    own(
        "zhlearner15b-owner-of-short-runs",
        "T5.3",
        "sk_program_of is it // base, at most NUM_PROGS - 1, every run taken as a short one: the check said only the "
        "owners it expected and got (zhlearner15b)",
        "4.1",
        "    owner = tl.where(it < big, it // (base + 1), extra + (it - big) // tl.maximum(base, 1))\n",
        "    owner = tl.minimum(it // tl.maximum(base, 1), NUM_PROGS - 1)\n",
        "test_sk_runs_cover_every_k_block_once[13-3]",
        "owners-one-length",
    ),
    own(
        "zhlearner15b-kmajor-b-not-transposed",
        "T5.2",
        "tma_ready sets b_kmajor=True for b = W.t() but leaves b as it came, (K, N): then b breaks rule 1 and is "
        "copied; the check said b_kmajor=True, shape (64, 24), a copy, with no word on the transpose left out "
        "(zhlearner15b)",
        "3.2",
        "        b, b_kmajor = b.t(), True\n",
        "        b_kmajor = True\n",
        "test_tma_ready_reads_b_t_k_major_without_a_copy",
        "kmajor-untransposed",
    ),
    own(
        "zhlearner15b-collect-replaces-acc",
        "T5.3",
        "sk_collect_partials writes acc = the partial read, not acc +=: the owner's sum is the last partial alone; the "
        "check said only how many cells differ from the in-order sum (zhlearner15b)",
        "4.2",
        '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n',
        '        acc = tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n',
        "test_sk_collect_partials_alone",
        "collect-replaced",
    ),
    own(
        "zhlearner15b-flag-of-the-next-program",
        "T5.3",
        "sk_publish_partial raises flags_ptr + pid + 1: the check said only the flags it wanted and got, and the "
        "scorecard's first failure was a wait that never ends (zhlearner15b)",
        "4.2",
        'tl.atomic_xchg(flags_ptr + pid, 1, sem="release")',
        'tl.atomic_xchg(flags_ptr + pid + 1, 1, sem="release")',
        "test_sk_publish_partial_alone",
        "flag-next",
    ),
    own(
        "zhlearner15b-reset-the-owners-flag",
        "T5.3",
        "sk_collect_partials puts flags_ptr + pid (the owner's own) back to 0 instead of flags_ptr + p: the check "
        "said only the flags it wanted and got (zhlearner15b)",
        "4.2",
        'tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")',
        'tl.atomic_xchg(flags_ptr + pid, 0, sem="relaxed")',
        "test_sk_collect_partials_alone",
        "reset-own-flag",
    ),
    own(
        "zhlearner15b-stream-k-over-all-tiles",
        "T5.3",
        "stream_k_tiles lays out the k-blocks of every tile (total = num_pid_m * num_pid_n * k_blocks), not of the "
        "first sk_tiles: the data-parallel tiles are done by stream-K too; the check said only 'tile 1 finished by "
        "program 0, program 1 expected' (zhlearner15b)",
        "4.2",
        "    total = sk_tiles * k_blocks\n",
        "    total = num_pid_m * num_pid_n * k_blocks\n",
        "test_stream_k_every_tile_once",
        "split-all-tiles",
    ),
    own(
        "zhlearner15b-stream-k-blocks-floored",
        "T5.3",
        "stream_k_tiles counts K // BLOCK_K k-blocks a tile: the count-only check said only 'tile 0 summed 4 "
        "k-blocks, 5 expected', where the whole-tile loop's check names the floor (zhlearner15b)",
        "4.2",
        "    k_blocks = tl.cdiv(K, BLOCK_K)\n    total = sk_tiles * k_blocks\n",
        "    k_blocks = K // BLOCK_K\n    total = sk_tiles * k_blocks\n",
        "test_stream_k_every_tile_once",
        "one-k-block-short",
    ),
    own(
        "zhlearner15b-split-rest-zero-to-stream-k",
        "T5.3",
        "stream_k_split leaves out the rest == 0 test: whole waves alone (264 tiles on 132 SMs) give a full wave to "
        "stream-K; the check said only what it expected and got (zhlearner15b)",
        "4.3",
        "    elif rest == 0 or 2 * rest >= num_sms:\n",
        "    elif 2 * rest >= num_sms:\n",
        "test_stream_k_split[264-8-132-auto-want2]",
        "empty-last-wave",
    ),
    own(
        "zhlearner15b-split-blamed-for-the-grid",
        "T5.3",
        "persistent_grid returns num_sms: T5.3's split check told a stream_k_split that calls persistent_grid to use "
        "persistent_grid, a cause it had not detected; it now names the learner's persistent_grid (zhlearner15b)",
        "4.3",
        "    return min(num_sms, num_tiles)\n",
        "    return num_sms\n",
        "test_stream_k_split[100-8-132-auto-want1]",
        "your-persistent-grid",
    ),
    own(
        "zhlearner15b-a-k-offset-by-block-m",
        "T5.2",
        "k_block_loop loads A at [off_m, kb * BLOCK_M]: with three different block sizes the check said the sum was "
        "none of the mistakes it knows (zhlearner15b)",
        "3.1",
        "        a = a_desc.load([off_m, off_k])",
        "        a = a_desc.load([off_m, kb * BLOCK_M])",
        "test_k_block_loop_with_three_block_sizes[16-64-32-b-row-major]",
        "one-load-k-offset-by-other-block",
    ),
    own(
        "zhlearner15b-b-k-offset-by-block-n",
        "T5.2",
        "k_block_loop loads a row-major B at [kb * BLOCK_N, off_n] (zhlearner15b)",
        "3.1",
        "            b = b_desc.load([off_k, off_n])",
        "            b = b_desc.load([kb * BLOCK_N, off_n])",
        "test_k_block_loop_with_three_block_sizes[16-64-32-b-row-major]",
        "one-load-k-offset-by-other-block",
    ),
)
