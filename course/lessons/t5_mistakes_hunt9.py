"""Lesson T5's mutants of our own from the ninth mistake hunt (hunt9, 2026-12-04): the one let through and those
told vaguely or wrongly until the check named with each was mended, and a sample of those caught with their
cause named, kept as they are.  Only make
check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key
of t5_mistakes.CAUSES) or, for cause "", none.  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT9_CAUSES = {
    "collect-own-acc-lost": ("owner 自己的 acc 没加上", "the owner's own acc left out"),
    "collect-summed-first": ("最后才加上 acc", "acc added to their sum last"),
    "sum-rounded-each-block": ("每加一个 k-block 就把和舍入成", "after each k-block: keep acc float32"),
    "store-not-one-box": ("一次 c_desc.store 正好存一个 box", "one c_desc.store stores exactly one box"),
}

WAIT = '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:  # an integer read that waits\n'
PUBLISH = "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n    tl.debug_barrier()"
RESET = '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n'
ADD = '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n'
LOOP = "for tile_id in tl.range(first_tile + tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN):"

HUNT9 = (
    own(
        "hunt9-collect-waits-on-first-flag-only",
        "T5.3",
        "sk_collect_partials waits for first_pid's flag alone and reads every other flag once, going on up or not: "
        "each order the suite ran gave every publisher a turn after the owner's reset of the first flag, so the "
        "whole of T5.3 passed; the shuffled order now holds the publishers after the first back until the owner "
        "spins (hunt9)",
        "4.2",
        WAIT,
        WAIT.replace("while tl.atomic_add(", "while (p == first_pid) & (tl.atomic_add(").replace(" != 1:", " != 1):"),
        "test_fix_up_waits_and_adds_in_program_order[shuffled]",
        "read-early",
    ),
    own(
        "hunt9-collect-volatile-wait",
        "T5.3",
        "sk_collect_partials waits with a volatile tl.load of the flag, no atomic: no acquire orders the partial's "
        "read after it (hunt9, caught)",
        "4.2",
        WAIT,
        WAIT.replace('tl.atomic_add(flags_ptr + p, 0, sem="acquire")', "tl.load(flags_ptr + p, volatile=True)"),
        "test_publish_and_collect_memory_order",
        "flag-plain-load",
    ),
    own(
        "hunt9-publish-barrier-before-store",
        "T5.3",
        "sk_publish_partial puts its tl.debug_barrier() before the partial's store, not between it and the flag "
        "(hunt9, caught)",
        "4.2",
        PUBLISH,
        "    tl.debug_barrier()\n    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)",
        "test_publish_and_collect_memory_order",
        "no-barrier",
    ),
    own(
        "hunt9-own-flag-reset-at-start",
        "T5.3",
        "each program puts its own flag to 0 as stream_k_tiles starts, and owners put none back: a flag of the "
        "launch before can still be up when an owner reads it (hunt9, caught)",
        "4.2",
        RESET,
        "",
        "test_stream_k_every_tile_once",
        "flags-left-up",
    ),
    own(
        "hunt9-dp-blocked-chunks",
        "T5.1",
        "data_parallel_tiles gives each program a run of consecutive tiles (cdiv(tiles, NUM_PROGS) of them), not "
        "every NUM_PROGS-th tile (hunt9, caught)",
        "2.2",
        LOOP,
        "per = tl.cdiv(num_tiles - first_tile, NUM_PROGS)\n    for tile_id in tl.range(first_tile + tl.program_id(0) "
        "* per, tl.minimum(first_tile + (tl.program_id(0) + 1) * per, num_tiles), 1, flatten=FLATTEN):",
        "test_every_tile_once_over_many_grids[plain]",
        "tiles-chunked",  # named since zhlearner15b's walk (t5_mistakes_zhlearner15b.py)
    ),
    own(
        "hunt9-split-dp-past-one-wave",
        "T5.3",
        "stream_k_split falls back to data-parallel whenever there are at least as many tiles as SMs: a thin last "
        "wave after whole ones is never merged (hunt9, caught)",
        "4.3",
        '    if mode == "dp" or k_blocks <= 1:',
        '    if mode == "dp" or k_blocks <= 1 or num_tiles >= num_sms:',
        "test_stream_k_split[300-8-132-auto-want3]",
    ),
    own(
        "hunt9-tma-problem-is-contiguous",
        "T5.2",
        "tma_problem refuses every tensor that is not contiguous, legal padded views too (hunt9, caught)",
        "3.2",
        "    if t.stride(1) != 1:\n",
        "    if not t.is_contiguous():\n",
        "test_tma_problem_accepts_legal_tensors",
        "rule-1-of-a-view",  # named since enlearner14 (t5_mistakes_enlearner14.py)
    ),
    own(
        "hunt9-flag-raised-to-pid-plus-one",
        "T5.3",
        "sk_publish_partial raises its flag to pid + 1, a value of its own, where the owner waits for 1: it waits "
        "for good (hunt9, caught)",
        "4.2",
        'tl.atomic_xchg(flags_ptr + pid, 1, sem="release")',
        'tl.atomic_xchg(flags_ptr + pid, pid + 1, sem="release")',
        "test_stream_k_every_tile_once",
        "waits-forever+flag-not-one",  # the flag's value named since enlearner14
    ),
    own(
        "hunt9-subtile-right-half-activation-none",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) hands the right half's bias_and_activation 'none': the GELU on the left "
        "half alone (hunt9, caught)",
        "5",
        "        right = bias_and_activation(right, bias_ptr, N, stride_bias, 2 * pid_n + 1, BLOCK_N // 2, HAS_BIAS,\n"
        "                                    ACTIVATION)\n",
        "        right = bias_and_activation(right, bias_ptr, N, stride_bias, 2 * pid_n + 1, BLOCK_N // 2, HAS_BIAS,\n"
        '                                    "none")\n',
        "test_store_tile_activation_without_bias[2]",
        "no-activation",
    ),
    own(
        "hunt9-collect-drops-own-acc",
        "T5.3",
        "sk_collect_partials starts its sum from zeros: the owner's own segment is lost; collect's own check said "
        "only how many cells differ (hunt9)",
        "4.2",
        "    for p in range(first_pid, pid):\n",
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n    for p in range(first_pid, pid):\n",
        "test_sk_collect_partials_alone",
        "collect-own-acc-lost",
    ),
    own(
        "hunt9-collect-sums-partials-first",
        "T5.3",
        "sk_collect_partials sums the partials apart and adds acc to their sum last: another order of adding, "
        "other bits; collect's own check said only how many cells differ (hunt9)",
        "4.2",
        "    for p in range(first_pid, pid):\n" + WAIT + "            pass\n" + ADD + RESET,
        "    total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n    for p in range(first_pid, pid):\n"
        + WAIT
        + "            pass\n"
        + ADD.replace("acc +=", "total +=")
        + RESET
        + "    acc += total\n",
        "test_sk_collect_partials_alone",
        "collect-summed-first",
    ),
    own(
        "hunt9-k-loop-sum-rounded-each-block",
        "T5.2",
        "k_block_loop rounds the running sum to the inputs' dtype after each tl.dot: the message told the loop to "
        "add k-blocks kb_begin..kb_end-1 only, at offset kb * BLOCK_K, which it did (hunt9)",
        "3.1",
        "        acc = tl.dot(a, b, acc)\n    # ---- T5.2 end ----",
        "        acc = tl.dot(a, b, acc).to(a.dtype).to(tl.float32)\n    # ---- T5.2 end ----",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "sum-rounded-each-block",
    ),
    own(
        "hunt9-subtile-stores-whole-tile",
        "T5.4",
        "store_tile (EPILOGUE_SUBTILE=2) stores the whole tile at once, bias and activation on all of it, through a "
        "box half as wide: the interpreter's AssertionError about shapes was all T5.4's first check said (hunt9)",
        "5",
        "        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))\n",
        "        acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)\n"
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))\n"
        "        return\n"
        "        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))\n",
        "test_store_tile_activation_without_bias[2]",
        "store-not-one-box",
    ),
)
