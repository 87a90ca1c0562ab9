"""Wrong pointer advances in T4's mainloop, simulated in float64 on the padded buffers the test
hands the kernel: test_mainloop tries each against what the kernel computed and names the one that
gives exactly its result (no test here: a helper of tests/t4/test_mainloop.py, beside
mainloop_models.py's wrong products)."""

import torch
import triton

from course.i18n import say

from .mainloop_models import Restrided
from support import rel_err


def simulated_mainloop(a, a_buf, b, b_buf, bk, a_step, b_step, moves=(None, None)):
    """What a K loop with correct pointer blocks and masks computes, in float64, when it advances
    a_ptrs by a_step and b_ptrs by b_step elements per iteration: it reads the buffers around A and
    B as the kernel would.  A read outside a buffer is NaN.  moves: for a_ptrs and b_ptrs, None (each
    iteration moves one step) or a function of the iteration giving how many steps it has moved by then."""
    (M, K), N = a.shape, b.shape[1]
    flat_a, flat_b = a_buf.flatten().double(), b_buf.flatten().double()
    rows, cols, ks = (torch.arange(n, device=a.device) for n in (M, N, bk))
    out = torch.zeros(M, N, dtype=torch.float64, device=a.device)
    for it in range(triton.cdiv(K, bk)):
        live = ks < K - it * bk

        def read(flat, addr, mask):
            inside = (addr >= 0) & (addr < flat.numel())
            got = flat[addr.clamp(0, flat.numel() - 1)].where(inside, torch.nan)
            return got.where(mask, 0.0)

        at_a = a.storage_offset() + rows[:, None] * a.stride(0) + ks[None, :] * a.stride(1)
        at_b = b.storage_offset() + ks[:, None] * b.stride(0) + cols[None, :] * b.stride(1)
        at_a, at_b = (
            at + (move(it) if move else it) * step
            for at, move, step in zip((at_a, at_b), moves, (a_step, b_step), strict=True)
        )
        out += read(flat_a, at_a, live[None, :].expand(M, bk)) @ read(flat_b, at_b, live[:, None].expand(bk, N))
    return out


# Loops whose pointers move farther each iteration: by k * BLOCK_K strides at iteration k (`a_ptrs += k * ...`),
# or by (k + 1) * BLOCK_K; by iteration it they have moved it(it-1)/2 or it(it+1)/2 blocks, not it.
GROWING = {"k * BLOCK_K": lambda it: it * (it - 1) // 2, "(k + 1) * BLOCK_K": lambda it: it * (it + 1) // 2}


def growing_advance(a, a_buf, b, b_buf, bk, got, rtol):
    """(pointer blocks, factor) where a_ptrs, b_ptrs or both move by factor strides along K at iteration k
    (GROWING), if the loop's result is what that loop computes (on these buffers, padding and all); None otherwise."""
    right = (bk * a.stride(1), bk * b.stride(0))
    for factor, move in GROWING.items():
        for names, moves in (("a_ptrs, b_ptrs", (move, move)), ("a_ptrs", (move, None)), ("b_ptrs", (None, move))):
            if rel_err(got, simulated_mainloop(a, a_buf, b, b_buf, bk, *right, moves=moves)) < rtol:
                return names, factor
    return None


def growing_advance_words(found):
    """What to say when growing_advance found (pointer blocks, factor)."""
    names, factor = found
    return say(
        zh=f"结果正好等于 {names} 每次迭代前移 {factor} 个沿 K 的 stride（k 是第几次迭代）：越走越远，"
        f"第 k 个 K 块读到了更远的地方；指针块本身建对了，错在每次的移动量：每次迭代都前移同样的量，"
        f"a_ptrs 前移 BLOCK_K * stride_ak，b_ptrs 前移 BLOCK_K * stride_bk",
        en=f"it is exactly what the loop computes when {names} advance{'s' if ',' not in names else ''} by "
        f"{factor} strides along K at iteration k: each move longer than the one before, so later "
        f"k-blocks are read from farther on; the blocks are built right, the move is wrong: every iteration moves "
        f"the same, a_ptrs by BLOCK_K * stride_ak and b_ptrs by BLOCK_K * stride_bk",
    )


def frozen_advance(a, a_buf, b, b_buf, bk, got, rtol):
    """ "a_ptrs" or "b_ptrs" where that pointer block never moves and the other moves as it should, if the loop's
    result is what that loop computes (on these buffers); None otherwise (neither moving is first_block_only's)."""
    right, still = (bk * a.stride(1), bk * b.stride(0)), lambda it: 0  # noqa: E731
    for name, moves in (("a_ptrs", (still, None)), ("b_ptrs", (None, still))):
        if rel_err(got, simulated_mainloop(a, a_buf, b, b_buf, bk, *right, moves=moves)) < rtol:
            return name
    return None


def frozen_advance_words(name):
    """What to say when frozen_advance found `name`, the pointer block that never moved."""
    other = "b_ptrs" if name == "a_ptrs" else "a_ptrs"
    return say(
        zh=f"结果正好等于 {name} 在循环里从不前移、{other} 照常前移：每次迭代乘的都是 {name} 的第 0 个 K 块；"
        f"每次迭代末尾两个指针块都要前移：a_ptrs 前移 BLOCK_K * stride_ak，b_ptrs 前移 BLOCK_K * stride_bk",
        en=f"it is exactly what the loop computes when {name} never moves and {other} moves as it should: every "
        f"iteration multiplies {name}'s K-block 0; both blocks move at the end of each iteration: a_ptrs by "
        f"BLOCK_K * stride_ak, b_ptrs by BLOCK_K * stride_bk",
    )


def matching_steps(candidates, a, a_buf, b, b_buf, bk, got, rtol):
    """The first key of candidates {key: (a_step, b_step)} whose loop (simulated_mainloop, advancing a_ptrs by
    a_step and b_ptrs by b_step) computes got, on these buffers; None when none does."""
    for key, steps in candidates.items():
        if rel_err(got, simulated_mainloop(a, a_buf, b, b_buf, bk, *steps)) < rtol:
            return key
    return None


def unit_advance(a, a_buf, b, b_buf, bk, got, rtol):
    """Which pointer block moves BLOCK_K elements per iteration where it should move BLOCK_K strides
    along K, if the loop's result is what that loop computes (on these buffers, padding and all).
    Only where neither of that block's strides is 1: else BLOCK_K elements is BLOCK_K strides along
    K (right) or along M or N (advance_mistake's words).  Both blocks moved BLOCK_K elements is tried
    wherever that is wrong for both (one along M or N, the other with no unit stride, say)."""
    right = (bk * a.stride(1), bk * b.stride(0))
    a_unit, b_unit = 1 not in a.stride(), 1 not in b.stride()
    candidates = {"a_ptrs": (a_unit, (bk, right[1])), "b_ptrs": (b_unit, (right[0], bk))}
    candidates["a_ptrs, b_ptrs"] = (bk not in right, (bk, bk))
    tried = {name: steps for name, (apart, steps) in candidates.items() if apart}
    return matching_steps(tried, a, a_buf, b, b_buf, bk, got, rtol)


def unit_advance_words(unit):
    """What to say when unit_advance found `unit`, the pointer block(s) moved BLOCK_K elements."""
    return say(
        zh=f"结果正好等于 {unit} 每次只前移 BLOCK_K 个元素，好像沿 K 的 stride 是 1：指针块本身建对了，"
        f"错在每次迭代的移动：a_ptrs 前移 BLOCK_K * stride_ak，b_ptrs 前移 BLOCK_K * stride_bk",
        en=f"it is exactly what the loop computes when {unit} advance{'s' if ',' not in unit else ''} "
        f"by BLOCK_K elements, as if the stride along K were 1: the blocks are built right, the move "
        f"is wrong: advance a_ptrs by BLOCK_K * stride_ak and b_ptrs by BLOCK_K * stride_bk",
    )


def block_advance(a, a_buf, b, b_buf, blocks, got, rtol):
    """(pointer block, block words) where one pointer block moves by another block size's strides along K per
    iteration, BLOCK_M or BLOCK_N where BLOCK_K belongs, if the loop's result is what that loop computes (on
    these buffers, padding and all); None otherwise, and for a size equal to BLOCK_K, which is no mistake."""
    bm, bn, bk = blocks
    right = (bk * a.stride(1), bk * b.stride(0))
    names = {}  # (pointer block, steps) -> the block names that give them: BLOCK_M and BLOCK_N alike where bm == bn
    for name, size in (("BLOCK_M", bm), ("BLOCK_N", bn)):
        if size != bk:
            names.setdefault(("a_ptrs", (size * a.stride(1), right[1])), []).append(name)
            names.setdefault(("b_ptrs", (right[0], size * b.stride(0))), []).append(name)
    tried = {key: key[1] for key in names if key[1] != right}
    found = matching_steps(tried, a, a_buf, b, b_buf, bk, got, rtol)
    return found and (found[0], " / ".join(names[found]))


def block_advance_words(found):
    """What to say when block_advance found (pointer block, block words)."""
    block, names = found
    stride = "stride_ak" if block == "a_ptrs" else "stride_bk"
    return say(
        zh=f"结果正好等于 {block} 每次前移 {names} 个 {stride}：{names} 用在了 BLOCK_K 的位置；指针块本身建对了，"
        f"错在每次迭代的移动：a_ptrs 前移 BLOCK_K * stride_ak，b_ptrs 前移 BLOCK_K * stride_bk",
        en=f"it is exactly what the loop computes when {block} advances by {names} steps of {stride}: {names} "
        f"where BLOCK_K belongs; the blocks are built right, the move is wrong: advance a_ptrs by BLOCK_K * "
        f"stride_ak and b_ptrs by BLOCK_K * stride_bk",
    )


def one_stride_block(a, a_buf, b, b_buf, bk, got, rtol):
    """(operand, stride) where one pointer block is built on one of its strides for both of its dimensions
    (A's rows and k both times stride_am, say), moved by the right stride along K, if the loop's result is
    what that loop computes (on these buffers, padding and all); None otherwise, and where that stride is 1."""
    (sam, sak), (sbk, sbn) = a.stride(), b.stride()
    for operand, name, (a_view, b_view) in (
        ("A", "stride_am", (Restrided(a, (sam, sam)), b)),
        ("A", "stride_ak", (Restrided(a, (sak, sak)), b)),
        ("B", "stride_bk", (a, Restrided(b, (sbk, sbk)))),
        ("B", "stride_bn", (a, Restrided(b, (sbn, sbn)))),
    ):
        stride = (a_view if operand == "A" else b_view).stride(0)
        if stride == 1:
            continue  # the same loop as one whose other stride is taken to be 1: not this model's to name
        if rel_err(got, simulated_mainloop(a_view, a_buf, b_view, b_buf, bk, bk * sak, bk * sbk)) < rtol:
            return operand, name
    return None


def one_stride_words(found):
    """The hint for what one_stride_block found, "operand|stride"."""
    operand, name = found.split("|")
    block = {
        "A": "offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak",
        "B": "offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn",
    }[operand]
    return say(
        zh=f"结果正好等于 {operand} 的指针块两个方向都乘了 {name}：每个方向要乘它自己的 stride。"
        f"{operand} 的块是 {block}",
        en=f"it is exactly what the loop gives with {operand}'s pointer block built on {name} in both of its "
        f"directions: each direction takes its own stride. {operand}'s block is {block}",
    )
