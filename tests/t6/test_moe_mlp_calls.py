"""T6.4 (advanced): moe_mlp called as a model calls it: on an x that is a view, and again on the same topk_ids
tensor with its ids changed in place, and with top_k = 1 (after test_moe_mlp.py, whose checks of the two
launches name more)."""

import pytest
import torch

from course.messages import fail

from .common import T6, make_ids, same_memory, watch_grouped
from .layer import layer_inputs, layer_output, layer_want
from support import DEVICE, rel_err

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


@pytest.mark.t6_4
def test_moe_mlp_with_one_expert_per_token(t6, monkeypatch):
    """top_k = 1 (a Switch layer): one slot per token, so the combine sums a single row, yet the down launch
    still writes by slot, and combine_topk puts the rows in token order (not torch, after the launches)."""
    tokens, top_k, experts, K, F = 9, 1, 3, 32, 16
    ids = torch.tensor([[2], [0], [1], [2], [0], [0], [1], [2], [0]], device=DEVICE)
    x, w_gate_up, w_down, weights = layer_inputs(tokens, top_k, experts, K, F)
    watch = watch_grouped(t6, monkeypatch)
    y = layer_output(t6, x, w_gate_up, w_down, ids, weights)
    monkeypatch.undo()
    want = layer_want(x, w_gate_up, w_down, ids, weights)
    err = rel_err(y, want) if y.shape == want.shape else float("inf")
    if err > 4e-3:
        order = torch.sort(ids.reshape(-1).cpu(), stable=True).indices  # token of each sorted row
        sorted_rows = y.shape == want.shape and rel_err(y, want[order.to(want.device)]) <= 4e-3
        fail(
            T6,
            f"moe_mlp，top_k = 1，{tokens} 个 token、{experts} 个专家：和 float64 的结果差 {err:.2e}（相对）"
            + (
                "：它的第 i 行是排序后第 i 行那个 token 的结果，行是按路由排好的顺序返回的，不是 token 的顺序："
                "top_k = 1 时 down 那次也要按 slot 写出、合并（combine=True）"
                if sorted_rows
                else ""
            ),
            f"moe_mlp, top_k = 1, {tokens} tokens, {experts} experts: off from float64 by {err:.2e} (relative)"
            + (
                ": its row i is the output of the token of sorted row i, so the rows came back in the routing's "
                "sorted order, not in token order: with top_k = 1 too, the down launch writes by slot and combines "
                "(combine=True)"
                if sorted_rows
                else ""
            ),
            "5.2",
        )
    by_slot = [bool(launch.args.get("BY_SLOT")) for launch in watch.of("moe_kernel")]
    if by_slot[-1:] != [True] or not watch.of("combine_topk"):
        fail(
            T6,
            f"moe_mlp，top_k = 1：结果是对的，可 down 那次启动是按排好的顺序写出的（BY_SLOT={by_slot[-1:]}），"
            f"combine_topk 启动了 {len(watch.of('combine_topk'))} 次：行的顺序是在两次启动之外（torch 里）排回来的；"
            "top_k = 1 时 down 那次照样按 slot 写出、由 combine_topk 合并（combine=True）",
            f"moe_mlp, top_k = 1: right values, yet the down launch wrote in sorted order (BY_SLOT={by_slot[-1:]}) "
            f"and combine_topk was launched {len(watch.of('combine_topk'))} times: the rows were put back in token "
            "order outside the launches (in torch); with top_k = 1 too, the down launch writes by slot and "
            "combine_topk combines (combine=True)",
            "5.2",
        )


@pytest.mark.t6_4
def test_moe_mlp_of_no_tokens(t6):
    """A batch of 0 tokens (an empty micro-batch): the layer's output is [0, K'] like any other, in x's dtype."""
    x, w_gate_up, w_down, weights = layer_inputs(0, 2, 4, 32, 16)
    ids = torch.zeros((0, 2), dtype=torch.int64, device=DEVICE)
    y = layer_output(t6, x, w_gate_up, w_down, ids, weights)
    want = (0, w_down.shape[1])
    if not isinstance(y, torch.Tensor) or tuple(y.shape) != want or y.dtype != x.dtype or y.device != x.device:
        got = f"{tuple(y.shape)} {y.dtype} {y.device}" if isinstance(y, torch.Tensor) else type(y).__name__
        fail(
            T6,
            f"moe_mlp，0 个 token：应当返回 {want}、{x.dtype}、在 {x.device} 上的张量（和别的批次一样），"
            f"得到的是 {got}",
            f"moe_mlp, 0 tokens: expected a {want} tensor of {x.dtype} on {x.device} (as for any other batch), "
            f"got {got}",
            "5.2",
        )


@pytest.mark.t6_4
def test_moe_mlp_names_the_argument_it_refuses(t6):
    """A layer's weights that do not fit each other are refused by moe_mlp's own names for them, not by the names
    its grouped_matmul calls give their x and w: a w_down whose F is not half w_gate_up's rows was told "w's K
    (17) must equal x's K (16)", x there being the hidden activations, and a w_down that requires grad (grad
    enabled) "w require grad".  topk_weights None is refused too: it came back as the unweighted sum, which no
    layer computes (given/t6_layer.py).  After a valid batch of 0 tokens."""
    x, w_gate_up, w_down, weights = layer_inputs(3, 2, 4, 32, 16)
    ids = make_ids("balanced", 3, 2, 4)
    layer_output(t6, x[:0], w_gate_up, w_down, ids[:0], weights[:0])
    for what, args, kind, name in (
        (
            "w_down [4, 32, 17]",
            (x, w_gate_up, torch.zeros_like(w_down[..., :1]).repeat(1, 1, 17), ids, weights),
            ValueError,
            "w_down",
        ),
        ("w_down [5, 32, 16]", (x, w_gate_up, torch.cat([w_down, w_down[:1]]), ids, weights), ValueError, "w_down"),
        ("w_down float32", (x, w_gate_up, w_down.float(), ids, weights), ValueError, "w_down"),
        ("w_gate_up a list", (x, w_gate_up.tolist(), w_down, ids, weights), TypeError, "w_gate_up"),
        # the layer's output is the weighted sum: None is no weights, not grouped_matmul's unweighted product
        ("topk_weights None", (x, w_gate_up, w_down, ids, None), TypeError, "topk_weights"),
        # nn.Linear's weights with grad enabled: refused by the layer's name, not as the second call's "w"
        (
            "grad enabled, w_down requiring grad",
            (x, w_gate_up, w_down.clone().requires_grad_(), ids, weights),
            ValueError,
            "w_down",
        ),
    ):
        try:
            t6.moe_mlp(*args)
            got, got_zh = "and it returned a result", "它却返回了一个结果"
        except kind as e:
            if name in str(e):
                continue
            got, got_zh = (
                f"and its {kind.__name__} does not name {name}: {e}",
                f"它的 {kind.__name__} 没有提到 {name}：{e}",
            )
        except Exception as e:  # noqa: BLE001 - an error from further in, told as it is
            got, got_zh = f"and it raised {type(e).__name__}: {e}", f"它却抛出了 {type(e).__name__}：{e}"
        fail(
            T6,
            f"moe_mlp，{what}：应当抛出写着 {name} 的 {kind.__name__}，{got_zh}",
            f"moe_mlp, {what}: should raise a {kind.__name__} naming {name}, {got}",
            "5.2",
        )


@pytest.mark.t6_4
def test_moe_mlp_takes_parameters_under_no_grad(t6):
    """Inference runs the layer's nn.Parameters (they require grad) under torch.no_grad(): moe_mlp computes the
    layer as for detached weights, and leaves the caller's tensors as they were, requires_grad included (the
    model trains on afterwards: a requires_grad_(False) on them is the caller's loss)."""
    x, w_gate_up, w_down, weights = layer_inputs(5, 2, 4, 32, 16)
    ids = make_ids("balanced", 5, 2, 4)
    params = {"w_gate_up": w_gate_up.clone().requires_grad_(), "w_down": w_down.clone().requires_grad_()}
    with torch.no_grad():
        y = layer_output(t6, x, params["w_gate_up"], params["w_down"], ids, weights)
    err = rel_err(y, layer_want(x, w_gate_up, w_down, ids, weights))
    kept = {"w_gate_up": w_gate_up, "w_down": w_down}
    cleared = [name for name, p in params.items() if not p.requires_grad]
    changed = [name for name, p in params.items() if not torch.equal(p.detach(), kept[name])]
    said = [  # (zh, en) of each thing wrong; 4e-3: fp16 h between the launches, as the layer tests above
        *([(f"相对误差 {err:.2e}", f"off by {err:.2e} (relative)")] if err > 4e-3 else []),
        *(
            [
                (
                    f"调用之后调用者的 {cleared} 不再 requires_grad 了：只能读它，不能改",
                    f"after the call the caller's {cleared} no longer require grad: read requires_grad, never set it",
                )
            ]
            if cleared
            else []
        ),
        *([(f"调用者的 {changed} 被就地改了", f"the caller's {changed} were changed in place")] if changed else []),
    ]
    if said:
        fail(
            T6,
            "torch.no_grad() 下，w_gate_up 和 w_down 要梯度，moe_mlp：" + "；".join(zh for zh, _ in said),
            "moe_mlp under torch.no_grad(), w_gate_up and w_down requiring grad: " + "; ".join(en for _, en in said),
            "5.2",
        )
