"""Lesson T6's classic mistakes of moe_mlp (T6.4), the last rows of its explainer §8 table: t6_mistakes.py gathers
them right after its own, so the table keeps its order (one file would pass 400 lines)."""

from course.lesson_data import Mistake

# moe_mlp's two launches, up to the down launch's weights.
GATE_UP = 'routing, activation="swiglu", config=config)\n'
DOWN = "    return grouped_matmul(hidden, w_down, routing, "

MLP_TABLE = (
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
