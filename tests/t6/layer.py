"""T6.4's layer as the tests call it: its inputs (layer_inputs), moe_mlp's output with its own grouped_matmul
calls watched (layer_output, which names the call check_expert_inputs refused), and the float64 result
(layer_want).  test_moe_mlp.py and test_moe_mlp_calls.py use them."""

import pytest
import torch

from course.messages import fail

from .common import T6, raised_in, reference, same_memory
from support import DEVICE


def layer_inputs(tokens, top_k, experts, K, F):
    """x [tokens, K], w_gate_up [E, 2F, K], w_down [E, K, F] (fp16, scaled to keep the sums near 1) and
    topk_weights [tokens, top_k]: an MoE layer's inputs beside its ids."""
    x = torch.randn(tokens, K, device=DEVICE).half()
    w_gate_up = (torch.randn(experts, 2 * F, K, device=DEVICE) / K**0.5).half()
    w_down = (torch.randn(experts, K, F, device=DEVICE) / F**0.5).half()
    return x, w_gate_up, w_down, torch.rand(tokens, top_k, device=DEVICE)


def layer_output(t6, x, w_gate_up, w_down, ids, weights, config=None):
    """moe_mlp's y (given config, where there is one).  Where check_expert_inputs refused a grouped_matmul
    call of moe_mlp's own (the layer's input is valid), the test fails here, naming the call, and the
    cause where it is seen: h, [T*top_k, F] in sorted order, handed to the down launch without x_sorted=True;
    or the gate/up call made without activation="swiglu" (its h then [T*top_k, 2F])."""
    calls, real, routed, route = [], t6.grouped_matmul, [], t6.route

    def recorded(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    def recorded_route(topk_ids, num_experts, *args, **kwargs):
        routed.append(num_experts)
        return route(topk_ids, num_experts, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(t6, "grouped_matmul", recorded)
        patch.setattr(t6, "route", recorded_route)
        try:
            given = {"config": config} if config else {}
            return t6.moe_mlp(x, w_gate_up, w_down, ids, weights, **given)
        except (ValueError, TypeError) as e:
            refused = f"{type(e).__name__}: {str(e)[:200]}"
            if routed and raised_in(e, t6, "check_routing_inputs"):  # route refused the layer's valid ids
                experts, other = w_gate_up.shape[0], [n for n in routed if n != w_gate_up.shape[0]]
                fail(
                    T6,
                    f"moe_mlp 拿到的专家号都在 [0, {experts}) 里，route 却拒绝了它们：{refused}"
                    + (
                        f"；route 收到的专家数是 {other[0]!r}，不是 w_gate_up 的 {experts} 个（w_gate_up.shape[0]）"
                        if other
                        else ""
                    ),
                    f"moe_mlp's ids all lie in [0, {experts}), yet route refused them: {refused}"
                    + (
                        f"; route was given {other[0]!r} experts, not w_gate_up's {experts} (w_gate_up.shape[0])"
                        if other
                        else ""
                    ),
                    "5.2",
                )
            if not calls or not raised_in(e, t6, "check_expert_inputs"):
                raise
    args, kwargs = calls[-1]
    given_x, given_w = (args + (None, None))[:2]
    given_x, given_w = kwargs.get("x", given_x), kwargs.get("w", given_w)
    slots = ids.numel()
    unsorted = (
        same_memory(given_w, w_down)
        and not kwargs.get("x_sorted")
        and isinstance(given_x, torch.Tensor)
        and given_x.dim() == 2
        and given_x.shape[0] == slots
    )
    if unsorted:
        fail(
            T6,
            f"moe_mlp：down 那次 grouped_matmul 没有传 x_sorted=True。h 是 gate/up 那次按排好的顺序写出的，"
            f"每个 slot 一行（T*top_k = {slots} 行），不传 x_sorted 时 x 每个 token 一行（{ids.shape[0]} 行），"
            f"所以 check_expert_inputs 拒绝了它：{refused}",
            f"moe_mlp: the down launch's grouped_matmul was called without x_sorted=True. h, which the gate/up "
            f"launch wrote in sorted order, has a row per slot (T*top_k = {slots} rows), where x without x_sorted "
            f"has a row per token ({ids.shape[0]} rows), so check_expert_inputs refused it: {refused}",
            "5.2",
        )
    # the gate/up call (w_gate_up's) made without activation="swiglu": its h has 2F columns, not F
    plain = [a for a, k in calls[:-1] if same_memory(k.get("w", (a + (None, None))[1]), w_gate_up)]
    plain = bool(plain) and len(calls) > 1 and all(k.get("activation") != "swiglu" for _, k in calls[:-1])
    # the gate/up call made with combine=True: its h is one row per token, summed over the top-k, not per slot
    combined = any(k.get("combine") for a, k in calls[:-1] if same_memory(k.get("w", (a + (None, None))[1]), w_gate_up))
    experts = w_gate_up.shape[0]
    other = [n for n in routed if n != experts]  # route given another expert count than w_gate_up's
    fail(
        T6,
        f"moe_mlp 第 {len(calls)} 次调用 grouped_matmul 时被 check_expert_inputs 拒绝了（moe_mlp 拿到的输入是合法的，"
        f"这次调用的参数是它自己给的）：{refused}"
        + (
            '；gate/up 那次调用没有传 activation="swiglu"：它写出的 h 有 2F 列（gate 和 up 两半），'
            "不是 SwiGLU 之后的 F 列"
            if plain
            else ""
        )
        + (
            f"；route 收到的专家数是 {other[0]!r}，不是 w_gate_up 的 {experts} 个（w_gate_up.shape[0]）"
            if other
            else ""
        )
        + (
            "；gate/up 那次调用传了 combine=True：它写出的 h 每个 token 一行（top_k 行已经合并），"
            "down 要的是每个 slot 一行、按排好的顺序（不合并）"
            if combined
            else ""
        ),
        f"moe_mlp's call {len(calls)} of grouped_matmul was refused by check_expert_inputs (moe_mlp's own input is "
        f"valid; that call's arguments are moe_mlp's): {refused}"
        + (
            '; the gate/up call was made without activation="swiglu": the h it wrote has 2F columns (gate and up), '
            "not the F of SwiGLU's output"
            if plain
            else ""
        )
        + (f"; route was given {other[0]!r} experts, not w_gate_up's {experts} (w_gate_up.shape[0])" if other else "")
        + (
            "; the gate/up call was made with combine=True: the h it wrote has a row per token (its top_k rows "
            "summed), where down wants a row per slot, in sorted order (not combined)"
            if combined
            else ""
        ),
        "5.2",
    )


def layer_want(x, w_gate_up, w_down, ids, weights):
    """The layer's float64 output, [tokens, K]: each slot's expert MLP on its token, weighted, summed per token."""
    tokens, top_k = ids.shape
    K = w_down.shape[1]
    hidden = reference(x, w_gate_up, ids, activation="swiglu", combine=False)
    flat = ids.reshape(-1).cpu()
    by_slot = torch.empty_like(hidden)
    by_slot[torch.sort(flat, stable=True).indices] = hidden
    want = torch.zeros(tokens, K, dtype=torch.float64)
    for s in range(tokens * top_k):
        want[s // top_k] += weights.reshape(-1)[s].double().cpu() * (w_down[flat[s]].double().cpu() @ by_slot[s])
    return want
