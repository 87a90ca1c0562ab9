"""T4's check of a product C against float64 A @ B (check_product), which its wrapper's tests share, and what a
wrong C is traced to: NaN read from A's and B's padding or made by the kernel (nan_cause), acc added into C's
old fill (added_into_c)."""

import pytest
import torch

from course.i18n import agree, cells, say
from course.messages import read

from support import OUT_RTOL, UNWRITTEN, rel_err, spans, wrong_cells


def nan_outside(t):
    """t's whole storage, as a flat tensor, where NaN lies in it outside t (t a view in NaN padding); else None."""
    if not isinstance(t, torch.Tensor) or not t.is_floating_point():
        return None
    flat = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage())
    return flat if flat.isnan().sum().item() > t.isnan().sum().item() else None


def nan_cause(a, b, again):
    """Why C holds NaN, as (zh, en, whether it came from the padding), from what was detected: re-run
    (again) with A's and B's NaN padding made 0, the NaN goes (the kernel read the padding) or stays;
    with no padding, A and B hold none to read."""
    padding = [flat for flat in (nan_outside(a), nan_outside(b)) if flat is not None]
    if padding and again is not None:
        for flat in padding:
            flat[flat.isnan()] = 0  # A's and B's own elements hold no NaN: only the padding changes
        if not again().isnan().any().item():
            return (
                "，把 A、B 外面的 NaN 填充换成 0 以后同一个调用就没有了：kernel 读到了 A 或 B 外面的填充",
                ", and none once the NaN padding around A and B is made 0: the kernel read that padding, "
                "outside A or B",
                True,
            )
        return (
            "，把 A、B 外面的 NaN 填充换成 0 以后照样有：不是读到了填充，"
            "是 kernel 算出来的，或者从给它的张量之外读来的",
            ", and NaN again with the NaN padding around A and B made 0: not read from that padding, so the "
            "kernel computed it or read it from memory outside the tensors it was given",
            False,
        )
    if padding:  # no re-run to tell: both ways stay open
        return (
            "；A、B 里没有 NaN，外面的填充里有：要么读到了那些填充，要么是 kernel 算出来的",
            "; A and B hold none, the padding around them does: the kernel read that padding or computed the NaN",
            False,
        )
    return (
        "；A、B 里没有 NaN：是 kernel 算出来的，或者从给它的张量之外读来的（比如一次没有掩码、越过 A 或 B 末尾的加载）",
        "; A and B hold none: the kernel computed it or read it from memory outside the tensors it was given "
        "(one way: a load past A's or B's end without a mask)",
        False,
    )


def added_into_c(c, ref):
    """Whether every cell of C is UNWRITTEN (its fill before the launch) plus ref = A @ B, as C's dtype rounds
    it there (within one of its steps between 1024 and 2048), and some cell is not the fill itself: an
    epilogue that loaded C and added acc to it."""
    if not (isinstance(c, torch.Tensor) and c.is_floating_point() and c.shape == ref.shape):
        return False
    step = 1024 * torch.finfo(c.dtype).eps
    written = bool((c != UNWRITTEN).any())
    return written and bool(((c.double() - (UNWRITTEN + ref)).abs() <= step).all())


def check_product(c, a, b, dtype, case, again=None):
    """C against float64 A @ B.  again: the same call once more (a NaN in C is then traced to A's and
    B's NaN padding, or away from it)."""
    shape = (a.shape[0], b.shape[1])
    got = f"{getattr(c, 'dtype', type(c))} {tuple(getattr(c, 'shape', ()))}"
    assert isinstance(c, torch.Tensor) and c.dtype == dtype and tuple(c.shape) == shape, say(
        zh=f"{case}：matmul 应该返回 {shape}、{dtype} 的张量，实际是 {got}；{read('T4.4', '6.2')}",
        en=f"{case}: matmul must return a {shape} tensor of {dtype}, got {got}; {read('T4.4', '6.2')}",
    )
    assert c.device == a.device, say(
        zh=f"{case}：C 应该在 {a.device} 上，实际在 {c.device}；{read('T4.4', '6.2')}",
        en=f"{case}: C must be on {a.device}, got {c.device}; {read('T4.4', '6.2')}",
    )
    ref = a.double() @ b.double()
    unwritten = (c == UNWRITTEN).sum().item()
    if unwritten and added_into_c(c, ref):
        pytest.fail(
            say(
                zh=f"{case}：C 的每个元素都是它原来的内容（launch 之前填成 {UNWRITTEN}）加上乘积，"
                f"所以有 {unwritten} 个看起来从没被写过：kernel 把 acc 加到了 C 原来的内容上；"
                f"epilogue 只存 acc，不读 C；{read('T4.3', '5.1')}",
                en=f"{case}: every cell of C is what it held before (set to {UNWRITTEN} before the launch) plus the "
                f"product, so {cells(unwritten)} look never written: the kernel added acc into C's old contents; "
                f"the epilogue stores acc and reads nothing of C; {read('T4.3', '5.1')}",
            ),
            pytrace=False,
        )
    if unwritten:
        at = [(c == UNWRITTEN).any(d).nonzero().flatten().tolist() for d in (1, 0)]
        rows, cols = (spans(x) for x in at)
        row_s, col_s = ("s" * (len(x) > 1) for x in at)  # row 0, rows 0-3
        pytest.fail(
            say(
                zh=f"{case}：C 有 {unwritten} 个元素从没被写过（launch 之前它们被填成 {UNWRITTEN}），"
                f"在第 {rows} 行、第 {cols} 列；{read('T4.4', '6.2')}",
                en=f"{case}: {cells(unwritten)} of C {agree(unwritten, 'was', 'were')} never written (they are "
                f"set to {UNWRITTEN} before the "
                f"launch), in row{row_s} {rows} and column{col_s} {cols}; {read('T4.4', '6.2')}",
            ),
            pytrace=False,
        )
    computed_nan = c.isnan().sum().item()
    if computed_nan:
        why_zh, why_en, read_padding = nan_cause(a, b, again)
        first_zh, first_en, where = (
            (
                "先让 T4.2（make test STEP=T4.2）通过",
                "get T4.2 passing first (make test STEP=T4.2)",
                read("T4.2", "4.1"),
            )
            if read_padding
            else (
                "先让 T4.2 和 T4.3（make test STEP=T4.2，再 STEP=T4.3）通过",
                "get T4.2 and T4.3 passing first (make test STEP=T4.2, then STEP=T4.3)",
                read("T4.2", "4.1", "5.1"),
            )
        )
        pytest.fail(
            say(
                zh=f"{case}：C 有 {computed_nan} 个元素算出来是 NaN{why_zh}；{first_zh}；{where}",
                en=f"{case}: {cells(computed_nan)} of C came out NaN{why_en}; {first_en}; {where}",
            ),
            pytrace=False,
        )
    err = rel_err(c, ref)
    assert err <= OUT_RTOL[dtype], say(
        zh=f"{case}：相对误差 {err:.2e} > {OUT_RTOL[dtype]:.1e}；{wrong_cells(c, ref, OUT_RTOL[dtype])}；"
        f"{read('T4.4', '6.2')}",
        en=f"{case}: relative error {err:.2e} > {OUT_RTOL[dtype]:.1e}; {wrong_cells(c, ref, OUT_RTOL[dtype])}; "
        f"{read('T4.4', '6.2')}",
    )
