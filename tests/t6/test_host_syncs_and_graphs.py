"""T6.1, T6.3: route and grouped_matmul read nothing back to the host (on the CPU); on a GPU,
both under a CUDA graph.  test_moe_mlp.py uses host_reads for moe_mlp (T6.4)."""

import pytest
import torch

from course.i18n import cells, say
from course.messages import fail

from .common import T6, graded_code, make_ids
from .test_routing import guarded_route
from host_reads import host_reads as watch_host_reads
from launch_hooks import counting_launch_hook
from support import DEVICE, INTERPRETING

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


def host_reads(t6, allowed=()):
    """tests/host_reads.py's mode over the graded file and the given host it binds (graded_code)."""
    return watch_host_reads(graded_code(t6), allowed)


# Where the first read back is in check_offsets: every test here hands over routings made by route.
OFFSETS_ONCE = (
    "；这些 routing 都是 route 造的（routing.checked 为真）：check_offsets 只查手工造的",
    "; these routings are all made by route (routing.checked true): check_offsets is for hand-made ones alone",
)


def check_no_host_reads(reads, case, who, section):
    if reads:
        what, function, file, line = reads[0]
        fail(
            T6,
            f"{case}：{who} 在主机上读了张量的值 {len(reads)} 次，第一次是 {function}（{file} 第 {line} 行）里的 "
            f"{what}：在 GPU 上每次都要等设备算完，CUDA graph 也捕获不了"
            + (OFFSETS_ONCE[0] if function == "check_offsets" else ""),
            f"{case}: {who} read tensor values back to the host {len(reads)} time{'s' * (len(reads) != 1)}, "
            f"first {what} in {function} ({file} line {line}): on a GPU each waits for the device, and a CUDA graph "
            "cannot capture it" + (OFFSETS_ONCE[1] if function == "check_offsets" else ""),
            section,
        )


@pytest.mark.t6_1
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU, test_routing_and_launch_under_a_cuda_graph checks this")
def test_route_reads_nothing_back_but_one_look_at_the_ids(t6, monkeypatch):
    """§2.3: with check_ids=False, route looks at no value of the ids (nor of anything it computes); with
    check_ids, it waits for the device once: its reads of values (the ids' least and greatest, say) all
    follow one computation."""
    ids = make_ids("skewed", 40, 2, 6)
    case = say(zh="40 个 token，6 个专家", en="40 tokens, 6 experts")
    with host_reads(t6) as mode:
        guarded_route(t6, monkeypatch, ids, 6, case, check_ids=False)
    check_no_host_reads(mode.reads, case, "route(check_ids=False)", "2.3")
    with host_reads(t6) as mode:
        t6.route(ids, 6)
    waits = len(mode.waited)
    if waits > 1:
        what, function, file, line = mode.waited[1]
        # a tensor in an if/or: a comparison (lo < 0) is computed on the device after the read before it
        truth = what == "__bool__"
        fail(
            T6,
            f"{case}：route（查专家号）在主机上等了设备 {waits} 次：读一个在上一次读值之后才算出来的张量就要等设备"
            f"算完，{function}（{file} 第 {line} 行）里的 {what} 就读了这样一个：把要看的值一次算出来再读"
            "（比如一个 torch.aminmax，它的两个值一起读）"
            + (
                "：if 里的张量也算：lo < 0、hi >= num_experts 这样的比较每个都是设备上新算出来的张量，各读一次；"
                "先把两个值一起读成 Python 的数（torch.stack(...).tolist()），再在主机上比较"
                if truth
                else ""
            ),
            f"{case}: route (checking the ids) waited for the device {waits} times: a read of a tensor computed after "
            f"the read before waits for the device to finish, and {what} in {function} ({file} line {line}) read "
            "one: compute what it looks at at once, then read it (one torch.aminmax, say, its two values read "
            "together)"
            + (
                ": a tensor in an if counts too: each comparison such as lo < 0 or hi >= num_experts is a new tensor "
                "computed on the device, read once each; read both values as Python numbers at once "
                "(torch.stack(...).tolist()), then compare them on the host"
                if truth
                else ""
            ),
            "2.3",
        )


@pytest.mark.t6_3
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU, test_routing_and_launch_under_a_cuda_graph checks this")
def test_grouped_matmul_reads_nothing_back(t6):
    """§3.4: with a Routing from route, grouped_matmul (checks, launch, combine) reads no value of a
    tensor on the host: the tile count stays on the device, and route's own routings skip
    check_offsets' look at the offsets."""
    tokens, top_k, experts, K, N = 40, 2, 6, 32, 24
    ids = make_ids("skewed", tokens, top_k, experts)
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = torch.randn(experts, N, K, device=DEVICE).half()
    weights = torch.rand(tokens, top_k, device=DEVICE)
    r = t6.route(ids, experts)
    with host_reads(t6) as mode:
        t6.grouped_matmul(x, w, r, weights, combine=True)
    case = say(
        zh=f"{tokens} 个 token，{experts} 个专家，route 给的 Routing",
        en=f"{tokens} tokens, {experts} experts, a Routing from route",
    )
    check_no_host_reads(mode.reads, case, "grouped_matmul(combine=True)", "3.4")


def capture_failed(t6, error, call):
    """Fail for a CUDA graph capture of `call` that raised `error`: where the graded code read a
    tensor's value back to the host, run again eagerly under host_reads, that read is named (a host
    sync, which a capture refuses); else only the error is shown, with no cause claimed."""
    case = say(zh="route 加 grouped_matmul，在 CUDA graph 里", en="route and grouped_matmul, in a CUDA graph")
    try:
        with host_reads(t6) as mode:
            call()
    except Exception:  # noqa: BLE001 - the eager call failing too says nothing of host reads
        mode = None
    if mode is not None:
        check_no_host_reads(mode.reads, case, "route + grouped_matmul", "3.4")
    seen = (
        ("你的代码在调用里没有读回张量的值", "your code read no tensor value back to the host in the call")
        if mode is not None
        else ("不在捕获里时这次调用也出错了", "the same call failed outside a capture too")
    )
    fail(
        T6,
        f"route 加 grouped_matmul 没能被 CUDA graph 捕获（{type(error).__name__}: {str(error)[:200]}）；"
        f"{seen[0]}：看上面的错误是哪一步引起的",
        f"route and grouped_matmul could not be captured in a CUDA graph ({type(error).__name__}: "
        f"{str(error)[:200]}); {seen[1]}: the error says which step the capture refused",
        "3.4",
    )


@pytest.mark.t6_3
@pytest.mark.skipif(INTERPRETING, reason="GPU only: CUDA graphs need a GPU")
def test_routing_and_launch_under_a_cuda_graph(t6):
    """route (check_ids=False) and grouped_matmul with the combine, captured in one CUDA graph: a host
    sync anywhere (reading a count, the total of tiles, an offset) makes the capture fail.  Replayed
    on other ids, the graph gives what an eager call gives."""
    tokens, top_k, experts, K, N = 64, 2, 8, 64, 64
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = torch.randn(experts, N, K, device=DEVICE).half()
    weights = torch.rand(tokens, top_k, device=DEVICE)
    ids = make_ids("skewed", tokens, top_k, experts)
    t6.grouped_matmul(x, w, t6.route(ids, experts), weights, combine=True)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            y = t6.grouped_matmul(x, w, t6.route(ids, experts, check_ids=False), weights, combine=True)
    except Exception as e:  # noqa: BLE001 - any failure of the capture is what this reports
        capture_failed(
            t6, e, lambda: t6.grouped_matmul(x, w, t6.route(ids, experts, check_ids=False), weights, combine=True)
        )
    ids.copy_(make_ids("one expert", tokens, top_k, experts))
    graph.replay()
    want = t6.grouped_matmul(x, w, t6.route(ids, experts), weights, combine=True)
    if not torch.equal(y, want):
        fail(
            T6,
            f"CUDA graph 重放（新的路由）和直接调用的结果有 {int((y != want).sum())} 个单元不同",
            f"the CUDA graph replayed on new routing differs from an eager call in {cells(int((y != want).sum()))}",
            "3.4",
        )


@pytest.mark.t6_3
@pytest.mark.skipif(INTERPRETING, reason="GPU only: the interpreter has one stream")
def test_the_layer_on_two_streams_at_once(t6):
    """route and grouped_matmul (weighted, combined) on two streams side by side, 20 rounds, as a model
    that runs layers on several streams calls them: each stream's result equals, bit for bit, the one
    computed alone (nothing the calls share, a buffer or a plan, may be written by both at once).  Each
    product runs longer than a call's host time, on 48 programs, so the two streams' kernels overlap."""
    tokens, top_k, experts, K, N, rounds, programs = 4096, 2, 8, 4096, 4096, 20, 48
    streams = [torch.cuda.Stream() for _ in range(2)]
    inputs = [
        (
            torch.randn(tokens, K, device=DEVICE).half(),
            torch.randn(experts, N, K, device=DEVICE).half() * K**-0.5,
            make_ids(kind, tokens, top_k, experts),
            torch.rand(tokens, top_k, device=DEVICE),
        )
        for kind in ("skewed", "balanced")  # one kind of call: the second and later share one plan
    ]
    alone = [
        t6.grouped_matmul(x, w, t6.route(ids, experts), wt, combine=True, num_programs=programs)
        for x, w, ids, wt in inputs
    ]
    wrong = [torch.zeros((), dtype=torch.int64, device=DEVICE) for _ in streams]
    torch.cuda.synchronize()
    for _ in range(rounds):
        for stream, (x, w, ids, wt), want, bad in zip(streams, inputs, alone, wrong, strict=True):
            with torch.cuda.stream(stream):
                y = t6.grouped_matmul(
                    x, w, t6.route(ids, experts, check_ids=False), wt, combine=True, num_programs=programs
                )
                bad += (y != want).sum()  # counted on the stream: no synchronization between rounds
    torch.cuda.synchronize()
    counts = [int(bad) for bad in wrong]
    if any(counts):
        fail(
            T6,
            f"两个 stream 同时跑 route 和 grouped_matmul（{rounds} 轮）：与单独计算不同的单元数，每个 stream：{counts}",
            f"route and grouped_matmul on two streams at once ({rounds} rounds): cells that differ from the result "
            f"computed alone, per stream: {counts}",
            "2.2",
            "4.4",
        )


@pytest.mark.t6_3
@pytest.mark.skipif(INTERPRETING, reason="GPU only: on a GPU a later call of the same kind launches from a plan")
def test_a_later_call_of_the_same_kind_is_right_on_new_tensors(t6):
    """grouped_matmul keeps a plan per kind of call (content/t6.md §6): a later call with tensors of the
    same shapes, strides and dtypes at other addresses, and another routing from route, must give
    what a first call gives, bit for bit: x at 6 addresses, w at 3, two routings; sorted, weighted
    and combined, SwiGLU, and x in sorted order."""
    top_k, experts, K, N = 2, 8, 128, 192
    cases = [  # (what, tokens, rows of w per expert, options)
        ("sorted", 96, N, {}),
        ("weighted and combined", 96, N, dict(topk_weights=torch.rand(96, top_k, device=DEVICE), combine=True)),
        ("swiglu", 96, 2 * N, dict(activation="swiglu")),
        ("x in sorted order", 96, N, dict(x_sorted=True)),
        # 64 rows an expert and more: pick_config's largest tiles, and their float32 combine
        ("512 tokens, combined", 512, N, dict(topk_weights=torch.rand(512, top_k, device=DEVICE), combine=True)),
    ]
    for what, tokens, w_rows, options in cases:
        routings = [t6.route(make_ids(kind, tokens, top_k, experts), experts) for kind in ("skewed", "one expert")]
        rows = tokens * top_k if options.get("x_sorted") else tokens
        ws = [torch.randn(experts, w_rows, K, device=DEVICE).half() * K**-0.5 for _ in range(3)]
        calls = [(torch.randn(rows, K, device=DEVICE).half(), ws[i % 3], routings[i % 2]) for i in range(6)]
        first = []
        for x, w, r in calls:
            t6._plans.clear()  # each of these is a first call
            first.append(t6.grouped_matmul(x, w, r, **options))
        if not t6._plans:
            fail(T6, f"{what}：第一次调用之后没有留下 plan", f"{what}: a first call left no plan behind", "6")
        differ = 0
        for _ in range(2):
            for (x, w, r), want in zip(calls, first, strict=True):
                differ += int((t6.grouped_matmul(x, w, r, **options) != want).sum())
        with counting_launch_hook() as seen:  # as a profiler's hook: the plan launches through it
            for (x, w, r), want in zip(calls, first, strict=True):
                differ += int((t6.grouped_matmul(x, w, r, **options) != want).sum())
        if differ:
            fail(
                T6,
                f"{what}：同一类调用的后续调用（新地址的张量、另一个 routing，有时设了 launch hook）"
                f"与第一次调用的结果有 "
                f"{differ} 个单元不同",
                f"{what}: later calls of the same kind (tensors at other addresses, another routing, some with a "
                f"launch hook set) differ from a first call's result in {cells(differ)}",
                "4.2",
            )
        if seen is not None and len(seen) < len(calls):
            fail(
                T6,
                f"{what}：设了 launch hook 时，{len(calls)} 次调用只报告了 {len(seen)} 次启动",
                f"{what}: with a launch hook set, {len(calls)} calls reported {len(seen)} launches",
                "6.4",
            )


@pytest.mark.t6_1
@pytest.mark.skipif(INTERPRETING, reason="GPU only: on a GPU a later route of the same kind launches from a plan")
def test_a_later_route_of_the_same_kind_is_right(t6):
    """route keeps its three compiled kernels per kind of ids (content/t6.md §6.4): routings of other
    ids of the same shape and dtype, made from that plan, must equal first calls', bit for bit."""
    tokens, top_k, experts = 300, 4, 12
    kinds = ("balanced", "skewed", "one expert", "empty experts")
    t6.route(make_ids("balanced", tokens, top_k, experts), experts)  # the first call of this kind
    if not t6._route_plans:
        fail(T6, "第一次调用 route 之后没有留下 plan", "a first call of route left no plan behind", "6")
    ids = [make_ids(kind, tokens, top_k, experts) for kind in kinds]
    again = [t6.route(each, experts) for each in ids]
    for kind, each, r in zip(kinds, ids, again, strict=True):
        t6._route_plans.clear()  # a first call
        first = t6.route(each, experts)
        for name in ("counts", "offsets", "sorted_slots", "slot_pos"):
            if not torch.equal(getattr(r, name), getattr(first, name)):
                fail(
                    T6,
                    f"{kind}：同一类调用的后续 route 给出的 Routing.{name} 与第一次调用的不同",
                    f"{kind}: a later route of the same kind gave another Routing.{name} than a first call",
                    "2.2",
                )
