"""Lesson T5's mutants of our own from left36 (2026-12-05): counts in the wrong unit (k elements where k-blocks
are meant, or the other way round) and a wrong dtype in an epilogue.  hunt16's stream-K total of sk_tiles * K was
caught with the stray-access words alone; tests/t5/sk_counts.py now reads the learner's stream_k_tiles at the
first stray access and names a total counted in K's elements.  Only make check runs them (table=False, not in
§8); each must be caught by its test, whose message names its cause (LEFT36_CAUSES here, gathered into
t5_mistakes.CAUSES).
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT36_CAUSES = {
    "total-in-elements": (
        "stream-K 部分的总数数成了 K 的元素个数",
        "the stream-K part's total was counted in K's elements",
    ),
}

TOTAL = "    total = sk_tiles * k_blocks\n"

LEFT36 = (
    own(
        "left36-total-by-padded-k",
        "T5.3",
        "stream_k_tiles takes total = sk_tiles * k_blocks * BLOCK_K (K's elements, rounded up to whole k-blocks): "
        "the runs reach BLOCK_K times too far (left36)",
        "4.2",
        TOTAL,
        "    total = sk_tiles * k_blocks * BLOCK_K\n",
        "test_stream_k_every_tile_once",
        "stray-access+total-in-elements",
    ),
)
