"""Lesson T5's mutants of our own from hunt16 (2026-12-05): mistakes that were caught with words that only
described them (a tile with 0 epilogues, 'one k-block fewer, these cases cannot tell which', 'a loop one k-block
off at one end and loads one BLOCK_K off each give that sum'), or with the spin watch's general words, until the
check that catches each learnt to tell its cause: the tile loop's end at num_tiles - 1 (tests/t5/loop_counts.py),
k-blocks 1 .. cdiv handed to k_segment (tests/t5/k_segments.py, k_segment's calls recorded), k_block_loop's run
one off at its start (tests/t5/k_ranges.py, which runs the loop again where the mistakes differ), a stream-K
segment never cut at its tile's first k-block (stream_k_cases.fail_if_whole_runs), and a collect that waits wrongly
on flags raised before its launch (tests/t5/flag_log.py).  Only make check runs them (table=False, not in §8); each
must be caught by its test, whose message names its cause (HUNT16_CAUSES here, gathered into t5_mistakes.CAUSES).
The second half of HUNT16 is the hunt's own: slips planted across T5 (TMA's rules turned round, the halves' columns,
sk_run's base, sk_program_of's two parts, the walk's total and owner test, a reset of the wrong flag), each caught,
most until then with the expected and the got values alone, now named by the check that caught it.
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
    # the hunt's own (the second half of HUNT16)
    "rule1-on-stride0": ("规矩 1 查的是 stride(0)", "rule 1 was checked on stride(0)"),
    "align-turned": ("对齐的判断反了", "the alignment test is turned round"),
    "refused-with-fallback": (
        "在 fallback=True（默认）时抛出了 ValueError",
        "raised a ValueError with fallback=True (the default)",
    ),
    "fallback-turned": ("判断 fallback 的条件反了", "so the test of fallback is turned round"),
    "left-at-half-offset": (
        "左半块存到了第 pid_n * BLOCK_N // 2 列",
        "the left half was stored at column pid_n * BLOCK_N // 2",
    ),
    "both-at-half-offsets": (
        "两半存到了第 pid_n * (BLOCK_N // 2)",
        "the halves were stored at columns pid_n * (BLOCK_N // 2)",
    ),
    "base-by-cdiv": (
        "这是 base = cdiv(total, NUM_PROGS)",
        "these are sk_run's runs with base = cdiv(total, NUM_PROGS)",
    ),
    "owners-without-extra": ("没有加上 extra", "without extra: that numbers the runs"),
    "owners-without-minus-big": ("没有先减去 big", "without taking big off first"),
    "runs-over-tiles": ("各段一共只分了 sk_tiles 个 k-block", "what runs over sk_tiles k-blocks in all give"),
    "owner-test-minus-one": (
        "把 owner 判成 it_end == tile_begin + k_blocks - 1",
        "an owner test of it_end == tile_begin + k_blocks - 1",
    ),
    "raiser-put-back": ("不碰自己刚举起的那面", "never the one it has just raised"),
    "rule2-turned": ("行距的判断反了", "the row-stride test is turned round"),
    "problem-not-none": (
        "不是 None：合规的张量要返回 None，不合规的返回一行字",
        "not None: a tensor that keeps the rules gets None, one that breaks one a line",
    ),
    "publisher-finishes": ("发布 partial 的段也跑了", "the publishing ones too: only the owner"),
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
    own(
        'hunt16-rule-1-on-stride-0',
        'T5.2',
        'tma_problem checks rule 1 on stride(0) (hunt16)',
        '3.2',
        '    if t.stride(1) != 1:\n',
        '    if t.stride(0) != 1:\n',
        'test_tma_problem_accepts_legal_tensors',
        'rule1-on-stride0',
    ),
    own(
        'hunt16-alignment-turned-round',
        'T5.2',
        'tma_problem refuses a base that is a multiple of 16 (data_ptr() % 16 == 0); it was told rule 3 asks for '
        '16 bytes, not 16 elements (hunt16)',
        '3.2',
        '    if t.data_ptr() % 16:\n',
        '    if t.data_ptr() % 16 == 0:\n',
        'test_tma_problem_accepts_legal_tensors',
        'align-turned',
    ),
    own(
        'hunt16-fallback-turned-round',
        'T5.2',
        'tma_ready raises where fallback is True and copies where it is False; told as its own ValueError alone '
        '(hunt16)',
        '3.2',
        '        if problem and not fallback:\n',
        '        if problem and fallback:\n',
        'test_tma_ready_keeps_no_reference_to_its_tensors',
        'refused-with-fallback+fallback-turned',
    ),
    own(
        'hunt16-left-half-at-half-offset',
        'T5.4',
        "store_tile stores the left half at column pid_n * BLOCK_N // 2; told 'relative error 2.0e+02' alone (hunt16)",
        '5',
        '        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))\n',
        '        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N // 2], left.to(c_desc.dtype))\n',
        'test_store_tile_activation_without_bias[2]',
        'left-at-half-offset',
    ),
    own(
        'hunt16-halves-at-half-offsets',
        'T5.4',
        'store_tile stores the halves at pid_n * (BLOCK_N // 2) and + BLOCK_N // 2, counting the tiles in boxes '
        '(hunt16)',
        '5',
        '        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))\n        right = '
        'bias_and_activation(right, bias_ptr, N, stride_bias, 2 * pid_n + 1, BLOCK_N // 2, HAS_BIAS,\n             '
        '                       ACTIVATION)\n        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // '
        '2], right.to(c_desc.dtype))\n',
        '        c_desc.store([pid_m * BLOCK_M, pid_n * (BLOCK_N // 2)], left.to(c_desc.dtype))\n        right = '
        'bias_and_activation(right, bias_ptr, N, stride_bias, 2 * pid_n + 1, BLOCK_N // 2, HAS_BIAS,\n             '
        '                       ACTIVATION)\n        c_desc.store([pid_m * BLOCK_M, pid_n * (BLOCK_N // 2) + '
        'BLOCK_N // 2], right.to(c_desc.dtype))\n',
        'test_store_tile_activation_without_bias[2]',
        'both-at-half-offsets',
    ),
    own(
        'hunt16-run-base-by-cdiv',
        'T5.3',
        "sk_run's base is cdiv(total, NUM_PROGS); told the expected and got runs alone (hunt16)",
        '4.1',
        '    base = total // NUM_PROGS\n    extra = total % NUM_PROGS\n    begin',
        '    base = tl.cdiv(total, NUM_PROGS)\n    extra = total % NUM_PROGS\n    begin',
        'test_sk_runs_cover_every_k_block_once[13-3]',
        'base-by-cdiv',
    ),
    own(
        'hunt16-owners-without-extra',
        'T5.3',
        'sk_program_of past the longer runs is (it - big) // base, without extra (hunt16)',
        '4.1',
        'extra + (it - big) // tl.maximum(base, 1))',
        '(it - big) // tl.maximum(base, 1))',
        'test_sk_runs_cover_every_k_block_once[13-3]',
        'owners-without-extra',
    ),
    own(
        'hunt16-owners-without-minus-big',
        'T5.3',
        'sk_program_of past the longer runs is extra + it // base, big not taken off (hunt16)',
        '4.1',
        'extra + (it - big) // tl.maximum(base, 1))',
        'extra + it // tl.maximum(base, 1))',
        'test_sk_runs_cover_every_k_block_once[13-3]',
        'owners-without-minus-big',
    ),
    own(
        'hunt16-runs-over-the-tiles',
        'T5.3',
        "stream_k_tiles hands sk_run the tile count, not total; told 'tile 0 had 0 epilogues' alone (hunt16)",
        '4.2',
        '    run_begin, run_end = sk_run(pid, total, NUM_PROGS)\n',
        '    run_begin, run_end = sk_run(pid, sk_tiles, NUM_PROGS)\n',
        'test_stream_k_every_tile_once',
        'runs-over-tiles',
    ),
    own(
        'hunt16-owner-test-one-short',
        'T5.3',
        "stream_k_tiles owns a tile where it_end == tile_begin + k_blocks - 1; told 'tile 0 had 0 epilogues' alone "
        '(hunt16)',
        '4.2',
        '        if it_end == tile_begin + k_blocks:',
        '        if it_end == tile_begin + k_blocks - 1:',
        'test_stream_k_every_tile_once',
        'owner-test-minus-one',
    ),
    own(
        'hunt16-collect-resets-first-flag-after-loop',
        'T5.3',
        'sk_collect_partials resets flags_ptr + first_pid once after its loop, not each flag p in it: a program '
        "takes down the flag it has just raised; told in the spin watch's general words (hunt16)",
        '4.2',
        '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n',
        '    tl.atomic_xchg(flags_ptr + first_pid, 0, sem="relaxed")\n',
        'test_stream_k_every_tile_once',
        'waits-forever+raiser-put-back',
    ),
    own(
        'hunt16-first-pid-of-it-begin',
        'T5.3',
        'the owner collects from sk_program_of(it_begin), its own id, not of tile_begin (hunt16)',
        '4.2',
        '            first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n',
        '            first_pid = sk_program_of(it_begin, total, NUM_PROGS)\n',
        'test_stream_k_every_tile_once',
        'flags-never-read',
    ),
    own(
        'hunt16-kmajor-box-trans-at-k-n',
        'T5.2',
        "a K-major B box loaded at [off_k, off_n] and tl.trans'ed (hunt16)",
        '3.1',
        '            b = b_desc.load([off_n, off_k]).T  # a [BLOCK_N, BLOCK_K] box of B^T, used transposed\n',
        '            b = tl.trans(b_desc.load([off_k, off_n]))\n',
        'test_k_block_loop[17-50-70-0-3-True-torch.float16]',
        'load-coords-swapped',
    ),
    own(
        'hunt16-total-by-k',
        'T5.3',
        'stream_k_tiles takes total = sk_tiles * K, not * k_blocks: runs past the stream-K tiles (hunt16)',
        '4.2',
        '    total = sk_tiles * k_blocks\n',
        '    total = sk_tiles * K\n',
        'test_stream_k_every_tile_once',
        'stray-access+total-in-elements',  # its cause named since left36 (tests/t5/sk_counts.py)
    ),
    own(
        'hunt16-row-stride-test-turned-round',
        'T5.2',
        'tma_problem refuses rows whose bytes are a multiple of 16 ((stride(0) * size) % 16 == 0) (hunt16)',
        '3.2',
        '    if (t.stride(0) * size) % 16:\n',
        '    if (t.stride(0) * size) % 16 == 0:\n',
        'test_tma_problem_accepts_legal_tensors',
        'rule2-turned',
    ),
    own(
        'hunt16-problem-false-for-legal',
        'T5.2',
        "tma_problem returns False for a tensor that keeps the rules: the check itself crashed on it ('bool' "
        "object has no attribute 'lower') (hunt16)",
        '3.2',
        '    return None\n    # ---- T5.2 end ----\n\n\ndef aligned_copy',
        '    return False\n    # ---- T5.2 end ----\n\n\ndef aligned_copy',
        'test_tma_problem_accepts_legal_tensors',
        'problem-not-none',
    ),
    own(
        'hunt16-publisher-finishes-too',
        'T5.3',
        "a publishing segment runs finish_tile too; told 'tile 1 had 2 epilogues' alone (hunt16)",
        '4.2',
        "        else:  # only the run's highest segment can stop short of its tile's end: published first\n       "
        '     sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)\n',
        "        else:  # only the run's highest segment can stop short of its tile's end: published first\n       "
        '     sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)\n            '
        'finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,\n                    '
        '    BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)\n',
        'test_stream_k_every_tile_once',
        'publisher-finishes',
    ),
    own(
        'hunt16-sk-mode-all-sms',
        'T5.3',
        "stream_k_split's mode sk returns num_sms programs, not min(num_sms, sk_tiles * k_blocks) (hunt16)",
        '4.3',
        '    if sk_tiles == 0:\n        return 0, persistent_grid(num_tiles, num_sms)\n    return sk_tiles, '
        'min(num_sms, sk_tiles * k_blocks)\n',
        '    if sk_tiles == 0:\n        return 0, persistent_grid(num_tiles, num_sms)\n    if mode == "sk":\n      '
        '  return num_tiles, num_sms\n    return sk_tiles, min(num_sms, sk_tiles * k_blocks)\n',
        'test_stream_k_split[10-4-132-sk-want6]',
        'programs-past-k-blocks',
    ),
    own(
        "hunt16-sk-k-blocks-floor-plus-one",
        "T5.3",
        "stream_k_tiles counts k_blocks = K // BLOCK_K + 1: one k-block past K where K is a whole number of them (TMA "
        "reads zeros there, so C is right); told 'tile 0 summed 6 k-blocks, 5 expected' alone (hunt16)",
        "4.2",
        '    k_blocks = tl.cdiv(K, BLOCK_K)\n    total = sk_tiles * k_blocks\n',
        '    k_blocks = K // BLOCK_K + 1\n    total = sk_tiles * k_blocks\n',
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-45-37-160-3]",
        "k-blocks-one-past",
    ),
)
