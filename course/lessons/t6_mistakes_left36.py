"""Lesson T6's mutants of our own from left36 (2026-12-05): slips of the kind "a block left in the wrong dtype" in
T6.4's epilogue, and a block's number taken for its first column.  A swiglu that takes sigmoid of an fp16 gate,
or a gate_up_product that hands its sums back in x's dtype, made Triton's math check refuse the block
(tl.sigmoid goes through tl.exp, which takes fp32 and fp64 alone), and the learner read Triton's raw words;
test_gate_up_with_swiglu now tells whose line made the block half precision (tests/t6/raised.py,
fail_if_math_dtype_refused), and test_gate_up_product_alone names sums returned rounded to fp16.  store_rows'
and combine_topk's columns started at the block's number were told by the cells written alone until
tests/t6/products.py's stored_elsewhere and combine_sums.py learnt them.  Only make check runs them (table=False,
not in §8); each must be caught by its test, whose message names its cause (LEFT36_CAUSES here).  The last two,
m_blocks counted in rows, are the lead's, from left36's report; gathered_rows' rows scaled by BLOCK_M is left36b's.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT36_CAUSES = {
    "swiglu-made-half": ("是 swiglu 自己把它们转成了半精度", "swiglu itself turned them to half precision"),
    "gate-up-handed-half": (
        "gate_up_product 交给 swiglu 的 gate 和 up 已经是",
        "gate_up_product handed swiglu gate and up already in",
    ),
    "gate-up-returned-fp16": ("gate_up_product 把它们舍入成了 fp16", "gate_up_product rounded them to fp16"),
    "cols-from-pid-n": ("列从 pid_n 本身开始了", "the columns started at pid_n itself"),
    "combine-cols-from-block": ("列块号 c 当成了第一列", "the column block's number c taken for its first column"),
    "first-box-alone": ("之后每一步 w 的 box 读到的都是零", "w's boxes after it gave zeros"),
    "combine-fixed-cast": ("结果在写回途中被转成了固定的", "was cast to a fixed"),
    "bound-m-blocks": ("循环的上界数的是 m 块，不是 tile", "the loop's bound counted m-blocks, not tiles"),
    "rows-scaled": ("行号被放大了", "the rows were scaled"),
    "m-blocks-are-rows": ("m_blocks 就是 counts，每个专家的行数", "m_blocks is counts, each expert's rows"),
    "m-blocks-rounded-rows": ("m_blocks 是行数向上取整到 BLOCK_M 的倍数", "m_blocks is the rows rounded up"),
}

SWIGLU = "    return gate * tl.sigmoid(gate) * up\n"
UP_DOT = "        up = tl.dot(a, w_desc.load([up_row, k0]).T, up)\n"
# gate_up_product's sums converted to x's dtype at the end of its body, as a GEMM's result is before its store
IN_X_DTYPE = UP_DOT + "    gate, up = gate.to(x_ptr.dtype.element_ty), up.to(x_ptr.dtype.element_ty)\n"

# gate_up_product's k loop and its A load (gathered_product has the same lines, with b = after them)
GATE_UP_LOOP = (
    "    for k0 in range(0, K, BLOCK_K):\n"
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
    "        gate ="
)

LEFT36 = (
    own(
        "left36-sigmoid-of-fp16-gate",
        "T6.4",
        "swiglu turns gate and up to fp16 and takes SwiGLU there: tl.sigmoid's tl.exp refuses fp16, and the "
        "learner read Triton's own words alone (left36)",
        "5.1",
        SWIGLU,
        "    g = gate.to(tl.float16)\n    return g * tl.sigmoid(g) * up.to(tl.float16)\n",
        "test_gate_up_with_swiglu[torch.float16]",
        "swiglu-made-half",
    ),
    own(
        "left36-sigmoid-of-bf16-gate",
        "T6.4",
        "swiglu takes sigmoid of gate turned to bf16 (the other half precision), up left float32: Triton's own "
        "words alone before (left36)",
        "5.1",
        SWIGLU,
        "    return gate * tl.sigmoid(gate.to(tl.bfloat16)) * up\n",
        "test_gate_up_with_swiglu[torch.float32]",
        "swiglu-made-half",
    ),
    own(
        "left36-gate-up-in-x-dtype-to-swiglu",
        "T6.4",
        "gate_up_product converts gate and up to x's dtype before returning them: swiglu's sigmoid, right "
        "itself, meets fp16; Triton's own words at swiglu's line alone before (left36)",
        "5.1",
        UP_DOT,
        IN_X_DTYPE,
        "test_gate_up_with_swiglu[torch.float16]",
        "gate-up-handed-half",
    ),
    own(
        "left36-gate-up-in-x-dtype",
        "T6.4",
        "gate_up_product converts gate and up to x's dtype before returning them: its own test gave the "
        "relative error alone (left36)",
        "5.1",
        UP_DOT,
        IN_X_DTYPE,
        "test_gate_up_product_alone",
        "gate-up-returned-fp16",
    ),
    # a block's number where its first element is meant: told by the cells written alone before
    own(
        "left36-store-columns-from-pid-n",
        "T6.3",
        "store_rows takes cols = pid_n + tl.arange(0, BLOCK_N), the block's number for its first column (left36)",
        "4.3",
        "    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    live = rows < row_end\n",
        "    cols = pid_n + tl.arange(0, BLOCK_N)\n    live = rows < row_end\n",
        "test_store_rows_alone[plain]",
        "cols-from-pid-n",
    ),
    own(
        "left36-combine-columns-from-block",
        "T6.3",
        "combine_topk takes cols = tl.program_id(1) + tl.arange(0, BLOCK_N), the column block's number for its "
        "first column (left36)",
        "4.4",
        "    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)\n",
        "    cols = tl.program_id(1) + tl.arange(0, BLOCK_N)\n",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float16]",
        "combine-cols-from-block",
    ),
    own(
        "left36-gate-up-k-in-blocks",
        "T6.4",
        "gate_up_product loops over range(0, tl.cdiv(K, BLOCK_K)), its k0 a k-block's number used as a column: "
        "the interpreter's raw 'block offset start must be 16-byte aligned' alone before (left36)",
        "5.1",
        GATE_UP_LOOP,
        GATE_UP_LOOP.replace("range(0, K, BLOCK_K)", "range(0, tl.cdiv(K, BLOCK_K))"),
        "test_gate_up_product_alone",
        "box-at-block-number",
    ),
    own(
        "left36-gate-box-at-k-times-bk",
        "T6.4",
        "gate_up_product loads gate's box at [gate_row, k0 * BLOCK_K], k0 an element offset already: every box "
        "after the first lies past K; the relative error alone before (left36)",
        "5.1",
        "        gate = tl.dot(a, w_desc.load([gate_row, k0]).T, gate)\n",
        "        gate = tl.dot(a, w_desc.load([gate_row, k0 * BLOCK_K]).T, gate)\n",
        "test_gate_up_product_alone",
        "first-box-alone",
    ),
    own(
        "left36-combine-stored-as-fp16",
        "T6.3",
        "combine_topk stores acc.to(tl.float16), a fixed dtype, into a float32 out: the cells' bits alone "
        "before (left36)",
        "4.4",
        "    tl.store(out_ptr + t * N + cols, acc.to(out_ptr.dtype.element_ty), mask=cols < N)\n",
        "    tl.store(out_ptr + t * N + cols, acc.to(tl.float16), mask=cols < N)\n",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "combine-fixed-cast",
    ),
    own(
        "left36-total-of-m-blocks",
        "T6.2",
        "grouped_tiles loops up to tl.sum(m_blocks), the m-blocks where the tiles (times num_pid_n) are meant: "
        "'the loop stops before it, with a tile count or a loop bound too small, say' before (left36)",
        "3.4",
        "    total = tl.max(tile_ends, axis=0)\n",
        "    total = tl.sum(m_blocks, axis=0)\n",
        "test_every_tile_of_every_expert_once",
        "bound-m-blocks",
    ),
    own(
        "left36-store-rows-from-begin-times-bm",
        "T6.3",
        "store_rows takes rows = row_begin * BLOCK_M + tl.arange(0, BLOCK_M), row_begin taken for a block's "
        "number: no row is live, nothing stored; 'cells that should be written were not' alone before (left36)",
        "4.3",
        "    rows = row_begin + tl.arange(0, BLOCK_M)\n    cols = pid_n * BLOCK_N",
        "    rows = row_begin * BLOCK_M + tl.arange(0, BLOCK_M)\n    cols = pid_n * BLOCK_N",
        "test_store_rows_alone[plain]",
        "rows-scaled",
    ),
    own(
        "lead36-m-blocks-are-counts",
        "T6.2",
        "expert_tile_counts takes m_blocks = counts, the rows where their m-blocks are meant; told by the expected "
        "and got lists alone before (left36's report), named by the lead",
        "3.3",
        "    m_blocks = tl.cdiv(counts, BLOCK_M)\n",
        "    m_blocks = counts\n",
        "test_tile_counts_and_places_alone",
        "m-blocks-are-rows",
    ),
    own(
        "lead36-m-blocks-rounded-rows",
        "T6.2",
        "expert_tile_counts takes m_blocks = cdiv(counts, BLOCK_M) * BLOCK_M, the rows rounded up to whole "
        "m-blocks where the m-blocks are meant; told by the expected and got lists alone before (left36's report)",
        "3.3",
        "    m_blocks = tl.cdiv(counts, BLOCK_M)\n",
        "    m_blocks = tl.cdiv(counts, BLOCK_M) * BLOCK_M\n",
        "test_tile_counts_and_places_alone",
        "m-blocks-rounded-rows",
    ),
    own(
        "left36b-gathered-rows-from-begin-times-bm",
        "T6.3",
        "gathered_rows takes rows = row_begin * BLOCK_M + tl.arange(0, BLOCK_M), row_begin taken for a block's "
        "number: no row is live; 'got []' alone before (left36b)",
        "4.1",
        "    rows = row_begin + tl.arange(0, BLOCK_M)\n    live = rows < row_end\n    if X_SORTED:",
        "    rows = row_begin * BLOCK_M + tl.arange(0, BLOCK_M)\n    live = rows < row_end\n    if X_SORTED:",
        "test_gathered_product_alone[gathered]",
        "rows-scaled",
    ),
)
