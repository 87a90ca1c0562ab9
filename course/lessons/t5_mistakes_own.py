"""Lesson T5's mutants of our own that are no fix-up ordering mistake: holes the suite once let
through in the data-parallel loop (T5.1) and the TMA epilogue (T5.2).  Only make check runs them
(table=False, not in §8).  Each must be caught by its test, whose message names its cause (a key
of t5_mistakes.CAUSES) or, for cause "", none.  Kept beside t5_mistakes.py, which gathers them
after the table's mistakes and the fix-up's (t5_mistakes_fixup.py): one file would be 460 lines.
"""

from course.lesson_data import Mistake

# The head of data_parallel_tiles's loop: tile_coords is called twice in the reference, once here.
# The table's mistakes (t5_mistakes.py) change these lines too, and import them from here.
LOOP = "for tile_id in tl.range(first_tile + tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN):\n"
COORDS = "        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)\n"


def own(key, step, en, section, old, new, test, cause=""):
    """A mutant of our own: make check runs it, §8 does not show it (the words are for make check's report)."""
    return Mistake(key, step, en, en, section, old, new, test, cause, table=False)


TMA_READY = (
    '    if tma_problem(b, "b") and b.shape[1] > 1 and tma_problem(b.t(), "b.t()") is None:\n'
    "        b, b_kmajor = b.t(), True\n"
    '    operands = {"a": a, "b": b}\n'
    "    for name, t in operands.items():\n"
    "        problem = tma_problem(t, name)\n"
    "        if problem and not fallback:\n"
    '            raise ValueError(f"matmul: TMA cannot read {problem}")\n'
    "        if problem:\n"
    "            operands[name] = aligned_copy(t)\n"
    '    return operands["a"], operands["b"], b_kmajor\n'
)
WHOLE_TILE_EPILOGUE = "acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)"
RIGHT_HALF = (
    "        right = bias_and_activation(right, bias_ptr, N, stride_bias, 2 * pid_n + 1, BLOCK_N // 2, HAS_BIAS,\n"
    "                                    ACTIVATION)\n"
)
OWN = (
    own(
        "loop-start-without-pid",
        "T5.1",
        "every program's loop starts at first_tile: each of the first tiles is done by all programs",
        "2.2",
        LOOP,
        LOOP.replace("first_tile + tl.program_id(0)", "first_tile"),
        "test_every_tile_once_over_many_grids[plain]",
        "loop-counts",
    ),
    own(
        "loop-step-doubled",
        "T5.1",
        "the loop steps by 2 * NUM_PROGS: every other round of tiles is left undone",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS,", "num_tiles, 2 * NUM_PROGS,"),
        "test_every_tile_once_over_many_grids[plain]",
        "loop-counts",
    ),
    own(
        "epilogue-no-bias",
        "T5.2",
        "the whole-tile epilogue leaves the bias out",
        "3.3",
        WHOLE_TILE_EPILOGUE,
        WHOLE_TILE_EPILOGUE.replace("HAS_BIAS", "False"),
        "test_store_tile_bias_and_activation[gelu]",
        "no-bias",
    ),
    own(
        "epilogue-no-activation",
        "T5.2",
        "the whole-tile epilogue leaves the activation out",
        "3.3",
        WHOLE_TILE_EPILOGUE,
        WHOLE_TILE_EPILOGUE.replace("ACTIVATION)", '"none")'),
        "test_store_tile_bias_and_activation[gelu]",
        "no-activation",
    ),
    own(
        "epilogue-bias-by-pid-m",
        "T5.2",
        "the whole-tile epilogue indexes the bias by pid_m",
        "3.3",
        WHOLE_TILE_EPILOGUE,
        WHOLE_TILE_EPILOGUE.replace("pid_n", "pid_m"),
        "test_store_tile_bias_and_activation[none]",
        "bias-by-pid-m",
    ),
    own(
        "align-to-8-bytes",
        "T5.2",
        "tma_problem checks the base address against 8 bytes, not 16",
        "3.2",
        "if t.data_ptr() % 16:",
        "if t.data_ptr() % 8:",
        "test_tma_problem_names_the_tensor_and_the_rule[fp16 base 8 bytes past 16]",
    ),
    own(
        "kmajor-unchecked",
        "T5.2",
        "tma_ready reads any column-major b K-major without checking b.t() against the rules",
        "3.2",
        TMA_READY,
        TMA_READY.replace(
            'if tma_problem(b, "b") and b.shape[1] > 1 and tma_problem(b.t(), "b.t()") is None:',
            "if b.stride(0) == 1 and b.shape[1] > 1:  # column-major: W itself, read K-major as it is",
        )
        .replace('operands = {"a": a, "b": b}', 'operands = {"a": a} if b_kmajor else {"a": a, "b": b}')
        .replace('operands["b"]', 'operands.get("b", b)'),
        "test_tma_ready_copies_or_refuses[b = W.t(), W fp16 (48, 45)-<lambda>-<lambda>-b]",
        "kmajor-unchecked",
    ),
    own(
        "never-copies",
        "T5.2",
        "tma_ready never copies an operand that breaks a rule",
        "3.2",
        "            operands[name] = aligned_copy(t)\n",
        "            pass\n",
        "test_empty_k_gives_zeros[6-5-0]",
        "descriptor-refused",
    ),
    own(
        "left-half-bias",
        "T5.4",
        "the left half's bias indexed by pid_n, not 2 * pid_n",
        "5",
        "left = bias_and_activation(left, bias_ptr, N, stride_bias, 2 * pid_n,",
        "left = bias_and_activation(left, bias_ptr, N, stride_bias, pid_n,",
        "test_store_tile_subtiled_bias_per_half[none]",
        "left-half-bias",
    ),
    own(
        "right-half-no-activation",
        "T5.4",
        "the right half without the activation",
        "5",
        RIGHT_HALF,
        RIGHT_HALF.replace("ACTIVATION)", '"none")'),
        "test_store_tile_subtiled_bias_per_half[gelu]",
    ),
    own(
        "right-half-at-left",
        "T5.4",
        "the right half stored where the left one goes",
        "5",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], right",
        "test_store_tile_subtiled[37-48-torch.float16]",
    ),
)


OWN += (
    own(
        "a-box-turned",
        "T5.2",
        "A's box given as [BLOCK_K, BLOCK_M]: the kernel given for a decode step crashes on it",
        "3.1",
        "a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])",
        "a_desc = TensorDescriptor.from_tensor(a, [BLOCK_K, BLOCK_M])",
        "test_decode_turned_around[1-70-45-3-row-major-torch.float16]",
        "boxes-asked-again",  # named since left13 (t5_mistakes_left13.py)
    ),
)

OWN += (
    own(
        "dp-k-blocks-floor",
        "T5.1",
        "the tile loop sums K // BLOCK_K k-blocks, dropping K's ragged tail",
        "2.2",
        "    k_blocks = tl.cdiv(K, BLOCK_K)\n    for tile_id in tl.range(first_tile",
        "    k_blocks = K // BLOCK_K\n    for tile_id in tl.range(first_tile",
        "test_every_tile_once_over_many_grids[plain]",
        "one-k-block-short",
    ),
    own(
        "dp-stride-one-more",
        "T5.1",
        "the tile loop steps by NUM_PROGS + 1",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS,", "num_tiles, NUM_PROGS + 1,"),
        "test_a_program_does_several_tiles",
        "loop-counts",
    ),
    own(
        "dp-coords-swapped",
        "T5.1",
        "tile_coords's answer unpacked as (pid_n, pid_m)",
        "2.2",
        LOOP + COORDS,
        LOOP + COORDS.replace("pid_m, pid_n =", "pid_n, pid_m ="),
        "test_every_tile_once_over_many_grids[plain]",
        "coords-swapped",
    ),
)

# t5hunt (2026-12-02): holes the suite let through until the checks named with each were added
OWN += (
    own(
        "dp-past-num-tiles",
        "T5.1",
        "the tile loop runs to num_tiles + first_tile: programs do tile ids the problem lacks",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS,", "num_tiles + first_tile, NUM_PROGS,"),
        "test_every_tile_once_over_many_grids[plain]",
    ),
    own(
        "rows-as-4-byte",
        "T5.2",
        "tma_problem takes every element as 4 bytes: fp16 rows of 72 bytes pass",
        "3.2",
        "    size = t.element_size()\n",
        "    size = 4\n",
        "test_tma_problem_names_the_tensor_and_the_rule[fp16 (8, 36): rows of 72 bytes]",
    ),
    own(
        "one-column-unchecked",
        "T5.2",
        "tma_problem skips the stride-1 rule for a single column",
        "3.2",
        "    if t.stride(1) != 1:\n",
        "    if t.stride(1) != 1 and t.shape[1] > 1:\n",
        "test_tma_problem_names_the_tensor_and_the_rule[one column of every other]",
    ),
    own(
        "padded-views-copied",
        "T5.2",
        "tma_ready copies every operand that is not contiguous, legal padded views too",
        "3.2",
        "        if problem:\n            operands[name] = aligned_copy(t)\n",
        "        if problem or not t.is_contiguous():\n            operands[name] = aligned_copy(t)\n",
        "test_tma_ready_leaves_legal_views_alone",
    ),
    own(
        "kmajor-contiguous-w-only",
        "T5.2",
        "tma_ready reads b K-major only when W is contiguous: a padded W is copied",
        "3.2",
        'tma_problem(b, "b") and b.shape[1] > 1 and tma_problem(b.t(), "b.t()") is None',
        'tma_problem(b, "b") and b.shape[1] > 1 and b.t().is_contiguous() and tma_problem(b.t(), "b.t()") is None',
        "test_tma_ready_leaves_legal_views_alone",
    ),
    own(
        "epilogue-cast-early",
        "T5.2",
        "the whole-tile epilogue casts the sum to C's dtype before adding the bias",
        "3.3",
        WHOLE_TILE_EPILOGUE,
        WHOLE_TILE_EPILOGUE.replace("(acc, bias_ptr", "(acc.to(c_desc.dtype), bias_ptr"),
        "test_store_tile_rounds_once_after_the_bias[1]",
        "cast-before-bias",
    ),
    own(
        "right-half-whole-tiles-only",
        "T5.4",
        "the right half stored only when the whole tile lies inside C",
        "5",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))\n",
        "        if pid_n * BLOCK_N + BLOCK_N <= N:\n"
        "            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))\n",
        "test_store_tile_subtiled[37-56-torch.float16]",
    ),
)

# t5learner2 (2026-12-02): a learner's mistakes whose messages named another cause, or none, until now
OWN += (
    own(
        "subtile-even-odd",
        "T5.4",
        "the tile reshaped to (BLOCK_M, BLOCK_N // 2, 2) and split: even and odd columns, not two halves",
        "5",
        "        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))\n",
        "        halves = tl.reshape(acc, (BLOCK_M, BLOCK_N // 2, 2))\n",
        "test_store_tile_subtiled[37-48-torch.float16]",
        "even-odd-halves",
    ),
    own(
        "flag-plain-store",
        "T5.3",
        "the flag raised by a plain tl.store, not a release atomic",
        "4.2",
        '    tl.atomic_xchg(flags_ptr + pid, 1, sem="release")\n',
        "    tl.store(flags_ptr + pid, 1)\n",
        "test_publish_and_collect_memory_order",
        "flag-plain-store",
    ),
    own(
        "b-descriptor-on-view",
        "T5.2",
        "make_descriptors builds a K-major B's descriptor on b.t(), the (K, N) view, not on the (N, K) tensor",
        "3.1",
        "TensorDescriptor.from_tensor(b, [BLOCK_N, BLOCK_K] if b_kmajor else [BLOCK_K, BLOCK_N])",
        "TensorDescriptor.from_tensor(b.t() if b_kmajor else b, [BLOCK_K, BLOCK_N])",
        "test_matmul_data_parallel[45-37-83-3-b = W.t()-torch.float16]",
        "descriptor-elsewhere",
    ),
    own(
        "k-offset-in-blocks",
        "T5.2",
        "k_block_loop loads at column kb, the k-block's number, not at its first element kb * BLOCK_K",
        "3.1",
        "        off_k = kb * BLOCK_K\n",
        "        off_k = kb\n",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "offset-in-blocks",
    ),
    own(
        "sk-run-past-total",
        "T5.3",
        "sk_run gives the extra k-block to programs 0..extra, one too many: the last run ends past total",
        "4.1",
        "    end = begin + base + (pid < extra).to(tl.int32)\n",
        "    end = begin + base + (pid <= extra).to(tl.int32)\n",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-45-37-160-3]",
        "past-stream-k",
    ),
    own(
        "sk-collect-slot-plus-one-whole",
        "T5.3",
        "sk_collect_partials reads program p's partial from slot p + 1, seen in the whole kernel with the workspace "
        "filled with NaN (the message had said: a tile was never written, or a load read outside A or B)",
        "4.2",
        "        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs",
        "        acc += tl.load(partials_ptr + (p + 1) * (BLOCK_M * BLOCK_N) + offs",
        "test_stream_k_in_any_program_order[32-32-320-5-reversed]",
        "nan-from-workspace",
    ),
    own(
        "descriptor-padding-zeros",
        "T5.2",
        "make_descriptors builds a_desc with padding=\"zeros\" (torch's padding_mode word), which TensorDescriptor "
        "refuses (the message had said make_descriptors built a descriptor on some other tensor)",
        "3.1",
        "    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])\n",
        '    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K], padding="zeros")\n',
        "test_matmul_data_parallel[45-37-83-3-row-major-torch.float16]",
        "descriptor-argument",
    ),
)
