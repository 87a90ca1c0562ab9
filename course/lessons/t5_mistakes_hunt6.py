"""Lesson T5's mutants of our own from the sixth hunt for unplanted mistakes (hunt6a, 2026-12-04): each
was let through, or caught with a message that named no cause, until the check named with it was added or
mended.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of t5_mistakes.CAUSES, HUNT6_CAUSES here).  t5_mistakes.py gathers them last, and
their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT6_CAUSES = {
    "loop-stopped-advancing": ("在一个不再前进的循环里打转", "it goes round a loop that no longer advances"),
    "partials-rounded-when-collected": (
        "每个 partial 先舍入成 fp16 再加上",
        "each partial rounded to fp16 before it is added",
    ),
}

HUNT6 = (
    own(
        "hunt6-sk-tile-of-it-end",
        "T5.3",
        "stream_k_tiles takes the segment's tile as it_end // k_blocks, not (it_end - 1) // k_blocks: at a tile's "
        "end that is the next tile, the segment is empty and it_end never decreases; the count-only test timed "
        "out after 60 s with pytest-timeout's words alone (the same-address spin watch missed it: each pass reads "
        "two places and rewrites the partial) (hunt6)",
        "4.2",
        "        tile_id = (it_end - 1) // k_blocks\n",
        "        tile_id = it_end // k_blocks\n",
        "test_stream_k_every_tile_once",
        "loop-stopped-advancing",
    ),
    own(
        "hunt6-collect-partials-to-fp16",
        "T5.3",
        "sk_collect_partials adds each partial as tl.load(...).to(tl.float16): every partial is rounded before the "
        "owner adds it; caught with the count of differing cells alone (hunt6)",
        "4.2",
        '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n',
        '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg").to(tl.float16)\n',
        "test_sk_collect_partials_alone",
        "partials-rounded-when-collected",
    ),
)
