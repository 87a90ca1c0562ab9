"""On a GPU only: stream-K on two streams and in CUDA graphs (the workspace never shared by two launches
that can overlap), and a later call of the same kind launched from a plan."""

import pytest
import torch

from course.i18n import count
from course.messages import fail

from .common import T5
from launch_hooks import counting_launch_hook
from support import DEVICE, INTERPRETING, OUT_RTOL, random, rel_err

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T5.3 (GPU) stream-K on several streams and inside CUDA graphs: the workspace is never shared by
# two launches that can overlap (issue 18: two streams sharing one hung the process)
# ================================================================================================
def finished_within(event, seconds):
    """True once the GPU has passed `event`; False if it has not after `seconds` (a kernel spinning
    on a flag never gets there): the test fails instead of hanging the suite."""
    import time  # here, not at the top: this block is kept apart from the rest of the file

    deadline = time.monotonic() + seconds
    while not event.query():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def all_stream_k(t5, programs):
    """Every tile by stream-K over `programs` programs: the most fix-up traffic per launch."""
    return t5.Config(128, 128, 64, 8, 4, 3, 1, False, "sk"), programs


@pytest.mark.t5_3
@pytest.mark.skipif(INTERPRETING, reason="GPU only: the interpreter has one stream and runs programs one at a time")
def test_stream_k_on_two_streams_at_once(t5):
    """Two streams multiply side by side, all stream-K on 40 programs each (so both kernels are resident
    at once), 150 rounds: every product equals, bit for bit, the one computed alone, and nothing hangs."""
    config, programs = all_stream_k(t5, 40)
    size, rounds = 2304, 150
    streams = [torch.cuda.Stream() for _ in range(2)]
    inputs = [(random((size, size), torch.float16), random((size, size), torch.float16)) for _ in streams]
    alone = [t5.matmul(a, b, config=config, num_programs=programs) for a, b in inputs]
    outs = [torch.empty_like(c) for c in alone]
    wrong = [torch.zeros((), dtype=torch.int64, device=DEVICE) for _ in streams]
    torch.cuda.synchronize()
    for _ in range(rounds):
        for stream, (a, b), c, ref, bad in zip(streams, inputs, outs, alone, wrong, strict=True):
            with torch.cuda.stream(stream):
                t5.matmul(a, b, config=config, num_programs=programs, out=c)
                bad += (c != ref).sum()  # counted on the stream, no synchronization between rounds
    done = [torch.cuda.Event() for _ in streams]
    for event, stream in zip(done, streams, strict=True):
        event.record(stream)
    for i, event in enumerate(done):
        if not finished_within(event, 60):
            fail(
                T5,
                f"两个 stream 同时做 stream-K（{size}³，{programs} 个 program）：stream {i} 60 秒后仍未完成",
                f"two streams running stream-K at once ({size}³, {programs} programs): stream {i} has not "
                "finished after 60 s",
                "4.2",
            )
    counts = [int(bad) for bad in wrong]
    if any(counts):
        fail(
            T5,
            f"两个 stream 同时做 stream-K（{size}³，{rounds} 轮）：与单独计算不同的元素数 {counts}",
            f"two streams running stream-K at once ({size}³, {rounds} rounds): elements that differ from the "
            f"product computed alone, per stream: {counts}",
            "4.2",
        )


@pytest.mark.t5_3
@pytest.mark.skipif(INTERPRETING, reason="GPU only: CUDA graphs need a GPU")
def test_products_in_a_cuda_graph_are_right_on_every_replay(t5):
    """matmul captured in a CUDA graph (stream-K, data-parallel, a decode step, B = W.t()), replayed on
    new inputs copied in, three times, while the same stream-K products run eagerly on another stream."""
    config, programs = all_stream_k(t5, 40)
    cases = [  # (M, N, K, layout, matmul options)
        (1000, 1200, 1500, "row-major", dict(config=config, num_programs=programs)),
        (1000, 1200, 1500, "b = W.t()", dict(config=config, num_programs=programs)),
        (777, 1024, 2048, "row-major", {}),
        (16, 1024, 2048, "b = W.t()", {}),
    ]
    static = []
    for M, N, K, layout, options in cases:
        a = random((M, K), torch.float16)
        b = random((N, K), torch.float16).t() if layout == "b = W.t()" else random((K, N), torch.float16)
        c = torch.empty((M, N), device=DEVICE, dtype=torch.float16)
        t5.matmul(a, b, out=c, **options)  # compile outside the capture
        static.append((a, b, c, options))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for a, b, c, options in static:
            t5.matmul(a, b, out=c, **options)
    side = torch.cuda.Stream()
    eager_a, eager_b = random((1000, 1500), torch.float16), random((1500, 1200), torch.float16)
    eager_ref = t5.matmul(eager_a, eager_b, config=config, num_programs=programs)
    eager_bad = torch.zeros((), dtype=torch.int64, device=DEVICE)
    for replay in range(3):
        for a, b, c, _ in static:
            a.copy_(random(a.shape, torch.float16))
            b.copy_(random(b.shape, torch.float16))
            c.fill_(float("nan"))
        side.wait_stream(torch.cuda.current_stream())
        graph.replay()
        with torch.cuda.stream(side):
            for _ in range(20):
                eager_bad += (t5.matmul(eager_a, eager_b, config=config, num_programs=programs) != eager_ref).sum()
        done = torch.cuda.Event()
        done.record()
        side_done = torch.cuda.Event()
        side_done.record(side)
        if not (finished_within(done, 60) and finished_within(side_done, 60)):
            fail(
                T5,
                f"CUDA graph 第 {replay + 1} 次重放（另一个 stream 上同时做 stream-K）60 秒后仍未完成",
                f"replay {replay + 1} of the CUDA graph (stream-K running eagerly on another stream) has not "
                "finished after 60 s",
                "4.2",
            )
        for (M, N, K, layout, _), (a, b, c, _) in zip(cases, static, strict=True):
            err = rel_err(c, a.double() @ b.double())
            if c.isnan().any() or not err <= OUT_RTOL[torch.float16]:
                fail(
                    T5,
                    f"CUDA graph 第 {replay + 1} 次重放，{M}x{N}x{K} {layout}：{c.isnan().sum().item()} 个 NaN，"
                    f"相对误差 {err:.2e}",
                    f"replay {replay + 1} of the CUDA graph, {M}x{N}x{K} {layout}: {c.isnan().sum().item()} NaN, "
                    f"relative error {err:.2e}",
                    "4.2",
                )
    if int(eager_bad):
        fail(
            T5,
            f"CUDA graph 重放时另一个 stream 上的 stream-K 乘积有 {int(eager_bad)} 个元素与单独计算不同",
            f"stream-K products on another stream during the replays: {int(eager_bad)} elements differ from "
            "the product computed alone",
            "4.2",
        )


@pytest.mark.t5_2
@pytest.mark.skipif(INTERPRETING, reason="GPU only: on a GPU a later call of the same kind launches from a plan")
def test_a_later_call_of_the_same_kind_is_right_on_new_tensors(t5):
    """matmul keeps a plan per kind of call (content/t5.perf.md §2): a later call whose operands have
    the same shapes, strides and dtypes, at other addresses, must give what a first call gives, bit for
    bit: activations at 20 addresses (more than the plan keeps tensor maps for), weights at 3."""
    config, programs = all_stream_k(t5, 40)
    cases = [  # (M, N, K, layout, matmul options)
        (640, 768, 1024, "row-major", {}),
        (640, 768, 1024, "b = W.t()", {}),
        (333, 520, 1000, "row-major", dict(activation="gelu", bias=True)),
        (1000, 1200, 1500, "b = W.t()", dict(config=config, num_programs=programs)),
        (16, 1024, 2048, "b = W.t()", {}),
    ]
    for M, N, K, layout, options in cases:
        weights = [
            random((N, K), torch.float16).t() if layout == "b = W.t()" else random((K, N), torch.float16)
            for _ in range(3)
        ]
        bias = random((N,), torch.float16) if options.pop("bias", False) else None
        calls = [(random((M, K), torch.float16), weights[i % 3]) for i in range(20)]
        first = []
        for a, b in calls:
            t5._plans.clear()  # each of these is a first call
            first.append(t5.matmul(a, b, bias=bias, **options))
        differ = 0
        for _ in range(2):
            for (a, b), want in zip(calls, first, strict=True):
                differ += int((t5.matmul(a, b, bias=bias, **options) != want).sum())
        with counting_launch_hook() as seen:  # as a profiler's hook: the plan launches through it
            for (a, b), want in zip(calls, first, strict=True):
                differ += int((t5.matmul(a, b, bias=bias, **options) != want).sum())
        if differ:
            fail(
                T5,
                f"{M}x{N}x{K} {layout}：同一类调用的后续调用（新地址的张量，有时设了 launch hook）与第一次调用的结果有 "
                f"{differ} 个元素不同",
                f"{M}x{N}x{K} {layout}: later calls of the same kind (tensors at other addresses, some with a launch "
                f"hook set) differ from a first call's product in {count(differ, 'element')}",
                "3.2",
            )
        if seen is not None and len(seen) < len(calls):
            fail(
                T5,
                f"{M}x{N}x{K} {layout}：设了 launch hook 时，{len(calls)} 次调用只报告了 {len(seen)} 次启动",
                f"{M}x{N}x{K} {layout}: with a launch hook set, {len(calls)} calls reported {len(seen)} launches",
                "3.2",
            )
