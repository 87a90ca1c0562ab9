"""Lesson T5's mutants of our own from the thirteenth round of leftovers (left13, 2026-12-05): each was caught with a
message that said what was observed alone, or with Triton's English alone, until its check was mended to compare
with the pattern the mistake makes, or to say the mismatch in the learner's language first.  Only make check runs
them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t5_mistakes.CAUSES, LEFT13_CAUSES here).  t5_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT13_CAUSES = {
    # tests/t5/test_stream_k_split.py: the runs are, one for one, what end = begin + base + (pid <= extra) gives
    "runs-pid-le-extra": ("这正是 end 里用 pid <= extra 的结果", "it is what pid <= extra in the end gives"),
    # tests/t5/test_stream_k_split.py: every tile's k-block count is what it_begin = tile_begin gives
    # (hunt12-segment-from-tile-begin, caught with the counts alone before, now names it too)
    "segment-from-tile-begin": (
        "每一段都从 tile 的第一个 k-block 算起（it_begin = tile_begin）的结果",
        "segments that all start at their tile's first k-block give (it_begin = tile_begin)",
    ),
    # tests/t5/crashes.py: after a crash on blocks of other shapes, make_descriptors asked again gives a box that is
    # not the one the kernel moves (a-box-turned, caught with Triton's English as its main text before, names it too)
    "boxes-asked-again": ("你的 make_descriptors 按", "Your make_descriptors, asked again with"),
}

LEFT13 = (
    own(
        "left13-run-end-pid-le-extra",
        "T5.3",
        "sk_run's end = begin + base + (pid <= extra): program extra's run one k-block longer too, into the next run; "
        "the message gave the runs expected and got alone (left13)",
        "4.1",
        "    end = begin + base + (pid < extra).to(tl.int32)\n",
        "    end = begin + base + (pid <= extra).to(tl.int32)\n",
        "test_sk_runs_cover_every_k_block_once[13-3]",
        "runs-pid-le-extra",
    ),
    own(
        "left13-run-end-pid-le-extra-even",
        "T5.3",
        "the same, where the k-blocks share out evenly (extra = 0): program 0's run is the one longer (left13)",
        "4.1",
        "    end = begin + base + (pid < extra).to(tl.int32)\n",
        "    end = begin + base + (pid <= extra).to(tl.int32)\n",
        "test_sk_runs_cover_every_k_block_once[12-3]",
        "runs-pid-le-extra",
    ),
    own(
        "left13-c-box-half-wide",
        "T5.2",
        "C's box given as [BLOCK_M, BLOCK_N // 2] whatever EPILOGUE_SUBTILE is: a whole tile stored through a "
        "half-wide box crashes; the message quoted Triton's English, expected value shape ['32', '16'], got "
        "['constexpr[32]', 'constexpr[32]'], as its main text (left13)",
        "3",
        "    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])\n",
        "    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // 2])\n",
        "test_matmul_whole_tile_with_bias_and_gelu[dp]",
        "boxes-asked-again",
    ),
)
