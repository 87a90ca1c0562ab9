"""T4.5 (advanced): bias_and_activation alone through a probe, then fused into matmul."""

import pytest
import torch
import triton

from course.i18n import say
from course.messages import read
from course.tile_order import grouped_order

import bounds
from .common import BLOCK_KEYS, quick
from .gelu_models import approximation_hint, bias_misuse_hint, fail_if_math_refused, gelu
from support import DEVICE, DTYPES, OUT_RTOL, poisoned_view, random, rel_err, spans, wrong_cells

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T4.5 (advanced) bias_and_activation alone, through a probe
# ================================================================================================
@pytest.mark.t4_5
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("has_bias, activation", [(True, "none"), (False, "gelu"), (True, "gelu")])
@pytest.mark.parametrize("N, bn", [(40, 16), (70, 32), (5, 16)])
def test_bias_and_activation(probes, monkeypatch, dtype, has_bias, activation, N, bn):
    """The tile of a row of programs across N, padding columns included: the bias sits inside NaN
    padding with stride 2, so a load past its end or between its elements puts NaN in the tile."""
    bm, tiles = 16, triton.cdiv(N, bn)
    acc = 3 * torch.randn(bm, tiles * bn, device=DEVICE)
    out = torch.full_like(acc, -7.0)
    bias, _ = poisoned_view(1, N, "every-other-column", dtype)
    bias = bias[0]
    case = say(  # the bias is described only where the kernel is told to read it
        zh=f"N={N}，BLOCK_N={bn}，HAS_BIAS={has_bias}，ACTIVATION={activation!r}"
        + (f"，bias 为 {dtype}、stride 为 2" if has_bias else ""),
        en=f"N={N}, BLOCK_N={bn}, HAS_BIAS={has_bias}, ACTIVATION={activation!r}"
        + (f", bias {dtype} with stride 2" if has_bias else ""),
    )
    try:
        probes.bias_and_activation_probe[(tiles,)](
            acc, acc.stride(0), bias, N, bias.stride(0), out, bm, bn, has_bias, activation
        )
    except Exception as e:  # noqa: BLE001 - a GELU of a half-precision tile is told here; the rest go on
        fail_if_math_refused(case, e)
        raise
    nan_columns = out[:, :N].isnan().any(0).cpu()
    if out.isnan().any():
        # Whose NaN: the same tile with the bias's padding finite (0) has none when it came from there.
        again = torch.full_like(acc, -7.0)
        if has_bias:
            probes.bias_and_activation_probe[(tiles,)](
                acc, acc.stride(0), finite_padding(bias), N, bias.stride(0), again, bm, bn, has_bias, activation
            )
        if not has_bias or again.isnan().any():
            hint = not_from_the_bias(spans(out.isnan().any(0).nonzero().flatten().tolist()), has_bias)
            pytest.fail(say(zh=f"{case}：{hint}；{read('T4.5')}", en=f"{case}: {hint}; {read('T4.5')}"), pytrace=False)
    if nan_columns.any():
        # bias[n] sits at 2 * n, NaN between: a load with stride 1 takes NaN in exactly the odd columns.
        if torch.equal(nan_columns, torch.arange(N) % 2 == 1):
            pytest.fail(
                say(
                    zh=f"{case}：NaN 正好出现在列号 < N 的奇数列，和按 stride 1 读 bias 一样（bias 的元素之间"
                    f"这里是 NaN）：按 bias_ptr + offs_n * stride_bias 寻址；{read('T4.5')}",
                    en=f"{case}: NaN in exactly the odd columns < N, as a bias read with stride 1 gets (between "
                    f"the bias's elements is NaN here): address it as bias_ptr + offs_n * stride_bias; "
                    f"{read('T4.5')}",
                ),
                pytrace=False,
            )
        columns = spans(nan_columns.nonzero().flatten().tolist())
        pytest.fail(
            say(
                zh=f"{case}：第 {columns} 列（都 < N）出现了 NaN：那里的 bias 不是从 bias 的元素读的，而是读到了"
                f"它周围的 NaN 填充；{read('T4.5')}",
                en=f"{case}: NaN in columns {columns}, all < N: the bias added there was read from the NaN "
                f"padding around the bias, not from its elements; {read('T4.5')}",
            ),
            pytrace=False,
        )
    if out[:, N:].isnan().any():
        pytest.fail(
            say(
                zh=f"{case}：tile 里列号 >= N 的部分是 NaN，说明 bias 的 load 读过了末尾（这里是 NaN 填充；"
                f"在 GPU 上这种读是未定义行为，可能直接出错）。写回时这些列被掩掉了，别的测试看不出来："
                f"load 时加 mask=offs_n < N, other=0.0；{read('T4.5')}",
                en=f"{case}: the tile's columns >= N hold NaN, so the bias load read past its end (NaN "
                f"padding here; on a GPU that read is undefined and can fault). The store masks those "
                f"columns off, so no other test sees it: load with mask=offs_n < N, other=0.0; "
                f"{read('T4.5')}",
            ),
            pytrace=False,
        )
    x = acc[:, :N].double() + (bias.double()[None, :] if has_bias else 0)  # before the activation
    want = gelu(x) if activation == "gelu" else x
    err = rel_err(out[:, :N], want)
    if err <= 1e-5:
        if has_bias and bias_read_outside(probes, monkeypatch, acc, bias, N, bm, bn, activation):
            pytest.fail(
                say(
                    zh=f"{case}：结果是对的，可是 bias 的 load 有没被掩码挡住的 lane 读到了 bias 之外（列号 >= N；"
                    f"读来的值事后被丢掉了，比如 load 之后再 tl.where；但读这件事已经发生，在 GPU 上可能是非法地址）："
                    f"load 时加 mask=offs_n < N, other=0.0；{read('T4.5')}",
                    en=f"{case}: the result is right, but lanes of the bias load, not masked off, read outside "
                    f"the bias (columns >= N; the values read were thrown away afterwards, by a tl.where after "
                    f"the load, say; the reads were still made, and on a GPU such an address can fault): load "
                    f"with mask=offs_n < N, other=0.0; {read('T4.5')}",
                ),
                pytrace=False,
            )
        return
    hint = wrong_cells(out[:, :N], want, 1e-5)
    if has_bias:  # each tile's bias from pid_n * BLOCK_N elements on, then stride_bias apart
        unscaled = acc[:, :N].double() + tile_start_unscaled(bias, N, bn)
        unscaled = gelu(unscaled) if activation == "gelu" else unscaled
    if activation in ("gelu", "none") and rel_err(out[:, :N], x if activation == "gelu" else gelu(x)) <= 1e-5:
        hint = gelu_flag_words(activation)
    elif has_bias and activation == "gelu" and rel_err(out[:, :N], gelu(acc[:, :N].double()) + bias.double()) <= 1e-5:
        hint = say(
            zh="bias 是在 GELU 之后加的：先加 bias，gelu(acc + bias)",
            en="the bias was added after the GELU: add it first, gelu(acc + bias)",
        )
    elif has_bias and rel_err(out[:, :N], (gelu if activation == "gelu" else torch.clone)(acc[:, :N].double())) <= 1e-5:
        hint = say(  # the same activation on acc alone: the bias left out
            zh="结果正好是没加 bias 的结果：HAS_BIAS 为 True 时，不管 ACTIVATION 是什么都要加 bias[None, :]",
            en="it is exactly the result without the bias: with HAS_BIAS True add bias[None, :], whatever "
            "ACTIVATION is",
        )
    elif activation == "gelu" and (approximate := approximation_hint(out[:, :N], x, 1e-5)):
        hint = approximate
    elif activation == "gelu" and rel_err(out[:, :N], gelu(gelu(x))) <= 1e-5:
        hint = say(
            zh="结果正好是 GELU 做了两次：gelu(gelu(acc + bias))；只做一次",
            en="it is exactly the GELU applied twice, gelu(gelu(acc + bias)): apply it once",
        )
    elif (
        has_bias
        and dtype != torch.float32
        and any(rel_err(out[:, :N], x) <= 1e-5 for x in rounded_first(acc[:, :N], bias, activation))
    ):
        hint = say(
            zh=f"结果正好是 acc 先舍入成 {dtype} 再加 bias：在 float32 里加 bias（bias.to(tl.float32)），"
            "舍入只在存储时做一次",
            en=f"it is exactly acc rounded to {dtype} before the bias was added: add the bias in float32 "
            "(bias.to(tl.float32)) and round once, at the store",
        )
    elif (
        has_bias
        and dtype == torch.float32
        and rel_err(out[:, :N], with_bias_in_fp16(acc[:, :N], bias, activation)) <= 1e-5
    ):
        hint = say(
            zh="结果正好是 float32 的 bias 先舍入成 float16 再加上去：bias 按它自己的 dtype 读，再 .to(tl.float32)",
            en="it is exactly the float32 bias rounded to float16 before it was added: read the bias in its own "
            "dtype, then .to(tl.float32)",
        )
    elif has_bias and rel_err(out[:, :N], unscaled) <= 1e-5:
        hint = say(
            zh="结果正好是每个 tile 的 bias 从 bias_ptr + pid_n * BLOCK_N 开始读（tile 的起点没乘 stride_bias）："
            "整个 offs_n 都要乘 stride_bias，bias_ptr + offs_n * stride_bias",
            en="it is exactly each tile's bias read from bias_ptr + pid_n * BLOCK_N, the tile's start not "
            "multiplied by stride_bias: multiply the whole offs_n, bias_ptr + offs_n * stride_bias",
        )
    elif misused := bias_misuse_hint(out[:, :N], acc[:, :N], bias, activation, 1e-5, bn, has_bias):
        hint = misused
    elif has_bias and bm == bn:  # a square tile: bias[:, None] broadcasts too, down the rows
        by_row = acc.double() + bias_down_the_rows(bias, N, bm, tiles)
        if rel_err(out[:, :N], (gelu(by_row) if activation == "gelu" else by_row)[:, :N]) <= 1e-5:
            hint = say(
                zh="结果正好是 bias 沿行方向加上去的（tile 的第 i 行加 bias[offs_n[i]]）：bias 每列一个值，"
                "要广播成 bias[None, :]",
                en="it is exactly the bias added down the rows (row i of the tile got bias[offs_n[i]]): the "
                "bias has one value per column, so broadcast it as bias[None, :]",
            )
    pytest.fail(
        say(
            zh=f"{case}：相对误差 {err:.2e} > 1e-5；{hint}；{read('T4.5')}",
            en=f"{case}: relative error {err:.2e} > 1e-5; {hint}; {read('T4.5')}",
        ),
        pytrace=False,
    )


def rounded_first(acc, bias, activation):
    """float64: act(acc rounded to the bias's dtype + bias), the bias added after a cast of the tile: the sum
    taken in float64, and the sum taken in the bias's dtype too (rounded once more)."""
    low = acc.to(bias.dtype)
    sums = (low.double() + bias.double()[None, :], (low + bias[None, :]).double())
    return [gelu(x) if activation == "gelu" else x for x in sums]


def with_bias_in_fp16(acc, bias, activation):
    """float64: act(acc + the bias rounded to float16), a bias cast to tl.float16 before the add."""
    x = acc.double() + bias.half().double()[None, :]
    return gelu(x) if activation == "gelu" else x


def tile_start_unscaled(bias, N, bn):
    """[1, N] float64: bias column n as read from bias_ptr + pid_n * BLOCK_N + j * stride_bias (n = pid_n *
    BLOCK_N + j), the tile's start in elements, not strides: the cells of the bias's own memory."""
    s, n = bias.stride(0), torch.arange(N, device=bias.device)
    start = (n // bn) * bn
    flat = bias.as_strided(((N - 1) * s + 1,), (1,))
    return flat[start + (n - start) * s].double()[None, :]


def gelu_flag_words(activation):
    """What to say when the result is the pre-activation under ACTIVATION="gelu", or its GELU under "none"."""
    if activation == "gelu":
        return say(
            zh="结果正好是没做 GELU 的值，而这次 ACTIVATION='gelu'：ACTIVATION == \"gelu\" 时要做 GELU",
            en="it is exactly the value with no GELU applied, and ACTIVATION='gelu' here: apply the GELU when "
            'ACTIVATION == "gelu"',
        )
    return say(
        zh="结果正好是做了 GELU 的值，而这次 ACTIVATION='none'：只在 ACTIVATION == \"gelu\" 时做 GELU",
        en="it is exactly the GELU of the right value, and ACTIVATION='none' here: apply the GELU only when "
        'ACTIVATION == "gelu"',
    )


def bias_read_outside(probes, monkeypatch, acc, bias, N, bm, bn, activation):
    """Whether the probe, run again on the interpreter under an AddressWatch, read outside the bias
    (or acc) with a lane no mask turned off (bounds.unmasked_reads)."""
    tiles, out = acc.shape[1] // bn, torch.full_like(acc, -7.0)
    launch = lambda: probes.bias_and_activation_probe[(tiles,)](  # noqa: E731
        acc, acc.stride(0), bias, N, bias.stride(0), out, bm, bn, True, activation
    )
    return bounds.unmasked_reads(probes, monkeypatch, "bias_and_activation_probe", launch) > 0


def finite_padding(bias):
    """The same bias (its values, its stride 2), in padding of zeros instead of NaN."""
    clean, _ = poisoned_view(1, bias.numel(), "every-other-column", bias.dtype, fill=0.0)
    clean[0].copy_(bias)
    return clean[0]


def not_from_the_bias(columns, with_bias):
    """What to say of a NaN in columns that no read of the bias's NaN padding made: none was given, or
    the call with that padding finite has NaN too."""
    if with_bias:
        zh = "把 bias 周围的填充换成 0 再算一遍照样有 NaN"
        en = "the same call with the bias's padding made 0 has NaN too"
    else:
        zh, en = "这次调用没有 bias", "this call has no bias"
    return say(
        zh=f"第 {columns} 列有 NaN，而{zh}，所以 NaN 不是从 bias 读来的：输入里也没有 NaN，"
        "那就是内核自己算出了它，或者读到了张量外面。一种情况：激活里的溢出，比如用 tl.exp 拼出的 tanh 在 x 大时"
        "成了 inf / inf",
        en=f"NaN in columns {columns}, and {en}, so the NaN comes from no read of the bias: the inputs hold "
        "none either, so the kernel computed it or read it from outside the tensors. One way this happens: "
        "an overflow in the activation, such as a tanh built from tl.exp that gives inf / inf for a large x",
    )


def bias_down_the_rows(bias, N, bm, tiles):
    """What a square tile gets from the bias broadcast as bias[:, None]: in tile t, row i holds the
    bias of column t * BLOCK_N + i (0 past N, the load's mask), as wide as the probe's acc."""
    cols = torch.arange(tiles * bm, device=bias.device).view(tiles, bm)  # BLOCK_N == BLOCK_M here
    values = torch.where(cols < N, bias.double()[cols.clamp(max=N - 1)], 0.0)  # [tile, row]
    return values.t()[:, :, None].expand(bm, tiles, bm).reshape(bm, tiles * bm)


# ================================================================================================
# T4.5 (advanced) fused bias and GELU
# ================================================================================================
def fused_reference(a, b, bias, activation):
    out = a.double() @ b.double()
    if bias is not None:
        out = out + bias.double()
    return torch.nn.functional.gelu(out) if activation == "gelu" else out


# Tile indices a bias load may take in place of pid_n, in words: each program's C tile gets the bias
# of other columns then.  (The interpreter numbers programs by pid, as tl.program_id(0) does.)
WRONG_BIAS_TILES = {
    "pid": say(
        zh="tl.program_id(0)（分组顺序下它不是 pid_n）",
        en="tl.program_id(0), which is not pid_n in grouped order",
    ),
    "zero": say(zh="0，每个 tile 都拿第 0 到 BLOCK_N - 1 列的", en="0: every tile takes columns 0 to BLOCK_N - 1"),
    "pid_m": say(zh="pid_m（tile 的行号）", en="pid_m, the tile's row"),
}


def bias_of_other_columns(c, a, b, bias, activation, watch, rtol):
    """What to say when C is what the kernel computes with the bias offsets built from another tile
    index than pid_n (WRONG_BIAS_TILES), from the launch's own block sizes; None when it is not."""
    if len(watch.launches) != 1 or not all(k in watch.launches[0][1] for k in BLOCK_KEYS):
        return None
    cfg = watch.launches[0][1]
    (M, N), bm, bn = c.shape, cfg["BLOCK_M"], cfg["BLOCK_N"]
    order = grouped_order(triton.cdiv(M, bm), triton.cdiv(N, bn), cfg["GROUP_M"])
    product, values = a.double() @ b.double(), bias.double().cpu()
    for index, words in WRONG_BIAS_TILES.items():
        added = torch.zeros(M, N, dtype=torch.float64)
        for pid, (pid_m, pid_n) in enumerate(order):
            tile = {"pid": pid, "zero": 0, "pid_m": pid_m}[index]
            taken = torch.arange(tile * bn, tile * bn + bn)
            cols = torch.arange(pid_n * bn, min(pid_n * bn + bn, N))
            got = torch.where(taken < N, values[taken.clamp(max=N - 1)], 0.0)[: len(cols)]
            added[pid_m * bm : (pid_m + 1) * bm, cols] = got
        x = product + added.to(product.device)
        if rel_err(c, torch.nn.functional.gelu(x) if activation == "gelu" else x) <= rtol:
            return say(
                zh=f"C 正好是每个 tile 加上了别的列的 bias 的结果：bias 的偏移按 {words} 算，而不是按 pid_n；"
                f"应该是 pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
                en=f"C is exactly what the kernel computes when each tile adds the bias of other columns: "
                f"offsets from {words}, not from pid_n; they must be pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            )
    return None


@pytest.mark.t4_5
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("with_bias, activation", [(True, None), (False, "gelu"), (True, "gelu")])
@pytest.mark.parametrize("M, N, K", [(48, 48, 40), (37, 70, 33), (20, 9, 0)])
def test_bias_and_gelu(t4, watched, poisoned_allocations, dtype, with_bias, activation, M, N, K):
    a, b = random((M, K), dtype), random((K, N), dtype)
    bias, _ = poisoned_view(1, N, "every-other-column", dtype) if with_bias else (None, None)
    bias = bias[0] if with_bias else None  # a bias with stride 2, inside NaN padding
    c = watched(a, b, step="T4.5", bias=bias, activation=activation, config=quick(t4))
    case = say(
        zh=f"{M}x{K} @ {K}x{N} {dtype}，bias={'有' if with_bias else '无'}，activation={activation}",
        en=f"{M}x{K} @ {K}x{N} {dtype}, bias={'yes' if with_bias else 'no'}, activation={activation}",
    )
    ref = fused_reference(a, b, bias, activation)
    err = rel_err(c, ref)
    if err <= OUT_RTOL[dtype] and not c.isnan().any():
        return
    hint = wrong_cells(c, ref, OUT_RTOL[dtype])
    x = fused_reference(a, b, bias, None)  # before the activation, in float64
    shifted = with_bias and bias_of_other_columns(c, a, b, bias, activation, watched.watch, OUT_RTOL[dtype])
    if c.isnan().any():
        # A and B hold no NaN here; the bias sits in NaN padding. Whose NaN: the same call with the
        # bias's padding finite (0) says whether the NaN came from around the bias or from elsewhere.
        columns = spans(c.isnan().any(0).nonzero().flatten().tolist())
        again = with_bias and watched(
            a, b, step="T4.5", bias=finite_padding(bias), activation=activation, config=quick(t4)
        )
        if with_bias and not again.isnan().any():
            hint = say(
                zh=f"第 {columns} 列有 NaN：那里加上的 bias 是从 bias 周围的 NaN 填充读来的，不是它的元素"
                "（把填充换成 0 再算一遍就没有 NaN 了）",
                en=f"NaN in columns {columns}: the bias added there was read from the NaN padding around the "
                f"bias, not from its elements (with that padding made 0 the same call has none)",
            )
        else:
            hint = not_from_the_bias(columns, with_bias)
    elif shifted:
        hint = shifted
    elif rel_err(c, x if activation == "gelu" else gelu(x)) <= OUT_RTOL[dtype]:  # the launch's flags are checked
        hint = gelu_flag_words(activation)
    elif (
        with_bias and activation and rel_err(c, fused_reference(a, b, None, "gelu") + bias.double()) <= OUT_RTOL[dtype]
    ):
        hint = say(
            zh="bias 是在 GELU 之后加的：先加 bias，C = gelu(A @ B + bias)",
            en="the bias was added after the GELU: add it first, C = gelu(A @ B + bias)",
        )
    elif activation == "gelu" and (approximate := approximation_hint(c, x, OUT_RTOL[dtype])):  # the GELU wrong
        hint = approximate
    pytest.fail(
        say(
            zh=f"{case}：相对误差 {err:.2e} > {OUT_RTOL[dtype]:.1e}；{hint}；{read('T4.5')}",
            en=f"{case}: relative error {err:.2e} > {OUT_RTOL[dtype]:.1e}; {hint}; {read('T4.5')}",
        ),
        pytrace=False,
    )


@pytest.mark.t4_5
def test_bias_is_one_value_per_column(t4, watched, poisoned_allocations):
    """With K = 0 the product is zero, so C must be the bias itself, repeated down every row."""
    M = N = 32
    bias = random((N,), torch.float16)
    c = watched(random((M, 0), torch.float16), random((0, N), torch.float16), step="T4.5", bias=bias, config=quick(t4))
    want = bias[None, :].expand(M, N)
    if torch.equal(c, want):
        return
    by_row = bool((c == c[:, :1]).all()) and not bool((c == c[:1, :]).all())
    hint = (
        say(
            zh="C 的每一行只有一个值，说明 bias 是沿行方向加的：bias 每列一个值，要广播成 bias[None, :]",
            en="each row of C holds one value, so the bias went down the rows: it has one value per "
            "column, so broadcast it as bias[None, :]",
        )
        if by_row
        else say(zh="这里 C 必须等于 bias[None, :]", en="C must equal bias[None, :] here")
    )
    pytest.fail(
        say(
            zh=f"K = 0，C 为 {M}x{N}，带 bias：{hint}；{read('T4.5')}",
            en=f"K = 0, C {M}x{N} with a bias: {hint}; {read('T4.5')}",
        ),
        pytrace=False,
    )
