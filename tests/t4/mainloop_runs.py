"""T4.2's runs of the mainloop probe, and the runs again that name what a wrong result comes from: a pointer
advance along the wrong stride (advance_mistake), a loop right on row-major A and B alone (right_when_row_major).
A helper of tests/t4/test_mainloop.py; run_mainloop is test_mainloop_steps.py's too."""

import torch
import triton

from course.i18n import say

from . import advance_models as adv
from .mainloop_models import Restrided
from support import ACC_RTOL, DEVICE, LAYOUTS, PAD, poisoned_view, random, rel_err


def run_mainloop(probes, a, b, blocks):
    bm, bn, bk = blocks
    (M, K), N = a.shape, b.shape[1]
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    acc = torch.full((grid[0] * bm, grid[1] * bn), -7.0, dtype=torch.float32, device=DEVICE)
    probes.mainloop_probe[grid](
        a, b, acc, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), acc.stride(0), bm, bn, bk
    )
    return acc


UNIT = "unit:"  # advance_mistake's prefix for a block moved BLOCK_K elements (adv.unit_advance)
SWAP = "swap:"  # its prefix for a pointer block built on its two strides swapped ("A" or "B" follows)
MOVED = "moved:"  # its prefix for a block moved BLOCK_M or BLOCK_N strides along K (adv.block_advance)
ONE = "one:"  # its prefix for a block built on one stride in both directions (adv.one_stride_block)
GROWS = "grows:"  # its prefix for blocks moved farther at each iteration (adv.growing_advance)


def advance_mistake(probes, M, N, K, blocks, layout, dtype):
    """Which pointer advance uses the wrong stride, if the loop matches one in torch: the case run
    again inside finite padding wide enough for the wrong advance, against the simulated loops."""
    bk = blocks[2]
    pad = K + max(blocks) + PAD
    a, a_buf = poisoned_view(M, K, layout, dtype, fill=0.5, pad=pad)
    b, b_buf = poisoned_view(K, N, LAYOUTS[(LAYOUTS.index(layout) + 1) % 3], dtype, fill=0.25, pad=pad)
    a_buf.copy_(random(a_buf.shape, dtype)), b_buf.copy_(random(b_buf.shape, dtype))
    got = run_mainloop(probes, a, b, blocks)[:M, :N]
    if got.isnan().any():
        return None
    (sam, sak), (sbk, sbn) = a.stride(), b.stride()
    right = adv.simulated_mainloop(a, a_buf, b, b_buf, bk, bk * sak, bk * sbk)
    if rel_err(got, right) < ACC_RTOL[dtype]:
        return None  # right inside finite padding (one K step, say: every advance is the same loop)
    candidates = {
        "a_ptrs": (bk * sam, bk * sbk),
        "b_ptrs": (bk * sak, bk * sbn),
        "a_ptrs, b_ptrs": (bk * sam, bk * sbn),
    }
    tried = {name: steps for name, steps in candidates.items() if steps != (bk * sak, bk * sbk)}
    if name := adv.matching_steps(tried, a, a_buf, b, b_buf, bk, got, ACC_RTOL[dtype]):
        return name
    for operand, (a_view, b_view) in {
        "A": (Restrided(a, a.stride()[::-1]), b),
        "B": (a, Restrided(b, b.stride()[::-1])),
    }.items():  # a block built on swapped strides, moved by the right stride along K
        if rel_err(got, adv.simulated_mainloop(a_view, a_buf, b_view, b_buf, bk, bk * sak, bk * sbk)) < ACC_RTOL[dtype]:
            return SWAP + operand
    if one := adv.one_stride_block(a, a_buf, b, b_buf, bk, got, ACC_RTOL[dtype]):
        return ONE + "|".join(one)
    unit = adv.unit_advance(a, a_buf, b, b_buf, bk, got, ACC_RTOL[dtype])
    if unit:
        return UNIT + unit
    moved = adv.block_advance(a, a_buf, b, b_buf, blocks, got, ACC_RTOL[dtype])
    if moved:
        return MOVED + "|".join(moved)
    growing = adv.growing_advance(a, a_buf, b, b_buf, bk, got, ACC_RTOL[dtype])
    return growing and GROWS + "|".join(growing)


def right_when_row_major(probes, a, b, blocks, dtype):
    """Whether the loop gets this product right with A and B stored row-major, inside NaN padding
    as before: then what goes wrong in the case itself depends on the layout, that is on the strides."""
    a2, _ = poisoned_view(*a.shape, "row-major", a.dtype)
    b2, _ = poisoned_view(*b.shape, "row-major", b.dtype)
    a2.copy_(a), b2.copy_(b)
    acc = run_mainloop(probes, a2, b2, blocks)  # NaN in its padding rows or columns counts too: a read past M or N
    return (
        not acc.isnan().any() and rel_err(acc[: a.shape[0], : b.shape[1]], a.double() @ b.double()) <= ACC_RTOL[dtype]
    )


def layout_dependent(what):
    """The message for a loop that is right on row-major A and B only; what: what went wrong."""
    return say(
        zh=f"同样的 A、B 换成 row-major 存放时结果是对的，所以错误取决于布局（{what}）："
        f"两个指针块要用上全部四个 stride，永远不要假定某个 stride 为 1",
        en=f"the same A and B stored row-major give the right result, so what goes wrong depends on the "
        f"layout ({what}): both pointer blocks must use all four strides; never assume a stride is 1",
    )
