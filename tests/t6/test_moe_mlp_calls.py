"""T6.4 (advanced): moe_mlp called as a model calls it: on an x that is a view, and again on the same topk_ids
tensor with its ids changed in place (after test_moe_mlp.py, whose checks of the two launches name more)."""

import pytest

from course.messages import fail

from .common import T6, make_ids, same_memory, watch_grouped
from .layer import layer_inputs, layer_output, layer_want
from support import rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


@pytest.mark.t6_4
def test_moe_mlp_reads_x_as_given_and_routes_each_call(t6, monkeypatch):
    """moe_mlp on an x that is a column-major view: the gate/up launch reads the caller's x itself,
    through its strides (§4.1: no copy, and x.contiguous() of a view is one).  Then the same topk_ids
    tensor, its ids changed in place (as a CUDA graph's static input is), called again: nothing of the
    first call (a routing kept by the ids' address, say) may answer the second, nor change the first's result."""
    tokens, top_k, experts, K, F = 11, 2, 4, 32, 16
    ids = make_ids("balanced", tokens, top_k, experts)
    x, w_gate_up, w_down, weights = layer_inputs(tokens, top_k, experts, K, F)
    x = x.t().contiguous().t()  # the same values, column-major: strides (1, tokens)
    watch = watch_grouped(t6, monkeypatch)
    y = layer_output(t6, x, w_gate_up, w_down, ids, weights)
    monkeypatch.undo()
    launched = watch.of("moe_kernel")
    if launched and not same_memory(launched[0].args.get("x_ptr"), x):
        fail(
            T6,
            "moe_mlp，x 是列主序的视图：gate/up 那次启动读的不是调用者的 x：kernel 按 x 的 stride 直接读它，"
            "不拷贝（x.contiguous() 对视图就是一次拷贝）",
            "moe_mlp, x a column-major view: the gate/up launch does not read the caller's x: the kernel reads it "
            "through its strides, no copy (x.contiguous() of a view is one)",
            "5.2",
            "4.1",
        )
    first = layer_want(x, w_gate_up, w_down, ids, weights)
    if y.shape != first.shape:
        fail(
            T6,
            f"moe_mlp 返回的形状是 {tuple(y.shape)}，应当是 [T, K] = {tuple(first.shape)}",
            f"moe_mlp returned shape {tuple(y.shape)}, where [T, K] = {tuple(first.shape)} is expected",
            "5.2",
        )
    err = rel_err(y, first)
    if err > 4e-3:
        fail(
            T6,
            f"moe_mlp，x 是列主序的视图：和 float64 的结果差 {err:.2e}（相对）",
            f"moe_mlp, x a column-major view: off from float64 by {err:.2e} (relative)",
            "5.2",
        )
    ids.copy_(make_ids("skewed", tokens, top_k, experts))
    y2 = layer_output(t6, x, w_gate_up, w_down, ids, weights)
    err = rel_err(y2, layer_want(x, w_gate_up, w_down, ids, weights)) if y2.shape == first.shape else float("inf")
    if err > 4e-3:
        stale = y2.shape == first.shape and rel_err(y2, first) <= 4e-3
        fail(
            T6,
            f"moe_mlp：同一个 topk_ids 张量，就地改了专家号再调用一次，和 float64 的结果差 {err:.2e}（相对）"
            + ("：它给出的正是第一次那些 ids 的结果，第一次调用的东西（比如路由）被留下来又用了" if stale else ""),
            f"moe_mlp: the same topk_ids tensor, its ids changed in place, called again: off from float64 by "
            f"{err:.2e} (relative)"
            + (
                ": it gave the first call's ids' output, so something of that call (its routing, say) was kept"
                if stale
                else ""
            ),
            "5.2",
        )
    if rel_err(y, first) > 4e-3:  # the first call's result, which the caller still holds, changed by the second
        shared = same_memory(y, y2)
        fail(
            T6,
            "moe_mlp：第二次调用改动了第一次返回的结果（调用者还拿着它）"
            + ("：两次返回的是同一块内存，每次调用要返回新的张量" if shared else ""),
            "moe_mlp: the second call changed the result the first returned (which the caller still holds)"
            + (": both calls returned the same memory; each call returns a new tensor" if shared else ""),
            "5.2",
        )
