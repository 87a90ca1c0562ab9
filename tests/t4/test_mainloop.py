"""T4.2: the pointer blocks and the K loop, probed alone: every layout and tail, fp32 accumulation."""

import pytest
import torch
import triton

from course.i18n import say
from course.messages import read

import bounds
from . import advance_models as adv
from .common import see_loads
from .mainloop_edges import k_edge_words, mask_against_other_size, read_at_k_equal_k
from .mainloop_models import (
    blockwise,
    first_block_only,
    is_the_model,
    k_mask_by_other_block,
    k_mask_words,
    last_block_only,
    last_block_words,
    leading_blocks_only,
    named_by_value,
    other_block_words,
    other_pid_words,
    rounded_toward_zero,
    swapped_block_words,
    tiles_offset_by_other_block,
    tiles_on_the_other_pid,
    tiles_unscaled,
    toward_zero_words,
    unscaled_words,
)
from .mainloop_runs import (
    GROWS,
    MOVED,
    ONE,
    SWAP,
    UNIT,
    advance_mistake,
    layout_dependent,
    right_when_row_major,
    run_mainloop,
)
from support import (
    ACC_RTOL,
    BOTH_LAYOUTS,
    DEVICE,
    DTYPES,
    layout_pairs,
    poisoned_view,
    rel_err,
    wrong_cells,
)

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T4.2 pointer blocks and the K loop
# ================================================================================================
MAINLOOP_CASES = [  # (M, N, K, BLOCK_M, BLOCK_N, BLOCK_K): tails in every dimension, K < BLOCK_K
    (32, 32, 64, 16, 16, 16),
    (45, 37, 83, 16, 32, 16),
    (17, 50, 7, 16, 16, 32),
    (64, 16, 130, 32, 16, 32),
    (40, 24, 64, 16, 16, 32),  # K whole blocks, rows and columns not: masks still needed
    (24, 16, 33, 16, 16, 16),  # a last k-block one column wide: a loop to cdiv(K - 1, BLOCK_K) leaves it out
    (16, 16, 72, 16, 16, 32),  # BLOCK_K above BLOCK_M and BLOCK_N, a K tail: K - k * BLOCK_M reads past it
    (20, 40, 40, 16, 32, 16),  # BLOCK_N above BLOCK_K: K - k * BLOCK_N leaves 8 lanes of k-block 1, not 16
]


@pytest.mark.t4_2
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", layout_pairs(1))
@pytest.mark.parametrize("M, N, K, bm, bn, bk", MAINLOOP_CASES)
@pytest.mark.case_words(layout=BOTH_LAYOUTS)
def test_mainloop(probes, monkeypatch, dtype, layout, M, N, K, bm, bn, bk):
    layout_b = layout.b
    a, a_buf = poisoned_view(M, K, layout, dtype)
    b, b_buf = poisoned_view(K, N, layout_b, dtype)
    acc = run_mainloop(probes, a, b, (bm, bn, bk))
    case = say(
        zh=f"M={M} N={N} K={K}，BLOCK {bm}x{bn}x{bk}，A 为 {layout}、B 为 {layout_b}，{dtype}，"
        f"A 的 stride {a.stride()}、B 的 {b.stride()}",
        en=f"M={M} N={N} K={K}, BLOCK {bm}x{bn}x{bk}, A {layout}, B {layout_b}, {dtype}, "
        f"strides A {a.stride()} B {b.stride()}",
    )
    loads = see_loads(M, N, K, bm, bn, bk, dtype, layout=layout, layout_b=layout_b)
    if acc.isnan().any():
        again = lambda: run_mainloop(probes, a, b, (bm, bn, bk))  # noqa: E731
        if edge := read_at_k_equal_k(probes, monkeypatch, a, b, again, (bm, bn, bk)):
            pytest.fail(
                say(
                    zh=f"{case}：累加器里有 NaN；{k_edge_words(edge)}；{read('T4.2', '4.1')}。{loads}",
                    en=f"{case}: the accumulator holds NaN; {k_edge_words(edge)}; {read('T4.2', '4.1')}. {loads}",
                ),
                pytrace=False,
            )
        advance = advance_mistake(probes, M, N, K, (bm, bn, bk), layout, dtype)
        if advance and advance.startswith((SWAP, ONE, MOVED, UNIT, GROWS)):
            nan = say(zh="累加器里有 NaN", en="the accumulator holds NaN")
            rest, sections = advance.split(":", 1)[1], ("3", "3.1")
            if advance.startswith(MOVED):
                words, sections = adv.block_advance_words(rest.split("|")), ("4.3",)
            elif advance.startswith(UNIT):
                words, sections = adv.unit_advance_words(rest), ("4.3",)
            elif advance.startswith(GROWS):
                words, sections = adv.growing_advance_words(rest.split("|")), ("4.3",)
            else:
                words = swapped_block_words(rest) if advance.startswith(SWAP) else adv.one_stride_words(rest)
            pytest.fail(
                say(
                    zh=f"{case}：{nan}；{words}；{read('T4.2', *sections)}。{loads}",
                    en=f"{case}: {nan}; {words}; {read('T4.2', *sections)}. {loads}",
                ),
                pytrace=False,
            )
        if advance:
            # in words, not the line itself: the §8 table shows this message in the explainer
            right = say(
                zh={"a_ptrs": "a_ptrs 前移 BLOCK_K 个 stride_ak", "b_ptrs": "b_ptrs 前移 BLOCK_K 个 stride_bk"},
                en={"a_ptrs": "a_ptrs by BLOCK_K steps of stride_ak", "b_ptrs": "b_ptrs by BLOCK_K steps of stride_bk"},
            )
            fix = say(zh="；", en="; ").join(right[n] for n in advance.split(", "))
            pytest.fail(
                say(
                    zh=f"{case}：累加器里有 NaN，而且结果正好等于 {advance} 在循环里按错的 stride 前进"
                    f"（沿 M 或 N 走，而不是沿 K 走）：指针块本身建对了，错在每次迭代的移动，应该是 {fix}；"
                    f"{read('T4.2', '4.3')}。{loads}",
                    en=f"{case}: the accumulator holds NaN, and it is exactly what the loop computes when "
                    f"{advance} advance{'s' if ',' not in advance else ''} by the wrong stride (along M or N "
                    f"instead of along K): the blocks are built right, the move in each iteration is wrong; move "
                    f"{fix}; {read('T4.2', '4.3')}. {loads}",
                ),
                pytrace=False,
            )
        if right_when_row_major(probes, a, b, (bm, bn, bk), dtype):
            nan = say(
                zh="累加器里有 NaN，说明某次 load 读到了 A 或 B 之外",
                en="the accumulator holds NaN, so a load read outside A or B",
            )
            pytest.fail(
                say(
                    zh=f"{case}：{layout_dependent(nan)}；{read('T4.2', '3.1')}。{loads}",
                    en=f"{case}: {layout_dependent(nan)}; {read('T4.2', '3.1')}. {loads}",
                ),
                pytrace=False,
            )
        pytest.fail(
            say(
                zh=f"{case}：累加器里有 NaN，说明某次 load 读到了 A 或 B 之外（这里它们被 NaN 填充包着）："
                f"要么少了掩码（行 >= M、列 >= N、K 尾部 offs_k < K - k * BLOCK_K，且 other=0.0），"
                f"要么某个指针块用错了 stride；{read('T4.2', '3', '4.1')}。{loads}",
                en=f"{case}: the accumulator holds NaN, so a load read outside A or B (they sit inside NaN "
                f"padding here): either a mask is missing (rows >= M, columns >= N, the K tail offs_k < "
                f"K - k * BLOCK_K, with other=0.0) or a pointer block uses the wrong stride; "
                f"{read('T4.2', '3', '4.1')}. {loads}",
            ),
            pytrace=False,
        )
    ref = a.double() @ b.double()
    err = rel_err(acc[:M, :N], ref)
    if err > ACC_RTOL[dtype]:
        sections = ("3", "4")
        hint = wrong_cells(acc[:M, :N], ref, ACC_RTOL[dtype])  # what is wrong, where no cause is found below
        whole = K // bk * bk  # the K-blocks that are whole: a loop that stops before the tail sums these only
        if K > bk and rel_err(acc[:M, :N], first_block_only(a, b, bk)) < ACC_RTOL[dtype]:
            sections = ("4.3",)
            hint = say(
                zh=f"结果等于第 0 个 K 块被累加了 {triton.cdiv(K, bk)} 次：每次迭代要把 a_ptrs 前移 "
                f"BLOCK_K * stride_ak，b_ptrs 前移 BLOCK_K * stride_bk",
                en=f"it equals K-block 0 summed {triton.cdiv(K, bk)} times: advance a_ptrs by "
                f"BLOCK_K * stride_ak and b_ptrs by BLOCK_K * stride_bk each iteration",
            )
        elif K > bk and rel_err(acc[:M, :N], last_block_only(a, b, bk)) < ACC_RTOL[dtype]:
            sections, hint = ("4.2",), last_block_words(triton.cdiv(K, bk))
        elif is_the_model(acc[:M, :N], blockwise(a, b, bk, round_partials=True), err):
            sections = ("4.2",)
            hint = say(
                zh="结果和「每个 tl.dot(a, b) 先舍入成 fp16 再累加」一致：乘积保持 float32，不做类型转换就加进 acc",
                en="it matches each tl.dot(a, b) rounded to fp16 before it is added: keep the product "
                "float32 and add it into acc without a cast",
            )
        elif dtype == torch.float32 and is_the_model(acc[:M, :N], a.half().double() @ b.half().double(), err):
            sections = ("4.2",)
            hint = say(
                zh="结果和「A、B 先舍入成 fp16 再相乘」一致：float32 的输入原样交给 tl.dot，不要先 .to(tl.float16)",
                en="it matches A and B rounded to fp16 before they are multiplied: hand tl.dot the float32 "
                "blocks as they are loaded, without a .to(tl.float16)",
            )
        elif whole < K and rel_err(acc[:M, :N], a[:, :whole].double() @ b[:whole].double()) < ACC_RTOL[dtype]:
            sections = ("4.1",)
            hint = say(
                zh=f"结果等于只算了前 {whole} 个 k、漏掉 K 尾部 {K - whole} 个 k 的乘积：循环要跑 "
                f"tl.cdiv(K, BLOCK_K) 次，最后一块用掩码遮住 K 之外的部分",
                en=f"it equals the product over the first {whole} k only, without the K tail of {K - whole}: "
                f"the loop must run tl.cdiv(K, BLOCK_K) times, the last block masked past K",
            )
        elif shrinks_by := k_mask_by_other_block(acc[:M, :N], a, b, (bm, bn, bk), ACC_RTOL[dtype]):
            sections, hint = ("4.1",), k_mask_words(shrinks_by)
        elif j := leading_blocks_only(acc[:M, :N], a, b, bk, ACC_RTOL[dtype]):
            sections = ("4", "4.1")
            hint = say(
                zh=f"结果等于只有第 0 到第 {j - 1} 个 k 块（前 {j * bk} 个 k）的乘积，后面的 k 块什么也没加上"
                f"（被掩码遮掉了或没读）：循环的 k 是块号 0 .. tl.cdiv(K, BLOCK_K) - 1（range(0, K, BLOCK_K) "
                f"给的是元素偏移），K 掩码拿 offs_k 和 K - k * BLOCK_K 比",
                en=f"it equals the product over k-blocks 0 to {j - 1} alone (the first {j * bk} k): the k-blocks "
                f"after them added nothing (masked off or never read); the loop's k is a block number, 0 .. "
                f"tl.cdiv(K, BLOCK_K) - 1 (range(0, K, BLOCK_K) gives element offsets), and the K mask compares "
                f"offs_k with K - k * BLOCK_K",
            )
        elif off := tiles_offset_by_other_block(acc[:M, :N], a, b, bm, bn, ACC_RTOL[dtype]):
            sections, hint = ("3",), other_block_words(off)
        elif pid := tiles_on_the_other_pid(acc[:M, :N], a, b, bm, bn, ACC_RTOL[dtype]):
            sections, hint = other_pid_words(pid, mask_against_other_size(acc[:M, :N], ref, ACC_RTOL[dtype]))
        elif unscaled := tiles_unscaled(acc[:M, :N], a, b, bm, bn, ACC_RTOL[dtype]):
            sections, hint = ("3",), unscaled_words(unscaled)
        elif crossed := mask_against_other_size(acc[:M, :N], ref, ACC_RTOL[dtype]):
            sections, hint = ("4.1",), crossed
        elif unit := adv.unit_advance(a, a_buf, b, b_buf, bk, acc[:M, :N], ACC_RTOL[dtype]):
            sections, hint = ("4.3",), adv.unit_advance_words(unit)
        elif moved := adv.block_advance(a, a_buf, b, b_buf, (bm, bn, bk), acc[:M, :N], ACC_RTOL[dtype]):
            sections, hint = ("4.3",), adv.block_advance_words(moved)
        elif grows := adv.growing_advance(a, a_buf, b, b_buf, bk, acc[:M, :N], ACC_RTOL[dtype]):
            sections, hint = ("4.3",), adv.growing_advance_words(grows)
        elif K > bk and (frozen := adv.frozen_advance(a, a_buf, b, b_buf, bk, acc[:M, :N], ACC_RTOL[dtype])):
            sections, hint = ("4.3",), adv.frozen_advance_words(frozen)
        elif found := named_by_value(acc[:M, :N], a, b, (bm, bn, bk), err, ACC_RTOL[dtype]):
            sections, hint = found
        elif right_when_row_major(probes, a, b, (bm, bn, bk), dtype):
            sections = ("3", "3.1")
            hint = layout_dependent(hint)
        pytest.fail(
            say(
                zh=f"{case}：相对误差 {err:.2e} > {ACC_RTOL[dtype]:.1e}；{hint}；{read('T4.2', *sections)}。{loads}",
                en=f"{case}: relative error {err:.2e} > {ACC_RTOL[dtype]:.1e}; {hint}; {read('T4.2', *sections)}. "
                f"{loads}",
            ),
            pytrace=False,
        )
    stray = bounds.unmasked_reads(
        probes, monkeypatch, "mainloop_probe", lambda: run_mainloop(probes, a, b, (bm, bn, bk))
    )
    if stray:
        pytest.fail(
            say(
                zh=f"{case}：结果是对的，可是 A、B 的 load 有 {stray} 个没被掩码挡住的 lane 读到了 A、B 之外"
                f"（这里 A、B 外面是 NaN，读来的值事后被丢掉了，比如 load 之后再 tl.where；但读这件事已经发生，"
                f"在 GPU 上可能是非法地址）：把行 < M、列 < N、K 尾部这些条件都放进 tl.load 的 mask，"
                f"并给 other=0.0；{read('T4.2', '4.1')}。{loads}",
                en=f"{case}: the result is right, but {stray} lanes of the loads of A and B, not masked off, read "
                f"outside A and B (NaN lies there, so the values read were thrown away afterwards, by a "
                f"tl.where after the load, say; the reads were still made, and on a GPU such an address can "
                f"fault): put every condition, rows < M, columns < N and the K tail, in tl.load's mask, with "
                f"other=0.0; {read('T4.2', '4.1')}. {loads}",
            ),
            pytrace=False,
        )


@pytest.mark.t4_2
def test_mainloop_accumulates_in_fp32(probes):
    """fp16 inputs, all positive, K = 512 in 8 blocks of 64: summed in fp32 the error is about 1e-7.
    An fp16 accumulator, or each block's tl.dot rounded to fp16 before it is added (acc +=
    tl.dot(a, b).to(tl.float16)), loses 4e-5 or more here: only fp32 all the way stays under 1e-5."""
    K, bk = 512, 64
    a = torch.rand(32, K, device=DEVICE).to(torch.float16)
    b = torch.rand(K, 32, device=DEVICE).to(torch.float16)
    acc = run_mainloop(probes, a, b, (16, 16, bk))[:32, :32]
    ref = a.double() @ b.double()
    err = rel_err(acc, ref)
    if err < 1e-5:
        return
    # Precision is blamed only where the result is one of the two rounded loops, not the exact product.
    why, sections = wrong_cells(acc, ref, 1e-5), ("3", "4")
    if is_the_model(acc, blockwise(a, b, bk, round_partials=True), err):
        sections = ("4.2",)
        why = say(
            zh="结果和「每个 tl.dot(a, b) 先舍入成 fp16 再累加」一致：部分积上的 .to(tl.float16) 在这里"
            "把低位丢了 8 次。把 float32 的乘积原样加进 acc，不要做类型转换",
            en="it matches each tl.dot(a, b) rounded to fp16 before it is added: a .to(tl.float16) on the "
            "partial product throws away its low bits 8 times here. Add the float32 product into acc "
            "as it is, without a cast",
        )
    elif is_the_model(acc, blockwise(a, b, bk, round_partials=False), err):
        sections = ("4.2",)
        why = say(
            zh="结果和 fp16 累加器一致：用 acc = tl.zeros(..., dtype=tl.float32) 起步，并一直保持 float32",
            en="it matches an fp16 accumulator: start acc = tl.zeros(..., dtype=tl.float32) and keep it float32",
        )
    elif rounded := rounded_toward_zero(acc, a, b, bk, err):
        sections, why = ("4.2",), toward_zero_words(rounded)
    elif is_the_model(acc, first_block_only(a, b, bk), err):  # the accumulator is not what is wrong here
        sections = ("4.3",)
        why = say(
            zh=f"结果等于第 0 个 K 块被累加了 {K // bk} 次，和累加器的精度无关：每次迭代要把 a_ptrs 前移 "
            f"BLOCK_K * stride_ak，b_ptrs 前移 BLOCK_K * stride_bk",
            en=f"it equals K-block 0 summed {K // bk} times, nothing to do with the accumulator's precision: "
            f"advance a_ptrs by BLOCK_K * stride_ak and b_ptrs by BLOCK_K * stride_bk each iteration",
        )
    elif err > 10 * (fp16_err := rel_err(blockwise(a, b, bk, round_partials=False), ref)):
        why = say(
            zh=f"{why}；这比 fp16 累加器在这里的误差（{fp16_err:.0e}）还大十倍以上，所以错的不只是累加的精度："
            f"先看 test_mainloop 报的失败",
            en=f"{why}; that is over ten times the error an fp16 accumulator makes here ({fp16_err:.0e}), so "
            f"more than the accumulator's precision is wrong: see test_mainloop's failures first",
        )
    pytest.fail(
        say(
            zh=f"K = {K}、fp16、BLOCK_K = {bk}：相对误差 {err:.1e} > 1e-5；{why}；{read('T4.2', *sections)}",
            en=f"K = {K} in fp16, BLOCK_K = {bk}: relative error {err:.1e} > 1e-5; {why}; {read('T4.2', *sections)}",
        ),
        pytrace=False,
    )


@pytest.mark.t4_2
def test_mainloop_with_k_zero(probes):
    """K = 0: the loop never runs, so mainloop returns acc as it started: zeros, and float32 (the probe
    kernel's static_assert).  An acc that starts as fp16 zeros or a Python 0.0 and turns float32 in
    the loop passes every other case here on the interpreter, and a GPU compiler refuses it."""
    M, N = 20, 24
    a, _ = poisoned_view(M, 0, "row-major", torch.float16)
    b, _ = poisoned_view(0, N, "row-major", torch.float16)
    acc = run_mainloop(probes, a, b, (16, 16, 16))[:M, :N]
    if not torch.equal(acc, torch.zeros_like(acc)):
        nonzero = (acc != 0).sum().item()
        pytest.fail(
            say(
                zh=f"K = 0（M={M}、N={N}）：循环一次也不跑，mainloop 应该原样返回起始的 acc，全是 0；"
                f"实际有 {nonzero} 个元素不是 0（{wrong_cells(acc, torch.zeros_like(acc, dtype=torch.float64), 0)}）"
                f"：acc 要从 tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32) 起步；{read('T4.2', '4', '4.2')}",
                en=f"K = 0 (M={M}, N={N}): the loop never runs, so mainloop must return acc as it started, all "
                f"zeros; {nonzero} cells are not ({wrong_cells(acc, torch.zeros_like(acc, dtype=torch.float64), 0)}): "
                f"start acc as tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32); {read('T4.2', '4', '4.2')}",
            ),
            pytrace=False,
        )
