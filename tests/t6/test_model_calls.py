"""T6.1, T6.3: the calls a real model makes, on tensors nobody chose: topk_ids and topk_weights that
are views (one column of a top-2 router's output, stride 2; an expanded tensor, stride 0), a hand-made
Routing whose tensors are views, and bf16 on the interpreter, which the host refuses."""

import pytest
import torch

from course.i18n import say
from course.messages import fail

from .common import OUT_RTOL, T6, fail_if_raised, make_ids, raised_by, reference
from .routings import check_routing
from launch_hooks import call_with_another_gpu_current
from support import DEVICE, INTERPRETING, TWO_GPUS, TWO_GPUS_REASON, grad_refusal_missed, rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


def id_views(tokens, experts):
    """(name, topk_ids [tokens, 1], a view whose 1-D reshape is a view with a stride other than 1)."""
    two = make_ids("balanced", tokens, 2, experts)
    return [
        (say(zh="top-2 的 topk_ids 的第 0 列（stride 2）", en="column 0 of a top-2 topk_ids (stride 2)"), two[:, :1]),
        (
            say(zh="扩展出来的 topk_ids（stride 0）", en="an expanded topk_ids (stride 0)"),
            two[:1, 1:].expand(tokens, 1),
        ),
    ]


@pytest.mark.t6_1
def test_route_reads_ids_through_their_strides(t6):
    """route hands its kernels the ids in row-major order, 1-D and contiguous: a view whose reshape
    keeps another stride (stride 2, stride 0) is copied, not read as if contiguous (§2.3)."""
    for name, ids in id_views(13, 5):
        before = ids.clone()
        case = say(zh=f"{name}，13 个 token，5 个专家", en=f"{name}, 13 tokens, 5 experts")
        r, error = raised_by(lambda ids=ids: t6.route(ids, 5))
        # the host makes the ids contiguous for the kernels: a view is valid input
        fail_if_raised(case, "route", error, "2.3")
        check_routing(r, ids, 5, case)
        if not torch.equal(ids, before):
            fail(T6, f"{case}：route 改了调用者的 topk_ids", f"{case}: route changed the caller's topk_ids", "2.3")


@pytest.mark.t6_3
def test_grouped_matmul_reads_views_of_weights_and_of_a_hand_made_routing(t6):
    """topk_weights as views (stride 2, stride 0) are read by slot as their values are, and so are the
    tensors of a hand-made Routing that are views with stride 2: the same product as route's own (§4.3).
    w requires grad, as an inference's Parameters do: taken under torch.no_grad()."""
    tokens, experts, K, N = 13, 5, 32, 24
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = (torch.randn(experts, N, K, device=DEVICE) / K**0.5).half().requires_grad_()  # as nn.Linear's, say
    two = torch.rand(tokens, 2, device=DEVICE)
    weight_views = [
        (say(zh="top-2 权重的第 1 列（stride 2）", en="column 1 of top-2 weights (stride 2)"), two[:, 1:]),
        (say(zh="扩展出来的权重（stride 0）", en="expanded weights (stride 0)"), two[:1, :1].expand(tokens, 1)),
    ]
    (_, ids), _ = id_views(tokens, experts)
    r = t6.route(ids, experts)
    for name, weights in weight_views:
        case = say(zh=f"{name}，{tokens} 个 token，top_k=1，合并", en=f"{name}, {tokens} tokens, top_k=1, combined")
        with torch.no_grad():
            out, error = raised_by(lambda weights=weights: t6.grouped_matmul(x, w, r, weights, combine=True))
        # the host hands the kernel the weights contiguous: a view is valid input
        fail_if_raised(case, "grouped_matmul", error, "4")
        err = rel_err(out, reference(x, w, ids, weights, True))
        if not err <= OUT_RTOL[torch.float16]:
            # Whose fault: the view alone where the same weights, contiguous, give the right result, and the
            # view's call gives its wrong result again (not a result that changes from call to call)
            with torch.no_grad():
                plain = rel_err(
                    t6.grouped_matmul(x, w, r, weights.contiguous(), combine=True), reference(x, w, ids, weights, True)
                )
                again = t6.grouped_matmul(x, w, r, weights, combine=True)
            view = plain <= OUT_RTOL[torch.float16] and torch.equal(again, out)
            varies = plain <= OUT_RTOL[torch.float16] and not view
            fail(
                T6,
                f"{case}：和 float64 的结果差 {err:.2e}（相对）"
                + (
                    "：每个 slot 的权重要按它的值读"
                    if view
                    else "；同一个调用再跑一次，结果又不一样，所以看不出是视图的问题：结果不只取决于输入"
                    if varies
                    else f"；同样的权重换成连续的张量也差 {plain:.2e}，所以不是视图的问题"
                ),
                f"{case}: off from float64 by {err:.2e} (relative)"
                + (
                    ": each slot's weight must be read as its value"
                    if view
                    else "; the same call again gave another result, so the view is not shown to be the cause: the "
                    "result depends on more than the inputs"
                    if varies
                    else f"; the same weights, contiguous, are off too (by {plain:.2e}), so the view is not the cause"
                ),
                "4.3" if view else "4",
            )

    def spread(t):  # the same values, every other element of a buffer twice as long
        buffer = torch.zeros(2 * t.numel(), device=t.device, dtype=t.dtype)
        buffer[::2] = t
        return buffer[::2]

    hand = t6.Routing(spread(r.counts), spread(r.offsets), spread(r.sorted_slots), spread(r.slot_pos), tokens, 1)
    with torch.no_grad():
        err = rel_err(t6.grouped_matmul(x, w, hand), reference(x, w, ids))
    if not err <= OUT_RTOL[torch.float16]:
        fail(
            T6,
            f"手工做的 Routing，四个张量都是 stride 2 的视图：和 float64 的结果差 {err:.2e}（相对）",
            f"a hand-made Routing whose four tensors are views with stride 2: off from float64 by {err:.2e} (relative)",
            "4",
        )


@pytest.mark.t6_3
def test_grouped_matmul_takes_weights_that_are_views(t6):
    """w is valid input as a view (§4): an [E, K, N] store read as [E, N, K] (its transpose, as some
    checkpoints keep an expert's weights), or every other expert of a larger stack; the given host hands
    TMA a copy where the view's rows cannot be read as they are.  No check may refuse them."""
    tokens, top_k, experts, K, N = 13, 2, 4, 32, 24
    x = torch.randn(tokens, K, device=DEVICE).half()
    stored = (torch.randn(experts, K, N, device=DEVICE) / K**0.5).half()
    stack = (torch.randn(2 * experts, N, K, device=DEVICE) / K**0.5).half()
    views = [
        (
            say(zh="w 是 [E, K, N] 张量的转置（transpose(1, 2)）", en="w the transpose of an [E, K, N] tensor"),
            stored.mT,
        ),
        (say(zh="w 是 8 个专家里每隔一个取的（stride 2）", en="w every other expert of 8 (stride 2)"), stack[::2]),
    ]
    ids = make_ids("balanced", tokens, top_k, experts)
    r = t6.route(ids, experts)
    for name, w in views:
        case = say(zh=f"{name}，{tokens} 个 token，top_k={top_k}", en=f"{name}, {tokens} tokens, top_k={top_k}")
        out, error = raised_by(lambda w=w: t6.grouped_matmul(x, w, r))
        fail_if_raised(case, "grouped_matmul", error, "4")
        err = rel_err(out, reference(x, w, ids))
        if not err <= OUT_RTOL[torch.float16]:
            fail(
                T6,
                f"{case}：和 float64 的结果差 {err:.2e}（相对）",
                f"{case}: off from float64 by {err:.2e} (relative)",
                "4",
            )


@pytest.mark.t6_3
def test_grouped_matmul_refuses_inputs_that_require_grad_in_grad_mode(t6):
    """grouped_matmul has no backward: with grad enabled, an input that requires grad (nn.Linear's
    weights, a router's weights) is refused with a ValueError naming grad, before any launch, rather
    than give a result through which no gradient flows (T4 §6.3)."""
    r = t6.route(torch.tensor([[0], [1], [1], [0]], device=DEVICE), 2)
    x = torch.randn(4, 16, device=DEVICE).half()
    w = torch.randn(2, 8, 16, device=DEVICE).half()
    weights = torch.rand(4, 1, device=DEVICE)
    for name, args in (
        ("w", (x, w.requires_grad_(), r)),
        ("topk_weights", (x, w.detach(), r, weights.requires_grad_())),
    ):
        case = say(zh=f"开着梯度，{name} 要梯度", en=f"grad enabled, {name} requiring grad")
        got = grad_refusal_missed(lambda args=args: t6.grouped_matmul(*args))
        if got is None:
            continue
        fail(
            T6,
            f"{case}：grouped_matmul 应当抛 ValueError，{got}",
            f"{case}: grouped_matmul should raise a ValueError, {got}",
            "4",
        )


@pytest.mark.t6_3
@pytest.mark.skipif(not INTERPRETING, reason="the interpreter's bf16 tl.dot is what the host refuses")
def test_bf16_is_refused_on_the_interpreter(t6):
    """The interpreter multiplies bf16 bit patterns in tl.dot (triton issue 11584): grouped_matmul
    refuses bf16 there with a TypeError naming it, as T4's check_inputs does, before any launch (§4)."""
    x = torch.randn(4, 16).bfloat16()
    w = torch.randn(2, 8, 16).bfloat16()
    r = t6.route(torch.tensor([[0], [1], [1], [0]]), 2)
    out, error = raised_by(lambda: t6.grouped_matmul(x, w, r))
    if error is None:
        got = say(zh="它却算出了一个结果", en="and it returned a result")
    elif error.startswith("TypeError") and ("bfloat16" in error or "bf16" in error):
        return
    elif error.startswith("TypeError"):
        got = say(zh=f"它抛的 TypeError 没有提到 bf16：{error}", en=f"and its TypeError does not name bf16: {error}")
    elif error.function == "check_expert_inputs":  # the learner's check refused a dtype it takes
        got = say(
            zh=f"却是你的 check_expert_inputs 先拒绝了它：{error}；bf16 是它要接受的 dtype 之一（fp16、bf16、fp32），"
            "解释器上拒绝 bf16 的是主机代码，在你的检查之后",
            en=f"yet your check_expert_inputs refused it first: {error}; bf16 is one of the dtypes it takes (fp16, "
            "bf16, fp32), and on the interpreter the host refuses bf16 itself, after your checks",
        )
    else:
        got = say(zh=f"它却抛了 {error}", en=f"and it raised {error}")
    fail(
        T6,
        f"解释器上的 bf16：grouped_matmul 应当抛 TypeError，{got}（解释器的 bf16 tl.dot 是错的）",
        f"bf16 on the interpreter: grouped_matmul should raise a TypeError, {got} (the interpreter's bf16 tl.dot "
        "is wrong)",
        "4",
    )


@pytest.mark.t6_3
def test_grouped_matmul_with_k_or_n_of_zero(t6):
    """K = 0 or N = 0 is valid input, not an error: every product is a sum of nothing (zeros, the
    weights and SwiGLU of zeros included), or has no columns (§4)."""
    tokens, experts = 5, 3
    r = t6.route(make_ids("balanced", tokens, 2, experts), experts)
    weights = torch.rand(tokens, 2, device=DEVICE)
    calls = [  # (what, x's K, w's shape, options, the result's shape)
        ("K = 0", 0, (experts, 16, 0), {}, (2 * tokens, 16)),
        ("K = 0, combined", 0, (experts, 16, 0), dict(topk_weights=weights, combine=True), (tokens, 16)),
        ("K = 0, swiglu", 0, (experts, 32, 0), dict(activation="swiglu"), (2 * tokens, 16)),
        ("N = 0", 32, (experts, 0, 32), {}, (2 * tokens, 0)),
    ]
    for what, K, w_shape, options, shape in calls:
        x = torch.randn(tokens, K, device=DEVICE).half()
        w = torch.randn(w_shape, device=DEVICE).half()
        case = say(zh=f"{what}，{tokens} 个 token，top_k=2", en=f"{what}, {tokens} tokens, top_k=2")
        out, error = raised_by(lambda x=x, w=w, options=options: t6.grouped_matmul(x, w, r, **options))
        fail_if_raised(case, "grouped_matmul", error, "4")
        if tuple(out.shape) != shape or out.dtype != x.dtype or out.ne(0).any():
            fail(
                T6,
                f"{case}：结果应当是 {x.dtype} 的全零 {list(shape)}，得到 {out.dtype} {tuple(out.shape)}",
                f"{case}: the result should be {list(shape)} zeros in {x.dtype}, got {out.dtype} {tuple(out.shape)}",
                "4",
            )


@pytest.mark.t6_3
@pytest.mark.skipif(not TWO_GPUS, reason=TWO_GPUS_REASON)
def test_inputs_on_a_gpu_that_is_not_current(t6):
    """An MoE layer of a model split over two GPUs: ids, x, w and the weights on cuda:1 while cuda:0 is
    current.  route and grouped_matmul with the combine, watched by a launch hook (a first call, then
    again) and from their plans with no hook, run on cuda:1 (the given host's @on_inputs_device) and are right."""
    tokens, experts, K, N = 40, 6, 64, 48
    ids = make_ids("skewed", tokens, 2, experts).to("cuda:1")
    x = torch.randn(tokens, K, device="cuda:1").half()
    w = (torch.randn(experts, N, K, device="cuda:1") / K**0.5).half()
    weights = torch.rand(tokens, 2, device="cuda:1").half()
    for call_zh, call_en, watched in (
        ("第一次调用", "a first call", True),
        ("再调一次，有 launch hook", "again, a launch hook set", True),
        ("按 plan 启动，没有 hook", "from its plan, no hook", False),
    ):
        case = say(
            zh=f"cuda:1 上的 route 和合并的 grouped_matmul（{call_zh}）",
            en=f"route and a combined grouped_matmul on cuda:1 ({call_en})",
        )
        r, problem = call_with_another_gpu_current("route", lambda: t6.route(ids, experts), watched)
        if problem:
            fail(T6, f"{case}：{problem[0]}", f"{case}: {problem[1]}", "2.3")
        out, problem = call_with_another_gpu_current(
            "grouped_matmul", lambda r=r: t6.grouped_matmul(x, w, r, weights, combine=True), watched
        )
        if problem:
            fail(T6, f"{case}：{problem[0]}", f"{case}: {problem[1]}", "4")
        err = rel_err(out, reference(x, w, ids, weights, True))
        if not err <= OUT_RTOL[torch.float16]:
            fail(
                T6,
                f"{case}：和 float64 的结果差 {err:.2e}（相对）",
                f"{case}: off from float64 by {err:.2e} (relative)",
                "4",
            )
