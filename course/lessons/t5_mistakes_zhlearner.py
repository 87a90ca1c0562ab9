"""Lesson T5's mutants of our own from the zht5learner walk (2026-12-03: a learner reading the Chinese
explainer, who then planted mistakes in a working T5): each was let through, or caught by a message that
named no cause, until the check named with it was added.  Only make check runs them (table=False, not
in §8); each must be caught by its test, whose message names its cause (a key of t5_mistakes.CAUSES,
ZHLEARNER_CAUSES here).  t5_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ZHLEARNER_CAUSES = {
    "slot-rows-stored-bm": ("每一行在槽里隔了 BLOCK_M", "rows were laid BLOCK_M"),
    "slot-rows-read-bm": ("把每个槽的行隔 BLOCK_M", "read with their rows BLOCK_M"),
    "no-wave-to-merge": ("唯一的一波太薄时没有整波可以合进来", "a single thin wave has no full wave to merge with"),
    "problem-empty": ("却返回了空字符串", "returned an empty string"),
    "slots-overlap": ("槽和槽叠在一起", "so the slots overlap"),
    "copy-kept": ("tma_ready 留下了上一次的副本", "tma_ready kept the earlier call's copy"),
    "dp-more-programs-than-tiles": ("不用 stream-K 时程序比 tile", "no stream-K, yet more programs than tiles"),
}

# The slot's offsets, the same line in sk_publish_partial and sk_collect_partials.
OFFS = "    offs = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]\n"
OFFS_BM = OFFS.replace("* BLOCK_N +", "* BLOCK_M +")
STORE = "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n"  # sk_publish_partial's store
ZHLEARNER = (
    own(
        "publish-rows-block-m-apart",
        "T5.3",
        "sk_publish_partial lays the tile's rows BLOCK_M floats apart (offs = row * BLOCK_M + column): every "
        "tile of the fix-up's tests was square, where that is row-major, and T5.3 passed (zht5learner)",
        "4.2",
        OFFS + "    tl.store(partials_ptr",
        OFFS_BM + "    tl.store(partials_ptr",
        "test_sk_publish_partial_alone",
        "slot-rows-stored-bm",
    ),
    own(
        "collect-rows-block-m-apart",
        "T5.3",
        "sk_collect_partials reads each slot's rows BLOCK_M floats apart (offs = row * BLOCK_M + column): on "
        "the square tiles of the fix-up's tests that is row-major, and T5.3 passed (zht5learner)",
        "4.2",
        OFFS + "    for p in range(first_pid, pid):\n",
        OFFS_BM + "    for p in range(first_pid, pid):\n",
        "test_sk_collect_partials_alone",
        "slot-rows-read-bm",
    ),
    own(
        "thin-single-wave-plus-sms",
        "T5.3",
        "stream_k_split merges a thin last wave with one full wave even where there is none (a single thin wave): "
        "64 tiles on 132 SMs gave sk_tiles = 196; the message had said only what it expected (zht5learner)",
        "4.3",
        "        sk_tiles = num_tiles if full_waves == 0 else rest + num_sms\n",
        "        sk_tiles = rest + num_sms\n",
        "test_stream_k_split[64-8-132-auto-want0]",
        "no-wave-to-merge",
    ),
    own(
        "tma-problem-empty-string",
        "T5.2",
        "tma_problem returns \"\" for a tensor that keeps the rules, not None: the message had quoted what it "
        "said, which was nothing ('tma_problem 却说：；') (zht5learner)",
        "3.2",
        "    return None\n    # ---- T5.2 end ----\n",
        '    return ""\n    # ---- T5.2 end ----\n',
        "test_tma_problem_accepts_legal_tensors",
        "problem-empty",
    ),
    own(
        "publish-slot-at-p-block-m",
        "T5.3",
        "sk_publish_partial stores program p's partial from float p * BLOCK_M, not p * BLOCK_M * BLOCK_N: the "
        "slots overlap; the message had said only that 240 cells of a slot differ (zht5learner)",
        "4.2",
        STORE,
        STORE.replace("pid * (BLOCK_M * BLOCK_N)", "pid * BLOCK_M"),
        "test_sk_publish_partial_alone",
        "slots-overlap",
    ),
    own(
        "ready-copies-cached-by-address",
        "T5.2",
        "tma_ready keeps each aligned copy in a cache keyed on the operand's address, shape, strides and dtype: "
        "the same tensor changed in place (or a new one at a freed address) gets the old copy; T5.2 passed "
        "(zht5learner)",
        "3.2",
        "            operands[name] = aligned_copy(t)\n",
        "            key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)\n"
        '            operands[name] = tma_ready.__dict__.setdefault("copies", {}).setdefault(key, aligned_copy(t))\n',
        "test_tma_ready_copies_or_refuses[fp16 with odd K = 33-<lambda>-<lambda>-a]",
        "copy-kept",
    ),
    own(
        "split-dp-one-program-per-sm",
        "T5.3",
        "stream_k_split returns (0, num_sms) where no tile goes to stream-K, not persistent_grid(num_tiles, "
        "num_sms): 10 tiles ran on 132 programs; the message had said only what it expected (zht5learner)",
        "4.3",
        '    if mode == "dp" or k_blocks <= 1:\n        return 0, persistent_grid(num_tiles, num_sms)\n',
        '    if mode == "dp" or k_blocks <= 1:\n        return 0, num_sms\n',
        "test_stream_k_split[10-1-132-auto-want5]",
        "dp-more-programs-than-tiles",
    ),
)
