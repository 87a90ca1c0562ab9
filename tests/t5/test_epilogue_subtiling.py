"""T5.4 (advanced): epilogue subtiling with T4's fused bias and GELU; the H200's configs (GPU only)."""

import pytest
import torch
import torch.nn.functional as F

from course.i18n import say
from course.messages import fail

from . import common
from .common import T5, check_stored, gelu, run_matmul, run_store_tile
from .halves import fail_if_halves_mixed, fail_if_one_half_without_bias, grid_wide
from .stored import rounded_through
from .swaps import fail_if_store_swapped
from .test_fix_up_reorders import fail_if_order_taken
from support import DEVICE, INTERPRETING, OUT_RTOL, padded, random, rel_err

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's

cfg = common.cfg  # bound, not imported: a GPU test below loops over a `cfg` of its own (ruff's F402)


@pytest.mark.t5_4
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
# whole 16-byte chunks, as in test_store_tile; N = 56 ends inside the second tile's right half
@pytest.mark.parametrize("M, N", [(32, 64), (37, 48), (5, 72), (37, 56)])
def test_store_tile_subtiled(probes, dtype, M, N, monkeypatch):
    c, buf, before, acc = run_store_tile(probes, M, N, dtype, 2)
    case = f"C {M}x{N} {dtype}, EPILOGUE_SUBTILE=2"
    if (M, N) == (37, 56):  # one case: a reshape free to reorder, or a tl.cat, given another order
        fail_if_order_taken(monkeypatch, lambda: run_store_tile(probes, M, N, dtype, 2, acc=acc)[0], c, case, "5")
    fail_if_halves_mixed(c, acc, 32, lambda x: x.to(dtype), 0.0, case)
    fail_if_store_swapped(c, acc[:M, :N].to(dtype), acc, -1234.0, 32, 32, case, "5", subtile=2)
    fail_if_cast_fixed(c, acc[:M, :N], dtype, case)
    check_stored(c, buf, before, acc[:M, :N].to(dtype), case, "5", sub_bn=32)


@pytest.mark.t5_4
def test_store_tile_subtiled_of_a_tile_that_is_not_square(probes):
    """Tiles of 16 x 64, halves of 16 x 32: the left half goes to column pid_n * BLOCK_N, the right one to
    pid_n * BLOCK_N + BLOCK_N // 2.  With square tiles (the other tests here, the interpreter's config)
    BLOCK_M in place of BLOCK_N gives the same columns."""
    M, N, bm, bn = 32, 128, 16, 64
    c, buf, before, acc = run_store_tile(probes, M, N, torch.float32, 2, bm=bm, bn=bn)
    case = f"C {M}x{N} fp32, BLOCK_M={bm} BLOCK_N={bn}, EPILOGUE_SUBTILE=2"
    if not torch.equal(c, acc[:M, :N]):
        half = bn // 2
        for pm in range(M // bm):
            for pn in range(N // bn):
                rows = slice(pm * bm, (pm + 1) * bm)
                places = {  # (which half, its right column, the columns a block size mixed up gives, in words)
                    ("左半块", "left half"): (pn * bn, {"pid_n * BLOCK_M": pn * bm}),
                    ("右半块", "right half"): (
                        pn * bn + half,
                        {
                            "pid_n * BLOCK_N + BLOCK_M // 2": pn * bn + bm // 2,
                            "pid_n * BLOCK_M + BLOCK_N // 2": pn * bm + half,
                            "pid_n * BLOCK_M + BLOCK_M // 2": pn * bm + bm // 2,
                        },
                    ),
                }
                for name, (right, wrong) in places.items():
                    values = acc[rows, right : right + half]
                    for words, col in wrong.items():
                        if col != right and col + half <= N and torch.equal(c[rows, col : col + half], values):
                            fail(
                                T5,
                                f"{case}：tile (pid_m={pm}, pid_n={pn}) 的{name[0]}存在了第 {col} 列 = {words}，"
                                f"应当在第 {right} 列：左半块从 pid_n * BLOCK_N 开始，右半块从 "
                                "pid_n * BLOCK_N + BLOCK_N // 2 开始，列只配 BLOCK_N",
                                f"{case}: the {name[1]} of tile (pid_m={pm}, pid_n={pn}) was stored at column {col} = "
                                f"{words}, not {right}: the left half starts at pid_n * BLOCK_N, the right one at "
                                "pid_n * BLOCK_N + BLOCK_N // 2, columns with BLOCK_N alone",
                                "5",
                            )
    check_stored(c, buf, before, acc[:M, :N], case, "5", sub_bn=bn)


def fail_if_cast_fixed(c, acc, dtype, case):
    """Fail, naming the cast, where C is acc with one half of each tile, or both, rounded to a fixed dtype
    (fp16, bf16) that is not C's: what a half cast to tl.float16, not to c_desc.dtype, leaves."""
    want = acc.to(dtype)
    if torch.equal(c, want):
        return
    left = ((torch.arange(acc.shape[1], device=acc.device) % 32) < 16)[None, :]
    halves = {
        "left": (left, ("左半块", "the left halves")),
        "right": (~left, ("右半块", "the right halves")),
        "both": (torch.ones_like(left), ("两半", "both halves")),
    }
    for other in (torch.float16, torch.bfloat16):
        if other == dtype:
            continue
        for (where, words), rounded in ((h, r) for h in halves.values() for r in rounded_through(acc, other, dtype)):
            if torch.equal(c, torch.where(where, rounded, want)) and not torch.equal(rounded, want):
                fail(
                    T5,
                    f"{case}：C 的{words[0]}里是 acc 舍入到 {other} 的值：每一半存储前都转成 c_desc.dtype"
                    "（C 自己的 dtype），不要写死一种",
                    f"{case}: {words[1]} of C hold acc rounded to {other}: cast each half to c_desc.dtype (C's "
                    "own dtype) before its store, not to a fixed one",
                    "5",
                )


@pytest.mark.t5_4
@pytest.mark.parametrize("activation", ["none", "gelu"])
def test_store_tile_subtiled_bias_per_half(probes, activation):
    """Each half adds its own columns of the bias: the right half's start at BLOCK_N // 2.  N = 77:
    three tiles, the second with both halves (a right half numbered 3, not 1 or 2), the third ragged."""
    M, N = 37, 77
    bias = padded(1, 2 * N, torch.float32)[0][0, ::2]  # stride 2, NaN between and around
    c, buf, before, acc = run_store_tile(probes, M, N, torch.float32, 2, bias=bias, activation=activation)
    want = halves_with_bias(acc[:M, :N], bias, 32, lambda n: 2 * n, lambda n: 2 * n + 1, activation)
    err = rel_err(c, want)
    if c.isnan().any() or err > 1e-5:
        act = gelu if activation == "gelu" else (lambda x: x)
        wide_bias = grid_wide(bias[None, :], 32)
        case = say(
            zh=f"C {M}x{N}，子块 epilogue，bias 步长 2，activation={activation}",
            en=f"C {M}x{N}, subtiled epilogue, bias with stride 2, activation={activation}",
        )
        fail_if_halves_mixed(c, acc, 32, lambda x: act(x + wide_bias), 1e-5, case)
        fail_if_one_half_without_bias(c, acc, 32, lambda x: act(x + wide_bias), act, 1e-5, case)
        seen = {
            k: rel_err(c, halves_with_bias(acc[:M, :N], bias, 32, left, right, activation)) <= 1e-5
            for k, (left, right) in HALF_MISTAKES.items()
        }
        # none of those, but every left half right and every right half off by a bias: with no activation, the
        # right half's cells are acc plus one value per column (another column's bias).  A right half never
        # stored, or stored elsewhere, leaves the fill or other cells there, not acc plus a bias: not named
        left = (torch.arange(N, device=DEVICE) % 32) < 16
        off = (c - acc[:M, :N])[:, ~left]
        seen["right-half-off"] = (
            activation == "none"
            and not any(seen.values())
            and rel_err(c[:, left], want[:, left]) <= 1e-5
            and rel_err(c[:, ~left], want[:, ~left]) > 1e-5
            and bool(off.isfinite().all())
            and bool(((off - off[:1]).abs() <= 1e-4 * (1 + acc[:M, :N][:, ~left].abs())).all())
        )
        fail(
            T5,
            f"C {M}x{N}，子块 epilogue，bias 步长 2，activation={activation}：相对误差 {err:.1e}"
            + "".join(f"：{HALF_CAUSES[k][0]}" for k, hit in seen.items() if hit),
            f"C {M}x{N}, subtiled epilogue, bias with stride 2, activation={activation}: relative error {err:.1e}"
            + "".join(f": {HALF_CAUSES[k][1]}" for k, hit in seen.items() if hit),
            "5",
        )


def halves_with_bias(acc, bias, bn, left, right, activation):
    """act(acc + bias) with each half-tile's bias read as T4 reads a tile's: half number left(pid_n)
    or right(pid_n), BLOCK_N // 2 wide, columns past N adding 0."""
    M, N = acc.shape
    cols = torch.arange(N, device=DEVICE)
    half = bn // 2
    tile, side, j = cols // bn, (cols % bn) // half, cols % half
    number = torch.where(side == 0, left(tile), right(tile))
    at = number * half + j
    b = torch.where(at < N, bias[at.clamp(max=N - 1)], 0.0)
    out = acc + b[None, :]
    return gelu(out) if activation == "gelu" else out


HALF_MISTAKES = {
    "right-half-bias": (lambda n: 2 * n, lambda n: n),
    "left-half-bias": (lambda n: n, lambda n: 2 * n + 1),
    "right-half-left-bias": (lambda n: 2 * n, lambda n: 2 * n),
}


HALF_CAUSES = {
    "right-half-bias": (
        "右半块的 bias 从第 pid_n * BLOCK_N + BLOCK_N // 2 列开始",
        "the right half's bias starts at column pid_n * BLOCK_N + BLOCK_N // 2",
    ),
    "left-half-bias": (
        "左半块的 bias 从第 pid_n * BLOCK_N 列开始（半块编号 2 * pid_n）",
        "the left half's bias starts at column pid_n * BLOCK_N (half number 2 * pid_n)",
    ),
    "right-half-left-bias": (
        "右半块加的是左半块的 bias（半块编号 2 * pid_n）；右半块是第 2 * pid_n + 1 个半块",
        "the right half was given the left half's bias (half number 2 * pid_n); it is half number 2 * pid_n + 1",
    ),
    "right-half-off": (
        "左半块都对，右半块都不对：右半块是第 2 * pid_n + 1 个半块，它的 bias 从第 pid_n * BLOCK_N + BLOCK_N // 2 "
        "列起，T4 的 bias_and_activation 拿到的是这个半块编号和 BLOCK_N // 2",
        "the left halves are all right and the right halves all off: the right half is half number 2 * pid_n + 1, "
        "its bias from column pid_n * BLOCK_N + BLOCK_N // 2 on, and T4's bias_and_activation takes that half "
        "number and BLOCK_N // 2",
    ),
}


@pytest.mark.t5_4
@pytest.mark.parametrize("mode", ["dp", "sk", "swap"])
def test_matmul_subtiled_with_bias_and_gelu(t5, mode):
    """The whole kernel with EPILOGUE_SUBTILE = 2: data-parallel tiles, stream-K owners, or the
    turned-around tiles of a decode step (§6.3)."""
    M, N, K = 45, 70, 96
    a, b = padded(M, K, torch.float16)[0], padded(K, N, torch.float16)[0]
    bias = padded(1, 2 * N, torch.float16)[0][0, ::2]
    case = f"{M}x{K} @ {K}x{N} fp16, EPILOGUE_SUBTILE=2, mode={mode}, bias + GELU"
    c = run_matmul(
        t5, case, "5", a, b, bias=bias, activation="gelu", config=cfg(t5, subtile=2, mode=mode), num_programs=3
    )
    ref = torch.nn.functional.gelu(a.double() @ b.double() + bias.double())
    err = rel_err(c, ref)
    if c.isnan().any() or err > OUT_RTOL[torch.float16]:
        sums, wide_bias = grid_wide(a.double() @ b.double(), 32), grid_wide(bias.double()[None, :], 32)
        fail_if_halves_mixed(
            c, sums, 32, lambda x: torch.nn.functional.gelu(x + wide_bias), OUT_RTOL[torch.float16], case
        )
        fail_if_one_half_without_bias(
            c, sums, 32, lambda x: F.gelu(x + wide_bias), F.gelu, OUT_RTOL[torch.float16], case
        )
        fail(
            T5,
            f"{M}x{K} @ {K}x{N} fp16，EPILOGUE_SUBTILE=2，mode={mode}，bias + GELU：相对误差 {err:.2e}",
            f"{M}x{K} @ {K}x{N} fp16, EPILOGUE_SUBTILE=2, mode={mode}, bias + GELU: relative error {err:.2e}",
            "5",
        )


@pytest.mark.t5_4
@pytest.mark.skipif(INTERPRETING, reason="GPU only: shared memory and the H200 config exist only when compiled")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_h200_config_fits_only_subtiled(t5, dtype):
    """128x256x64 with 4 stages needs 229,408 B of shared memory with the sub-tiled epilogue (the
    C staging buffer halves) and does not fit in 232,448 B without it (NOTES of 2026-11-30)."""
    M = N = K = 2048
    a, b = random((M, K), dtype), random((K, N), dtype)
    c = t5.matmul(a, b, config=t5.Config(128, 256, 64, 8, 8, 4, 2, True, "dp"))
    err = rel_err(c, a.double() @ b.double())
    if err > OUT_RTOL[dtype]:
        fail(
            T5,
            f"2048³ {dtype}，128x256x64/s4/子块 2：相对误差 {err:.2e}",
            f"2048³ {dtype}, 128x256x64/s4/subtile 2: relative error {err:.2e}",
            "5",
        )


@pytest.mark.t5_4
@pytest.mark.skipif(INTERPRETING, reason="GPU only: programmatic dependent launch exists only on a real GPU")
@pytest.mark.parametrize("M, N, K", [(16, 4096, 4096), (512, 512, 512), (1000, 1000, 1000)])
def test_products_launched_early_wait_for_their_inputs(t5, M, N, K):
    """§6.4: a short product launches during the kernel before it and waits before touching memory.
    In one CUDA graph, rounds of a chain whose products each read what the one before wrote, with
    every output filled with NaN before each round: a product that read its input before it was
    written reads NaN, and one that wrote before the fills were done is overwritten with NaN."""
    if not t5.launches_early(torch.device("cuda")):
        pytest.skip("a GPU older than Hopper (compute capability 9.0) has no programmatic dependent launch")
    if not t5.pick_config(M, N, K, torch.float16).pdl:
        fail(T5, f"pick_config({M}, {N}, {K}) 没有 pdl", f"pick_config({M}, {N}, {K}) has no pdl", "6.4")
    torch.manual_seed(0)
    a, b, b2 = random((M, K), torch.float16), random((K, N), torch.float16) / 8, random((N, N), torch.float16) / 8
    outs = [torch.empty((M, N), device=DEVICE, dtype=torch.float16) for _ in range(3)]
    chain = [(a, b, outs[0]), (outs[0], b2, outs[1]), (outs[1], b2, outs[2])]
    for x, y, c in chain:
        t5.matmul(x, y, out=c)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(10):
            for _, _, c in chain:
                c.fill_(float("nan"))
            for x, y, c in chain:
                t5.matmul(x, y, out=c)
    graph.replay()
    torch.cuda.synchronize()
    for i, (x, y, c) in enumerate(chain):
        err = rel_err(c, x.double() @ y.double())
        if c.isnan().any() or not err <= OUT_RTOL[torch.float16]:
            fail(
                T5,
                f"{M}x{N}x{K}，链上第 {i + 1} 个乘积：{c.isnan().sum().item()} 个 NaN，相对误差 {err:.2e}",
                f"{M}x{N}x{K}, product {i + 1} of the chain: {c.isnan().sum().item()} NaN, relative error {err:.2e}",
                "6.4",
            )


@pytest.mark.t5_4
@pytest.mark.skipif(INTERPRETING, reason="GPU only: the tuned configs are the H200's")
def test_every_tuned_config_is_right(t5):
    """Each distinct config of TUNED (§6) compiles and computes right, at a shape with ragged edges
    that gives every program several tiles (5 SMs: a partial last wave, for mode "tail"); its own
    shape is what make bench times."""
    for cfg in dict.fromkeys(t5.TUNED.values()):
        M, N, K = 2 * cfg.BLOCK_M + 40, 3 * cfg.BLOCK_N + 24, 5 * cfg.BLOCK_K + 16
        for dtype in (torch.float16, torch.bfloat16):
            a, b = random((M, K), dtype), random((K, N), dtype)
            err = rel_err(t5.matmul(a, b, config=cfg, num_programs=5), a.double() @ b.double())
            if not err <= OUT_RTOL[dtype]:
                fail(
                    T5,
                    f"{cfg}，{M}x{N}x{K} {dtype}：相对误差 {err:.2e}",
                    f"{cfg}, {M}x{N}x{K} {dtype}: relative error {err:.2e}",
                    "6",
                )
