"""T6.4 (advanced): the expert MLP's first launch, gate and up with SwiGLU in its epilogue; the whole
layer, gate/up then down, in test_moe_mlp.py."""

import pytest
import torch

from course.i18n import say
from course.messages import fail

from .accesses import Accesses, fail_if_read_past_k, fail_if_undefined_used
from .common import (
    OUT_RTOL,
    T6,
    fail_if_math_dtype_refused,
    make_ids,
    raised_by,
    reference,
    watched_call,
)
from .products import box_coordinates_named, strides_swapped, weight_box_mistakes
from bounds import AddressWatch
from support import DEVICE, DTYPES, UNWRITTEN, descriptor, rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T6.4 (advanced) the expert MLP in two launches
# ================================================================================================
@pytest.mark.t6_4
def test_gate_up_product_alone(probes, monkeypatch):
    """gate_up_product on one tile, fp16 inputs over K = 488 (eight k-boxes, the last one 40 wide): gate
    and up are sums of exact fp16 products, so summed in float32 they sit within 1e-5 of float64 (§5.1),
    where the whole layer's test, after the rounding to fp16, cannot tell a sum kept in fp16 from one in
    float32.  On the interpreter each read is watched too: each element of x's live rows is read once,
    for both, and none of the 24 padding cells that follow each row of x (a view) past K."""
    bm, bn, bk, K, F, pad = 16, 16, 64, 488, 32, 24
    # a row's box past K would read the padding; the buffer holds rows enough for every address a load with x's
    # strides swapped makes (products.strides_swapped): those past x are outside every tensor, never in w2d's cells
    held = -(-((K - 1) * (K + pad) + 20) // (K + pad))
    x = torch.randn(held, K + pad, device=DEVICE).half()[:20, :K]
    w2d = torch.randn(3 * 2 * F, K, device=DEVICE).half()  # three experts' [gate; up] rows
    x_rows = torch.full((bm,), -1, dtype=torch.int32)
    x_rows[:11] = torch.randint(0, 20, (11,), dtype=torch.int32)  # 11 live rows, the rest not
    gate_row, up_row = 2 * F + bn, 2 * F + F + bn  # expert 1, pid_n = 1
    gate = torch.full((bm, bn), UNWRITTEN, device=DEVICE)
    up = torch.full((bm, bn), UNWRITTEN, device=DEVICE)
    accesses = Accesses()
    AddressWatch(probes, monkeypatch, ("gate_up_probe",), seen=accesses)
    with box_coordinates_named(monkeypatch, "gate_up_product", "5.1"):  # k coordinates that are k-blocks' numbers
        probes.gate_up_probe[(1,)](
            x,
            descriptor(w2d, [bn, bk]),
            x_rows.to(DEVICE),
            gate,
            up,
            gate_row,
            up_row,
            K,
            x.stride(0),
            x.stride(1),
            bm,
            bn,
            bk,
        )
    live = x_rows >= 0
    for got in (gate, up):
        fail_if_undefined_used(got.cpu()[live], "gate_up_product", "5.1")
    a = x.cpu().double()[x_rows[live].long()]
    errs = {}
    for name, got, row in (("gate", gate, gate_row), ("up", up, up_row)):
        got = got.cpu()
        want = a @ w2d.cpu().double()[row : row + bn].T
        errs[name] = (rel_err(got[live], want), int((got[~live] != 0).sum()))
    if any(err > 1e-5 or dead for err, dead in errs.values()):
        (eg, dg), (eu, du) = errs["gate"], errs["up"]
        off = eg > 1e-5 or eu > 1e-5  # the live rows: each sum stated over 1e-5 only when it is
        w64 = w2d.cpu().double()
        swapped = (
            off
            and all(  # gate holds up's product and up gate's
                rel_err(got.cpu()[live], a @ w64[row : row + bn].T) <= 1e-5
                for got, row in ((gate, up_row), (up, gate_row))
            )
        )
        same = None  # both products of one box: up read at gate_row, or gate at up_row
        if off and not swapped:
            for name, got, row in (("up", up, gate_row), ("gate", gate, up_row)):
                if rel_err(got.cpu()[live], a @ w64[row : row + bn].T) <= 1e-5:
                    same = name
        last = (K - 1) // bk * bk  # the last k-box's first column
        into_gate = (  # up's dot given gate as its accumulator: up = gate + the last k-box's up product
            off
            and rel_err(gate.cpu()[live], a @ w64[gate_row : gate_row + bn].T) <= 1e-5
            and rel_err(
                up.cpu()[live],
                a @ w64[gate_row : gate_row + bn].T + a[:, last:] @ w64[up_row : up_row + bn, last:].T,
            )
            <= 1e-5
        )
        # every live value of both exactly an fp16 value (x's dtype), as float32 sums never all are: rounded
        rounded = off and all(bool((g.cpu()[live] == g.cpu()[live].half().float()).all()) for g in (gate, up))
        found = None  # the one of gate and up that is off, where it is a known wrong sum (products.py): which, zh, en
        for name, got, row in (("gate", gate, gate_row), ("up", up, up_row)):
            box = w64[row : row + bn]
            ways = weight_box_mistakes(a, w64, row, K, bn, bk) + [strides_swapped(x, x_rows[live].long(), box)]
            hits = [(zh, en) for sums, zh, en in ways if sums.any() and rel_err(got.cpu()[live], sums) <= 1e-5]
            if off and not swapped and same is None and errs[name][0] > 1e-5 and len(hits) == 1 and found is None:
                found = (name, *hits[0])
        rounded = rounded and found is None  # a sum kept in fp16 (weight_box_mistakes) is all fp16 values too
        fail(
            T6,
            f"gate_up_product，fp16 输入，K={K}："
            + (
                f"live 行上 gate 和 float64 差 {eg:.2e}，up 差 {eu:.2e}（相对），"
                "超过 1e-5（fp16 的乘积在 float32 里相加，误差在它之内）"
                if off
                else f"live 行是对的（gate 差 {eg:.2e}，up 差 {eu:.2e}，都在 1e-5 之内）"
            )
            + (f"；不 live 的行里 gate 有 {dg} 个、up 有 {du} 个非零值，应当全是 0" if dg + du else "")
            + ("：A 的加载要用 live 挡住这些行，读成 0（other=0）" if dg + du and not off else "")
            + (  # the rows swapped and the two returned the other way round give the same: both said (learner37)
                "：gate 里是 up 的乘积，up 里是 gate 的：gate_row 和 up_row 用反了，或者返回时 gate 和 up 换了位置"
                "（要 return gate, up）"
                if swapped
                else ""
            )
            + (
                "：up 正是 gate 加上最后一个 k 块的 up 乘积：up 的 tl.dot 拿 gate 当了累加器"
                "（tl.dot(a, up 的 box, gate)）；up 要有自己的累加器"
                if into_gate
                else ""
            )
            + (
                f"：{same} 里是 {'gate' if same == 'up' else 'up'} 的乘积（{same} 的 box 是从 "
                f"{'gate_row' if same == 'up' else 'up_row'} 读的）"
                if same
                else ""
            )
            + (f"：{found[0]}：{found[1]}" if found else "")
            + (
                "：gate 和 up 的每个值都正好是 fp16 能表示的数，gate_up_product 把它们舍入成了 fp16（x 的 dtype）"
                "才返回；它们是 float32 的累加器，原样返回（转成 out 的 dtype 是 store_rows 的事）"
                if rounded
                else ""
            ),
            f"gate_up_product, fp16 inputs, K={K}: "
            + (
                f"on the live rows gate is off from float64 by {eg:.2e} and up by {eu:.2e} (relative), over 1e-5 "
                "(fp16 products summed in float32 stay within it)"
                if off
                else f"the live rows are right (gate off by {eg:.2e}, up by {eu:.2e}, within 1e-5)"
            )
            + (
                f"; the rows not live hold {dg} nonzero cells of gate and {du} of up, where all must be 0"
                if dg + du
                else ""
            )
            + (": A's load must mask them with live, read as 0 (other=0)" if dg + du and not off else "")
            + (
                ": gate holds up's product and up gate's: gate_row and up_row swapped, or gate and up handed back "
                "the other way round (return gate, up)"
                if swapped
                else ""
            )
            + (
                ": up is gate plus the last k-box's up product: up's tl.dot was given gate as its accumulator "
                "(tl.dot(a, up's box, gate)); up keeps an accumulator of its own"
                if into_gate
                else ""
            )
            + (
                f": {same} holds {'gate' if same == 'up' else 'up'}'s product (its box was read at "
                f"{'gate_row' if same == 'up' else 'up_row'})"
                if same
                else ""
            )
            + (f": {found[0]}: {found[2]}" if found else "")
            + (
                ": every value of gate and up is exactly an fp16 value: gate_up_product rounded them to fp16 (x's "
                "dtype) before returning them; they are float32 accumulators, returned as they are (store_rows "
                "converts to out's dtype)"
                if rounded
                else ""
            ),
            "5.1",
        )
    first, end = x.data_ptr(), x.data_ptr() + x.shape[0] * x.stride(0) * x.element_size()
    read = [a[(a >= first) & (a < end) & inside] for what, a, inside in accesses.log if what == "read"]
    column = [(a - first) // x.element_size() % x.stride(0) for a in read]  # x's column; >= K: the padding
    fail_if_read_past_k(accesses, x, K, x_rows[live], bk, "gate_up_product", "5.1")
    x_reads = sum(int((c < K).sum()) for c in column)
    rows = int(live.sum())
    needed = rows * K
    if x_reads > needed:
        fail(
            T6,
            f"gate_up_product 从 x 读了 {x_reads} 个元素，而它要的只是 live 的 {rows} 行 × K={K} = {needed} 个"
            f"（{x_reads / needed:.1f} 倍）：每个 A 的块只读一次，gate 和 up 都用它",
            f"gate_up_product read {x_reads} elements of x, where the {rows} live rows x K={K} = {needed} are all "
            f"it needs ({x_reads / needed:.1f} times): load each A box once and use it for both gate and up",
            "5.1",
        )


def rounded_to_fp16(out, want, gate, up, err):
    """[(zh, en)] where a float32 SwiGLU (out, off from float64's want by err) shows fp16's rounding: its
    elements exactly fp16 values where the reference's are not, or out far nearer SwiGLU with one of its
    steps rounded to fp16 (worked out from gate and up, float64) than to SwiGLU itself; else []."""
    got, ref = out.float().cpu(), want.float().cpu()
    nonzero = got != 0
    if nonzero.sum() >= 16:
        exact = (got == got.half().float())[nonzero].float().mean().item()
        exact_ref = (ref == ref.half().float())[nonzero].float().mean().item()
        if exact >= 0.9 and exact_ref <= 0.5:
            return [
                (
                    f"结果的非零元素有 {exact:.0%} 正好是 fp16 能表示的数，float64 的参考值只有 {exact_ref:.0%}："
                    "SwiGLU 的结果被舍入成了 fp16；float32 的输入要在 float32 里算完",
                    f"{exact:.0%} of the result's nonzero elements are exactly fp16 values, where {exact_ref:.0%} of "
                    "float64's are: SwiGLU's result was rounded to fp16; float32 inputs stay float32 throughout",
                )
            ]
    g, u, h = gate.double().cpu(), up.double().cpu(), lambda t: t.half().double()
    steps = (  # SwiGLU with one of its steps rounded to fp16
        (
            h(torch.nn.functional.silu(g)) * u,
            "它和把 silu(gate) 舍入成 fp16 再乘 up 的结果几乎一样：silu(gate) 被舍入成了 fp16",
            "it is all but silu(gate) rounded to fp16, then times up: silu(gate) was rounded to fp16",
        ),
        (
            h(h(g) * h(torch.sigmoid(g))) * u,
            "它和把 gate、sigmoid(gate) 舍入成 fp16 在 fp16 里相乘的结果几乎一样：silu 是在 fp16 里算的",
            "it is all but gate and sigmoid(gate) rounded to fp16 and multiplied there: silu was computed in fp16",
        ),
        (
            torch.nn.functional.silu(h(g)) * h(u),
            "它和把 gate、up 先舍入成 fp16 再算 SwiGLU 的结果几乎一样：gate 和 up 在 SwiGLU 之前被舍入成了 fp16",
            "it is all but SwiGLU of gate and up rounded to fp16 first: gate and up were rounded to fp16 before SwiGLU",
        ),
    )
    return [(zh, en) for form, zh, en in steps if rel_err(out, form) <= err / 8][:1]


@pytest.mark.t6_4
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gate_up_with_swiglu(t6, monkeypatch, dtype):
    # F not a multiple of BLOCK_N: gate boxes reach up's rows; K = 33, one past BLOCK_K's 32: a last k-box one
    # column wide, which a k loop over range(0, K - 1, BLOCK_K) leaves out (w's rows then need the host's copy)
    tokens, top_k, experts, K, F = 21, 2, 5, 33, 24
    ids = make_ids("skewed", tokens, top_k, experts)
    x = torch.randn(K, tokens, device=DEVICE).to(dtype).t()  # a transposed view: x's stride along K is T
    w = (torch.randn(experts, 2 * F, K, device=DEVICE) / K**0.5).to(dtype)
    r = t6.route(ids, experts)
    name = str(dtype).removeprefix("torch.")
    case = say(zh=f"gate/up，F={F}，{name}，x 是列主序的视图", en=f"gate/up, F={F}, {name}, x a column-major view")
    try:
        out = watched_call(t6, monkeypatch, case, "5.1", x, w, r, activation="swiglu")
    except Exception as e:  # noqa: BLE001 - one kind is told here, with its cause; the rest go on as they came
        fail_if_math_dtype_refused(case, e)
        raise
    want = reference(x, w, ids, activation="swiglu")
    err = rel_err(out, want) if out.shape == want.shape else float("inf")
    if err > OUT_RTOL[dtype]:
        plain = reference(x, w, ids)  # [R, 2F]: each sorted row's gate, then up
        gate, up = plain[:, :F], plain[:, F:]
        forms = (  # nine ways to get SwiGLU wrong, each worked out on the same inputs: named when out is one
            (
                gate * up,
                "算的是 gate * up：少了 sigmoid（silu(g) = g * sigmoid(g)）",
                "it is gate * up: silu's sigmoid is missing (silu(g) = g * sigmoid(g))",
            ),
            (
                torch.sigmoid(gate) * up,
                "算的是 sigmoid(gate) * up：silu(g) 是 g * sigmoid(g)，不是 sigmoid(g)",
                "it is sigmoid(gate) * up: silu(g) is g * sigmoid(g), not sigmoid(g)",
            ),
            (
                reference(x[:, : K - 1], w[..., : K - 1], ids, activation="swiglu"),
                "它等于去掉 x 和 w 的最后一列（k = K - 1）算出的结果，最后那个 k 块没有加进去",
                "it is the result without x's and w's last column (k = K - 1), the last k-box left out",
            ),
            (
                torch.nn.functional.silu(up) * gate,
                "算的是 silu(up) * gate：silu 作用在 gate 上（前 F 行），再乘 up（后 F 行）",
                "it is silu(up) * gate: silu goes on gate (the first F rows), which then multiplies up (the last F)",
            ),
            (
                torch.nn.functional.silu(gate) + up,
                "算的是 silu(gate) + up：SwiGLU 是把两半相乘，silu(gate) * up",
                "it is silu(gate) + up: SwiGLU multiplies the two halves, silu(gate) * up",
            ),
            (
                torch.nn.functional.silu(gate),
                "算的是 silu(gate)，没有乘 up：SwiGLU 是 silu(gate) * up",
                "it is silu(gate) alone, up never multiplied in: SwiGLU is silu(gate) * up",
            ),
            (
                gate * torch.sigmoid(-gate) * up,
                "算的是 gate * sigmoid(-gate) * up：sigmoid 的参数多了个负号；silu(g) = g * sigmoid(g)",
                "it is gate * sigmoid(-gate) * up: sigmoid's argument has its sign flipped; silu(g) = g * sigmoid(g)",
            ),
            (
                gate * torch.sigmoid(1.702 * gate) * up,
                "算的是 gate * sigmoid(1.702 * gate) * up：这是 GELU 的 sigmoid 近似，不是 silu；"
                "silu(g) = g * sigmoid(g)",
                "it is gate * sigmoid(1.702 * gate) * up: GELU's sigmoid approximation, not silu; "
                "silu(g) = g * sigmoid(g)",
            ),
            (
                torch.relu(gate) * up,
                "算的是 relu(gate) * up（ReGLU）：SwiGLU 用的是 silu(g) = g * sigmoid(g)，不是 max(g, 0)",
                "it is relu(gate) * up (ReGLU): SwiGLU takes silu(g) = g * sigmoid(g), not max(g, 0)",
            ),
        )
        said = [(zh, en) for got, zh, en in forms if out.shape == got.shape and rel_err(out, got) <= OUT_RTOL[dtype]]
        if not said and dtype == torch.float32 and out.shape == want.shape:
            said = rounded_to_fp16(out, want, gate, up, err)
        if not said:  # the same call with x made contiguous alone: right where x's strides are not followed
            again, error = raised_by(lambda: t6.grouped_matmul(x.contiguous(), w, r, activation="swiglu"))
            if error is None and again.shape == want.shape and rel_err(again, want) <= OUT_RTOL[dtype]:
                said = [
                    (
                        "同样的调用只把 x 换成连续的副本，结果就对了：gate_up_product 把 x 当成连续的来读，"
                        "没有用它的 stride",
                        "the same call with only x made contiguous is right: gate_up_product reads x as if it were "
                        "contiguous, not through its strides",
                    )
                ]
        fail(
            T6,
            f"{case}：结果应当是 [{tokens * top_k}, {F}] 的 silu(gate) * up，和 float64 差 {err:.2e}（相对）"
            + (f"：{said[0][0]}" if said else ""),
            f"{case}: the result should be silu(gate) * up, [{tokens * top_k}, {F}]; off from float64 by {err:.2e} "
            "(relative)" + (f": {said[0][1]}" if said else ""),
            "5.1",
        )
