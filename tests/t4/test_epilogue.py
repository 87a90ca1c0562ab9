"""T4.3: the epilogue's masked store, probed alone: every cell of C inside written once, none outside."""

import numpy as np
import pytest
import torch
import triton

from course.i18n import agree, cells, say
from course.messages import read

import bounds
from .common import see_loads
from .mainloop_models import toward_zero
from .source_reads import bool_op_words
from .store_models import other_block_gaps, other_block_gaps_words, store_on_other_block, store_on_other_block_words
from support import DEVICE, DTYPES, INTERPRETING, LAYOUTS, poisoned_view, spans, wrong_cells

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T4.3 epilogue and masked store
# ================================================================================================
@pytest.mark.t4_3
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("M, N, bm, bn", [(32, 32, 16, 16), (37, 45, 16, 32), (5, 70, 32, 32)])
@pytest.mark.case_words(layout=say(zh="C 为 {}", en="C {}"))  # the case's label
def test_epilogue(probes, dtype, layout, M, N, bm, bn):
    sentinel = -1234.0  # exactly representable in every dtype here
    c, buf = poisoned_view(M, N, layout, dtype, fill=sentinel)
    c.fill_(sentinel)
    before = buf.clone()
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    acc = torch.randn(grid[0] * bm, grid[1] * bn, device=DEVICE)  # the padding rows hold values too
    probes.epilogue_probe[grid](acc, acc.stride(0), c, M, N, c.stride(0), c.stride(1), bm, bn)
    case = say(
        zh=f"C 为 {M}x{N}、{layout}、{dtype}，stride {c.stride()}，BLOCK {bm}x{bn}",
        en=f"C {M}x{N} {layout} {dtype}, strides {c.stride()}, BLOCK {bm}x{bn}",
    )
    loads = see_loads(M, N, 16, bm, bn, 16, dtype, layout_c=layout)
    inside = torch.zeros(buf.shape, dtype=torch.bool, device=DEVICE)
    inside.as_strided(c.shape, c.stride(), c.storage_offset()).fill_(True)  # C's cells in buf
    written_outside = (buf != before) & ~inside
    stray = written_outside.sum().item()
    if stray and overhang_only(written_outside, c, grid, bm, bn) and overhang_holds_acc(buf, written_outside, c, acc):
        lacks = overhang_words(written_outside, c, grid, bm, bn)
        pytest.fail(
            say(
                zh=f"{case}：C 之外有 {stray} 个单元被写了，全都在边上的 tile 伸出 C 的位置（第 M 行、第 N 列以外）。"
                f"{lacks}写回时要带掩码 (offs_m[:, None] < M) & (offs_n[None, :] < N)；{read('T4.3')}。{loads}",
                en=f"{case}: {cells(stray)} outside C {agree(stray, 'was', 'were')} written, all of them where "
                f"edge tiles stick out of C past row M or column N.{lacks} Store with mask (offs_m[:, None] < M) & "
                f"(offs_n[None, :] < N); {read('T4.3')}. {loads}",
            ),
            pytrace=False,
        )
    if stray and overhang_only(written_outside, c, grid, bm, bn):  # where tiles stick out, wrong values
        pytest.fail(
            say(
                zh=f"{case}：C 之外有 {stray} 个单元被写了，位置都在边上的 tile 伸出 C 的地方，"
                f"但写进去的不是 acc 在那些位置上的值，所以不只是掩码的事：C 的地址不对，"
                f"按 stride_cm（行）、stride_cn（列）给 C 寻址；"
                f"{read('T4.3')}。{loads}",
                en=f"{case}: {cells(stray)} outside C {agree(stray, 'was', 'were')} written, where edge tiles "
                f"stick out of C, but not with "
                f"the values of acc that belong there, so it is not the mask alone: C's addresses are off; address "
                f"C with stride_cm for rows and stride_cn for columns; {read('T4.3')}. {loads}",
            ),
            pytrace=False,
        )
    assert stray == 0, say(
        zh=f"{case}：C 之外有 {stray} 个单元被写了，有些不在任何 tile 伸出 C 的位置上：C 的地址不对，"
        f"按 stride_cm、stride_cn 给 C 寻址；{read('T4.3')}。{loads}",
        en=f"{case}: {cells(stray)} outside C {agree(stray, 'was', 'were')} written, some where no tile of C "
        f"reaches even past its "
        f"edges: C's addresses are off; address C with stride_cm and stride_cn; {read('T4.3')}. {loads}",
    )
    unwritten = (c == sentinel).sum().item()
    if unwritten:
        at = [(c == sentinel).any(d).nonzero().flatten().tolist() for d in (1, 0)]
        rows, cols = (spans(x) for x in at)
        row_s, col_s = ("s" * (len(x) > 1) for x in at)  # row 0, rows 0-3
        where = say(zh=f"在第 {rows} 行、第 {cols} 列", en=f"in row{row_s} {rows} and column{col_s} {cols}")
        idx_m, idx_n = torch.arange(M, device=DEVICE)[:, None], torch.arange(N, device=DEVICE)[None, :]
        plain = where  # a mask against the other size is named below where it fits; else offsets without BLOCK_M
        for size, other, unmasked, zh_side, en_side, name in (
            (N, M, idx_n, "列", "column", "offs_n"),
            (M, N, idx_m, "行", "row", "offs_m"),
        ):
            if other < size and torch.equal(c == sentinel, (unmasked >= other).expand(M, N)):
                where += say(
                    zh=f"：正好是第 {other} {zh_side}起的每一{zh_side}，也就是{zh_side}掩码拿 {name} 和 "
                    f"{'M' if other == M else 'N'} 比了：{name} 要和 {'N' if other == M else 'M'} 比",
                    en=f": exactly every {en_side} from {other} on, as a {en_side} mask comparing {name} with "
                    f"{'M' if other == M else 'N'} leaves them: compare {name} with {'N' if other == M else 'M'}",
                )
        unscaled = unscaled_store(c == sentinel, grid, bm, bn) if where == plain else None
        if unscaled:
            where += unscaled_store_words(unscaled)
        elif where == plain and (gaps := other_block_gaps(c == sentinel, grid, bm, bn)):
            where += other_block_gaps_words(gaps)
        elif where == plain and torch.equal(c, tiles_swapped(acc, c, grid, bm, bn, sentinel)):
            where += say(zh="：", en=": ") + SWAPPED_TILES_WORDS
        pytest.fail(
            say(
                zh=f"{case}：C 的 {M * N} 个单元里有 {unwritten} 个从没被写过，{where}；{read('T4.3')}。{loads}",
                en=f"{case}: {unwritten} of {M * N} cells of C were never written, {where}; {read('T4.3')}. {loads}",
            ),
            pytrace=False,
        )
    want = acc[:M, :N].to(dtype)
    if torch.equal(c, want):
        return
    for other in (d for d in (torch.float16, torch.bfloat16) if d != dtype):
        if torch.equal(c, acc[:M, :N].to(other).to(dtype)):
            pytest.fail(
                say(
                    zh=f"{case}：C 里是 acc 舍入成 {other} 的值，不是 {dtype}：写回 acc.to(c_ptr.dtype.element_ty)，"
                    f"转换成 C 自己的 dtype；{read('T4.3')}。{loads}",
                    en=f"{case}: C holds acc rounded to {other}, not to {dtype}: store acc.to(c_ptr.dtype.element_ty), "
                    f"C's own dtype; {read('T4.3')}. {loads}",
                ),
                pytrace=False,
            )
    normal = acc[:M, :N].abs() >= torch.finfo(dtype).tiny  # a cast's rounding of subnormals aside
    cut = toward_zero(acc[:M, :N], dtype).to(dtype)
    if dtype != torch.float32 and torch.equal(c[normal], cut[normal]) and not torch.equal(cut, want):
        pytest.fail(
            say(
                zh=f"{case}：C 里是 acc 向零舍入（截断）成 {dtype} 的值（fp_downcast_rounding=\"rtz\"）：写回 "
                f"acc.to(c_ptr.dtype.element_ty)，用默认的就近舍入；{read('T4.3')}。{loads}",
                en=f"{case}: C is acc cut to {dtype} and rounded toward zero (fp_downcast_rounding=\"rtz\"): store "
                f"acc.to(c_ptr.dtype.element_ty), with the default rounding, to nearest; {read('T4.3')}. {loads}",
            ),
            pytrace=False,
        )
    if torch.equal(c, tiles_swapped(acc, c, grid, bm, bn, sentinel)):
        pytest.fail(
            say(
                zh=f"{case}：{SWAPPED_TILES_WORDS}；{read('T4.3')}。{loads}",
                en=f"{case}: {SWAPPED_TILES_WORDS}; {read('T4.3')}. {loads}",
            ),
            pytrace=False,
        )
    if M == N and torch.equal(c, want.t()):  # a square C: a store along swapped strides stays inside it
        pytest.fail(
            say(
                zh=f"{case}：C 正好是 acc 的转置（C[i, j] = acc[j, i]）：行号配 stride_cm，列号配 stride_cn，"
                f"不要对调；{read('T4.3')}。{loads}",
                en=f"{case}: C holds acc transposed (C[i, j] = acc[j, i]): rows go with stride_cm, columns "
                f"with stride_cn, not the other way round; {read('T4.3')}. {loads}",
            ),
            pytrace=False,
        )
    for axis, (zh_axis, en_axis, size) in enumerate((("行", "row", M), ("列", "column", N))):
        if torch.equal(c, wrapped(acc, M, N, axis).to(dtype)):  # the tiles past the edge, stored over its start
            past = acc.shape[axis] - size
            pytest.fail(
                say(
                    zh=f"{case}：C 的前 {past} {zh_axis}里是 tile 伸出 C 的那 {past} {zh_axis}（第 {size} 起）的值："
                    f"{zh_axis}偏移取了 % {'M' if axis == 0 else 'N'}，伸出去的部分绕回来写在了开头。epilogue 的偏移"
                    f"不要取模，伸出去的部分由掩码挡住；{read('T4.3')}。{loads}",
                    en=f"{case}: C's first {past} {en_axis}s hold the values of the {past} {en_axis}s the tiles have "
                    f"past C (from {size} on): the {en_axis} offsets were taken % {'M' if axis == 0 else 'N'}, so "
                    f"what sticks out was stored over the start. No modulo in the epilogue's offsets: the mask "
                    f"stops what sticks out; {read('T4.3')}. {loads}",
                ),
                pytrace=False,
            )
    if other_block := store_on_other_block(c, acc, bm, bn):
        words = store_on_other_block_words(other_block)
        pytest.fail(
            say(zh=f"{case}：{words}；{read('T4.3')}。{loads}", en=f"{case}: {words}; {read('T4.3')}. {loads}"),
            pytrace=False,
        )
    pytest.fail(
        say(
            zh=f"{case}：C 和转换成 {dtype} 的 acc 不一样：{wrong_cells(c, want, 0)}；{read('T4.3')}。{loads}",
            en=f"{case}: C differs from acc cast to {dtype}: {wrong_cells(c, want, 0)}; {read('T4.3')}. {loads}",
        ),
        pytrace=False,
    )


@pytest.mark.t4_3
@pytest.mark.skipif(not INTERPRETING, reason="watches the interpreter's store addresses; test_past_int32 on a GPU")
def test_epilogue_offsets_stay_int64(probes, monkeypatch):
    """C's rows 2**32 + 48 elements apart, as the given matmul_kernel hands them over (int64) for a C past 2**31
    elements: the store's addresses are watched, and the ones outside the small C allocated here are never
    made.  Offsets cast to tl.int32 anywhere on the way (the strides, the products, the sum) wrap: row 1 lands
    48 elements after row 0, not 4,294,967,344.  One 2 x 16 tile, nothing as large allocated."""
    S, M, N, bm = 2**32 + 48, 2, 16, 16
    c = torch.zeros((1, N), dtype=torch.float16, device=DEVICE)  # row 0 alone: row 1 lies S elements on
    acc = torch.randn(bm, N, device=DEVICE)
    written = []
    watch = bounds.AddressWatch(
        probes, monkeypatch, ("epilogue_probe",), seen=lambda what, at, _: what == "write" and written.append(at)
    )
    if not watch.active:
        pytest.skip("this Triton's interpreter cannot be watched (bounds.AddressWatch)")
    probes.epilogue_probe[(1, 1)](acc, acc.stride(0), c, M, N, S, 1, bm, N)
    got = np.unique(np.concatenate(written)) if written else np.zeros(0, dtype=np.uint64)
    m, n = np.meshgrid(np.arange(M, dtype=np.int64), np.arange(N, dtype=np.int64), indexing="ij")
    offsets = (m * S + n).ravel()
    want = np.unique((c.data_ptr() + 2 * offsets).astype(np.uint64))
    if np.array_equal(got, want):
        return
    wrapped = (offsets + 2**31) % 2**32 - 2**31  # each offset as an int32 holds it
    as_int32 = np.array_equal(got, np.unique((c.data_ptr() + 2 * wrapped).astype(np.uint64)))
    case = say(
        zh=f"C 为 {M}x{N} fp16，stride_cm = 2**32 + 48（int64，给好的 matmul_kernel 就这样传进来），stride_cn = 1",
        en=f"C {M}x{N} fp16, stride_cm = 2**32 + 48 (int64, as the given matmul_kernel hands it over), stride_cn = 1",
    )
    if as_int32:
        pytest.fail(
            say(
                zh=f"{case}：写回的地址就像偏移是 int32：第 1 行写在第 0 行之后 "
                f"{wrapped.reshape(M, N)[1, 0]} 个元素处，而不是 {S} 个。"
                "C 超过 2**31 个元素时（LM head 的 logits），这样的写回落到别处，GPU 上会出错；"
                f"偏移保持 int64：别把 stride 或偏移转成 tl.int32；{read('T4.3', '5.1')}",
                en=f"{case}: the store's addresses are as if the offsets were int32: row 1 was written "
                f"{wrapped.reshape(M, N)[1, 0]} elements after row 0, not {S}. On a C past 2**31 elements (an LM "
                f"head's logits) such a store lands elsewhere, and on a GPU it faults; keep the offsets int64: no "
                f"cast of a stride or an offset to tl.int32; {read('T4.3', '5.1')}",
            ),
            pytrace=False,
        )
    if np.isin(got, want).all():  # fewer cells, all of them C's: the mask, not the offsets
        pytest.fail(
            say(
                zh=f"{case}：写回只写了 C 的 {len(want)} 个单元里的 {len(got)} 个，别处没写，地址本身没错："
                f"有些单元被掩码挡掉了，test_epilogue 会说是哪些；{read('T4.3', '5.1')}",
                en=f"{case}: the store wrote {len(got)} of C's {len(want)} cells and nothing else, so the addresses "
                f"are right: some cells were masked off, and test_epilogue says which; {read('T4.3', '5.1')}",
            ),
            pytrace=False,
        )
    pytest.fail(
        say(
            zh=f"{case}：写回的 {len(got)} 个地址和 C[m, n] = c_ptr + m * stride_cm + n * stride_cn 的 {len(want)} 个"
            f"不一样（行距这么大时）；{read('T4.3', '5.1')}",
            en=f"{case}: the store's {len(got)} addresses differ from the {len(want)} of C[m, n] = c_ptr + m * "
            f"stride_cm + n * stride_cn (with rows this far apart); {read('T4.3', '5.1')}",
        ),
        pytrace=False,
    )


def tiles_swapped(acc, c, grid, bm, bn, sentinel):
    """C as a store whose offsets take pid_m and pid_n the other way round leaves it: tile (pid_m, pid_n) of acc at
    rows pid_n * BLOCK_M on and columns pid_m * BLOCK_N on, the mask keeping what falls inside C, every other cell
    the sentinel.  No two tiles meet there, so the values are what they are on a GPU too."""
    (M, N), grid_m, grid_n = c.shape, grid[0], grid[1]
    i, j = torch.arange(M, device=c.device)[:, None], torch.arange(N, device=c.device)[None, :]
    pid_n, pid_m = (i // bm).expand(M, N), (j // bn).expand(M, N)
    reached = (pid_n < grid_n) & (pid_m < grid_m)
    rows = (pid_m * bm + i % bm).clamp(max=acc.shape[0] - 1)
    cols = (pid_n * bn + j % bn).clamp(max=acc.shape[1] - 1)
    return torch.where(reached, acc[rows, cols], sentinel).to(c.dtype)


# Said only where C is, cell for cell, what tiles_swapped gives.
SWAPPED_TILES_WORDS = say(
    zh="C 里每个 tile (pid_m, pid_n) 都写在了 tile (pid_n, pid_m) 的位置上，正好是写回的偏移把 pid_m 和 pid_n 对调的"
    "结果（offs_m 用 pid_n 算，offs_n 用 pid_m 算）：offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)，offs_n = "
    "pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
    en="C holds every tile (pid_m, pid_n) where tile (pid_n, pid_m) goes, exactly what a store with pid_m and pid_n "
    "swapped in its offsets gives (offs_m built on pid_n, offs_n on pid_m): offs_m = pid_m * BLOCK_M + tl.arange(0, "
    "BLOCK_M), offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
)


def unscaled_store(unwritten, grid, bm, bn):
    """ "rows" where the cells of C never written are exactly those a store with offs_m = pid_m + tl.arange(0, BLOCK_M)
    (without * BLOCK_M) leaves, every tile's rows starting at pid_m: rows past grid_m - 1 + BLOCK_M; "columns" the
    same for offs_n; "both" for the two at once; else None.  Which cells were written, not their values: the tiles
    overlap there, and which tile's value lands last is a race on a GPU."""
    M, N = unwritten.shape
    i, j = torch.arange(M, device=unwritten.device)[:, None], torch.arange(N, device=unwritten.device)[None, :]
    rows, cols = i < grid[0] - 1 + bm, j < grid[1] - 1 + bn
    for which, reached in (("rows", rows.expand(M, N)), ("columns", cols.expand(M, N)), ("both", rows & cols)):
        if not reached.all() and torch.equal(unwritten, ~reached):
            return which
    return None


def unscaled_store_words(which):
    """The words for what unscaled_store found, said after where the cells never written lie."""
    if which == "rows":
        return say(
            zh="：正好是 offs_m = pid_m + tl.arange(0, BLOCK_M)（少乘了 BLOCK_M）写不到的行，每个 tile 的行都从 pid_m "
            "起，彼此重叠：行偏移是 pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
            en=": exactly the rows a store with offs_m = pid_m + tl.arange(0, BLOCK_M) (without * BLOCK_M) never "
            "reaches, every tile's rows starting at pid_m, over each other: the rows' offset is pid_m * BLOCK_M + "
            "tl.arange(0, BLOCK_M)",
        )
    if which == "columns":
        return say(
            zh="：正好是 offs_n = pid_n + tl.arange(0, BLOCK_N)（少乘了 BLOCK_N）写不到的列，每个 tile 的列都从 pid_n "
            "起，彼此重叠：列偏移是 pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            en=": exactly the columns a store with offs_n = pid_n + tl.arange(0, BLOCK_N) (without * BLOCK_N) never "
            "reaches, every tile's columns starting at pid_n, over each other: the columns' offset is pid_n * "
            "BLOCK_N + tl.arange(0, BLOCK_N)",
        )
    return say(
        zh="：正好是 offs_m、offs_n 都少乘了 BLOCK_M、BLOCK_N（pid_m + tl.arange(0, BLOCK_M)、pid_n + "
        "tl.arange(0, BLOCK_N)）的写回写不到的单元，每个 tile 都从 (pid_m, pid_n) 起，彼此重叠：偏移是 "
        "pid_m * BLOCK_M + tl.arange(0, BLOCK_M) 和 pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        en=": exactly the cells a store with offs_m and offs_n without * BLOCK_M and * BLOCK_N (pid_m + "
        "tl.arange(0, BLOCK_M), pid_n + tl.arange(0, BLOCK_N)) never reaches, every tile starting at (pid_m, pid_n), "
        "over each other: the offsets are pid_m * BLOCK_M + tl.arange(0, BLOCK_M) and pid_n * BLOCK_N + "
        "tl.arange(0, BLOCK_N)",
    )


def wrapped(acc, M, N, axis):
    """acc[:M, :N] as a store with offsets taken % M (axis 0) or % N (axis 1) leaves it, the tiles run in
    order: the part of the tiles past C's edge written again over its first rows or columns."""
    out = acc[:M, :N].clone()
    size, past = (M, acc.shape[0] - M) if axis == 0 else (N, acc.shape[1] - N)
    if past == 0 or past > size:
        return acc[:M, :N] * float("nan")  # no overhang, or one that wraps more than once: nothing to match
    if axis == 0:
        out[:past] = acc[M:, :N]
    else:
        out[:, :past] = acc[:M, N:]
    return out


def overhang_addresses(c, rows, cols, device):
    """The buffer offset of every cell (row, col) of the tiles' extent: C's addresses, continued."""
    rows, cols = torch.arange(rows, device=device), torch.arange(cols, device=device)
    return c.storage_offset() + rows[:, None] * c.stride(0) + cols[None, :] * c.stride(1)


def overhang_words(written, c, grid, bm, bn):
    """Words for cells written outside C that all lie past one edge of C (row M or column N) within the other:
    the mask's condition for that edge missing where the whole strip past it was written; a `<=` where exactly
    the one row M (column N) was, whole; a compare with the other size where exactly rows M .. N - 1 (columns
    N .. M - 1) were; else where they lie, and no cause.  "" where they lie past both edges."""
    (M, N), size = c.shape, written.numel()
    at = overhang_addresses(c, grid[0] * bm, grid[1] * bn, written.device)
    hit = written.flatten()[at.clamp(0, size - 1)] & (at >= 0) & (at < size)  # by (row, column) of the tiles
    for row, edge, other, strip in ((False, N, M, hit[:M, N:].t()), (True, M, N, hit[M:, :N])):
        if not strip.any() or strip.sum() != hit.sum():
            continue
        lines = strip.any(1)  # each row past M (column past N) that holds a written cell
        z, e = ("行", "row") if row else ("列", "column")
        bound, name, size = ("M", "offs_m[:, None]", "N") if row else ("N", "offs_n[None, :]", "M")
        place = say(
            zh=f"多写的都在第 {bound} {z}以后、第 {'N 列' if row else 'M 行'}以内",
            en=f" Every one lies past {e} {bound} within {'column N' if row else 'row M'}",
        )
        if strip.all():
            lacks = f"{name} < {bound}"
            lacks = say(zh=f"：掩码里少了{z}的条件 {lacks}。", en=f": the mask lacks the {e}s' {lacks}.")
            return place + lacks + bool_op_words("epilogue")  # a mask joined with `and` is told too
        if lines[0] and not lines[1:].any() and strip[0].all():
            return place + say(
                zh=f"，正好是第 {bound} {z}这一{z}：{z}掩码放过了第 {bound} {z}，要严格小于，"
                f"{name} < {bound}，不是 <=。",
                en=f", exactly {e} {bound} alone: the {e} mask lets {e} {bound} through; it must be strictly less, "
                f"{name} < {bound}, not <=.",
            )
        if edge < other < edge + len(lines) and lines[: other - edge].all() and not lines[other - edge :].any():
            return place + say(
                zh=f"，正好是第 {edge} 到第 {other - 1} {z}：{z}掩码拿 {name} 和 {size} 比了，要和 {bound} 比。",
                en=f", exactly {e}s {edge} to {other - 1}: the {e} mask compares {name} with {size}; "
                f"compare it with {bound}.",
            )
        lines = spans((lines.nonzero().flatten() + edge).tolist())
        return place + say(zh=f"（第 {lines} {z}）。", en=f" ({e}s {lines}).")
    return ""


def overhang_holds_acc(buf, written, c, acc):
    """Whether each cell written outside C holds (to a percent) the acc value of the tile cell whose
    address it is: what a store at C's own addresses with a loose mask leaves, and what misplaced
    addresses (swapped strides, say) do not, though they too can land where the tiles stick out."""
    at = overhang_addresses(c, acc.shape[0], acc.shape[1], buf.device).flatten()
    want = acc.flatten().to(buf.dtype).float()
    inside = (at >= 0) & (at < buf.numel())
    at, want = at[inside], want[inside]
    single = torch.bincount(at, minlength=buf.numel())[at] == 1  # an address two cells share proves nothing
    hit = written.flatten()[at] & single
    got = buf.flatten()[at].float()
    return bool(torch.isclose(got[hit], want[hit], rtol=1e-2, atol=1e-2).all())


def overhang_only(written, c, grid, bm, bn):
    """Whether every cell written outside C (a boolean tensor over C's buffer) lies where the grid's
    tiles stick out of C: C's own addresses, continued past row M and column N."""
    at = overhang_addresses(c, grid[0] * bm, grid[1] * bn, written.device).flatten()
    overhang = torch.zeros(written.numel(), dtype=torch.bool, device=written.device)
    overhang[at[(at >= 0) & (at < written.numel())]] = True
    return not (written.flatten() & ~overhang).any()
