"""T5.3: a stream-K walk whose acc runs on from one segment to the next, worked out on the test's own A and B.

A learner who writes the walk as the k loop is written, acc = zeros before it and acc += k_segment(...) in it, carries
each segment's sum into the segments walked after it, the next tile's among them: an owner's tile then holds its own
segment plus every segment its run walked before (learner37: told 'relative error 3.94e-01; 3 of the 4 tiles are off'
alone).  A published partial is the run's first segment, so it is right; the owners' sums are not."""

import torch

from course.messages import fail
from course.tile_order import grouped_order

from .stream_k_cases import sk_holder, sk_runs
from support import rel_err


def carried_product(a, b, plan, k_blocks, tiles, group_m):
    """C (float64) of a launch whose stream-K walk carries acc across segments, the data-parallel tiles right; None
    where it is the right product (no run holds two segments).  plan: (sk_tiles, programs); tiles: (BLOCK_M,
    BLOCK_N, BLOCK_K, rows, cols)."""
    (sk_tiles, programs), (bm, bn, bk, rows, cols) = plan, tiles
    if not sk_tiles or programs < 1:
        return None
    total, order = sk_tiles * k_blocks, grouped_order(rows, cols, group_m)
    a64, b64 = a.double(), b.double()
    want = a64 @ b64

    def segment(tile, lo, hi):  # the [bm, bn] sum of the tile's k-blocks lo..hi-1, zeros past M and N (TMA's)
        pid_m, pid_n = order[tile]
        part = (
            a64[pid_m * bm : (pid_m + 1) * bm, lo * bk : hi * bk]
            @ b64[lo * bk : hi * bk, pid_n * bn : (pid_n + 1) * bn]
        )
        box = torch.zeros(bm, bn, dtype=torch.float64)
        box[: part.shape[0], : part.shape[1]] = part
        return box

    partials, owned, carried = {}, {}, False
    for p, (lo, hi) in enumerate(sk_runs(total, programs)):
        acc, it_end, segments = torch.zeros(bm, bn, dtype=torch.float64), hi, 0
        while it_end > lo:
            tile = (it_end - 1) // k_blocks
            it_begin = max(tile * k_blocks, lo)
            acc = acc + segment(tile, it_begin - tile * k_blocks, it_end - tile * k_blocks)
            segments += 1
            if it_end == (tile + 1) * k_blocks:
                owned[tile] = (p, acc.clone())
            else:
                partials[p] = acc.clone()
            it_end = it_begin
        carried |= segments > 1
    if not carried:
        return None
    out = want.clone()
    for tile, (p, acc) in owned.items():
        for q in range(sk_holder(tile * k_blocks, total, programs), p):
            acc = acc + partials.get(q, 0)
        pid_m, pid_n = order[tile]
        block = out[pid_m * bm : (pid_m + 1) * bm, pid_n * bn : (pid_n + 1) * bn]
        block.copy_(acc[: block.shape[0], : block.shape[1]])
    return out


def fail_if_acc_carried(c, a, b, plan, k_blocks, tiles, group_m, tol, case):
    """Fail where C is, within tol, the product of a walk that carries acc across its segments (carried_product)."""
    from .common import T5

    got = carried_product(a, b, plan, k_blocks, tiles, group_m)
    if got is None or rel_err(c, got) > tol:
        return
    fail(
        T5,
        f"{case}：结果正是 acc 在走过的各段之间一路累加下去的乘积：一个程序先走的那些段（别的 tile 的）的和都留在 acc "
        "里，又加进了它后面拥有的 tile；每一段从自己的 k_segment 起算：acc = k_segment(...)，不要在循环外置零再 acc +=",
        f"{case}: the result is the product of a walk whose acc ran on from one segment to the next: the sums of the "
        "segments a program walked first (other tiles') stayed in acc and went into the tiles it owns after them; "
        "each segment starts from its own k_segment: acc = k_segment(...), not zeros before the loop and acc +=",
        "4.2",
    )
