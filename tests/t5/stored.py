"""Lesson T5's checks of what store_tile wrote (T5.2's store and T5.4's halves): C inside sentinel
padding, the halves cut wrong named, and the cells never written or written outside.  common.py
imports them, so the test files take them from there too."""

import torch
import triton

from course.i18n import agree, cells
from course.messages import fail
from course.registry import lesson

from .crashes import offsets_in_elements
from support import DEVICE, descriptor, padded

T5 = lesson("T5")


def run_store_tile(probes, M, N, dtype, subtile, bias=None, activation="none", bm=32, bn=32, acc=None):
    """C inside sentinel padding, written by store_tile; returns (c, buf, before, acc)."""
    c, buf = padded(M, N, dtype, fill=-1234.0, values=False)
    before = buf.clone()
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    acc = 3 * torch.randn(grid[0] * bm, grid[1] * bn, device=DEVICE) if acc is None else acc
    bias_arg = acc if bias is None else bias
    with offsets_in_elements(f"C {M}x{N} {dtype}, EPILOGUE_SUBTILE={subtile}", store_subtile=subtile):
        probes.store_tile_probe[grid](
            acc,
            acc.stride(0),
            descriptor(c, [bm, bn // subtile]),
            bias_arg,
            N,
            0 if bias is None else bias.stride(0),
            bm,
            bn,
            subtile,
            bias is not None,
            activation,
        )
    return c, buf, before, acc


def rounded_through(acc, other, dtype):
    """[acc rounded to `other`, then to dtype], each way Triton may round: to nearest (a GPU, torch), and, for
    bf16, toward zero too (the interpreter's float32 -> bf16 cast drops the low 16 bits)."""
    ways = [acc.to(other).to(dtype)]
    if other == torch.bfloat16:
        ways.append((acc.float().contiguous().view(torch.int32) & -65536).view(torch.float32).to(dtype))
    return ways


def even_odd_halves(acc, bn):
    """acc with each bn-wide tile's even columns in its left half and its odd ones in its right half: what
    a reshape to (BLOCK_M, BLOCK_N // 2, 2) and a split store, in place of the tile's left and right halves."""
    cols = torch.arange(acc.shape[1], device=acc.device)
    j, half = cols % bn, bn // 2
    return acc[:, cols - j + torch.where(j < half, 2 * j, 2 * (j - half) + 1)]


def fail_even_odd_halves(case):
    """Fail for a subtiled store that wrote even_odd_halves(acc) in place of the tile's two halves."""
    fail(
        T5,
        f"{case}：每个 tile 的左半块放的是 acc 的偶数列，右半块是奇数列：reshape 成 (BLOCK_M, BLOCK_N // 2, 2) "
        "再 split 会这样；要 reshape 成 (BLOCK_M, 2, BLOCK_N // 2)，把 2 permute 到最后，再 split",
        f"{case}: each tile's left half holds acc's even columns and its right half the odd ones, as a reshape "
        "to (BLOCK_M, BLOCK_N // 2, 2) and a split give them; reshape to (BLOCK_M, 2, BLOCK_N // 2), permute "
        "the 2 to the last place, then split",
        "5",
    )


def unwritten_where(c, sub_bn=None):
    """(zh, en) words for where C's unwritten cells (run_store_tile's sentinel, -1234.0) lie, when they
    are exactly the right halves of sub_bn-wide tiles (a subtiled store whose right half never reached
    its place: left out, or stored elsewhere); else ("", "").  What C shows, not why."""
    left = c == -1234.0
    right = (torch.arange(c.shape[1], device=c.device) % sub_bn >= sub_bn // 2) if sub_bn else None
    if right is None or not right.any() or not torch.equal(left, right[None, :].expand_as(left)):
        return "", ""
    return (
        "：正是每个 tile 的右半块（第 pid_n * BLOCK_N + BLOCK_N // 2 列起），右半块没有存到它的位置上",
        ": they are exactly the right halves of the tiles (columns pid_n * BLOCK_N + BLOCK_N // 2 on): no right "
        "half reached its place",
    )


def check_stored(c, buf, before, want, case, section, sub_bn=None):
    inside = torch.zeros(buf.shape, dtype=torch.bool, device=DEVICE)
    inside.as_strided(c.shape, c.stride(), c.storage_offset()).fill_(True)
    stray = ((buf != before) & ~inside).sum().item()
    if stray:
        fail(
            T5,
            f"{case}：C 外面有 {stray} 个格子被写了：存储要经过 c_desc，越界部分由它裁掉",
            f"{case}: {cells(stray)} outside C {agree(stray, 'was', 'were')} written: store through c_desc, "
            f"which clips what sticks out",
            section,
        )
    unwritten = (c == -1234.0).sum().item()
    if unwritten:
        where = unwritten_where(c, sub_bn)
        fail(
            T5,
            f"{case}：C 有 {unwritten} 个格子没写{where[0]}",
            f"{case}: {cells(unwritten)} of C {agree(unwritten, 'was', 'were')} never written{where[1]}",
            section,
        )
    if not torch.equal(c, want):
        fail(
            T5,
            f"{case}：C 有 {(c != want).sum().item()} 个格子不等于 acc 转成 {c.dtype} 的值",
            f"{case}: {cells((c != want).sum().item())} of C "
            f"{agree((c != want).sum().item(), 'differs', 'differ')} from acc cast to {c.dtype}",
            section,
        )
