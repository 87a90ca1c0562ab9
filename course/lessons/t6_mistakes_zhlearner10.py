"""Lesson T6's mutants of our own from the tenth Chinese-reading learner's walk (zhlearner10, 2026-12-04): each was
caught with a message that named no cause, or a wrong one, until the check named with it was added or mended.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its
cause (a key of t6_mistakes.CAUSES, ZHLEARNER10_CAUSES here).  t6_mistakes.py gathers them last, and their causes
into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ZHLEARNER10_CAUSES = {
    "expert-by-strict-ends": ("严格小于 tile 号的个数", "the count of tile_ends strictly below"),
    "box-at-block-number": ("正好是 k 块的序号，不是元素的偏移", "exactly the k-blocks' numbers, not element offsets"),
    "starts-or-last-unstored": ("这个用例分不清两种错误", "this case cannot tell two mistakes apart"),
    "bound-summed-ends": ("循环的上界是 tile_ends 的和", "the loop's bound was the sum of tile_ends"),
}

# locate_tile counting tile_ends < tile_id, which the walk planted too, is §8's locate-strict (t6_mistakes.py): the
# message said which expert each tile got and no cause; that entry now names expert-by-strict-ends.
OFFSETS = "    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts)\n"

ZHLEARNER10 = (
    own(
        "zhlearner10-box-at-block-number",
        "T6.3",
        "gathered_product loads w's TMA box at [w_row, k0 // BLOCK_K], the k-block's number: the interpreter's "
        "English assertion 'block offset start must be 16-byte aligned' was shown, with no cause (zhlearner10)",
        "4.2",
        "        b = w_desc.load([w_row, k0])",
        "        b = w_desc.load([w_row, k0 // BLOCK_K])",
        "test_gathered_product_alone[gathered]",
        "box-at-block-number",
    ),
    own(
        "zhlearner10-offsets-starts-one-expert",
        "T6.1",
        "scan_counts stores offsets as the exclusive sum, on the routing where the last expert holds every row: the "
        "message named a store mask one expert short alone, which gives the same offsets there; it now says the case "
        "cannot tell the two apart (zhlearner10)",
        "2.1",
        OFFSETS,
        OFFSETS.replace("tl.cumsum(running, axis=0)", "tl.cumsum(running, axis=0) - running"),
        "test_route_is_a_stable_counting_sort[one expert-20-1-4]",
        "last-offset+starts-or-last-unstored",
    ),
    own(
        "zhlearner10-bound-summed-ends",
        "T6.2",
        "grouped_tiles loops to tl.sum(tile_ends), not the total tl.max(tile_ends): tile ids past the bound done; the "
        "message said the loop must stop at the total read on the device, which it thought it did (zhlearner10)",
        "3.4",
        "    total = tl.max(tile_ends, axis=0)\n",
        "    total = tl.sum(tile_ends, axis=0)\n",
        "test_every_tile_of_every_expert_once",
        "bound-summed-ends",
    ),
)
