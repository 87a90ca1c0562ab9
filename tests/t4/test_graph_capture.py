"""T4.4 on a GPU, called as a model calls it: captured into a CUDA graph after a warm-up call and
replayed on new inputs; a shape's first call inside a capture refused (it would autotune there, the
given tuned_outside_capture) with the process left able to go on; two streams at once, each with its
own product.  The interpreter has no graphs and one stream: these skip there, all but the first, which
asks on the CPU too whether the refusal is in force."""

import pytest
import torch
from triton.runtime.autotuner import Autotuner

from course.messages import fail

from .common import T4, wrapper_files
from .product_checks import check_product
from support import INTERPRETING, random

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's

GPU_ONLY = "GPU only: the interpreter has no CUDA graphs and one stream"


def capture(call):
    """(graph, what call returned) with call captured on a side stream, as torch's docs do it."""
    graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.graph(graph, stream=stream):
        out = call()
    return graph, out


@pytest.mark.t4_4
def test_a_call_of_matmul_makes_the_autotuned_kernel_refuse_a_capture(t4):
    """After one call of matmul, the autotuned kernel its file defines refuses to tune inside a capture:
    the given @tuned_outside_capture found it through whatever given decorators lie below it.  Asked on
    the CPU too, where nothing is captured, so that a refusal that never takes hold shows before a GPU."""
    device = "cpu" if INTERPRETING else "cuda"
    t4.matmul(random((20, 24), torch.float16, device), random((24, 16), torch.float16, device))
    tuner = getattr(t4, "matmul_kernel_autotuned", None)
    if not isinstance(tuner, Autotuner):
        fail(
            T4,
            f"matmul_kernel_autotuned 是 {tuner!r}，不是 triton.autotune(...) 的结果：给定的 @tuned_outside_capture "
            "要让它在 CUDA graph 捕获中拒绝调优，却没有可包的东西",
            f"matmul_kernel_autotuned is {tuner!r}, not what triton.autotune(...) returns: the given "
            "@tuned_outside_capture, which makes it refuse to tune inside a CUDA graph capture, has nothing to wrap",
            "6.1",
        )
    if getattr(tuner, "_refuses_capture", False):
        return
    gone = not any(name.endswith("t4_capture.py") for name in wrapper_files(t4.matmul))
    fail(
        T4,
        "调用过一次 matmul 之后，matmul_kernel_autotuned 仍不会在 CUDA graph 捕获中拒绝调优："
        + (
            "matmul 上面已经没有给定的 @tuned_outside_capture 了：把那一行放回去（make upgrade 会放回）"
            if gone
            else "给定的 @tuned_outside_capture（given/t4_capture.py）没有找到 matmul 所在文件里的它"
        ),
        "after a call of matmul, matmul_kernel_autotuned still does not refuse to tune inside a CUDA graph capture: "
        + (
            "matmul no longer carries the given @tuned_outside_capture: put that line back (make upgrade does)"
            if gone
            else "the given @tuned_outside_capture (given/t4_capture.py) did not find it in matmul's file"
        ),
        "6.1",
    )


@pytest.mark.t4_4
@pytest.mark.skipif(INTERPRETING, reason=GPU_ONLY)
@pytest.mark.parametrize("weights", ["B", "W.t()"])
def test_matmul_in_a_cuda_graph_replays_right(t4, weights):
    """After one eager call of the shape (which autotunes), matmul is captured, with bias and GELU, and
    three replays on new inputs copied into the captured ones each give that input's product."""
    M, N, K = 300, 520, 200
    a = random((M, K), torch.float16)
    b = random((K, N), torch.float16) if weights == "B" else random((N, K), torch.float16).t()
    bias = random((N,), torch.float16)
    t4.matmul(a, b, bias=bias, activation="gelu")  # the warm-up: the shape's key is tuned here
    torch.cuda.synchronize()
    try:
        graph, c = capture(lambda: t4.matmul(a, b, bias=bias, activation="gelu"))
    except Exception as e:  # noqa: BLE001 - what the learner's wrapper raised under capture, named below
        fail(
            T4,
            f"{M}x{N}x{K}，B 为 {weights}：已调过一次之后，matmul 在 CUDA graph 捕获中仍然出错："
            f"{type(e).__name__}: {e}",
            f"{M}x{N}x{K}, B as {weights}: after a warm-up call, matmul failed inside a CUDA graph capture: "
            f"{type(e).__name__}: {e}",
            "6.2",
        )
    for replay in range(3):
        a.copy_(random((M, K), torch.float16))
        b.copy_(random(tuple(b.shape), torch.float16))
        graph.replay()
        torch.cuda.synchronize()
        ref = torch.nn.functional.gelu(a.double() @ b.double() + bias.double(), approximate="tanh")
        case_zh, case_en = (
            f"CUDA graph 第 {replay + 1} 次重放，B 为 {weights}",
            f"CUDA graph replay {replay + 1}, B as {weights}",
        )
        err = ((c.double() - ref).abs() / (1 + ref.abs())).max().item()
        if err > 2e-2:
            fail(
                T4,
                f"{case_zh}：C 与这次输入的 gelu(A @ B + bias) 最多相差 {err:.3g}（相对）",
                f"{case_en}: C differs from this input's gelu(A @ B + bias) by up to {err:.3g} (relative)",
                "6.2",
            )


@pytest.mark.t4_4
@pytest.mark.skipif(INTERPRETING, reason=GPU_ONLY)
@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")  # the refused capture holds no kernel, as it should
def test_a_first_call_inside_a_capture_is_refused_and_the_gpu_goes_on(t4):
    """A shape no call has tuned yet, first met inside a capture: refused with a RuntimeError that says
    to call it once before capturing, nothing timed; afterwards random numbers on the GPU, an eager
    call and a capture of the same shape all work."""
    M, N, K = 211, 347, 139  # met by no other test: its key is untuned here
    a, b = random((M, K), torch.float16), random((K, N), torch.float16)
    try:
        capture(lambda: t4.matmul(a, b))
        raised = None
    except RuntimeError as e:
        raised = e
    if raised is None or "before capturing" not in str(raised):
        got = "没有报错" if raised is None else f"{type(raised).__name__}: {raised}"
        got_en = "no error" if raised is None else f"{type(raised).__name__}: {raised}"
        fail(
            T4,
            f"{M}x{N}x{K} 第一次调用就在 CUDA graph 捕获中：给定的 tuned_outside_capture 应该拒绝它（要先在捕获前"
            f"调用一次），实际 {got}",
            f"{M}x{N}x{K} first called inside a CUDA graph capture: the given tuned_outside_capture must refuse "
            f"it (call once before capturing), got {got_en}",
            "6.1",
            "6.2",
        )
    random((4,), torch.float16)  # the generator: a broken capture leaves it unusable
    check_product(t4.matmul(a, b), a, b, torch.float16, f"{M}x{N}x{K}, eager, after the refused capture")
    graph, c = capture(lambda: t4.matmul(a, b))
    a.copy_(random((M, K), torch.float16))
    graph.replay()
    torch.cuda.synchronize()
    check_product(c, a, b, torch.float16, f"{M}x{N}x{K}, captured after the eager call, replayed")


@pytest.mark.t4_4
@pytest.mark.skipif(INTERPRETING, reason=GPU_ONLY)
def test_two_streams_at_once_each_get_their_own_product(t4):
    """Two streams call matmul side by side on their own inputs, 30 rounds, no wait between calls: each
    result equals, bit for bit, that stream's product computed alone; two results of one round that
    lie in one buffer are named as such."""
    size, rounds = 1536, 30
    streams = [torch.cuda.Stream() for _ in range(2)]
    inputs = [(random((size, size), torch.float16), random((size, size), torch.float16)) for _ in streams]
    alone = [t4.matmul(a, b) for a, b in inputs]
    wrong = [torch.zeros((), dtype=torch.int64, device="cuda") for _ in streams]
    shared = 0
    torch.cuda.synchronize()
    for _ in range(rounds):
        outs = []
        for stream, (a, b), ref, bad in zip(streams, inputs, alone, wrong, strict=True):
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                outs.append(t4.matmul(a, b))
                bad += (outs[-1] != ref).sum()  # counted on the stream
        shared += outs[0].data_ptr() == outs[1].data_ptr()  # both alive: one buffer for two calls
    torch.cuda.synchronize()
    counts = [int(bad) for bad in wrong]
    if shared:
        fail(
            T4,
            f"两个 stream 同时调用 matmul（{size}³）：{rounds} 轮里有 {shared} 轮两次调用返回的是同一块内存，"
            f"各 stream 与单独计算不同的元素数 {counts}：每次调用要有自己的输出",
            f"two streams calling matmul at once ({size}³): in {shared} of {rounds} rounds both calls returned "
            f"the same memory (elements that differ from the product computed alone, per stream: {counts}): "
            "each call needs an output of its own",
            "6.2",
        )
    if any(counts):
        fail(
            T4,
            f"两个 stream 同时调用 matmul（{size}³，{rounds} 轮）：与单独计算不同的元素数 {counts}",
            f"two streams calling matmul at once ({size}³, {rounds} rounds): elements that differ from the "
            f"product computed alone, per stream: {counts}",
            "6.2",
        )
