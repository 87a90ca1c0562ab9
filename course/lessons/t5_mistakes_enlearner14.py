"""Lesson T5's mutants of our own from the fourteenth English learner's walk (enlearner14, 2026-12-05): each was
caught with a message that named no cause, or pointed elsewhere (a box from make_descriptors, a flag nobody raised,
rule 2 read off the width), until its check was mended to name what it detected.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t5_mistakes.CAUSES, ENLEARNER14_CAUSES here) or, for cause "", none.  t5_mistakes.py gathers them last, and their
causes into its CAUSES.  Four more causes here are named by mutants of earlier rounds, planted the same way by this
walk (a wait while the flag is up, spin11; is_contiguous() for rule 1 and a flag raised to pid + 1, hunt9; stream-K
programs by tiles, hunt11; every tile to stream-K, hunt12): their entries name them now.
"""

from course.lessons.t5_mistakes_own import COORDS, LOOP, own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ENLEARNER14_CAUSES = {
    # tests/t5/crashes.py: store_tile's whole-tile branch crashed in a launch whose config has EPILOGUE_SUBTILE 2
    "subtile-lost": (
        "交给 finish_tile 的 EPILOGUE_SUBTILE 不是 kernel 拿到的那个",
        "handed finish_tile another EPILOGUE_SUBTILE than the kernel's",
    ),
    # tests/t5/stray.py: a wait that read another program's flag as 1 a thousand times and went on
    "flag-read-raised": ("的旗已经举起来了，它却还在等", "flag is raised, yet the wait went on"),
    # tests/t5/stray.py: a wait that read another program's flag as neither 0 nor 1 a thousand times
    "flag-not-one": ("不是举起的旗该有的 1", "not the 1 a raised flag holds"),
    # tests/t5/test_tma_rules.py: a legal view of wider rows (stride(1) == 1) refused in rule 1's words
    "rule-1-of-a-view": ("tma_problem 却用规矩 1 的话拒绝了它", "yet tma_problem refuses it in rule 1's words"),
    # tests/t5/test_stream_k_split.py: the programs are min(num_sms, sk_tiles)
    "programs-per-tile": ("按 tile 数的；stream-K 分的是 k-block", "a count of tiles; stream-K shares out k-blocks"),
    # tests/t5/test_stream_k_split.py: mode auto gave every tile to stream-K, whole waves included
    "every-wave-to-sk": ("连前面的整波也算进去了", "the whole waves before the last two included"),
    # tests/t5/crashes.py: an int64 coordinate refused, in k_block_loop or store_tile whose parameters came in int64
    "int64-handed-in": ("传进来时就是 int64", "came in as int64"),
    # tests/t5/stray.py: a count-only launch (TRACE 2) reached k_block_loop or store_tile through the given functions
    "trace-lost": ("的 TRACE 不是 kernel 拿到的 2", "is not the kernel's 2: pass TRACE on"),
}

DP_FINISH = " " * 20 + "BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)\n    # ---- T5.1 end ----\n"
SK_FINISH = " " * 24 + "BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)\n        else:"
RAISE = '    tl.atomic_xchg(flags_ptr + pid, 1, sem="release")\n'
RULE_1 = "    if t.stride(1) != 1:\n"

ENLEARNER14 = (
    own(
        "enlearner14-dp-subtile-one",
        "T5.1",
        "data_parallel_tiles hands finish_tile EPILOGUE_SUBTILE 1 whatever the config says: T5.1's checks (TRACE 2) "
        "never store, and T5.4's crash said only that the block stored is not the box, 'their boxes come from "
        "make_descriptors' (enlearner14)",
        "2.2",
        DP_FINISH,
        DP_FINISH.replace("EPILOGUE_SUBTILE,", "1,"),
        "test_matmul_subtiled_with_bias_and_gelu[dp]",
        "subtile-lost",
    ),
    own(
        "enlearner14-sk-subtile-one",
        "T5.3",
        "the same in stream_k_tiles, the owner's finish_tile: the whole of T5.3 passed, and T5.4's crash pointed at "
        "make_descriptors (enlearner14)",
        "4.2",
        SK_FINISH,
        SK_FINISH.replace("EPILOGUE_SUBTILE,", "1,"),
        "test_matmul_subtiled_with_bias_and_gelu[sk]",
        "subtile-lost",
    ),
    own(
        "enlearner14-flag-raised-to-2",
        "T5.3",
        "a publish raises its flag to 2: the first check, the spin watch, said it read [2], 'such as a flag nobody "
        "has raised yet' (enlearner14)",
        "4.2",
        RAISE,
        RAISE.replace(", 1,", ", 2,"),
        "test_stream_k_every_tile_once",
        "waits-forever+flag-not-one",
    ),
    own(
        "enlearner14-rule-1-by-is-contiguous-not-width",
        "T5.2",
        "tma_problem judges rule 1 with not t.is_contiguous() (hunt9's mutant), told in the row-stride check: it said "
        "'the verdict follows the width ... Rule 2 reads stride(0)', though tma_problem refused the view in rule 1's "
        "words; a cause it had not detected (enlearner14)",
        "3.2",
        RULE_1,
        "    if not t.is_contiguous():\n",
        "test_tma_problem_reads_the_row_stride_not_the_width",
    ),
    own(
        "enlearner14-dp-tile-places-int64",
        "T5.1",
        "data_parallel_tiles hands tile_coords tile_id.to(tl.int64) (T4's habit of int64 offsets): T5.1's checks "
        "(TRACE 2) never load, and T5.2's crash named k_block_loop's line and 'keep int64 values out of them', "
        "though k_block_loop's offsets came in int64 (enlearner14)",
        "2.2",
        LOOP + COORDS,
        LOOP + COORDS.replace("tile_coords(tile_id,", "tile_coords(tile_id.to(tl.int64),"),
        "test_matmul_whole_tile_with_bias_and_gelu[dp]",
        "int64-handed-in",
    ),
    own(
        "enlearner14-dp-trace-zero",
        "T5.1",
        "data_parallel_tiles hands k_segment TRACE 0: T5.1's count-only launch crashed in k_block_loop on a stand-in "
        "descriptor, told as Triton's AttributeError ('tensor' object has no attribute 'load') (enlearner14)",
        "2.3",
        " " * 24 + "BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)\n",
        " " * 24 + "BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, 0)\n",
        "test_every_tile_once_over_many_grids[plain]",
        "trace-lost",
    ),
    own(
        "enlearner14-sk-finish-trace-zero",
        "T5.3",
        "stream_k_tiles hands the owner's finish_tile TRACE 0: the count-only launch crashed in store_tile, told as "
        "'you cast values to a pointer type ... c_ptr.dtype.element_ty', a cause it had not detected (enlearner14)",
        "2.3",
        SK_FINISH,
        SK_FINISH.replace("ACTIVATION, TRACE)", "ACTIVATION, 0)"),
        "test_stream_k_every_tile_once",
        "trace-lost",
    ),
)
