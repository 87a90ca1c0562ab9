"""Lesson T5's mutants of our own found by a hole hunt of 2026-12-02 (t5holes): mistakes the suite
caught under another cause, or let through, until the checks named with each were added.  Only make
check runs them (table=False).  Kept beside t5_mistakes_own.py, which would pass 400 lines with them;
t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import COORDS, LOOP, RIGHT_HALF, own

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
        "tma-base-first-hex",
        "T5.2",
        "tma_problem checks the base address first and prints it in hexadecimal: letters of the address that "
        "differ from one tensor to the next must not hide which check answered",
        "3.2",
        TMA_RULES,
        RULE_3.replace("got {t.data_ptr()}", "got {t.data_ptr():#x}") + RULE_1 + RULE_2,
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

# t5holes, the hunt's own plants (2026-12-02): each caught at its step; those with a cause named only since this hunt
HOLES += (
    own(
        'dp-kb-minus-one',
        'T5.1',
        "the tile loop sums k-blocks 0 .. k_blocks - 2: each tile's last k-block left out",
        '2.3',
        'pid_m, pid_n, 0, k_blocks,\n',
        'pid_m, pid_n, 0, k_blocks - 1,\n',
        'test_every_tile_once_over_many_grids[plain]',
        'one-k-block-short',
    ),
    own(
        'dp-coords-minus-first',
        'T5.1',
        'tile_coords given tile_id - first_tile: every tile at the place of one first_tile before it',
        '2.2',
        LOOP + COORDS,
        LOOP + COORDS.replace("tile_coords(tile_id,", "tile_coords(tile_id - first_tile,"),
        'test_every_tile_once_over_many_grids[plain]',
        'coords-minus-first',
    ),
    own(
        'kb-loop-minus-one',
        'T5.2',
        "k_block_loop over range(kb_begin, kb_end - 1): the run's last k-block left out",
        '3.1',
        '    for kb in range(kb_begin, kb_end):\n',
        '    for kb in range(kb_begin, kb_end - 1):\n',
        'test_k_block_loop[40-48-160-1-3-False-torch.float16]',  # at K's end, loads one k-block back give it too
        'kb-range+kb-ends-early',  # which end, named since hunt16
    ),
    own(
        'kmajor-coords-swapped',
        'T5.2',
        "a K-major B box loaded at [off_k, off_n], the row-major B's coordinates",
        '3.1',
        'b = b_desc.load([off_n, off_k]).T',
        'b = b_desc.load([off_k, off_n]).T',
        'test_k_block_loop[17-50-70-0-3-True-torch.float16]',
        'load-coords-swapped',
    ),
    own(
        'store-coords-swapped',
        'T5.2',
        'the whole tile stored at [pid_n * BLOCK_N, pid_m * BLOCK_M]',
        '3.3',
        '        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))\n',
        '        c_desc.store([pid_n * BLOCK_N, pid_m * BLOCK_M], acc.to(c_desc.dtype))\n',
        'test_store_tile[37-48-torch.float16]',
        'store-coords-swapped',
    ),
    own(
        'store-fp16-always',
        'T5.2',
        "the whole tile cast to tl.float16 before the store, whatever C's dtype",
        '3.3',
        '        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))\n',
        '        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))\n',
        'test_store_tile[32-32-torch.float32]',
        'fixed-cast',
    ),
    own(
        'c-box-whole',
        'T5.4',
        "c_desc's box [BLOCK_M, BLOCK_N] whatever EPILOGUE_SUBTILE",
        '3.1',
        'c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])',
        'c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N])',
        'test_make_descriptors_boxes',
        'c-box-whole-tile',
    ),
    own(
        'sk-owner-no-extra',
        'T5.3',
        'sk_program_of divides by base alone, as if no run were one k-block longer',
        '4.1',
        '    owner = tl.where(it < big, it // (base + 1), extra + (it - big) // tl.maximum(base, 1))\n',
        '    owner = it // tl.maximum(base, 1)\n',
        'test_sk_runs_cover_every_k_block_once[13-3]',
        'owners-one-length',  # named since zhlearner15b's walk (t5_mistakes_zhlearner15b.py)
    ),
    own(
        'sk-first-segment-owns',
        'T5.3',
        "the segment holding a tile's first k-block made the owner, not the one holding its last",
        '4.2',
        "        if it_end == tile_begin + k_blocks:  # this run holds the tile's last k-block: the owner\n",
        "        if it_begin == tile_begin:  # this run holds the tile's last k-block: the owner\n",
        'test_stream_k_every_tile_once',
        'first-holder-owns',
    ),
    own(
        'sk-collect-own-flag',
        'T5.3',
        'the owner waits on its own flag too (range(first_pid, pid + 1)), which nobody raises',
        '4.2',
        '    for p in range(first_pid, pid):\n',
        '    for p in range(first_pid, pid + 1):\n',
        'test_stream_k_every_tile_once',
        'waits-forever+collected-own-partial',  # the flag log names who took the flag down (waits15)
    ),
    own(
        'sk-publish-slot-plus-one',
        'T5.3',
        "sk_publish_partial stores program p's partial in slot p + 1",
        '4.2',
        '    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)',
        '    tl.store(partials_ptr + (pid + 1) * (BLOCK_M * BLOCK_N) + offs, acc)',
        'test_sk_publish_partial_alone',
        'slot-along',
    ),
    own(
        'split-no-cap',
        'T5.3',
        'stream_k_split launches sk_tiles * k_blocks programs, not capped at the SM count',
        '4.3',
        '    return sk_tiles, min(num_sms, sk_tiles * k_blocks)\n',
        '    return sk_tiles, sk_tiles * k_blocks\n',
        'test_stream_k_split[64-8-132-auto-want0]',
    ),
    own(
        'split-half-strict',
        'T5.3',
        'a last wave exactly half full is given to stream-K (2 * rest > num_sms, not >=)',
        '4.3',
        '    elif rest == 0 or 2 * rest >= num_sms:\n',
        '    elif rest == 0 or 2 * rest > num_sms:\n',
        'test_stream_k_split[66-8-132-auto-want8]',
        'half-strict',
    ),
    own(
        'split-k1-sk',
        'T5.3',
        'stream_k_split splits tiles of a single k-block too',
        '4.3',
        '    if mode == "dp" or k_blocks <= 1:\n',
        '    if mode == "dp":\n',
        'test_stream_k_split[10-1-132-auto-want5]',
        'one-block-split',
    ),
    own(
        'right-bias-2n',
        'T5.4',
        "the right half given the left half's bias, half number 2 * pid_n",
        '5',
        '2 * pid_n + 1, BLOCK_N // 2, HAS_BIAS,',
        '2 * pid_n, BLOCK_N // 2, HAS_BIAS,',
        'test_store_tile_subtiled_bias_per_half[none]',
        'right-half-left-bias',
    ),
    own(
        'right-at-full-bn',
        'T5.4',
        "the right half stored at pid_n * BLOCK_N + BLOCK_N: the next tile's left half",
        '5',
        'c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right',
        'c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N], right',
        'test_store_tile_rounds_once_after_the_bias[2]',
    ),
    own(
        "descs-torch-product",
        "T5.2",
        "make_descriptors copies torch.matmul's product into C and hands the kernel a copy of C to write",
        "3.1",
        "    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])\n",
        "    c.copy_(torch.matmul(a, b.t() if b_kmajor else b))\n"
        "    c_desc = TensorDescriptor.from_tensor(aligned_copy(c), [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])\n",
        "test_matmul_data_parallel[45-37-83-3-row-major-torch.float16]",
        "torch-product",
    ),
    own(
        "c-desc-on-copy",
        "T5.2",
        "make_descriptors builds c_desc on an aligned copy of C: the kernel's C never reaches the caller",
        "3.1",
        "    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])\n",
        "    c_desc = TensorDescriptor.from_tensor(aligned_copy(c), [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])\n",
        "test_make_descriptors_boxes",
        "descriptor-other-tensor",
    ),
)
