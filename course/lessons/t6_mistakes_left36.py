"""Lesson T6's mutants of our own from left36 (2026-12-05): slips of the kind "a block left in the wrong dtype" in
T6.4's epilogue.  A swiglu that takes sigmoid of an fp16 gate, or a gate_up_product that hands its sums back in
x's dtype, made Triton's math check refuse the block (tl.sigmoid goes through tl.exp, which takes fp32 and fp64
alone), and the learner read Triton's raw words; test_gate_up_with_swiglu now tells whose line made the block
half precision (tests/t6/raised.py, fail_if_math_dtype_refused), and test_gate_up_product_alone names sums
returned rounded to fp16.  Only make check runs them (table=False, not in §8); each must be caught by its test,
whose message names its cause (LEFT36_CAUSES here).  t6_mistakes.py was being split by another helper while
these were written, so they reach MISTAKES through t6_mistakes_hunt16.py's HUNT16 for now.
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
}

SWIGLU = "    return gate * tl.sigmoid(gate) * up\n"
UP_DOT = "        up = tl.dot(a, w_desc.load([up_row, k0]).T, up)\n"
# gate_up_product's sums converted to x's dtype at the end of its body, as a GEMM's result is before its store
IN_X_DTYPE = UP_DOT + "    gate, up = gate.to(x_ptr.dtype.element_ty), up.to(x_ptr.dtype.element_ty)\n"

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
)
