"""T6.3: the grouped kernel's parts, probed alone: store_rows (the gathered product: test_kernel_parts.py)."""

import pytest
import torch

from course.i18n import agree, cells
from course.messages import fail

from .common import T6
from .products import (
    stored_elsewhere,
    weights_seen,
)
from support import DEVICE, UNWRITTEN, rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T6.3 the grouped kernel: store_rows
# ================================================================================================
def token_rows(written, live_slots, cols):
    """k (2..8) where the cells written are, exactly, the live rows at rows slot // k, the columns cols: each row
    stored at its token's row for a top_k of k, not at its slot's (left37); else None."""
    for k in range(2, 9):
        at = live_slots // k
        if torch.equal(at, live_slots):
            continue
        placed = torch.zeros_like(written)
        placed[at[:, None], cols[None, :]] = True
        if torch.equal(written, placed):
            return k
    return None


@pytest.mark.t6_3
@pytest.mark.parametrize(
    "weights, by_slot, bn",
    [(False, False, 16), (True, False, 16), (True, True, 16), (False, False, 32)],
    ids=["plain", "weighted", "weighted by slot", "plain 16 x 32, out a view"],
)
@pytest.mark.case_words(
    id_zh={
        "plain": "不乘权重",
        "weighted": "乘路由权重",
        "weighted by slot": "乘路由权重、按 slot 写",
        "plain 16 x 32, out a view": "不乘权重、16 x 32、out 是视图",
    }
)
def test_store_rows_alone(probes, weights, by_slot, bn):
    """One tile's epilogue into a sentinel-filled output: rows 3..9 (an expert ending at row 10) and
    columns bn..N-1 of N = bn + 12 (16..27 of 28), at the sorted row or at the slot, times weights[slot].
    Once a 16 x 32 tile into a view whose rows are 4 cells longer than N: columns that start at
    pid_n * BLOCK_M, or rows placed N apart (not stride_om), show there."""
    bm, n, begin, end, pid_n = 16, bn + 12, 3, 10, 1
    pitch = n + 4 if bn != bm else n  # out's row pitch, stride_om
    rows_out = 64  # many rows besides the tile's 16: a row stored at a wrong slot seldom lands where a dead row would
    slots = torch.randperm(rows_out)
    slots[[0, int((slots == 0).nonzero())]] = slots[[int((slots == 0).nonzero()), 0]]  # slot 0 at sorted row 0
    slots = slots.int().to(DEVICE)  # so a dead row's slot loaded as 0 (a masked load's `other`) writes row 0
    acc = torch.randn(bm, bn, device=DEVICE)
    w = torch.rand(rows_out, device=DEVICE)
    out = torch.full((rows_out, pitch), UNWRITTEN, dtype=torch.float16, device=DEVICE)[:, :n]
    probes.store_probe[(1,)](
        out, acc, w, slots, begin, end, pid_n, n, out.stride(0), out.stride(1), weights, by_slot, bm, bn
    )
    want = torch.full((rows_out, n), UNWRITTEN, dtype=torch.float64)
    live = torch.arange(begin, end)
    at = slots.cpu()[live].long() if by_slot else live
    cols = torch.arange(pid_n * bn, n)
    vals = acc.cpu().double()[: end - begin, : len(cols)]
    if weights:
        vals = vals * w.cpu().double()[slots.cpu()[live].long()][:, None]
    want[at[:, None], cols[None, :]] = vals.half().double()
    got = out.cpu().double()
    stray = ((got != UNWRITTEN) & (want == UNWRITTEN)).sum().item()
    unwritten = ((got == UNWRITTEN) & (want != UNWRITTEN)).sum().item()
    swapped = slots.cpu()[live].long() if not by_slot else live  # the rows of the other placement
    written = got != UNWRITTEN
    if stray or unwritten:  # two placements of a non-square tile in a view: columns by BLOCK_M, rows N apart
        said = stored_elsewhere(written, at, pid_n, bm, bn, n, pitch)
        if said:
            fail(T6, f"store_rows：{said[0]}", f"store_rows: {said[1]}", "4.3")
        local = slots.cpu()[: len(live)].long()  # sorted_slots read at the tile's own rows 0.. (learner37)
        placed = torch.zeros_like(written)
        placed[local[:, None], cols[None, :]] = True
        if by_slot and not torch.equal(local, at) and torch.equal(written, placed):
            fail(
                T6,
                "store_rows：live 行写到了 sorted_slots[0..] 那些行：sorted_slots 从头读起，用的是 tile 自己的行号 "
                "0..BLOCK_M - 1；它要在排好序的行号 row_begin + tl.arange(0, BLOCK_M) 处读",
                "store_rows: the live rows went to rows sorted_slots[0..]: sorted_slots was read from its start, at "
                "the tile's own row numbers 0..BLOCK_M - 1; read it at the sorted rows, row_begin + "
                "tl.arange(0, BLOCK_M)",
                "4.3",
            )
        tokens_at = token_rows(written, slots.cpu()[live].long(), cols) if by_slot else None  # left37
        if tokens_at:
            fail(
                T6,
                f"store_rows：live 行写到了第 sorted_slots[i] // {tokens_at} 行："
                "写到了 token 的那一行（slot // top_k）；BY_SLOT 时第 i 行写到它自己的 slot 那一行，sorted_slots[i]，"
                "按 slot 排的缓冲区是 [T * top_k, N]，"
                "每个 token 的 top_k 行由 combine_topk 再加起来",
                f"store_rows: the live rows went to rows sorted_slots[i] // {tokens_at}: stored at the token's row "
                "(slot // top_k); with BY_SLOT row i goes to its own slot's row, sorted_slots[i], of the by-slot "
                "buffer [T * top_k, N], and combine_topk adds each token's top_k rows afterwards",
                "4.4",
            )
    if (stray or unwritten) and written.sum().item() == len(live) * len(cols):
        if written[swapped[:, None], cols[None, :]].all():  # every live cell, at the other rows
            fail(
                T6,
                "store_rows：把行写到了排好序的行号上，而 BY_SLOT 要写到这一行的 slot（sorted_slots[i]）那一行"
                if by_slot
                else "store_rows：没有 BY_SLOT 时，也把行写到了 slot（sorted_slots[i]）那一行，应当写到排好序的行号上",
                "store_rows: with BY_SLOT, it stored at the sorted rows; each row goes to its slot's row of out "
                "(sorted_slots[i])"
                if by_slot
                else "store_rows: without BY_SLOT, it stored at the slots' rows (sorted_slots[i]); each row goes to "
                "its sorted row",
                "4.4" if by_slot else "4.3",
            )
    # The cells a missing mask writes: the rows past row_end at their place (with BY_SLOT, their slot,
    # or row 0 where the slot was loaded masked with other=0), and the live rows' columns past N (they run
    # on into the row's padding and the next row).  A stray cell elsewhere is not the mask's.
    past_rows = torch.zeros(rows_out * pitch, dtype=torch.bool)  # where rows from row_end on would go
    past_cols = torch.zeros(rows_out * pitch, dtype=torch.bool)  # where live rows' columns past N would go
    dead = torch.arange(end, begin + bm)
    places = [(slots.cpu()[dead].long() if by_slot else dead, pid_n * bn, past_rows), (at, n, past_cols)]
    if by_slot:
        places.append((torch.zeros(1, dtype=torch.long), pid_n * bn, past_rows))
    for placed, first_col, region in places:
        flat = (placed[:, None] * pitch + torch.arange(first_col, (pid_n + 1) * bn)[None, :]).reshape(-1)
        region[flat[flat < rows_out * pitch]] = True
    past_rows, past_cols = (r.view(rows_out, pitch)[:, :n].reshape(-1) for r in (past_rows, past_cols))
    masked_off = past_rows | past_cols
    strays = ((got != UNWRITTEN) & (want == UNWRITTEN)).reshape(-1)
    elsewhere = int(strays[~masked_off].sum())
    # out is contiguous: with stride_om and stride_on swapped, row r, column c lands at row c, column r
    turned = torch.zeros(rows_out, n, dtype=torch.bool)
    r, c = at[:, None].expand(-1, len(cols)), cols[None, :].expand(len(at), -1)
    inside = (c < rows_out) & (r < n)
    turned[c[inside], r[inside]] = True
    if elsewhere and turned.any() and torch.equal(written, turned):
        fail(
            T6,
            "store_rows：写下的单元正是行列互换后的位置：第 i 行第 j 列落在了第 j 行第 i 列，"
            "就像 stride_om 和 stride_on 用反了（out 的行距是 stride_om，列距是 stride_on）",
            "store_rows: the cells written are those with row and column swapped: row i, column j landed at row j, "
            "column i, as with stride_om and stride_on swapped (out's row pitch is stride_om, its column pitch "
            "stride_on)",
            "4.4" if by_slot else "4.3",
        )
    if elsewhere:
        fail(
            T6,
            f"store_rows：{stray} 个单元写在了这个 tile 的格子之外，其中 {elsewhere} 个既不是 live 行该去的地方，"
            f"也不是少了掩码时 row_end={end} 之后的行或 >= N 的列会去的地方（{unwritten} 个该写的单元没写）："
            + ("第 i 行写到它的 slot 那一行（sorted_slots[i]）" if by_slot else "第 i 行写到排好序的第 i 行")
            + "，只写 row_end 之前的行、N 之前的列",
            f"store_rows: {cells(stray)} written outside this tile's cells, {elsewhere} of them neither where its live "
            f"rows go nor where its rows from row_end={end} on or its columns past N would go without a mask "
            f"({cells(unwritten)} that should be written {agree(unwritten, 'was', 'were')} not): row i goes to "
            + ("its slot's row (sorted_slots[i])" if by_slot else "sorted row i")
            + ", and only rows before row_end and columns before N are stored",
            "4.4" if by_slot else "4.3",
        )
    if stray:
        rows_only, cols_only = not strays[~past_rows].any(), not strays[~past_cols].any()
        fail(
            T6,
            f"store_rows：{stray} 个不该写的单元被写了（掩码要挡住 row_end={end} 及以后的行和 >= N 的列），"
            f"{unwritten} 个该写的单元没写"
            + (
                "：多写的都是 row_end 及以后的行（行的掩码 rows < row_end 没挡住）"
                if rows_only and not cols_only
                else "：多写的都是 live 行 >= N 的列（连续存放时它们落进下一行的开头；列的掩码 cols < N 没挡住）"
                if cols_only and not rows_only
                else ""
            ),
            f"store_rows: {cells(stray)} written that must not be (the mask must stop rows at row_end={end} and "
            f"columns at N), {cells(unwritten)} that should be written {agree(unwritten, 'was', 'were')} not"
            + (
                ": every cell too many is in a row from row_end on (the row mask rows < row_end did not stop it)"
                if rows_only and not cols_only
                else ": every cell too many is in a live row's columns from N on (in a contiguous out they run into "
                "the next row's first cells; the column mask cols < N did not stop them)"
                if cols_only and not rows_only
                else ""
            ),
            "4.3",
        )
    due = want != UNWRITTEN
    # each due cell the sentinel plus its value, within fp16's rounding there (a spacing of 1): added into
    # out (an atomic_add, out + acc), not stored; a cell never written holds the sentinel alone
    if unwritten and (got[due] != UNWRITTEN).any() and ((got - UNWRITTEN - want)[due].abs() <= 1).all():
        fail(
            T6,
            f"store_rows：这个 tile 的格子里是测试预先填的哨兵值 {UNWRITTEN} 加上它们该有的值"
            f"（{unwritten} 个加上去在 fp16 里看不出来）：值被加进了 out（tl.atomic_add，或 out 加 acc），"
            "而不是存进去：用 tl.store",
            f"store_rows: the tile's cells hold the sentinel the test filled out with ({UNWRITTEN}) plus their due "
            f"values ({cells(unwritten)} too small to show in fp16 there): the values were added into out "
            "(tl.atomic_add, or out plus acc), not stored; tl.store them",
            "4.3",
        )
    if unwritten and not written.any() and not (by_slot or weights):
        # nothing written from row_begin = 3, unweighted: the same tile from row_begin = 0 (rows 0..end-begin-1) right,
        # where a row_begin scaled (row_begin * BLOCK_M, a block's number taken for it) starts at 0 all the same
        again = torch.full((rows_out, pitch), UNWRITTEN, dtype=torch.float16, device=DEVICE)[:, :n]
        probes.store_probe[(1,)](
            again, acc, w, slots, 0, end - begin, pid_n, n, again.stride(0), again.stride(1), weights, by_slot, bm, bn
        )
        if torch.equal(again.cpu().double()[: end - begin], want[begin:end]):
            fail(
                T6,
                f"store_rows：从 row_begin={begin} 起一个单元也没写，同一个 tile 从 row_begin=0 起却写对了："
                f"行号被放大了（比如 row_begin * BLOCK_M，把它当成了块号），都落到了 row_end={end} 之后、被掩码挡掉；"
                "row_begin 已经是排好序的行号，rows = row_begin + tl.arange(0, BLOCK_M)",
                f"store_rows: not a cell was written from row_begin={begin}, yet the same tile from row_begin=0 is "
                f"right: the rows were scaled (row_begin * BLOCK_M, say, as if it were a block's number), all past "
                f"row_end={end} and masked off; row_begin is a sorted row already, rows = row_begin + "
                "tl.arange(0, BLOCK_M)",
                "4.3",
            )
    if unwritten:
        fail(
            T6,
            f"store_rows：{unwritten} 个该写的单元没写（live 的第 {begin}..{end - 1} 行，第 {pid_n * bn}..{n - 1} 列）",
            f"store_rows: {cells(unwritten)} that should be written {agree(unwritten, 'was', 'were')} not "
            f"(live rows {begin}..{end - 1}, columns "
            f"{pid_n * bn}..{n - 1})",
            "4.3",
        )
    err = rel_err(got[want != UNWRITTEN], want[want != UNWRITTEN])
    if err > 2e-3:
        seen = weights_seen(
            got[at[:, None], cols[None, :]], acc.cpu().double()[: end - begin, : len(cols)], w, slots, live, weights
        )
        fail(
            T6,
            f"store_rows：写入的值相对误差 {err:.2e}"
            + (f"：{seen[0]}" if seen else "（应存的是 acc 的每一行乘上它的 weights[slot]）" if weights else ""),
            f"store_rows: the stored values are off by {err:.2e} (relative)"
            + (
                f": {seen[1]}"
                if seen
                else " (what is due is each row of acc times its weights[slot])"
                if weights
                else ""
            ),
            "4.3",
        )
    # Bit for bit: acc times the weight in float32, then one rounding to the output's dtype.
    once = acc.cpu()[: end - begin, : len(cols)]
    if weights:
        once = once * w.cpu()[slots.cpu()[live].long()][:, None]
    stored = got[at[:, None], cols[None, :]]
    differ = (stored != once.half().double()).sum().item()
    if differ:
        twice = acc.cpu()[: end - begin, : len(cols)].half().float()
        row_w = w.cpu()[slots.cpu()[live].long()][:, None]  # each row's weight, as is or rounded to fp16 too
        rounded_first = weights and any(
            torch.equal(stored, (twice * v).half().double()) for v in (row_w, row_w.half().float())
        )  # and acc in float32 times the weight rounded to fp16, the output's dtype, first:
        by_half = (acc.cpu()[: end - begin, : len(cols)] * row_w.half().float()).half().double()
        w_half = weights and not rounded_first and torch.equal(stored, by_half)
        fail(
            T6,
            f"store_rows：{differ} 个单元和\"acc 乘权重（float32 里），再舍入一次到 fp16\"不是逐位相同"
            + (
                "：它们逐位等于先把 acc 舍入成 fp16、再乘权重（fp32 或 fp16 的）、再舍入：要在转换类型之前乘"
                if rounded_first
                else "：它们逐位等于 acc 乘上先舍入成 fp16 的权重：权重按 float32 乘，不要先转成输出的类型"
                if w_half
                else ""
            ),
            f"store_rows: {cells(differ)} {agree(differ, 'is', 'are')} not bit for bit acc times the weight (in "
            f"float32), rounded once to fp16"
            + (
                ": they are, bit for bit, acc rounded to fp16 first, then times the weight (fp32's or fp16's), rounded "
                "again: multiply in float32 before the cast"
                if rounded_first
                else ": they are, bit for bit, acc times the weight rounded to fp16 first: multiply by the float32 "
                "weight, not one cast to the output's dtype"
                if w_half
                else ""
            ),
            "4.3",
        )
