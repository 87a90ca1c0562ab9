"""Lesson T6's classic mistakes of T6.4 (gate_up_product, then moe_mlp), the last rows of its explainer §8 table:
t6_mistakes.py gathers them right after its own, so the table keeps its order (one file would pass 400 lines)."""

from course.lesson_data import Mistake

# moe_mlp's two launches, up to the down launch's weights.
GATE_UP = 'routing, activation="swiglu", config=config)\n'
DOWN = "    return grouped_matmul(hidden, w_down, routing, "

GATE_UP_SUMS = (
    "        gate = tl.dot(a, w_desc.load([gate_row, k0]).T, gate)\n"
    "        up = tl.dot(a, w_desc.load([up_row, k0]).T, up)"
)
# Each box's product rounded to the input's dtype and added there: a sum kept in fp16.
GATE_UP_IN_FP16 = (
    "        gate = (gate.to(a.dtype) + tl.dot(a, w_desc.load([gate_row, k0]).T).to(a.dtype)).to(tl.float32)\n"
    "        up = (up.to(a.dtype) + tl.dot(a, w_desc.load([up_row, k0]).T).to(a.dtype)).to(tl.float32)"
)
# A loaded again for up: the same numbers, x read twice.
A_AGAIN = (
    "        gate = tl.dot(a, w_desc.load([gate_row, k0]).T, gate)\n"
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
    "        up = tl.dot(a, w_desc.load([up_row, k0]).T, up)"
)
MLP_TABLE = (
    Mistake(
        "gate-up-sum-in-fp16",
        "T6.4",
        "gate 和 up 的累加留在输入的 dtype（fp16）里：整层的结果舍入到 fp16 后看不出来",
        "gate and up summed in the input's dtype (fp16): after the layer's rounding to fp16 it does not show",
        "5.1",
        GATE_UP_SUMS,
        GATE_UP_IN_FP16,
        "test_gate_up_product_alone",
        "sum-in-fp16",
    ),
    Mistake(
        "gate-up-load-a-twice",
        "T6.4",
        "gate 和 up 各自读一遍 A 的块：数字一样，x 却读了两遍",
        "gate and up each load their own A box: the same numbers, x read twice",
        "5.1",
        GATE_UP_SUMS,
        A_AGAIN,
        "test_gate_up_product_alone",
        "a-read-twice",
    ),
    Mistake(
        "swiglu-swapped",
        "T6.4",
        "SwiGLU 写成了 silu(up) * gate",
        "SwiGLU written as silu(up) * gate",
        "5.1",
        "return gate * tl.sigmoid(gate) * up",
        "return up * tl.sigmoid(up) * gate",
        "test_gate_up_with_swiglu[torch.float16]",
        "swiglu-on-up",
    ),
    Mistake(
        "down-unweighted",
        "T6.4",
        "down 那次没有传 topk_weights",
        "the down launch is not given topk_weights",
        "5.2",
        "return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True",
        "return grouped_matmul(hidden, w_down, routing, None, combine=True",
        "test_moe_mlp_in_two_launches",
        "down-unweighted",
    ),
    Mistake(
        "weights-in-gate-up",
        "T6.4",
        "路由权重交给了 gate/up 那次启动（乘在 SwiGLU 之后的 h 上），down 那次没有：数字一样，h 却不再是专家自己的激活",
        "the routing weights given to the gate/up launch (scaling h after SwiGLU), not to down: the same numbers, "
        "but h is no longer the experts' own activation",
        "5.2",
        GATE_UP + DOWN + "topk_weights,",
        GATE_UP.replace("routing,", "routing, topk_weights,") + DOWN + "None,",
        "test_moe_mlp_in_two_launches",
        "weights-in-gate-up+down-unweighted",
    ),
)
