"""Lesson T5's mutants of our own from the sixth learner's walk (learner6, 2026-12-04): each was let through,
or caught with a message that named a wrong cause or none, until the check named with it was added or mended.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its
cause (a key of t5_mistakes.CAUSES, LEARNER6_CAUSES here).  t5_mistakes.py gathers them last, and their
causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER6_CAUSES = {
    "kb-from-zero": ("k-block 从 0 数起，不是从 kb_begin", "the k-blocks were counted from 0, not from kb_begin"),
    "one-block-split": ("每个 tile 只有一个 k-block，却有", "tiles of a single k-block each went to stream-K"),
    "collect-skips-first": ("first_pid 也在内", "first_pid included"),
    "collect-skips-last": ("pid - 1 也在内", "pid - 1 included"),
}

LEARNER6 = (
    own(
        "learner6-k-loop-from-zero",
        "T5.2",
        "k_block_loop loops over range(kb_end - kb_begin), offsets kb * BLOCK_K: the right number of k-blocks from "
        "k-block 0; a run from k-block 1 was told 'every load's offset is one BLOCK_K off', one from k-block 2 a "
        "relative error alone (learner6)",
        "3.1",
        "    for kb in range(kb_begin, kb_end):\n",
        "    for kb in range(kb_end - kb_begin):\n",
        "test_k_block_loop[24-40-200-2-5-True-torch.float16]",
        "kb-from-zero",
    ),
    own(
        "learner6-split-one-block-sk",
        "T5.3",
        "stream_k_split returns (0, persistent_grid) for a single k-block in mode auto alone: mode sk (which the "
        "host's tail and split modes ask for) splits tiles of one k-block; the one such case of the suite was auto, "
        "and the whole suite passed (learner6)",
        "4.3",
        '    if mode == "dp" or k_blocks <= 1:\n',
        '    if mode == "dp" or (k_blocks <= 1 and mode == "auto"):\n',
        "test_stream_k_split[10-1-132-sk-want13]",
        "one-block-split",
    ),
    own(
        "learner6-subtile-even-odd-first-check",
        "T5.4",
        "the tile reshaped to (BLOCK_M, BLOCK_N // 2, 2) and split (even and odd columns): T5.4's first check, the "
        "GELU without a bias, said a relative error alone, and make test shows that one in full (learner6)",
        "5",
        "        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))\n",
        "        halves = tl.reshape(acc, (BLOCK_M, BLOCK_N // 2, 2))\n",
        "test_store_tile_activation_without_bias[2]",
        "even-odd-halves",
    ),
    own(
        "learner6-subtile-right-half-a-tile-on",
        "T5.4",
        "the right half stored at pid_n * BLOCK_N + BLOCK_N, a half too far (into the next tile, which overwrites "
        "it): T5.4's first check said a relative error alone; it now says the right halves were never written "
        "(learner6)",
        "5",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N], right.to(c_desc.dtype))",
        "test_store_tile_activation_without_bias[2]",
    ),
    own(
        "learner6-collect-from-first-plus-one",
        "T5.3",
        "sk_collect_partials loops over range(first_pid + 1, pid): the first segment's partial is never added; "
        "collect's own check said only how many cells differ (learner6)",
        "4.2",
        "    for p in range(first_pid, pid):\n",
        "    for p in range(first_pid + 1, pid):\n",
        "test_sk_collect_partials_alone",
        "collect-skips-first",
    ),
    own(
        "learner6-collect-stops-one-early",
        "T5.3",
        "sk_collect_partials loops over range(first_pid, pid - 1): the partial of the program just before the "
        "owner is never added; collect's own check said only how many cells differ (learner6)",
        "4.2",
        "    for p in range(first_pid, pid):\n",
        "    for p in range(first_pid, pid - 1):\n",
        "test_sk_collect_partials_alone",
        "collect-skips-last",
    ),
    own(
        "learner6-program-of-long-runs-only",
        "T5.3",
        "sk_program_of returns it // (base + 1), as if every run were one of the longer ones: owners wait on "
        "programs that hold none of their tile; test_each_stream_k_program_sums_its_own_run, whose programs take "
        "turns, spun 5000 turns per program and timed out after 10 s of CPU, so the step's later checks did not "
        "run (learner6)",
        "4.1",
        "    owner = tl.where(it < big, it // (base + 1), extra + (it - big) // tl.maximum(base, 1))\n",
        "    owner = it // (base + 1)\n",
        "test_each_stream_k_program_sums_its_own_run",
    ),
)
