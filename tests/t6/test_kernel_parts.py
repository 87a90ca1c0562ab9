"""T6.3: the grouped kernel's parts, probed alone: the gathered product (store_rows: test_store_rows.py)."""

import pytest
import torch

from course.messages import fail

from .accesses import Accesses, fail_if_read_past_k, fail_if_undefined_used
from .common import T6
from .products import (
    a_broadcast_mistakes,
    box_coordinates_named,
    strides_swapped,
    weight_box_mistakes,
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
            (  # sorted_slots read at 0..BLOCK_M - 1, the tile's own row numbers (learner37)
                not x_sorted and torch.equal(got, slots.cpu()[: got.numel()].long() // top_k),
                "它们是 sorted_slots[0..] 的 token：sorted_slots 从头读起，用的是 tile 自己的行号 0..BLOCK_M - 1；"
                "它要在排好序的行号 row_begin + tl.arange(0, BLOCK_M) 处读",
                "they are the tokens of sorted_slots[0..]: sorted_slots was read from its start, at the tile's own row "
                "numbers 0..BLOCK_M - 1; read it at the sorted rows, row_begin + tl.arange(0, BLOCK_M)",
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
        if live.any() and not got_live.any():  # not a row live: the same tile from row_begin = 0 tells why
            said = rows_scaled_said(probes, x, w2d, slots, top_k, x_sorted, bm, bn, bk, begin, end, w_row, K) or said
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


def rows_scaled_said(probes, x, w2d, slots, top_k, x_sorted, bm, bn, bk, begin, end, w_row, K):
    """[(zh, en)] where gathered_rows took no row as live from row_begin = begin, yet the same tile launched
    from row_begin = 0 (row_end = end - begin) reads its rows right: a row_begin scaled (row_begin * BLOCK_M,
    a block's number taken for it) puts every row past row_end from any row_begin but 0; else []."""
    acc = torch.full((bm, bn), UNWRITTEN, dtype=torch.float32, device=DEVICE)
    rows = torch.full((bm, 2), -1, dtype=torch.int32, device=DEVICE)
    args = (x, descriptor(w2d, [bn, bk]), slots, acc, rows, 0, end - begin, w_row, K, x.stride(0), x.stride(1))
    probes.gather_probe[(1,)](*args, top_k, x_sorted, bm, bn, bk)
    pos = torch.arange(bm)
    live = pos < end - begin
    want_rows = pos if x_sorted else slots.cpu()[pos].long() // top_k
    got_rows, got_live = rows.cpu()[:, 0].long(), rows.cpu()[:, 1].bool()
    if not torch.equal(got_live, live) or not torch.equal(got_rows[live], want_rows[live]):
        return []
    return [
        (
            f"同一个 tile 从 row_begin=0 起却读对了：行号被放大了（比如 row_begin * BLOCK_M，把它当成了块号），"
            f"从 row_begin={begin} 起全落到了 row_end={end} 之后；row_begin 已经是排好序的行号，"
            "rows = row_begin + tl.arange(0, BLOCK_M)",
            f"yet the same tile from row_begin=0 reads its rows right: the rows were scaled (row_begin * BLOCK_M, "
            f"say, as if it were a block's number), from row_begin={begin} all past row_end={end}; row_begin is a "
            "sorted row already, rows = row_begin + tl.arange(0, BLOCK_M)",
        )
    ]
