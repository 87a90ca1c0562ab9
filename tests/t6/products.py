"""The sums that T6.3's probe of gathered_product gives when its tile is read a known wrong way, and the
weightings store_rows' stored tile may show, worked out on the probe's own inputs (test_kernel_parts.py):
each with the words naming it, said only where the tile is one of them."""

import torch

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
    the sum without the first k-box (a loop from BLOCK_K)."""
    turned, untransposed, first_box = (torch.zeros(xr.shape[0], bn, dtype=torch.float64) for _ in range(3))
    for k0 in range(0, K, bk):
        a = box(xr, 0, k0, xr.shape[0], bk)
        turned += a @ box(w2d, k0, w_row, bn, bk).T
        if bn == bk:  # [bn, bk] taken as [bk, bn]: square boxes alone (other shapes fail in tl.dot)
            untransposed += a @ box(w2d, w_row, k0, bn, bk)
        first_box += a @ box(w2d, w_row, 0, bn, bk).T  # w's box loaded at column 0 in every step
        last = a @ box(w2d, w_row, k0, bn, bk).T  # what an accumulator overwritten in each step ends with
    stepped, in_fp16, whole = (torch.zeros(xr.shape[0], bn, dtype=torch.float64) for _ in range(3))
    for k0 in range(0, K - K % bk if K % bk else 0, bk):  # the whole k-boxes alone: a loop that stops at the last
        whole += box(xr, 0, k0, xr.shape[0], bk) @ box(w2d, w_row, k0, bn, bk).T
    for k0 in range(0, K, bn):
        stepped += box(xr, 0, k0, xr.shape[0], bk) @ box(w2d, w_row, k0, bn, bk).T
    for k0 in range(0, K, bk):  # each k-box's product rounded to fp16, and the sum kept there
        in_fp16 = (in_fp16 + (box(xr, 0, k0, xr.shape[0], bk) @ box(w2d, w_row, k0, bn, bk).T).half()).half().double()
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
            stepped if bn != bk else torch.zeros_like(stepped),
            f"k 循环按 {bn}（这里的 BLOCK_N 和 BLOCK_M）前进、而不是按 BLOCK_K = {bk} 前进时正是这个和："
            "k 的 box 有 BLOCK_K 列，循环要 range(0, K, BLOCK_K)",
            f"it is the sum that a k loop stepping by {bn} (BLOCK_N and BLOCK_M here), not by BLOCK_K = {bk}, "
            "gives: a k-box is BLOCK_K columns wide, so the loop is range(0, K, BLOCK_K)",
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


def weights_seen(stored, acc, w, slots, live):
    """(zh, en) naming how the stored tile was weighted when it matches a known wrong way within 2e-3:
    no weights, the weights twice, weights[sorted row] in place of weights[slot], or the rows' weights
    broadcast along the columns (column j times row j's weight, 0 past the live rows); else None."""
    w, slots = w.cpu().double(), slots.cpu().long()
    rows = w[slots[live]]  # each live row's weight, in order
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
    )
    for vals, said in ways:
        if rel_err(stored, vals.half().double()) < 2e-3:
            return said
    return None
