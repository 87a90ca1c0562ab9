"""Lesson T6's mutants of our own from the fix9 hunt (2026-12-04): each was let through, or caught with a
message that named no cause or a wrong one, until the check named with it was added or mended.  Only make
check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a
key of t6_mistakes.CAUSES, FIX9_CAUSES here).  t6_mistakes.py gathers them last, and their causes into its
CAUSES (t6_mistakes_causes.py's silu-in-fp16 names one of them too).
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
FIX9_CAUSES = {
    "swiglu-result-fp16": ("SwiGLU 的结果被舍入成了 fp16", "SwiGLU's result was rounded to fp16"),
    "silu-rounded-fp16": ("silu(gate) 被舍入成了 fp16", "silu(gate) was rounded to fp16"),
    "silu-in-fp16": ("silu 是在 fp16 里算的", "silu was computed in fp16"),
    "swiglu-inputs-fp16": (
        "gate 和 up 在 SwiGLU 之前被舍入成了 fp16",
        "gate and up were rounded to fp16 before SwiGLU",
    ),
}

SWIGLU = "    return gate * tl.sigmoid(gate) * up\n"

FIX9 = (
    own(
        "fix9-swiglu-result-in-fp16",
        "T6.4",
        "swiglu rounds its result to fp16 (and back to float32): float32 inputs come out off by fp16's rounding; "
        "the message gave a relative error alone (fix9)",
        "5.1",
        SWIGLU,
        "    return (gate * tl.sigmoid(gate) * up).to(tl.float16).to(tl.float32)\n",
        "test_gate_up_with_swiglu[torch.float32]",
        "swiglu-result-fp16",
    ),
    own(
        "fix9-silu-rounded-to-fp16",
        "T6.4",
        "swiglu rounds silu(gate) to fp16 before it multiplies up in float32; the message gave a relative error "
        "alone (fix9)",
        "5.1",
        SWIGLU,
        "    return (gate * tl.sigmoid(gate)).to(tl.float16).to(tl.float32) * up\n",
        "test_gate_up_with_swiglu[torch.float32]",
        "silu-rounded-fp16",
    ),
    own(
        "fix9-swiglu-of-fp16-gate-and-up",
        "T6.4",
        "swiglu rounds gate and up to fp16 first, then computes SwiGLU of them in float32; the message gave a "
        "relative error alone (fix9)",
        "5.1",
        SWIGLU,
        "    g = gate.to(tl.float16).to(tl.float32)\n    return g * tl.sigmoid(g) * up.to(tl.float16).to(tl.float32)\n",
        "test_gate_up_with_swiglu[torch.float32]",
        "swiglu-inputs-fp16",
    ),
)
