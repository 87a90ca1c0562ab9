"""T4.2: the K loop takes tl.cdiv(K, BLOCK_K) steps, one tl.dot each (§4), counted on the interpreter."""

import pytest
import torch

from course.i18n import say
from course.messages import read

from .mainloop_runs import run_mainloop
from support import INTERPRETING, poisoned_view

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


@pytest.mark.t4_2
@pytest.mark.skipif(not INTERPRETING, reason="counts the interpreter's tl.dot calls; a GPU's are compiled away")
@pytest.mark.parametrize("K", [64, 33, 16])
def test_mainloop_takes_cdiv_k_steps(probes, monkeypatch, K):
    """One program (a 16 x 16 tile) over K with BLOCK_K = 16: every tl.dot the interpreter runs is counted
    with its work (m x n x k multiply-adds) and whether both of its operands were all zeros.  A step past
    the last k-block loads nothing (every lane masked off) and multiplies zeros: the product stays right,
    and on a GPU that step costs a whole k-block's tl.dot (twice the work for K = 16).  The work is what is
    compared, not the number of calls: an accumulator split along N into two halves makes two tl.dots per
    k-block, each half as wide, and does exactly the k-blocks' work."""
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    dots = []  # per tl.dot: (whether a and b were all zeros, its multiply-adds m x n x k)
    real = builder.create_dot

    def counted(a, b, *rest):
        dots.append((not a.data.any() and not b.data.any(), a.data.shape[0] * a.data.shape[1] * b.data.shape[1]))
        return real(a, b, *rest)

    monkeypatch.setattr(builder, "create_dot", counted)
    a, _ = poisoned_view(16, K, "row-major", torch.float16)
    b, _ = poisoned_view(K, 16, "row-major", torch.float16)
    run_mainloop(probes, a, b, (16, 16, 16))
    k_blocks = -(-K // 16)
    block_work = 16 * 16 * 16  # one k-block's tl.dot on the 16 x 16 tile
    work = sum(w for _, w in dots)
    if work <= k_blocks * block_work:
        return
    zero_work = sum(w for zero, w in dots if zero)
    extra = -(-zero_work // block_work)  # the k-blocks' worth of all-zero products
    first_zero = next((i for i, (zero, _) in enumerate(dots) if zero), len(dots))
    # the all-zero products came last, and they are exactly the work past the k-blocks
    if zero_work == work - k_blocks * block_work and all(zero for zero, _ in dots[first_zero:]):
        why = say(
            zh=f"多出来的 {extra} 步的 a 和 b 全是 0（每个 lane 都被掩码挡住了）：循环多跑了，"
            "GPU 上每多一步就多一整个 k-block 的 tl.dot",
            en=f"the {extra} step{'s' if extra > 1 else ''} past them multiplied all-zero a and b (every lane "
            "masked off): the loop runs too far, and on a GPU each such step costs a whole k-block's tl.dot",
        )
    else:
        why = say(zh="每个 k-block 只该乘一次", en="each k-block should be multiplied once")
    pytest.fail(
        say(
            zh=f"K = {K}、BLOCK_K = 16：一个程序的 mainloop 跑了 {len(dots)} 次 tl.dot，共 {work} 次乘加，"
            f"相当于 {work / block_work:g} 个 16 x 16 x 16 的 k-block，而 K 只有 "
            f"tl.cdiv(K, BLOCK_K) = {k_blocks} 个 k-block；{why}；{read('T4.2', '4')}",
            en=f"K = {K}, BLOCK_K = 16: one program's mainloop ran tl.dot {len(dots)} times, {work} multiply-adds, "
            f"the work of {work / block_work:g} k-blocks of 16 x 16 x 16, where K has "
            f"tl.cdiv(K, BLOCK_K) = {k_blocks} k-blocks; {why}; {read('T4.2', '4')}",
        ),
        pytrace=False,
    )


@pytest.mark.t4_2
@pytest.mark.skipif(not INTERPRETING, reason="fills the interpreter's masked-off lanes; a GPU's are what they are")
def test_mainloop_masked_lanes_have_other(probes, monkeypatch):
    """A tl.load with a mask and no other= leaves its masked-off lanes undefined: on a GPU they hold what the
    registers held, while the interpreter fills them with 0.0, so every other test passes.  Here those lanes
    get NaN instead: lanes past M or N reach only cells that are never stored, but the K tail's reach every
    cell of the tile.  One 16 x 16 tile, K = 40 in blocks of 16 (a tail of 8)."""
    import numpy as np
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    real = builder.create_masked_load
    a, a_buf = poisoned_view(16, 40, "row-major", torch.float16)
    b, b_buf = poisoned_view(40, 16, "row-major", torch.float16)
    spans = {
        name: (t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for name, t in (("A", a_buf), ("B", b_buf))
    }
    bare = set()  # which of A and B a load without other= read

    def undefined(ptrs, mask, other, *rest, **named):
        if other is None and np.issubdtype(interpreter._get_np_dtype(ptrs.get_element_ty()), np.floating):
            at = np.asarray(ptrs.data).astype(np.uint64)
            bare.update(n for n, (lo, hi) in spans.items() if ((at >= lo) & (at < hi)).any())
            fill = np.full(at.shape, np.nan, dtype=interpreter._get_np_dtype(ptrs.get_element_ty()))
            other = interpreter.TensorHandle(fill, ptrs.get_element_ty())
        return real(ptrs, mask, other, *rest, **named)

    monkeypatch.setattr(builder, "create_masked_load", undefined)
    acc = run_mainloop(probes, a, b, (16, 16, 16))[:16, :16]
    if not bare or not acc.isnan().any():
        return
    which = " and ".join(sorted(bare))
    nan = int(acc.isnan().sum())
    pytest.fail(
        say(
            zh=f"K = 40、BLOCK_K = 16：读 {which} 的 tl.load 有 mask 却没有 other=。"
            f"被掩码挡住的 lane 在解释器里读出 0.0，在 GPU 上却是寄存器里原有的任意值；"
            f"这里把它们填成 NaN，K 尾部的这些 lane 进了乘积，"
            f"16 x 16 的结果里有 {nan} 个 NaN：给这个 load 加上 other=0.0，K 之外的 lane 才什么也不加；"
            f"{read('T4.2', '4.1')}",
            en=f"K = 40, BLOCK_K = 16: a tl.load of {which} has a mask but no other=. Its masked-off lanes read 0.0 on "
            f"the interpreter, but on a GPU they hold whatever the registers held; here they were filled with NaN, "
            f"and the K tail's lanes reached the product: {nan} of the 16 x 16 cells are NaN. Give that load "
            f"other=0.0, so that the lanes past K add nothing; {read('T4.2', '4.1')}",
        ),
        pytrace=False,
    )
