"""Lesson T6's mutants of our own from left14's pass (2026-12-05): four mistakes the suite caught with a first
message that said what it saw and named no cause, until the check named here learned to tell each one: each
expert's m-blocks counted on one BLOCK_M grid laid across all the sorted rows (tiles not starting afresh at the
expert's first row), the routing weight read at weights[slot // 2], acc rounded to fp16 before it is multiplied
by the weight (rounded to fp16 too), and GELU's sigmoid(1.702 * g) in place of silu in SwiGLU.  And one the whole
suite let through: scatter_slots' places narrowed to int16 (wrong past 32767 sorted rows), until
test_scatter_places_past_32767_rows launched scatter_slots alone past them.  Only make check
runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t6_mistakes.CAUSES, LEFT14_CAUSES here).  t6_mistakes.py gathers them last.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT14_CAUSES = {
    "m-blocks-on-one-grid": ("横跨所有专家的 BLOCK_M 网格", "on one BLOCK_M grid laid across all the sorted rows"),
    "weights-at-slot-half": ("乘的是 weights[slot // 2]", "scaled by weights[slot // 2]"),
    "weights-after-cast": ("再乘权重（fp32 或 fp16 的）", "then times the weight (fp32's or fp16's)"),
    "gelu-for-silu": ("GELU 的 sigmoid 近似", "GELU's sigmoid approximation"),
    "places-int16": ("截成 int16", "narrowed to int16"),
}

STORE_WEIGHT = "        acc = acc * tl.load(weights_ptr + slots, mask=live, other=0.0).to(tl.float32)[:, None]\n"

LEFT14 = (
    own(
        "left14-m-blocks-on-one-grid",
        "T6.2",
        "expert_tile_counts gives each expert the m-blocks its rows touch on one BLOCK_M grid over all the sorted "
        "rows (cdiv(end, BM) - start // BM), grouped_tiles starting tile pid_m at max(first row, (first row // BM + "
        "pid_m) * BM): every row is stored once, but the tiles do not start at the expert's first row; the message "
        "gave the m_blocks alone (left14)",
        "3.3",
        "    m_blocks = tl.cdiv(counts, BLOCK_M)\n",
        "    ends = tl.cumsum(counts, axis=0)\n"
        "    m_blocks = tl.where(counts > 0, tl.cdiv(ends, BLOCK_M) - (ends - counts) // BLOCK_M, 0)\n",
        "test_tile_counts_and_places_alone",
        "m-blocks-on-one-grid",
    ),
    own(
        "left14-weights-at-slot-half",
        "T6.3",
        "store_rows scales each row by weights[slot // 2] (the token of the slot at top_k = 2), not weights[slot]: "
        "the message gave a relative error alone (left14)",
        "4.3",
        STORE_WEIGHT,
        STORE_WEIGHT.replace("weights_ptr + slots,", "weights_ptr + slots // 2,"),
        "test_store_rows_alone[weighted]",
        "weights-at-slot-half",
    ),
    own(
        "left14-weights-after-cast-in-fp16",
        "T6.3",
        "store_rows casts acc to out's dtype, then multiplies by the weight cast to it too (fp16 times fp16): the "
        "message said the cells were not bit for bit right alone (left14)",
        "4.3",
        STORE_WEIGHT,
        "        acc = (acc.to(out_ptr.dtype.element_ty) * tl.load(weights_ptr + slots, mask=live, other=0.0)"
        ".to(out_ptr.dtype.element_ty)[:, None]).to(tl.float32)\n",
        "test_store_rows_alone[weighted]",
        "weights-after-cast",
    ),
    own(
        "left14-gelu-sigmoid-for-silu",
        "T6.4",
        "swiglu returns gate * sigmoid(1.702 * gate) * up, GELU's sigmoid approximation in place of silu: the "
        "message gave the error alone (left14)",
        "5.1",
        "    return gate * tl.sigmoid(gate) * up\n",
        "    return gate * tl.sigmoid(1.702 * gate) * up\n",
        "test_gate_up_with_swiglu[torch.float16]",
        "gelu-for-silu",
    ),
    own(
        "left14-slot-pos-int16",
        "T6.1",
        "scatter_slots stores each slot's place narrowed to int16 in slot_pos (pos.to(tl.int16)): right below 32767 "
        "sorted rows, wrapped past them; the whole suite let it through on the CPU (left14)",
        "2.1",
        "    tl.store(slot_pos_ptr + slots, pos, mask=valid)\n",
        "    tl.store(slot_pos_ptr + slots, pos.to(tl.int16), mask=valid)\n",
        "test_scatter_places_past_32767_rows",
        "places-int16",
    ),
)
