"""Lesson T5's mutants of our own found by a hole hunt of 2026-12-02 (t5holes): mistakes the suite
caught under another cause, or let through, until the checks named with each were added.  Only make
check runs them (table=False).  Kept beside t5_mistakes_own.py, which would pass 400 lines with them;
t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import RIGHT_HALF, own

TMA_RULES = (  # tma_problem's three checks in the reference, in §3.2's order
    "    if t.stride(1) != 1:\n"
    '        return f"{name}: the last dimension must be contiguous (stride 1), got strides {tuple(t.stride())}"\n'
    "    if (t.stride(0) * size) % 16:\n"
    '        return (f"{name}: the row stride must be a multiple of 16 bytes, got {t.stride(0)} elements "\n'
    '                f"of {size} bytes = {t.stride(0) * size} bytes")\n'
    "    if t.data_ptr() % 16:\n"
    '        return f"{name}: the base address must be 16-byte aligned, got {t.data_ptr()} '
    '(mod 16 = {t.data_ptr() % 16})"\n'
)
RULE_1, RULE_2, RULE_3 = ("".join(TMA_RULES.splitlines(keepends=True)[a:b]) for a, b in ((0, 2), (2, 5), (5, 7)))

HOLES = (
    own(
        "subtile-split-swapped",
        "T5.4",
        "tl.split's two results taken as (right, left): each tile's halves land in each other's columns",
        "5",
        "        left, right = tl.split(halves)",
        "        right, left = tl.split(halves)",
        "test_store_tile_rounds_once_after_the_bias[2]",
        "halves-swapped",
    ),
    own(
        "subtile-stores-swapped",
        "T5.4",
        "the left half stored at the right half's column and the right half at the left's",
        "5",
        "[pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))\n"
        + RIGHT_HALF
        + "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right",
        "[pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], left.to(c_desc.dtype))\n"
        + RIGHT_HALF
        + "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], right",
        "test_matmul_subtiled_with_bias_and_gelu[dp]",
        "halves-swapped",
    ),
    own(
        "subtile-left-twice",
        "T5.4",
        "the left half stored at the right half's columns too (a store line copied, its value kept)",
        "5",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], left.to(c_desc.dtype))",
        "test_store_tile_subtiled_bias_per_half[gelu]",
        "left-half-twice",
    ),
    own(
        "tma-base-first",
        "T5.2",
        "tma_problem checks the base address before the other two rules: a column-major view at an odd base is "
        "reported as unaligned",
        "3.2",
        TMA_RULES,
        RULE_3 + RULE_1 + RULE_2,
        "test_tma_problem_reports_the_first_rule_broken[every other column of an fp16 (48, 128), base 4 bytes past 16]",
        "rule-order",
    ),
    own(
        "tma-no-contiguity",
        "T5.2",
        "tma_problem never checks stride(1): b.t() is reported by the row stride rule, every other column passes",
        "3.2",
        TMA_RULES,
        RULE_2 + RULE_3,
        "test_tma_problem_reports_the_first_rule_broken[fp16 (48, 64).t(): strides (1, 64), rows 2 bytes apart]",
        "rule-unchecked",
    ),
    own(
        "dp-no-flatten",
        "T5.1",
        "the tile loop's tl.range without flatten=FLATTEN: the interpreter runs it the same",
        "2.2",
        "num_tiles, NUM_PROGS, flatten=FLATTEN):",
        "num_tiles, NUM_PROGS):",
        "test_the_tile_loop_passes_flatten_on",
        "flatten-dropped",
    ),
    own(
        "dp-flatten-always",
        "T5.1",
        "the tile loop's tl.range with flatten=True, whatever the config's FLATTEN",
        "2.2",
        "num_tiles, NUM_PROGS, flatten=FLATTEN):",
        "num_tiles, NUM_PROGS, flatten=True):",
        "test_the_tile_loop_passes_flatten_on",
    ),
    own(
        "sk-publish-slot-by-tile",
        "T5.3",
        "stream_k_tiles publishes into slot tile_id, not pid: with more tiles than programs, past the workspace",
        "4.2",
        "            sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)",
        "            sk_publish_partial(acc, partials_ptr, flags_ptr, tile_id, BLOCK_M, BLOCK_N)",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-tail-128-160-96-7]",
        "stray-access",
    ),
)
