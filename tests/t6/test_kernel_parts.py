"""T6.3: the grouped kernel's parts, probed alone: the gathered product and store_rows."""

import pytest
import torch

from course.i18n import agree, cells
from course.messages import fail

from .accesses import Accesses, fail_if_read_past_k, fail_if_undefined_used
from .common import T6
from .products import (
    a_broadcast_mistakes,
    box_coordinates_named,
    stored_elsewhere,
    strides_swapped,
    weight_box_mistakes,
    weights_seen,
)
from bounds import AddressWatch
from support import DEVICE, UNWRITTEN, descriptor, rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T6.3 the grouped kernel
# ================================================================================================
@pytest.mark.t6_3
@pytest.mark.parametrize(
    "x_sorted, bk", [(False, 16), (True, 16), (False, 32)], ids=["gathered", "x sorted", "gathered k-box 32"]
)
@pytest.mark.case_words(
    id_zh={"gathered": "收集行", "x sorted": "x 已排好序", "gathered k-box 32": "收集行，k 方向 box 32"}
)
def test_gathered_product_alone(probes, monkeypatch, x_sorted, bk):
    """One tile: rows 5..13 of a sorted order (9 live of 16), each reading x's row slot // top_k (or
    the sorted row itself), times expert 1's weight rows 16..31 of w2d = w.view(E*N, K).  x is a view
    with 8 padding cells after each row's K = 72: on the interpreter a read of them (a k-box past K
    unmasked: its products are 0, w's box is zero-filled there) is named.  K > w_row, so that w's box
    loaded at [k0, w_row], the coordinates turned, holds weights, not only TMA's zeros.  Square boxes
    (BLOCK_K = BLOCK_N = BLOCK_M = 16), and once BLOCK_K = 32: a k loop stepping by BLOCK_N or BLOCK_M
    is right only where they equal BLOCK_K (the interpreter's config has BLOCK_N = BLOCK_K)."""
    top_k, bm, bn, K, pad = 2, 16, 16, 72, 8
    slots = torch.randperm(40).int().to(DEVICE)
    x_rows = 40 if x_sorted else 20
    # x's buffer holds rows enough for every address a load with x's strides swapped makes (strides_swapped):
    # those past x are then outside every tensor of the launch (read as 0), never in another tensor's cells
    held = -(-((K - 1) * (K + pad) + x_rows) // (K + pad))
    x = torch.randn(held, K + pad, device=DEVICE).half()[:x_rows, :K]
    accesses = Accesses()
    AddressWatch(probes, monkeypatch, ("gather_probe",), seen=accesses)
    w2d = torch.randn(3 * 32, K, device=DEVICE).half()
    acc = torch.full((bm, bn), UNWRITTEN, dtype=torch.float32, device=DEVICE)
    rows = torch.full((bm, 2), -1, dtype=torch.int32, device=DEVICE)
    begin, end, w_row = 5, 14, 32 + 16
    with box_coordinates_named(monkeypatch):  # names k coordinates that are the k-blocks' numbers
        probes.gather_probe[(1,)](
            x,
            descriptor(w2d, [bn, bk]),
            slots,
            acc,
            rows,
            begin,
            end,
            w_row,
            K,
            x.stride(0),
            x.stride(1),
            top_k,
            x_sorted,
            bm,
            bn,
            bk,
        )
    pos = torch.arange(begin, begin + bm)
    live = pos < end
    want_rows = pos if x_sorted else slots.cpu()[pos.clamp_max(39)].long() // top_k
    got_rows, got_live = rows.cpu()[:, 0], rows.cpu()[:, 1].bool()
    if not torch.equal(got_live, live) or not torch.equal(got_rows[live].long(), want_rows[live]):
        got, slot = got_rows[live].long(), slots.cpu()[pos[live]].long()
        ways = (  # (whether it is the way the rows were read, zh, en)
            (
                x_sorted and (torch.equal(got, slot // top_k) or torch.equal(got, slot)),  # the token or the slot
                "X_SORTED 时 x 已经是排好序的，第 i 行就读 x 的第 i 行，不经过 sorted_slots",
                "with X_SORTED, x is in sorted order already: row i reads row i of x, not through sorted_slots",
            ),
            (
                x_sorted and torch.equal(got, pos[live] // top_k),
                "X_SORTED 时 x 已经是每个 slot 一行：第 i 行就读 x 的第 i 行，不再除以 top_k",
                "with X_SORTED, x holds one row per slot already: row i reads row i of x, not i // top_k",
            ),
            (
                not x_sorted and torch.equal(got, pos[live]),
                "读的是第 i 行本身：没有 X_SORTED 时，第 i 行读 x 的第 sorted_slots[i] // top_k 行"
                "（这个 slot 的 token）",
                "they are the sorted rows i themselves: without X_SORTED, row i reads row sorted_slots[i] // top_k "
                "of x (the slot's token)",
            ),
            (
                not x_sorted and torch.equal(got, pos[live] // top_k),
                "读的是 i // top_k，没有经过 sorted_slots：没有 X_SORTED 时，第 i 行读 x 的第 "
                "sorted_slots[i] // top_k 行（这个 slot 的 token）",
                "they are i // top_k, not read through sorted_slots: without X_SORTED, row i reads row "
                "sorted_slots[i] // top_k of x (the slot's token)",
            ),
            (
                not x_sorted and torch.equal(got, slot % top_k),
                "读的是 slot % top_k（这个 slot 是 token 的第几个选择）；x 的行是 token，sorted_slots[i] // top_k",
                "they are slot % top_k (which of its token's choices the slot is); x's row is the token, "
                "sorted_slots[i] // top_k",
            ),
            (
                not x_sorted and torch.equal(got, slot),
                "读的是 slot 号本身；x 的行是这个 slot 的 token，sorted_slots[i] // top_k",
                "these are the slots themselves; x's row is the slot's token, sorted_slots[i] // top_k",
            ),
        )
        said = [(zh, en) for hit, zh, en in ways if hit and torch.equal(got_live, live)]
        if torch.equal(got_live, pos <= end):  # one live row too many: row_end's own
            said = [
                (
                    f"第 {end} 行（row_end 本身）也被当成了 live：一行在 row < row_end 时才是 live",
                    f"row {end} (row_end itself) was taken as live too: a row is live while row < row_end",
                )
            ]
        if torch.equal(got_live, live & (pos > begin)):  # one live row too few: row_begin's own
            said = [
                (
                    f"第 {begin} 行（row_begin 本身，tile 的第一行）没有被当成 live：一行在 row_begin <= row < row_end "
                    "时是 live",
                    f"row {begin} (row_begin itself, the tile's first) was not taken as live: a row is live while "
                    "row_begin <= row < row_end",
                )
            ]
        if got_live.all() and not live.all():  # the whole block live: rows from row_end on too
            said = [
                (
                    f"整块的 {bm} 行都被当成了 live，第 {end} 行（row_end）起的也算上了："
                    "一行在 row < row_end 时才是 live",
                    f"all {bm} rows of the block were taken as live, those from row {end} (row_end) on too: a row is "
                    "live while row < row_end",
                )
            ]
        fail(
            T6,
            f"gathered_rows{'（X_SORTED）' if x_sorted else ''}：排好序的第 {begin}..{end - 1} 行应当读 x 的第 "
            f"{want_rows[live].tolist()} 行（live 到 {end} 为止），得到 {got_rows[got_live].tolist()}"
            + (f"：{said[0][0]}" if said else ""),
            f"gathered_rows{' (X_SORTED)' if x_sorted else ''}: sorted rows {begin}..{end - 1} should read rows "
            f"{want_rows[live].tolist()} of x (live up to {end}), got {got_rows[got_live].tolist()}"
            + (f": {said[0][1]}" if said else ""),
            "4.1",
        )
    # A's pointers broadcast the wrong way read x's padding too: named by the tile they give, before the reads
    for got, zh, en in a_broadcast_mistakes(x, got_rows, got_live, w2d.cpu().double(), w_row, K, bn, bk):
        if got.any() and rel_err(acc.cpu(), got) <= 1e-5:
            fail(
                T6,
                f"gathered_product：整个 tile 都不对：{zh}",
                f"gathered_product: the whole tile is wrong: {en}",
                "4.1",
            )
    fail_if_read_past_k(accesses, x, K, want_rows[live], bk, "gathered_product", "4.1")
    fail_if_undefined_used(acc.cpu()[live], "gathered_product", "4.1")
    want = torch.zeros(bm, bn, dtype=torch.float64)
    want[live] = x.cpu().double()[want_rows[live]] @ w2d.cpu().double()[w_row : w_row + bn].T
    err = rel_err(acc[live], want[live])
    dead = acc.cpu()[~live]
    if err > 1e-5 or (dead != 0).any():
        # two ways to get w's box wrong (§4.2) and one to read x wrong (§4.1), each worked out on the same
        # inputs; named only when acc is one of them
        ways = weight_box_mistakes(x.cpu().double()[want_rows[live]], w2d.cpu().double(), w_row, K, bn, bk)
        ways.append(strides_swapped(x, want_rows[live], w2d.cpu().double()[w_row : w_row + bn]))
        said = [(zh, en) for got, zh, en in ways if got.any() and rel_err(acc.cpu()[live], got) <= 1e-5]
        section = "4.1" if len(said) == 1 and said[0][1] == ways[-1][2] else "4.2"
        if err <= 1e-5 and (dead != 0).any():  # the live rows right, the dead ones not: A's load let them in
            said = [
                (
                    "live 行是对的，不 live 的行却不是 0：A 的加载要用 live 挡住这些行，读成 0（other=0）",
                    "the live rows are right, but the rows not live are not 0: A's load must mask them with "
                    "live, read as 0 (other=0)",
                )
            ]
            section = "4.1"
        if bm == bn and rel_err(acc.cpu(), want.T) <= 1e-5:  # a square tile, transposed: tl.dot(b, a.T), say
            said = [
                (
                    "整个 tile 是转置过的：acc[i, j] 里是第 j 行和第 i 列的乘积（比如 tl.dot(b, a.T)）；"
                    "A 的行在前：tl.dot(a, b.T)",
                    "the whole tile is transposed: acc[i, j] holds row j's product with column i (tl.dot(b, a.T), "
                    "say); A's rows come first: tl.dot(a, b.T)",
                )
            ]
        fail(
            T6,
            f"gathered_product：live 行的相对误差 {err:.2e}，不 live 的行里有 {int((dead != 0).sum())} 个非零值"
            + (f"：{said[0][0]}" if len(said) == 1 else ""),
            f"gathered_product: relative error {err:.2e} on the live rows, {int((dead != 0).sum())} nonzero cells "
            "in the rows that are not live" + (f": {said[0][1]}" if len(said) == 1 else ""),
            section,
        )


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
