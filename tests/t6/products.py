"""The sums that T6.3's probe of gathered_product gives when its tile is read a known wrong way, and the
weightings store_rows' stored tile may show, worked out on the probe's own inputs (test_kernel_parts.py,
test_store_rows.py): each with the words naming it, said only where the tile is one of them."""

from contextlib import contextmanager

import torch
from triton.runtime import interpreter

from course.messages import fail

from .common import T6
from support import box, rel_err


def strides_swapped(x, rows, w_box):
    """(float64 sums of `rows`, zh, en) that gathered_product gives when it reads x with stride_xm and
    stride_xk the other way round: element k of row r at r * stride_xk + k * stride_xm, 0 past x's last
    element (the AddressWatch stops those reads, and a masked load gives other=0)."""
    sm, sk = x.stride()
    span = (x.shape[0] - 1) * sm + (x.shape[1] - 1) * sk + 1
    flat = x.as_strided((span,), (1,)).cpu().double()
    at = rows[:, None] * sk + torch.arange(x.shape[1])[None, :] * sm
    a = torch.where(at < span, flat[at.clamp_max(span - 1)], torch.zeros((), dtype=torch.float64))
    return (
        a @ w_box.T,
        "按 stride_xm 和 stride_xk 反过来读 x 时正是这个和：x 第 r 行第 k 列在 r * stride_xm + k * stride_xk",
        "it is the sum that x gives when read with stride_xm and stride_xk the other way round: row r, column k "
        "of x is at r * stride_xm + k * stride_xk",
    )


def weight_box_mistakes(xr, w2d, w_row, K, bn, bk):
    """[(float64 sums of the live rows, zh, en)] that gathered_product gives when w's box is loaded with
    its coordinates the other way round, or used without .T: each k-block's A box (zeros past K) times
    w2d's box (zeros outside w2d), as TMA reads it.  With bk != bn, the sum of a k loop that steps by
    bn (the tile's BLOCK_N and BLOCK_M), not bk: boxes of bk columns that overlap or leave gaps.  And the
    sum of the whole k-boxes alone, where K is not a multiple of bk (a loop that stops before the last), and
    the sum without the first k-box (a loop from BLOCK_K), and the first k-box's alone (w's later boxes zeros).
    And x's first k-box times every w box: A loaded once, before the loop."""
    turned, untransposed, first_box = (torch.zeros(xr.shape[0], bn, dtype=torch.float64) for _ in range(3))
    for k0 in range(0, K, bk):
        a = box(xr, 0, k0, xr.shape[0], bk)
        turned += a @ box(w2d, k0, w_row, bn, bk).T
        if bn == bk:  # [bn, bk] taken as [bk, bn]: square boxes alone (other shapes fail in tl.dot)
            untransposed += a @ box(w2d, w_row, k0, bn, bk)
        first_box += a @ box(w2d, w_row, 0, bn, bk).T  # w's box loaded at column 0 in every step
        last = a @ box(w2d, w_row, k0, bn, bk).T  # what an accumulator overwritten in each step ends with
    # x's first k-box times every w box: A's block loaded once, before the k loop (learner37)
    a_first = torch.zeros(xr.shape[0], bn, dtype=torch.float64)
    for k0 in range(0, K, bk) if K > bk else ():
        a_first += box(xr, 0, 0, xr.shape[0], bk) @ box(w2d, w_row, k0, bn, bk).T
    stepped, in_fp16, whole = (torch.zeros(xr.shape[0], bn, dtype=torch.float64) for _ in range(3))
    for k0 in range(0, K - K % bk if K % bk else 0, bk):  # the whole k-boxes alone: a loop that stops at the last
        whole += box(xr, 0, k0, xr.shape[0], bk) @ box(w2d, w_row, k0, bn, bk).T
    for k0 in range(0, K, bn):
        stepped += box(xr, 0, k0, xr.shape[0], bk) @ box(w2d, w_row, k0, bn, bk).T
    rounded = torch.zeros(xr.shape[0], bn, dtype=torch.float64)  # each k-box's product rounded, the sum in float32
    for k0 in range(0, K, bk):  # each k-box's product rounded to fp16, and the sum kept there
        product = (box(xr, 0, k0, xr.shape[0], bk) @ box(w2d, w_row, k0, bn, bk).T).half()
        in_fp16 = (in_fp16 + product).half().double()
        rounded += product.double()
    return [
        (
            whole,
            f"这正是只算整块 k 的和：最后那个不满的 k 块（第 {K - K % bk}..{K - 1} 列）没有加进去；k 循环要一直走到 "
            "k0 < K，块里越过 K 的列由掩码（x）和 TMA 的零（w）挡掉",
            f"it is the sum of the whole k-boxes alone: the last, partial one (columns {K - K % bk}..{K - 1}) is "
            "left out; the k loop runs while k0 < K, the columns of a box past K masked (x) or zero-filled (TMA, w)",
        ),
        (
            in_fp16,
            "这正是在 fp16 里累加的和：每个 k 块的乘积舍入成 fp16 再加、和也留在 fp16 里；acc 要是 float32，"
            "用 tl.dot(a, b.T, acc) 累加",
            "it is the sum kept in fp16: each k-box's product rounded to fp16 and added there; acc is float32, "
            "added to by tl.dot(a, b.T, acc)",
        ),
        (
            rounded,
            "这正是每个 k 块的乘积先舍入成 fp16、再加进 float32 的和：tl.dot 的 float32 结果要原样加进 acc"
            "（tl.dot(a, b.T, acc)），不要先转成输入的 dtype",
            "it is the sum of each k-box's product rounded to fp16 before it is added (in float32): tl.dot's "
            "float32 result goes into acc as it is (tl.dot(a, b.T, acc)), not cast to the input's dtype first",
        ),
        (
            stepped if bn != bk else torch.zeros_like(stepped),
            f"k 循环按 {bn}（这里的 BLOCK_N 和 BLOCK_M）前进、而不是按 BLOCK_K = {bk} 前进时正是这个和："
            "k 的 box 有 BLOCK_K 列，循环要 range(0, K, BLOCK_K)",
            f"it is the sum that a k loop stepping by {bn} (BLOCK_N and BLOCK_M here), not by BLOCK_K = {bk}, "
            "gives: a k-box is BLOCK_K columns wide, so the loop is range(0, K, BLOCK_K)",
        ),
        (
            a_first,
            "每一步都拿 x 的第一个 k 块（第 0..BLOCK_K - 1 列）去乘时正是这个和：A 的块只在 k 循环之前载入了一次；"
            "它要在循环里、在 k0 + tl.arange(0, BLOCK_K) 列载入，随 k0 前进",
            "it is the sum that multiplying x's first k-block (columns 0..BLOCK_K - 1) in every step gives: A's block "
            "was loaded once, before the k loop; load it inside the loop, at columns k0 + tl.arange(0, BLOCK_K), "
            "moving with k0",
        ),
        (
            first_box,
            "每一步都乘 w 的第一个 k 块时正是这个和：w 的 box 要在 [w_row, k0] 载入，随 k0 前进",
            "it is the sum that multiplying by w's first k-box in every step gives: w's box is loaded at "
            "[w_row, k0], moving with k0",
        ),
        (
            (xr @ w2d[w_row : w_row + bn].T - box(xr, 0, 0, xr.shape[0], bk) @ box(w2d, w_row, 0, bn, bk).T)
            if K > bk
            else torch.zeros_like(last),
            "这正是少了第一个 k 块（第 0..BLOCK_K - 1 列）的和：k 循环要从 k0 = 0 开始",
            "it is the sum without the first k-box (columns 0..BLOCK_K - 1): the k loop starts at k0 = 0",
        ),
        (
            box(xr, 0, 0, xr.shape[0], bk) @ box(w2d, w_row, 0, bn, bk).T if K > bk else torch.zeros_like(last),
            "这正是只有第一个 k 块的乘积：之后每一步 w 的 box 读到的都是零，就像在 K 之外载入的那样"
            "（坐标写成了 k0 * BLOCK_K？k0 已经是元素的偏移，box 在 [w_row, k0]）",
            "it is the first k-box's product alone: w's boxes after it gave zeros, as boxes loaded past K do (a "
            "coordinate of k0 * BLOCK_K? k0 is an element offset already: the box is at [w_row, k0])",
        ),
        (
            last,
            "这正是最后一个 k 块的乘积：acc 每一步被覆盖了，要 tl.dot(a, b.T, acc) 累加",
            "it is the last k-block's product alone: acc was overwritten in each step; tl.dot(a, b.T, acc) adds to it",
        ),
        (
            turned,
            "w 的 box 按反过来的坐标载入（[k0, w_row]）时正是这个和："
            "load 的坐标是 w.view(E*N, K) 的 [行, 列]，[w_row, k0]",
            "it is the sum that w's box gives when loaded with its coordinates the other way round ([k0, w_row]): a "
            "load's coordinates are [row, column] of w.view(E*N, K), [w_row, k0]",
        ),
        (
            untransposed,
            "w 的 box 不转置就拿去乘时正是这个和：box 是 [BLOCK_N, BLOCK_K]，tl.dot 要的是它的转置 b.T",
            "it is the sum that w's box gives when multiplied without .T: the box is [BLOCK_N, BLOCK_K], and "
            "tl.dot takes its transpose, b.T",
        ),
    ]


def weights_seen(stored, acc, w, slots, live, asked=True):
    """(zh, en) naming how the stored tile was weighted when it matches a known wrong way within 2e-3:
    no weights, the weights twice, weights[sorted row] in place of weights[slot], or the rows' weights
    broadcast along the columns (column j times row j's weight, 0 past the live rows), weights[slot // 2]
    (the token of a slot at top_k = 2), weights[sorted_slots[i - row_begin]] (sorted_slots read from its start),
    another slot's weight found row by row; not asked
    (HAS_WEIGHTS false), weights[slot] applied all the same; else None."""
    w, slots = w.cpu().double(), slots.cpu().long()
    rows = w[slots[live]]  # each live row's weight, in order
    if not asked:
        if rel_err(stored, (acc * rows[:, None]).half().double()) < 2e-3:
            return (
                "没有 HAS_WEIGHTS 也乘了路由权重 weights[slot]：只在 HAS_WEIGHTS 为真时才乘（if HAS_WEIGHTS:）",
                "the routing weights weights[slot] were applied without HAS_WEIGHTS: multiply by them only when "
                "HAS_WEIGHTS is true (if HAS_WEIGHTS:)",
            )
        return None
    by_column = torch.zeros(max(acc.shape[1], rows.numel()), dtype=torch.float64)
    by_column[: rows.numel()] = rows
    ways = (
        (acc, ("结果没有乘路由权重", "the routing weights were not applied")),
        (acc * w[slots[live]][:, None] ** 2, ("路由权重乘了两次", "the routing weights were applied twice")),
        (
            acc * w[live][:, None],
            ("乘的是 weights[排好序的行号]，不是 weights[slot]", "weighted by weights[sorted row], not weights[slot]"),
        ),
        (
            acc * by_column[: acc.shape[1]][None, :],
            (
                "第 j 列乘的是第 j 行的权重：权重沿列广播了（[None, :]），它要沿行广播（[:, None]）",
                "column j was scaled by row j's weight: the weights were broadcast along the columns ([None, :]), "
                "where each row takes its own ([:, None])",
            ),
        ),
        (
            acc * w[slots[live] // 2][:, None],
            (
                "每一行乘的是 weights[slot // 2]，而它该乘自己的 weights[slot]：权重是每个 slot 一个"
                "（[tokens, top_k] 按 slot 展平），要用这一行自己的 slot 做下标，不是它的 token",
                "each row was scaled by weights[slot // 2] in place of its own weights[slot]: there is one weight per "
                "slot ([tokens, top_k] flat, by slot), indexed by the row's own slot, not by its token",
            ),
        ),
        (  # sorted_slots read at 0..BLOCK_M - 1, the tile's own row numbers (learner37); right where row_begin is 0
            acc * w[slots[: rows.numel()]][:, None] if not torch.equal(slots[: rows.numel()], slots[live]) else acc * 0,
            (
                "第 i 行乘的是 weights[sorted_slots[i - row_begin]]：sorted_slots 从头读起，用的是 tile 自己的行号 "
                "0..BLOCK_M - 1；它要在排好序的行号 row_begin + tl.arange(0, BLOCK_M) 处读",
                "row i was scaled by weights[sorted_slots[i - row_begin]]: sorted_slots was read from its start, at "
                "the tile's own row numbers 0..BLOCK_M - 1; read it at the sorted rows, row_begin + "
                "tl.arange(0, BLOCK_M)",
            ),
        ),
    )
    for vals, said in ways:
        if vals.any() and rel_err(stored, vals.half().double()) < 2e-3:
            return said
    return weight_index_seen(stored, acc, w, slots[live])


def weight_index_seen(stored, acc, w, slots):
    """(zh, en) when each live row was scaled by one weight of w, found alone within fp16's rounding, and those
    indices are not the rows' slots: a few rows' slots and the indices read, shown; else None."""
    scale = (stored * acc).sum(1) / (acc * acc).sum(1).clamp_min(1e-30)  # each row's factor, least squares
    near = (w[None, :] - scale[:, None]).abs() <= 2e-3 * scale.abs()[:, None].clamp_min(1e-3)
    if not (near.sum(1) == 1).all():
        return None
    used = near.double().argmax(1)
    if torch.equal(used, slots) or rel_err(stored, (acc * w[used][:, None]).half().double()) >= 2e-3:
        return None
    pairs = ", ".join(f"{int(s)} -> {int(u)}" for s, u in zip(slots[:4], used[:4], strict=True))
    return (
        f"每一行乘的是另一个 slot 的权重（slot -> 读到的下标：{pairs}）：要乘 weights[slot]，这一行自己的 slot",
        f"each row was scaled by another slot's weight (slot -> the index read: {pairs}): the row's own slot, "
        "weights[slot], is the one",
    )


def a_broadcast_mistakes(x, x_rows, live, w2d, w_row, K, bn, bk):
    """[(float64 tile [BLOCK_M, BLOCK_N], zh, en)] that gathered_product gives when A's row offsets are
    broadcast along the wrong axis, under the mask as written (live[:, None] & (k0 + k < K)[None, :]):
    x_rows[None, :] with the columns [None, :] too (a[i, k] = x[x_rows[k], k0 + k], the same row for
    every i), or with the columns [:, None] (the block transposed: a[i, k] = x[x_rows[k], k0 + i]).
    Square boxes alone (BLOCK_M == BLOCK_K): other shapes fail to broadcast.  x_rows: every lane's row,
    the lanes not live too; x's cells past its last element read as 0, as the address watch has them."""
    bm = x_rows.numel()
    if bm != bk:
        return []
    sm, sk = x.stride()
    span = (x.shape[0] - 1) * sm + (x.shape[1] - 1) * sk + 1
    flat = x.as_strided((span,), (1,)).cpu().double()
    rows, lane, live = x_rows.cpu().long(), torch.arange(bm), live.cpu().bool()
    one_row, turned = (torch.zeros(bm, bn, dtype=torch.float64) for _ in range(2))
    for k0 in range(0, K, bk):
        mask = live[:, None] & (k0 + lane < K)[None, :]
        for at, total in (
            ((rows * sm + (k0 + lane) * sk)[None, :].expand(bm, bm), one_row),
            (rows[None, :] * sm + (k0 + lane)[:, None] * sk, turned),
        ):
            a = torch.where(mask & (at < span), flat[at.clamp(0, span - 1)], torch.zeros((), dtype=torch.float64))
            total += a @ box(w2d, w_row, k0, bn, bk).T
    return [
        (
            one_row,
            "A 的行偏移沿错的轴广播了：x_rows[None, :] 配上 (k0 + cols)[None, :]，每一行读到的都是同一行 "
            "x[x_rows[k], k0 + k]；A 的块是 x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk",
            "A's row offsets were broadcast along the wrong axis: x_rows[None, :] with (k0 + cols)[None, :], so every "
            "row read the one row x[x_rows[k], k0 + k]; A's block is x_rows[:, None] * stride_xm + (k0 + cols)"
            "[None, :] * stride_xk",
        ),
        (
            turned,
            "A 的行偏移沿错的轴广播了：x_rows[None, :] 配上 (k0 + cols)[:, None]，载入的 A 块是转置过的"
            "（第 i 行第 k 列是 x[x_rows[k], k0 + i]）；A 的块是 x_rows[:, None] * stride_xm + "
            "(k0 + cols)[None, :] * stride_xk",
            "A's row offsets were broadcast along the wrong axis: x_rows[None, :] with (k0 + cols)[:, None], so the A "
            "block loaded is transposed (row i, column k holds x[x_rows[k], k0 + i]); A's block is x_rows[:, None] * "
            "stride_xm + (k0 + cols)[None, :] * stride_xk",
        ),
    ]


def stored_elsewhere(written, at, pid_n, bm, bn, n, pitch):
    """(zh, en) where the cells store_rows wrote into out (a view, N columns of rows `pitch` apart) are
    exactly those of its live rows `at` with the columns started at pid_n * BLOCK_M (a tile not square) or at
    pid_n itself, or with the rows placed N apart instead of stride_om; else None."""
    rows_out = written.shape[0]
    by_m = torch.zeros_like(written)
    cols = torch.arange(pid_n * bm, pid_n * bm + bn)
    cols = cols[cols < n]
    by_m[at[:, None], cols[None, :]] = True
    if bm != bn and torch.equal(written, by_m):
        return (
            f"live 行写在了第 {pid_n * bm}..{int(cols[-1])} 列，而不是第 {pid_n * bn}..{n - 1} 列：列从 "
            f"pid_n * BLOCK_M 开始了；tile 的列是 pid_n * BLOCK_N + arange(BLOCK_N)（这里 BLOCK_M={bm}，BLOCK_N={bn}）",
            f"its live rows were written in columns {pid_n * bm}..{int(cols[-1])}, not {pid_n * bn}..{n - 1}: the "
            f"columns started at pid_n * BLOCK_M; a tile's columns are pid_n * BLOCK_N + arange(BLOCK_N) "
            f"(BLOCK_M={bm}, BLOCK_N={bn} here)",
        )
    unscaled = torch.zeros_like(written)  # columns from pid_n itself: the block's number taken for its first column
    cols = torch.arange(pid_n, pid_n + bn)
    unscaled[at[:, None], cols[cols < n][None, :]] = True
    if pid_n * bn != pid_n and torch.equal(written, unscaled):
        return (
            f"live 行写在了第 {pid_n}..{min(pid_n + bn, n) - 1} 列，而不是第 {pid_n * bn}..{n - 1} 列：列从 pid_n 本身"
            "开始了，块号当成了列号；tile 的列是 pid_n * BLOCK_N + arange(BLOCK_N)",
            f"its live rows were written in columns {pid_n}..{min(pid_n + bn, n) - 1}, not {pid_n * bn}..{n - 1}: "
            "the columns started at pid_n itself, the block's number taken for a column; a tile's columns are "
            "pid_n * BLOCK_N + arange(BLOCK_N)",
        )
    flat = at[:, None] * n + torch.arange(pid_n * bn, n)[None, :]  # row r at r * N: where in the view it lands
    by_n = torch.zeros_like(written)
    r, c = flat // pitch, flat % pitch
    keep = (c < n) & (r < rows_out)
    by_n[r[keep], c[keep]] = True
    if pitch != n and torch.equal(written, by_n):
        return (
            f"写下的单元正是每行相隔 N = {n} 时的位置，而 out 的行距是 stride_om = {pitch}（它是带填充的视图）："
            "第 r 行在 r * stride_om，不是 r * N",
            f"the cells written are where rows {n} (N) apart would put them, while out's rows are stride_om = {pitch} "
            "apart (a view with padding here): row r is at r * stride_om, not r * N",
        )
    return None


def rows_scaled(out, want, tol):
    """(the least, the greatest) of the factors where every row of out with a nonzero row of want is that row
    times one factor of its own (within tol, relative) and some factor is not 1, as when a call without
    routing weights scales each row by a weight all the same; else None."""
    o, w = out.double().cpu(), want.double().cpu()
    norms = (w * w).sum(1)
    keep = norms > 0
    if int(keep.sum()) < 2 or not torch.isfinite(o).all():
        return None
    factors = (o * w).sum(1)[keep] / norms[keep]
    left = (o[keep] - factors[:, None] * w[keep]).norm() / o[keep].norm().clamp_min(1e-30)
    if not left <= tol or (factors - 1).abs().max() <= 1e-2:
        return None
    return factors.min().item(), factors.max().item()


@contextmanager
def box_coordinates_named(monkeypatch, name="gathered_product", section="4.2"):
    """Run a probe of gathered_product (or of `name`, gate_up_product, whose section is `section`) watching the k
    coordinate (the last) of each TMA box the interpreter loads; where the launch raises and those coordinates
    were 0, 1, 2, ... (each repeated for the boxes of one step: gate's and up's): the k-blocks' numbers, not element
    offsets (the interpreter refuses the box at 1, an offset not 16 bytes in), the failure says so.  On a GPU
    nothing is watched and the error goes on as it was raised."""
    ks = []
    handle = getattr(interpreter, "TensorDescHandle", None)
    if handle is not None:
        load = handle.materialize_pointers

        def watched(self, offsets):
            ks.append(int(offsets[-1].data.reshape(-1)[0]))
            return load(self, offsets)

        monkeypatch.setattr(handle, "materialize_pointers", watched)
    try:
        yield
    except Exception as e:
        if "Expected a 32-bit integer" in repr(e) + repr(e.__cause__):  # Triton's words for an int64 coordinate
            fail(
                T6,
                f"{name} 读 w 的 TMA box 时，解释器拒绝了它的坐标：坐标是 int64（Expected a 32-bit integer）。"
                "描述符的坐标是 32 位的：坐标里别有 int64 的值（.to(tl.int64)，或从 int64 的值算出来的行号、偏移）",
                f"{name}'s load of w's TMA box was refused by the interpreter: a coordinate is an int64 "
                "(Expected a 32-bit integer).  A descriptor's coordinates are 32-bit: keep int64 values (a "
                ".to(tl.int64), or a row or offset computed from an int64 value) out of them",
                section,
            )
        ks = [k for i, k in enumerate(ks) if i == 0 or k != ks[i - 1]]  # one per step
        if len(ks) >= 2 and ks == list(range(len(ks))):
            fail(
                T6,
                f"{name} 读 w 的 TMA box 时，k 方向的坐标依次是 {ks}：正好是 k 块的序号，不是元素的偏移。"
                "描述符的坐标以元素计，第 kb 个 k 块从第 kb * BLOCK_K 列开始（解释器报的 block offset start must be "
                "16-byte aligned 说的就是这个：坐标 1 乘元素的字节数不是 16 的倍数）",
                f"{name} loaded w's TMA boxes at k coordinates {ks}: exactly the k-blocks' numbers, not "
                "element offsets.  A descriptor's coordinates count elements: k-block kb starts at column kb * BLOCK_K "
                "(the interpreter's 'block offset start must be 16-byte aligned' says as much: coordinate 1 times the "
                "element's bytes is no multiple of 16)",
                section,
            )
        raise
