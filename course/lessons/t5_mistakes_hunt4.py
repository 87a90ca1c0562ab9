"""Lesson T5's mutants of our own from the fourth hunt for unplanted mistakes (hunt4a, 2026-12-03): each
was let through, or caught with a message that named no cause or another section, until the check named
with it was added or mended.  Only make check runs them (table=False, not in §8); each must be caught by
its test, whose message names its cause (a key of t5_mistakes.CAUSES, HUNT4_CAUSES here).  t5_mistakes.py
gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT4_CAUSES = {
    "tile-displaced": ("box 的起点是 [pid_m * BLOCK_M, pid_n * BLOCK_N]", "a box starts at [pid_m * BLOCK_M,"),
    "bias-stride-one": ("bias 是按步长 1 读的", "the bias was read as if its stride were 1"),
    "base-stricter-than-16": ("规矩 3 要的是 16 字节对齐", "rule 3 asks for 16 bytes, not 16 elements"),
    "half-displaced": ("列只配 BLOCK_N", "columns with BLOCK_N alone"),
    "a-unchecked-after-kmajor": ("a 照样要检查", "and a still has to be checked"),
    "refused-with-type-error": ("不是类型错", "not a wrong type"),
    "sk-kmajor-dropped": ("要把 B_KMAJOR 传给 k_segment", "must hand B_KMAJOR on to k_segment"),
    "sk-epilogue-flags-dropped": (
        "要把 HAS_BIAS 和 ACTIVATION 传给 finish_tile",
        "must be handed HAS_BIAS and ACTIVATION",
    ),
}

# The tile loops' call of tile_coords, with the line after it (each loop's own)
COORDS = "        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)\n"
DP_COORDS = COORDS + "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, 0, k_blocks,"
SK_COORDS = COORDS + "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, it_begin"

# store_tile's calls of bias_and_activation: the whole tile's, the left half's
WHOLE = "        acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)\n"
LEFT = (
    "        left = bias_and_activation(left, bias_ptr, N, stride_bias, 2 * pid_n, BLOCK_N // 2, HAS_BIAS, "
    "ACTIVATION)\n"
)

# stream_k_tiles's k_segment call (its second line) and finish_tile call
SK_SEGMENT = "                        it_end - tile_begin, BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)\n"
SK_FINISH = (
    "            finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,\n"
    "                        BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)\n"
)

HUNT4 = (
    own(
        "hunt4-store-column-by-block-m",
        "T5.2",
        "store_tile stores the whole tile at [pid_m * BLOCK_M, pid_n * BLOCK_M]: every store_tile test and every "
        "data-parallel product had square tiles, where that is the right place; only the decode test (16 x 32 "
        "tiles) caught it, with a relative error and §6.3, the given swap code (hunt4)",
        "3.3",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))\n        # ---- T5.2 end",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_M], acc.to(c_desc.dtype))\n        # ---- T5.2 end",
        "test_store_tile_of_a_tile_that_is_not_square",
        "tile-displaced",
    ),
    own(
        "hunt4-store-bias-stride-one",
        "T5.2",
        "store_tile hands bias_and_activation a stride of 1 for the bias, not stride_bias: the message had given "
        "only a relative error (hunt4)",
        "3.3",
        "        acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)\n",
        "        acc = bias_and_activation(acc, bias_ptr, N, 1, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)\n",
        "test_store_tile_bias_and_activation[none]",
        "bias-stride-one",
    ),
    own(
        "hunt4-align-16-elements",
        "T5.2",
        "tma_problem checks the base against 16 elements, data_ptr() % (16 * size): 32 bytes for fp16, 64 for "
        "fp32; every legal tensor of the suite started on a 64-byte boundary, so a view 16 bytes past one, which "
        "TMA takes, was refused with fallback=False and copied otherwise (hunt4)",
        "3.2",
        "    if t.data_ptr() % 16:\n",
        "    if t.data_ptr() % (16 * size):\n",
        "test_tma_problem_accepts_legal_tensors",
        "base-stricter-than-16",
    ),
    own(
        "hunt4-subtile-right-half-by-block-m",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) stores the right half at pid_n * BLOCK_N + BLOCK_M // 2: every subtiled "
        "store of the suite on the CPU had square tiles, where that is the right column (hunt4)",
        "5",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_M // 2], right.to(c_desc.dtype))",
        "test_store_tile_subtiled_of_a_tile_that_is_not_square",
        "half-displaced",
    ),
    own(
        "hunt4-subtile-left-half-by-block-m",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) stores the left half at column pid_n * BLOCK_M: square tiles hid it (hunt4)",
        "5",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))\n",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_M], left.to(c_desc.dtype))\n",
        "test_store_tile_subtiled_of_a_tile_that_is_not_square",
        "half-displaced",
    ),
    own(
        "hunt4-kmajor-returns-early",
        "T5.2",
        "tma_ready returns as soon as it reads b K-major, before a is checked: a column-major a beside W.t() "
        "was neither copied nor refused; no case of the suite had a bad a with a K-major b (hunt4)",
        "3.2",
        "        b, b_kmajor = b.t(), True\n",
        "        return a, b.t(), True\n",
        "test_tma_ready_copies_or_refuses[column-major a, b = W.t()-<lambda>-<lambda>-a]",
        "a-unchecked-after-kmajor",
    ),
    own(
        "hunt4-ready-raises-type-error",
        "T5.2",
        "tma_ready refuses with TypeError, not ValueError: the learner's own TypeError came out as the failure, "
        "with no word that a ValueError was asked for (hunt4)",
        "3.2",
        '            raise ValueError(f"matmul: TMA cannot read {problem}")',
        '            raise TypeError(f"matmul: TMA cannot read {problem}")',
        "test_tma_ready_copies_or_refuses[fp16 with odd K = 33-<lambda>-<lambda>-a]",
        "refused-with-type-error",
    ),
    own(
        "hunt4-dp-group-m-one",
        "T5.1",
        "data_parallel_tiles calls tile_coords(tile_id, num_pid_m, num_pid_n, 1): row-major order; the message "
        "had said the tile was not passed through tile_coords, which it was (hunt4)",
        "2.2",
        DP_COORDS,
        DP_COORDS.replace("num_pid_n, GROUP_M)", "num_pid_n, 1)"),
        "test_every_tile_once_over_many_grids[plain]",
        "row-major-split",
    ),
    own(
        "hunt4-sk-group-m-one",
        "T5.3",
        "stream_k_tiles calls tile_coords(tile_id, num_pid_m, num_pid_n, 1): on the test's 2 x 2 tiles that is "
        "also pid_m and pid_n the other way round, and the message had named both causes as if both held; it "
        "now says the grid cannot tell which (hunt4)",
        "4.2",
        SK_COORDS,
        SK_COORDS.replace("num_pid_n, GROUP_M)", "num_pid_n, 1)"),
        "test_stream_k_every_tile_once",
        "row-major-split+coords-swapped",
    ),
    own(
        "hunt4-activation-only-with-bias",
        "T5.2",
        "store_tile calls bias_and_activation only where HAS_BIAS: a GELU without a bias is never applied; every "
        "test of T5's epilogue with an activation had a bias (hunt4)",
        "3.3",
        WHOLE,
        "        if HAS_BIAS:\n    " + WHOLE,
        "test_store_tile_activation_without_bias[1]",
        "no-activation",
    ),
    own(
        "hunt4-left-half-activation-only-with-bias",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) calls bias_and_activation on the left half only where HAS_BIAS: without "
        "a bias the left halves come out without their GELU (hunt4)",
        "5",
        LEFT,
        "        if HAS_BIAS:\n    " + LEFT,
        "test_store_tile_activation_without_bias[2]",
        "no-activation",
    ),
    own(
        "hunt4-sk-kmajor-dropped",
        "T5.3",
        "stream_k_tiles hands k_segment False for B_KMAJOR: no stream-K product of the suite read W.t(), so only "
        "the Hopper compile saw it, naming k_block_loop's tl.dot (hunt4)",
        "4.2",
        SK_SEGMENT,
        SK_SEGMENT.replace("B_KMAJOR, TRACE)", "False, TRACE)"),
        "test_stream_k_with_w_t_bias_and_gelu",
        "sk-kmajor-dropped",
    ),
    own(
        "hunt4-sk-no-bias-or-activation",
        "T5.3",
        "stream_k_tiles hands finish_tile False and 'none' for HAS_BIAS and ACTIVATION: only T5.4's subtiled "
        "product in mode sk saw it, with a relative error and §5 (hunt4)",
        "4.2",
        SK_FINISH,
        SK_FINISH.replace("HAS_BIAS, ACTIVATION, TRACE)", 'False, "none", TRACE)'),
        "test_stream_k_with_w_t_bias_and_gelu",
        "sk-epilogue-flags-dropped",
    ),
)
