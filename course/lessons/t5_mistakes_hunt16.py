"""Lesson T5's mutants of our own from hunt16 (2026-12-05): mistakes that were caught with words that only
described them (a tile with 0 epilogues, 'one k-block fewer, these cases cannot tell which', 'a loop one k-block
off at one end and loads one BLOCK_K off each give that sum'), or with the spin watch's general words, until the
check that catches each learnt to tell its cause: the tile loop's end at num_tiles - 1 (tests/t5/loop_counts.py),
k-blocks 1 .. cdiv handed to k_segment (tests/t5/k_segments.py, k_segment's calls recorded), k_block_loop's run
one off at its start (tests/t5/k_ranges.py, which runs the loop again where the mistakes differ), a stream-K
segment never cut at its tile's first k-block (stream_k_cases.fail_if_whole_runs), and a collect that waits wrongly
on flags raised before its launch (tests/t5/flag_log.py).  Only make check runs them (table=False, not in §8); each
must be caught by its test, whose message names its cause (HUNT16_CAUSES here, gathered into t5_mistakes.CAUSES).
"""

from course.lessons.t5_mistakes_own import LOOP, own

KB = "    for kb in range(kb_begin, kb_end):\n"
IT_BEGIN = "        it_begin = tl.maximum(tile_begin, run_begin)\n"
WAIT = '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:  # an integer read that waits\n'
LOAD = '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n'
RESET = '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n'
FIRST_K_CASE = "test_k_block_loop[45-37-83-0-3-False-torch.float16]"  # make test STEP=T5.2's first case of the loop

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT16_CAUSES = {
    "loop-ends-one-short": ("却停在 num_tiles - 1 的循环", "that ends at num_tiles - 1"),
    "k-blocks-from-one": ("第 0 个 k-block 一次也没有算", "so k-block 0 was never summed"),
    "kb-begins-late": ("循环晚了一个 k-block 才开始", "the loop starts one k-block late"),
    "kb-from-one": ("循环从第 1 个 k-block 开始，不是从 kb_begin", "the loop starts at k-block 1, not at kb_begin"),
    "kb-ends-early": ("循环在 kb_end - 1 就停了", "the loop stops at kb_end - 1"),
    "kb-ends-late": ("循环多走了一个 k-block", "the loop runs one k-block further"),
    "segment-whole-run": ("每段 run 整个当成了一个 segment", "each run was summed whole as one segment"),
    "flag-up-at-start": ("这面旗在启动时就举着", "it was up when the launch began"),
}

HUNT16 = (
    own(
        "hunt16-dp-loop-ends-one-short",
        "T5.1",
        "data_parallel_tiles loops to num_tiles - 1 (an end made inclusive by hand): the last tile is never done; "
        "told as 'tile 11 had 0 epilogues' alone (hunt16)",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS,", "num_tiles - 1, NUM_PROGS,"),
        "test_every_tile_once_over_many_grids[plain]",
        "loop-ends-one-short",
    ),
    own(
        "hunt16-dp-k-blocks-from-one",
        "T5.1",
        "data_parallel_tiles hands k_segment k-blocks 1 .. cdiv(K, BLOCK_K): each tile's first k-block skipped; "
        "told as K // BLOCK_K or cdiv - 1, 'these cases cannot tell which' (hunt16)",
        "2.2",
        "pid_n, 0, k_blocks,",
        "pid_n, 1, k_blocks,",
        "test_every_tile_once_over_many_grids[plain]",
        "k-blocks-from-one",
    ),
    own(
        "hunt16-k-loop-begins-late",
        "T5.2",
        "k_block_loop over range(kb_begin + 1, kb_end): the run's first k-block left out; at kb_begin 0 of K's three "
        "k-blocks told as a loop one off or loads one BLOCK_K off (hunt16)",
        "3.1",
        KB,
        KB.replace("kb_begin,", "kb_begin + 1,"),
        FIRST_K_CASE,
        "kb-range+kb-begins-late",
    ),
    own(
        "hunt16-k-loop-from-one",
        "T5.2",
        "k_block_loop over range(1, kb_end): k-block 0 left out where kb_begin is 0, the blocks before kb_begin "
        "added where it is past 1 (hunt16)",
        "3.1",
        KB,
        KB.replace("kb_begin,", "1,"),
        FIRST_K_CASE,
        "kb-range+kb-from-one",
    ),
    own(
        "hunt16-k-loop-ends-early-at-k-end",
        "T5.2",
        "k_block_loop over range(kb_begin, kb_end - 1), seen at the first case, whose run ends at K's last k-block, "
        "where loads one BLOCK_K back give the same sum (hunt16)",
        "3.1",
        KB,
        KB.replace("kb_end)", "kb_end - 1)"),
        FIRST_K_CASE,
        "kb-range+kb-ends-early",
    ),
    own(
        "hunt16-it-begin-by-minimum",
        "T5.3",
        "stream_k_tiles takes it_begin = tl.minimum(tile_begin, run_begin), not tl.maximum: each run is one segment, "
        "counted on the tile of its last k-block; told as 'tile 0 had 0 epilogues' alone (hunt16)",
        "4.2",
        IT_BEGIN,
        IT_BEGIN.replace("maximum", "minimum"),
        "test_stream_k_every_tile_once",
        "segment-whole-run",
    ),
    own(
        "hunt16-it-begin-is-run-begin",
        "T5.3",
        "stream_k_tiles takes it_begin = run_begin: each run is one segment, counted on the tile of its last "
        "k-block (hunt16)",
        "4.2",
        IT_BEGIN,
        "        it_begin = run_begin\n",
        "test_stream_k_every_tile_once",
        "segment-whole-run",
    ),
    own(
        "hunt16-collect-reset-before-wait-alone",
        "T5.3",
        "sk_collect_partials puts flag p back to 0 before it waits on it; in test_sk_collect_partials_alone (flags "
        "raised before the launch) only the spin watch's general words (hunt16)",
        "4.2",
        WAIT + "            pass\n" + LOAD + RESET,
        RESET + WAIT + "            pass\n" + LOAD,
        "test_sk_collect_partials_alone",
        "waits-forever+reset-before-wait+flag-up-at-start",
    ),
    own(
        "hunt16-collect-loop-stays-alone",
        "T5.3",
        "sk_collect_partials walks p = first_pid; while p < pid: without advancing p; in "
        "test_sk_collect_partials_alone "
        "only the spin watch's general words (hunt16)",
        "4.2",
        "    for p in range(first_pid, pid):\n" + WAIT,
        "    p = first_pid\n    while p < pid:\n" + WAIT,
        "test_sk_collect_partials_alone",
        "waits-forever+wait-loop-stays",
    ),
)
