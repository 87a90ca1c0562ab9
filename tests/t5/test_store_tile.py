"""T5.2: store_tile, probed alone: the tile written through a descriptor, with T4's bias and
activation rounded once (whole and, for T5.4, in halves); then the whole kernel with bias and GELU."""

import pytest
import torch

from course.errors import root_cause
from course.i18n import agree, cells, say
from course.messages import fail

from .common import T5, cfg, check_stored, gelu, run_matmul, run_store_tile, unwritten_where
from .halves import fail_if_halves_mixed, fail_if_halves_placed, fail_if_one_half_without_bias
from .lost_constants import fail_if_epilogue_constant_lost
from .stored import rounded_through
from .swaps import fail_if_store_swapped, fail_if_sums_turned
from support import DEVICE, OUT_RTOL, padded, rel_err, spans

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


@pytest.mark.t5_2
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
# N in whole 16-byte chunks (48, 72): a TMA store writes whole chunks, so a row ending mid-chunk is
# written past its end on the GPU (§3.3); the ragged edges here are the tiles sticking out of C.
@pytest.mark.parametrize("M, N", [(32, 32), (37, 48), (5, 72)])
def test_store_tile(probes, dtype, M, N):
    c, buf, before, acc = run_store_tile(probes, M, N, dtype, 1)
    want = acc[:M, :N].to(dtype)
    for other in (torch.float16, torch.bfloat16):  # the tile cast to a fixed dtype, not to C's
        ways = rounded_through(acc[:M, :N], other, dtype)
        if other != dtype and not torch.equal(c, want) and any(torch.equal(c, way) for way in ways):
            fail(
                T5,
                f"C {M}x{N} {dtype}：C 里是 acc 舍入到 {other} 的值：存储前转成 c_desc.dtype（C 自己的 dtype），"
                "不要写死一种",
                f"C {M}x{N} {dtype}: C holds acc rounded to {other}: cast to c_desc.dtype (C's own dtype) before "
                "the store, not to a fixed one",
                "3.3",
            )
    fail_if_store_swapped(c, want, acc, -1234.0, 32, 32, f"C {M}x{N} {dtype}", "3.3")
    check_stored(c, buf, before, want, f"C {M}x{N} {dtype}", "3.3")


@pytest.mark.t5_2
def test_store_tile_of_a_tile_that_is_not_square(probes):
    """Tiles of 16 x 32: a box's first element is [pid_m * BLOCK_M, pid_n * BLOCK_N].  With square tiles
    (every other test of store_tile, and the interpreter's config) a coordinate multiplied by the other
    block size lands in the same place."""
    M, N, bm, bn = 48, 96, 16, 32
    c, buf, before, acc = run_store_tile(probes, M, N, torch.float32, 1, bm=bm, bn=bn)
    case = f"C {M}x{N} fp32, BLOCK_M={bm} BLOCK_N={bn}"
    want = acc[:M, :N]
    if not torch.equal(c, want):
        for (pm, pn), (r, col) in displaced_tiles(c, acc, bm, bn):
            sizes = (
                f"pid_m * {'BLOCK_M' if r == pm * bm else 'BLOCK_N'}",
                f"pid_n * {'BLOCK_N' if col == pn * bn else 'BLOCK_M'}",
            )
            fail(
                T5,
                f"{case}：tile (pid_m={pm}, pid_n={pn}) 的值出现在 C 的 [{r}, {col}] = [{sizes[0]}, {sizes[1]}]，"
                f"应当在 [{pm * bm}, {pn * bn}]：box 的起点是 [pid_m * BLOCK_M, pid_n * BLOCK_N]，"
                "行配 BLOCK_M，列配 BLOCK_N",
                f"{case}: tile (pid_m={pm}, pid_n={pn})'s values are at [{r}, {col}] = [{sizes[0]}, {sizes[1]}] of C, "
                f"not at [{pm * bm}, {pn * bn}]: a box starts at [pid_m * BLOCK_M, pid_n * BLOCK_N], rows with "
                "BLOCK_M and columns with BLOCK_N",
                "3.3",
            )
    check_stored(c, buf, before, want, case, "3.3")


def displaced_tiles(c, acc, bm, bn):
    """[((pid_m, pid_n), (row, col))] for each tile whose values lie whole in C at a place where a block
    size of the other dimension would put it (row pid_m * BLOCK_N, column pid_n * BLOCK_M), not its own."""
    found = []
    for pm in range(acc.shape[0] // bm):
        for pn in range(acc.shape[1] // bn):
            tile = acc[pm * bm : (pm + 1) * bm, pn * bn : (pn + 1) * bn].to(c.dtype)
            for r, col in ((pm * bm, pn * bm), (pm * bn, pn * bn), (pm * bn, pn * bm)):
                inside = r + bm <= c.shape[0] and col + bn <= c.shape[1]
                if (r, col) != (pm * bm, pn * bn) and inside and torch.equal(c[r : r + bm, col : col + bn], tile):
                    found.append(((pm, pn), (r, col)))
    return found


def epilogue_candidates(acc, bias, M, N, bm, bn, activation):
    """What store_tile's epilogue would give with each mistake the whole-tile epilogue has been seen to
    make, as {cause: C}: the bias left out or added twice, the activation left out (or both: acc itself),
    applied twice or before the bias, the bias indexed by pid_m."""
    act = gelu if activation == "gelu" else (lambda x: x)
    rows = torch.arange(M, device=DEVICE)[:, None]
    cols = torch.arange(N, device=DEVICE)[None, :]
    by_pid_m = (rows // bm) * bn + cols % bn  # the bias column pid_m * BLOCK_N + j instead of pid_n * BLOCK_N + j
    bias_m = torch.where(by_pid_m < N, bias[by_pid_m.clamp(max=N - 1)], 0.0)
    by_col = (cols // bn) * bn * bn + cols % bn  # pid_n * BLOCK_N handed over as pid_n: multiplied by BLOCK_N again
    bias_col = torch.where(by_col < N, bias[by_col.clamp(max=N - 1)], 0.0)
    found = {"no-bias": act(acc), "bias-by-pid-m": act(acc + bias_m), "bias-twice": act(acc + 2 * bias[None, :])}
    found["bias-column-times-block-n"] = act(acc + bias_col)
    if activation != "none":
        found["no-bias-or-activation"] = acc  # bias_and_activation not called at all
        found["no-activation"] = acc + bias[None, :]
        found["activation-twice"] = act(act(acc + bias[None, :]))
        found["activation-before-bias"] = act(acc) + bias[None, :]
    if bias.stride(0) != 1:  # the bias's first N cells of memory, the stride taken as 1 (NaN between its values here)
        found["bias-stride-one"] = act(acc + bias.as_strided((N,), (1,))[None, :])
    return found


def same_result(c, v):
    """Whether C is v to float32's rounding, a NaN where v has one and nowhere else (a bias read from the
    NaN padding leaves NaN in the same cells of both)."""
    nan = v.isnan()
    return bool(torch.equal(c.isnan(), nan) and (nan.all() or rel_err(c[~nan], v[~nan]) <= 1e-5))


EPILOGUE_CAUSES = {
    "no-bias": ("bias 没有加上", "the bias was not added"),
    "no-activation": ("没有做 activation", "the activation was not applied"),
    "no-bias-or-activation": (
        "C 就是 acc 本身，bias 和 activation 都没有用上：把 acc 交给 bias_and_activation，再转成 C 的 dtype",
        "C is acc itself, with neither the bias added nor the activation applied: hand acc to "
        "bias_and_activation, then cast it to C's dtype",
    ),
    "bias-by-pid-m": (
        "bias 是按 pid_m 取的列，应当按 pid_n",
        "the bias columns were taken at pid_m * BLOCK_N, not pid_n * BLOCK_N",
    ),
    "bias-column-times-block-n": (
        "C 正是 bias 从第 pid_n * BLOCK_N * BLOCK_N 列取时的值（pid_n > 0 的 tile 落到 N 之外，没有 bias）："
        "bias_and_activation 自己把 pid_n 乘上 BLOCK_N，传给它的是 pid_n 本身",
        "C is what a bias taken from column pid_n * BLOCK_N * BLOCK_N gives (past N, so no bias, on the tiles "
        "of pid_n > 0): bias_and_activation multiplies pid_n by BLOCK_N itself, so it is given pid_n as it is",
    ),
    "bias-twice": ("bias 加了两次", "the bias was added twice: add it once, before the activation"),
    "activation-twice": ("activation 做了两次", "the activation was applied twice: once, after the bias"),
    "activation-before-bias": (
        "先做了 activation 再加 bias：要先加 bias，act(acc + bias)",
        "the activation was applied before the bias was added: add the bias first, act(acc + bias)",
    ),
    "bias-stride-one": (
        "bias 是按步长 1 读的：C 和在偏移 j（不是 j * stride_bias）处取 bias 的第 j 个值一致；把 stride_bias 传给 "
        "bias_and_activation",
        "the bias was read as if its stride were 1: C matches bias value j taken at offset j, not j * stride_bias; "
        "pass stride_bias on to bias_and_activation",
    ),
}


def check_epilogue(c, acc, bias, M, N, activation, case, section, bm=32, bn=32):
    """C against act(acc + bias); on a miss, name the mistake whose result C is, if it is one of them."""
    want = acc + bias[None, :]
    want = gelu(want) if activation == "gelu" else want
    err = rel_err(c, want)
    if not c.isnan().any() and err <= 1e-5:
        return
    found = [k for k, v in epilogue_candidates(acc, bias, M, N, bm, bn, activation).items() if same_result(c, v)]
    fail(
        T5,
        f"{case}：相对误差 {err:.1e}" + "".join(f"：{EPILOGUE_CAUSES[k][0]}" for k in found),
        f"{case}: relative error {err:.1e}" + "".join(f": {EPILOGUE_CAUSES[k][1]}" for k in found),
        section,
    )


@pytest.mark.t5_2
@pytest.mark.parametrize("activation", ["none", "gelu"])
def test_store_tile_bias_and_activation(probes, activation):
    """The whole-tile epilogue (EPILOGUE_SUBTILE = 1, the interpreter's and most tuned configs) adds the
    bias of its own columns and applies the activation.  2 x 3 tiles: pid_m and pid_n differ in most
    of them; the bias, read with stride 2, is NaN between and around its values."""
    M, N = 40, 72
    bias = padded(1, 2 * N, torch.float32)[0][0, ::2]
    c, buf, before, acc = run_store_tile(probes, M, N, torch.float32, 1, bias=bias, activation=activation)
    case = say(
        zh=f"C {M}x{N}，整块 epilogue（EPILOGUE_SUBTILE=1），bias 步长 2，activation={activation}",
        en=f"C {M}x{N}, whole-tile epilogue (EPILOGUE_SUBTILE=1), bias with stride 2, activation={activation}",
    )
    check_epilogue(c, acc[:M, :N], bias, M, N, activation, case, "3.3")
    check_stored(c, buf, before, c, case, "3.3")


@pytest.mark.t5_2
def test_store_tile_bias_of_a_tile_that_is_not_square(probes):
    """Tiles of 16 x 32 with a bias: bias_and_activation is given the tile's width, BLOCK_N.  With square
    tiles (every other test of the bias here) BLOCK_M in its place passes, and a GPU compile alone saw it."""
    M, N, bm, bn = 16, 64, 16, 32
    bias = padded(1, N, torch.float32)[0][0]
    case = f"C {M}x{N} fp32, BLOCK_M={bm} BLOCK_N={bn}, bias"
    try:
        c, buf, before, acc = run_store_tile(probes, M, N, torch.float32, 1, bias=bias, bm=bm, bn=bn)
    except Exception as e:  # noqa: BLE001 - told apart below by a run on square tiles
        run_store_tile(probes, M, N, torch.float32, 1, bias=bias)  # 32 x 32: raises again where square fails too
        inner = root_cause(e)
        error = f"{type(inner).__name__}: {str(inner).splitlines()[0] if str(inner) else ''}"
        fail(
            T5,
            f"{case}：store_tile 抛出了错误（{error}），同样的 C 和 bias 换成 32x32 的方 tile "
            "却不出错：只有 tile 不是方的才出错，说明 epilogue 里有个形状用了另一个维度的块大小。"
            "bias 和 tile 的列对应，bias_and_activation 收到的块大小是 tile 的宽度："
            "bias_and_activation(acc, ..., pid_n, BLOCK_N, ...)",
            f"{case}: store_tile raised an error ({error}), and with square 32x32 tiles, the same C and bias, it does "
            "not: only tiles that are not square fail, so a shape in the epilogue takes the other dimension's block "
            "size. The bias goes with the tile's columns: bias_and_activation is given the tile's width, "
            "bias_and_activation(acc, ..., pid_n, BLOCK_N, ...)",
            "3.3",
        )
    check_epilogue(c, acc[:M, :N], bias, M, N, "none", case, "3.3", bm=bm, bn=bn)
    check_stored(c, buf, before, c, case, "3.3")


@pytest.mark.parametrize("subtile", [pytest.param(1, marks=pytest.mark.t5_2), pytest.param(2, marks=pytest.mark.t5_4)])
def test_store_tile_activation_without_bias(probes, subtile):
    """ACTIVATION="gelu" with HAS_BIAS False, a layer without a bias: the GELU is applied all the same
    (every other test of the epilogue's activation has a bias)."""
    M, N = 37, 72
    c, _, _, acc = run_store_tile(probes, M, N, torch.float32, subtile, activation="gelu")
    want, case = gelu(acc[:M, :N]), f"C {M}x{N}, EPILOGUE_SUBTILE={subtile}, HAS_BIAS=False, ACTIVATION='gelu'"
    err = rel_err(c, want)
    if err <= 1e-5:
        return
    plain = (c == acc[:M, :N]).all(0) & (c != want).any(0)  # columns where C is acc itself, not its GELU
    others = ~plain
    if plain.any() and (not others.any() or rel_err(c[:, others], want[:, others]) <= 1e-5):
        where = spans(plain.nonzero().flatten().tolist())
        fail(
            T5,
            f"{case}：第 {where} 列没有做 activation，C 在那里就是 acc 本身：没有 bias 时也要做激活，"
            "HAS_BIAS 只管 bias",
            f"{case}: in columns {where} the activation was not applied, C is acc itself there: apply it without a "
            "bias too; HAS_BIAS is about the bias alone",
            "3.3" if subtile == 1 else "5",
        )
    if subtile == 2:  # T5.4's first check: a half in the wrong place is named here, as in the checks after it
        fail_if_halves_mixed(c, acc, 32, gelu, 1e-5, case)
        fail_if_store_swapped(c, want, gelu(acc), -1234.0, 32, 32, case, "5", subtile)
        fail_if_halves_placed(c, acc, 32, gelu, 1e-5, -1234.0, case)
        unwritten = (c == -1234.0).sum().item()  # run_store_tile's sentinel
        where = unwritten_where(c, 32)
        if unwritten and where[1]:
            fail(
                T5,
                f"{case}：C 有 {unwritten} 个格子没写{where[0]}",
                f"{case}: {cells(unwritten)} of C {agree(unwritten, 'was', 'were')} never written{where[1]}",
                "5",
            )
    fail(
        T5,
        f"{case}：相对误差 {err:.1e}",
        f"{case}: relative error {err:.1e}",
        "3.3" if subtile == 1 else "5",
    )


@pytest.mark.parametrize("subtile", [pytest.param(1, marks=pytest.mark.t5_2), pytest.param(2, marks=pytest.mark.t5_4)])
def test_store_tile_rounds_once_after_the_bias(probes, subtile):
    """fp16 C, sums near 1000 and a bias of -1000: act(acc + bias) is taken on the float32 sum and
    rounded to C's dtype once, at the store.  Rounded to fp16 first (its step is 0.5 at 1000), the
    small results that remain would be off by up to 0.25."""
    M, N = 32, 64
    acc = 1000 + 0.3 * torch.randn(M, N, device=DEVICE)
    bias = torch.full((N,), -1000.0, dtype=torch.float16, device=DEVICE)
    c, _, _, _ = run_store_tile(probes, M, N, torch.float16, subtile, bias=bias, acc=acc)
    want = (acc - 1000).to(torch.float16)
    err = rel_err(c, want)
    if err > 2e-3:
        case = f"C {M}x{N} fp16, EPILOGUE_SUBTILE={subtile}"
        if subtile == 2:  # a half stored in the wrong place shows here first: name it, not the rounding
            fail_if_halves_mixed(c, acc, 32, lambda x: (x - 1000).to(torch.float16), 2e-3, case)
            fail_if_one_half_without_bias(
                c, acc, 32, lambda x: (x - 1000).to(torch.float16), lambda x: x.to(torch.float16), 2e-3, case
            )
        fail_if_store_swapped(c, want, acc - 1000, -1234.0, 32, 32, case, "3.3" if subtile == 1 else "5", subtile)
        unwritten = (c == -1234.0).sum().item()  # run_store_tile's sentinel
        if unwritten:
            where = unwritten_where(c, 32 if subtile == 2 else None)
            fail(
                T5,
                f"C {M}x{N} fp16，EPILOGUE_SUBTILE={subtile}：C 有 {unwritten} 个格子没写{where[0]}",
                f"C {M}x{N} fp16, EPILOGUE_SUBTILE={subtile}: {cells(unwritten)} of C "
                f"{agree(unwritten, 'was', 'were')} never written{where[1]}",
                "3.3" if subtile == 1 else "5",
            )
        early = rel_err(c, (acc.to(torch.float16).float() - 1000).to(torch.float16)) <= 2e-3
        fail(
            T5,
            f"C {M}x{N} fp16，EPILOGUE_SUBTILE={subtile}，和约 1000、bias 为 -1000：相对误差 {err:.1e}"
            + ("：和在加 bias 之前就转成了 fp16；应当在 float32 里加 bias、做激活，存储时只转一次" if early else ""),
            f"C {M}x{N} fp16, EPILOGUE_SUBTILE={subtile}, sums near 1000 and a bias of -1000: relative error "
            f"{err:.1e}"
            + (
                ": the sum was cast to fp16 before the bias was added; add the bias and apply the activation in "
                "float32, and cast once, at the store"
                if early
                else ""
            ),
            "3.3" if subtile == 1 else "5",
        )


@pytest.mark.t5_2
@pytest.mark.parametrize("mode", ["dp", "swap"])
def test_matmul_whole_tile_with_bias_and_gelu(t5, probes, mode):
    """The whole kernel with EPILOGUE_SUBTILE = 1, bias and GELU: data-parallel tiles, or the
    turned-around tiles of a decode step (§6.3); 2 x 3 tiles of 32 (of 16 x 32 for swap)."""
    M, N, K = 45, 70, 96
    a, b = padded(M, K, torch.float16)[0], padded(K, N, torch.float16)[0]
    bias = padded(1, 2 * N, torch.float16)[0][0, ::2]
    case = f"{M}x{K} @ {K}x{N} fp16, EPILOGUE_SUBTILE=1, mode={mode}, bias + GELU"
    c = run_matmul(t5, case, "3.3", a, b, bias=bias, activation="gelu", config=cfg(t5, mode=mode), num_programs=3)
    ref = torch.nn.functional.gelu(a.double() @ b.double() + bias.double())
    err = rel_err(c, ref)
    if mode == "dp" and err > OUT_RTOL[torch.float16]:  # the tile loop's sums taken elsewhere (T5.1) show here first
        act = torch.nn.functional.gelu
        fail_if_sums_turned(c, a, b, 32, 32, lambda x: act(x + bias.double()), OUT_RTOL[torch.float16], case)
        fail_if_epilogue_constant_lost(probes, c, a, b, bias, OUT_RTOL[torch.float16], case)
    if c.isnan().any() or err > OUT_RTOL[torch.float16]:
        fail(
            T5,
            f"{M}x{K} @ {K}x{N} fp16，EPILOGUE_SUBTILE=1，mode={mode}，bias + GELU：相对误差 {err:.2e}",
            f"{M}x{K} @ {K}x{N} fp16, EPILOGUE_SUBTILE=1, mode={mode}, bias + GELU: relative error {err:.2e}",
            "3.3",
        )
