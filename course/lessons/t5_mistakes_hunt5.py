"""Lesson T5's mutants of our own from the fifth hunt for unplanted mistakes (hunt5a, 2026-12-03): each
was let through, or caught with a message that named no cause, until the check named with it was added or
mended.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of t5_mistakes.CAUSES, HUNT5_CAUSES here).  t5_mistakes.py gathers them last, and
their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT5_CAUSES = {
    "k-offset-other-block": ("正是从第 kb * BLOCK_N 列开始", "taken from column kb * BLOCK_N on"),
    "activation-twice": ("activation 做了两次", "the activation was applied twice"),
    "bias-twice": ("bias 加了两次", "the bias was added twice"),
    "activation-before-bias": ("先做了 activation 再加 bias", "the activation was applied before the bias"),
    "split-answer-kept": ("正是前面一次调用", "the answer of an earlier call with k_blocks="),
    "operands-held": ("还被留着（列表、缓存或默认参数里）", "still held (in a list, a cache or"),
    "k-blocks-one-past": ("K // BLOCK_K + 1 多数了一个", "K // BLOCK_K + 1 counts one past them"),
    "rounded-on-its-way": ("正是乘积先舍入成 float16 的值", "is the product rounded to float16 on its way"),
}

# store_tile's whole-tile call of bias_and_activation
WHOLE = "        acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)\n"
ONLY_BIAS = '        acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, "none")\n'
ONLY_ACT = "        acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, False, ACTIVATION)\n"
# data_parallel_tiles's call of finish_tile, with the start of its second line (the loop's own)
DP_FINISH = (
    "        finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,\n"
    "                    BLOCK_M"
)
# stream_k_tiles's call of finish_tile, with the start of its second line (the owner's)
SK_FINISH = (
    "            finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,\n"
    "                        BLOCK_M"
)
SPLIT_RETURN = "    return sk_tiles, min(num_sms, sk_tiles * k_blocks)\n"

HUNT5 = (
    own(
        "hunt5-k-offset-by-block-n",
        "T5.2",
        "k_block_loop loads k-block kb at off_k = kb * BLOCK_N: every k_block_loop test and every product of the "
        "suite on the CPU had BLOCK_N = BLOCK_K, where that is the right offset; the whole T5 suite passed (hunt5)",
        "3.1",
        "        off_k = kb * BLOCK_K\n",
        "        off_k = kb * BLOCK_N\n",
        "test_k_block_loop_with_three_block_sizes[16-64-32-b-row-major]",
        "k-offset-other-block",
    ),
    own(
        "hunt5-store-gelu-twice",
        "T5.2",
        "store_tile applies the GELU twice (a second bias_and_activation without the bias): caught with a relative "
        "error alone (hunt5)",
        "3.3",
        WHOLE,
        WHOLE + ONLY_ACT,
        "test_store_tile_bias_and_activation[gelu]",
        "activation-twice",
    ),
    own(
        "hunt5-store-bias-twice",
        "T5.2",
        "store_tile adds the bias twice (a bias-only bias_and_activation before the whole one): caught with a "
        "relative error alone (hunt5)",
        "3.3",
        WHOLE,
        ONLY_BIAS + WHOLE,
        "test_store_tile_bias_and_activation[none]",
        "bias-twice",
    ),
    own(
        "hunt5-store-gelu-before-bias",
        "T5.2",
        "store_tile applies the GELU, then adds the bias (two calls of bias_and_activation the wrong way round): "
        "caught with a relative error alone (hunt5)",
        "3.3",
        WHOLE,
        ONLY_ACT + ONLY_BIAS,
        "test_store_tile_bias_and_activation[gelu]",
        "activation-before-bias",
    ),
    own(
        "hunt5-split-kept-without-k-blocks",
        "T5.3",
        "stream_k_split keeps its stream-K answers in a dict keyed by (num_tiles, num_sms, mode), without "
        "k_blocks: no two calls of the suite differed in k_blocks alone (hunt5)",
        "4.3",
        SPLIT_RETURN,
        '    kept = stream_k_split.__dict__.setdefault("kept", {})\n'
        "    return kept.setdefault((num_tiles, num_sms, mode), (sk_tiles, min(num_sms, sk_tiles * k_blocks)))\n",
        "test_stream_k_split_answers_every_call_afresh",
        "split-answer-kept",
    ),
    own(
        "hunt5-ready-holds-operands",
        "T5.2",
        "tma_ready appends every (a, b) it is given to a list on itself: every operand stays alive; nothing in the "
        "suite looked (hunt5)",
        "3.2",
        '    return operands["a"], operands["b"], b_kmajor\n',
        '    tma_ready.__dict__.setdefault("seen", []).append((a, b))\n'
        '    return operands["a"], operands["b"], b_kmajor\n',
        "test_tma_ready_keeps_no_reference_to_its_tensors",
        "operands-held",
    ),
    own(
        "hunt5-dp-k-blocks-floor-plus-one",
        "T5.1",
        "data_parallel_tiles counts k_blocks = K // BLOCK_K + 1: one k-block past K where K is a whole number of "
        "them (a box of TMA's zeros, summed for nothing); every K of the tile loop's tests ended in a part block "
        "(hunt5)",
        "2.2",
        "    k_blocks = tl.cdiv(K, BLOCK_K)\n    for tile_id in tl.range(first_tile",
        "    k_blocks = K // BLOCK_K + 1\n    for tile_id in tl.range(first_tile",
        "test_a_program_does_several_tiles",
        "k-blocks-one-past",
    ),
    own(
        "hunt5-dp-acc-rounded-before-finish",
        "T5.1",
        "data_parallel_tiles hands finish_tile acc.to(tl.float16).to(tl.float32): a float32 C is rounded to fp16 "
        "on its way; caught by the fp32 products with a relative error alone and §3 (hunt5)",
        "2.2",
        DP_FINISH,
        DP_FINISH.replace("finish_tile(c_desc, acc,", "finish_tile(c_desc, acc.to(tl.float16).to(tl.float32),"),
        "test_matmul_data_parallel[45-37-83-3-row-major-torch.float32]",
        "rounded-on-its-way",
    ),
    own(
        "hunt5-sk-acc-rounded-before-finish",
        "T5.3",
        "stream_k_tiles hands finish_tile the owner's sum as acc.to(tl.float16).to(tl.float32): a float32 C is "
        "rounded to fp16 on its way; caught with a relative error and the tiles off alone (hunt5)",
        "4.2",
        SK_FINISH,
        SK_FINISH.replace("finish_tile(c_desc, acc,", "finish_tile(c_desc, acc.to(tl.float16).to(tl.float32),"),
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float32-sk-45-37-160-3]",
        "rounded-on-its-way",
    ),
)
