"""Lesson T5's mutants of our own from the hunt for messages that named a symptom alone (2026-12-03):
each was caught, but its message said what differed, not why, where the test could see why.  Only
make check runs them (table=False, not in §8); each must be caught by its test, whose message names
its cause (a key of t5_mistakes.CAUSES, DETECTED_CAUSES here) or, for cause "", none.  t5_mistakes.py
gathers them last, and their causes into its CAUSES (one names the cause of one of its own mutants).
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
DETECTED_CAUSES = {
    "partial-rounded": ("槽里逐位是舍入成", "the slot holds, bit for bit, the partial rounded to"),
    "ready-kept": ("返回的 b 是上一次调用", "an earlier call's result was kept"),
    "descriptors-kept": ("那次的结果被留下来", "that call's result was kept"),
    "k-block-left-out": ("每个 tile 的最后一个 k-block 都没有加进去", "every tile's last k-block was left out"),
    "cast-before-bias": ("和在加 bias 之前就转成了 fp16", "the sum was cast to fp16 before the bias was added"),
}


# tma_ready's body in the reference, from its first line to its return.
READY = (
    '    b_kmajor = False\n'
    '    if tma_problem(b, "b") and b.shape[1] > 1 and tma_problem(b.t(), "b.t()") is None:\n'
    '        b, b_kmajor = b.t(), True\n'
    '    operands = {"a": a, "b": b}\n'
    '    for name, t in operands.items():\n'
    '        problem = tma_problem(t, name)\n'
    '        if problem and not fallback:\n'
    '            raise ValueError(f"matmul: TMA cannot read {problem}")\n'
    '        if problem:\n'
    '            operands[name] = aligned_copy(t)\n'
    '    return operands["a"], operands["b"], b_kmajor\n'
)
# The result kept per shapes on the function itself, and handed out again for other tensors of those shapes.
READY_KEPT = (
    '    kept = tma_ready.__dict__.setdefault("kept", {})\n'
    "    key = (tuple(a.shape), tuple(b.shape), a.dtype, fallback)\n"
    "    if key in kept:\n"
    "        return kept[key]\n"
    + READY.replace(
        '    return operands["a"], operands["b"], b_kmajor\n',
        '    kept[key] = operands["a"], operands["b"], b_kmajor\n    return kept[key]\n',
    )
)
DESCRIPTORS = (
    "    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])\n"
    "    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_N, BLOCK_K] if b_kmajor else [BLOCK_K, BLOCK_N])\n"
    "    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])\n"
    "    # ---- T5.2 end ----\n"
    "    return a_desc, b_desc, c_desc\n"
)
DESCRIPTORS_KEPT = (
    '    kept = make_descriptors.__dict__.setdefault("kept", {})\n'
    "    key = (a.shape, b.shape, c.shape, b_kmajor, BLOCK_M, BLOCK_N, BLOCK_K, EPILOGUE_SUBTILE)\n"
    "    if key not in kept:\n"
    "        kept[key] = (TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K]),\n"
    "                     TensorDescriptor.from_tensor(b, [BLOCK_N, BLOCK_K] if b_kmajor else [BLOCK_K, BLOCK_N]),\n"
    "                     TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE]))\n"
    "    # ---- T5.2 end ----\n"
    "    return kept[key]\n"
)

CAUSES_NAMED = (
    own(
        "partial-stored-in-fp16",
        "T5.3",
        "sk_publish_partial stores acc.to(tl.float16): the float32 slot holds the partial rounded to fp16, and "
        "the owner adds rounded partials; the message gave the count of cells that differ alone",
        "4.2",
        "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n",
        "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc.to(tl.float16))\n",
        "test_sk_publish_partial_alone",
        "partial-rounded",
    ),
    own(
        "ready-kept-across-calls",
        "T5.2",
        "tma_ready keeps its result per (shapes, dtype, fallback) on the function and returns it again: a later "
        "call with other tensors of those shapes gets the first call's operands; the message said the operand "
        "was not returned as it is",
        "3.2",
        READY,
        READY_KEPT,
        "test_tma_ready_leaves_legal_views_alone",
        "ready-kept",
    ),
    own(
        "descriptors-kept-across-calls",
        "T5.2",
        "make_descriptors keeps its descriptors per (shapes, boxes) on the function and returns them again: a "
        "later call with other tensors of those shapes gets descriptors of the first call's tensors (matmul "
        "then reads and writes those); no test called it twice with one key, and the products' message gave "
        "the error alone",
        "3.1",
        DESCRIPTORS,
        DESCRIPTORS_KEPT,
        "test_make_descriptors_boxes",
        "descriptors-kept",
    ),
)
