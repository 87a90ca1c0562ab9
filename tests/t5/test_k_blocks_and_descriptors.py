"""T5.2: the k-block loop through descriptors, probed alone, and the boxes make_descriptors gives them."""

import pytest
import torch
import triton

from course.i18n import say
from course.messages import fail

from .box_causes import box_cause
from .common import T5, offsets_in_elements
from .k_ranges import fail_if_another_range, fail_if_numbers_times_block_k
from .swaps import fail_if_a_load_swapped
from support import ACC_RTOL, DEVICE, descriptor, padded, rel_err

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


@pytest.mark.t5_2
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize(
    "M, N, K, kb_begin, kb_end, kmajor",
    # the last two stop short of K's last k-block: the sum must too
    [
        (45, 37, 83, 0, 3, False),
        (32, 32, 96, 1, 3, False),
        (17, 50, 70, 0, 3, True),
        (40, 48, 160, 1, 3, False),
        (24, 40, 200, 2, 5, True),
    ],
)
def test_k_block_loop(probes, dtype, M, N, K, kb_begin, kb_end, kmajor):
    """A and B sit inside NaN; their descriptors' shapes end at M, N and K, so the boxes that stick
    out must come back as zeros, not as the NaN beside them."""
    check_k_block_loop(probes, dtype, M, N, K, kb_begin, kb_end, kmajor, 32, 32, 32)


@pytest.mark.t5_2
@pytest.mark.parametrize("kmajor", [False, True], ids=["b-row-major", "b-k-major"])
@pytest.mark.case_words(id_zh={"b-row-major": "B 行主序", "b-k-major": "B 沿 K 连续"})
@pytest.mark.parametrize("bm, bn, bk", [(16, 64, 32), (32, 16, 64)])
def test_k_block_loop_with_three_block_sizes(probes, kmajor, bm, bn, bk):
    """BLOCK_M, BLOCK_N and BLOCK_K all different (every other test of the loop, and every product on the
    CPU, has BLOCK_N = BLOCK_K): a k-block's offset taken with another block size shows only here."""
    check_k_block_loop(probes, torch.float16, 45, 70, 200, 1, 4, kmajor, bm, bn, bk)


def check_k_block_loop(probes, dtype, M, N, K, kb_begin, kb_end, kmajor, bm, bn, bk):
    """k_block_loop's sum of k-blocks kb_begin..kb_end-1 for every tile, in BLOCK_M x BLOCK_N x BLOCK_K
    = bm x bn x bk, against float64; on a miss, the mistake whose sum it is, where one is."""
    case = say(
        zh=f"M={M} N={N} K={K}，第 {kb_begin}..{kb_end - 1} 个 k-block，{dtype}{'，B 为 K-major' if kmajor else ''}",
        en=f"M={M} N={N} K={K}, k-blocks {kb_begin}..{kb_end - 1}, {dtype}{', B K-major' if kmajor else ''}",
    )
    acc, a, b_store, grid = run_k_block_loop(probes, dtype, (M, N, K), kb_begin, kb_end, kmajor, (bm, bn, bk), case)
    b = b_store.t() if kmajor else b_store
    if acc.isnan().any():
        fail(
            T5,
            f"{case}：累加器里有 NaN：读到了张量外面（这里是 NaN）。用描述符 load，不要用指针",
            f"{case}: NaN in the accumulator, so a load read outside A or B (NaN there): load through the "
            "descriptors, not through pointers",
            "3.1",
        )
    ks = slice(kb_begin * bk, min(kb_end * bk, K))
    ref = a[:, ks].double() @ b[ks, :].double()
    err = rel_err(acc[:M, :N], ref)
    if err > ACC_RTOL[dtype]:
        fail_if_half_words(acc[:M, :N], ref, err, case)

        def again(lo, hi, blocks):  # the loop once more, where each mistake of the range sums another run
            K2 = blocks * bk - 5
            case2 = say(
                zh=f"换成 K={K2}、第 {lo}..{hi - 1} 个 k-block 再跑一次",
                en=f"run again with K={K2}, k-blocks {lo}..{hi - 1}",
            )
            acc2, a2, b2, _ = run_k_block_loop(probes, dtype, (M, N, K2), lo, hi, kmajor, (bm, bn, bk), case2)
            return acc2[:M, :N], a2, b2.t() if kmajor else b2, K2, case2

        fail_if_another_range(acc[:M, :N], a, b, K, bk, kb_begin, kb_end, ACC_RTOL[dtype], case, again)
        fail_if_numbers_times_block_k(acc[:M, :N], a, b, K, bk, kb_begin, kb_end, ACC_RTOL[dtype], case, again)
        fail_if_offset_by_another_block(acc[:M, :N], a, b, K, (bm, bn, bk), kb_begin, kb_end, ACC_RTOL[dtype], case)
        fail_if_operands_rounded(acc[:M, :N], a[:, ks], b[ks, :], err, ACC_RTOL[dtype], case)
        fail_if_sum_rounded(acc[:M, :N], a, b, K, bk, kb_begin, kb_end, err, ACC_RTOL[dtype], case)
        fail_if_acc_added_twice(acc[:M, :N], a, b, K, bk, kb_begin, kb_end, ACC_RTOL[dtype], case)
        blocks, tol = (bm, bn, bk), ACC_RTOL[dtype]
        fail_if_a_load_swapped(acc[:M, :N], a, b_store, kmajor, grid, kb_begin, kb_end, blocks, tol, case, (M, N))
        if not acc[:M, :N].any() and ref.any():  # every box read fell outside A and B, or nothing was added
            fail_if_swapped_outside(probes, dtype, K, kb_begin, kb_end, kmajor, blocks, tol, case)
        fail(
            T5,
            f"{case}：相对误差 {err:.2e} > {ACC_RTOL[dtype]:.0e}，这个和不是这项检查认得的哪一种错误给出的"
            "（k-block 的范围、偏移、舍入、box 坐标）；要的是 kb_begin..kb_end-1 这几个 k-block 在 float32 里的和，"
            "每个的偏移是 kb * BLOCK_K" + ("，K-major 时 box 是 [BLOCK_N, BLOCK_K]，load 后 .T" if kmajor else ""),
            f"{case}: relative error {err:.2e} > {ACC_RTOL[dtype]:.0e}, a sum that none of the mistakes this check "
            "knows gives (the k-blocks' range, their offsets, a rounding, a box's coordinates); wanted: the float32 "
            "sum of k-blocks kb_begin..kb_end-1, each at offset kb * BLOCK_K"
            + (", K-major with the box [BLOCK_N, BLOCK_K], .T after the load" if kmajor else ""),
            "3.1",
        )


def run_k_block_loop(probes, dtype, shape, kb_begin, kb_end, kmajor, blocks, case):
    """(acc, a, b_store, grid): k_block_loop's sum of k-blocks kb_begin..kb_end-1 for every tile, A and B (or
    B^T, K-major: b_store) fresh inside NaN, of shape (M, N, K), in blocks (BLOCK_M, BLOCK_N, BLOCK_K)."""
    (M, N, K), (bm, bn, bk) = shape, blocks
    a, _ = padded(M, K, dtype)
    b_store, _ = padded(N, K, dtype) if kmajor else padded(K, N, dtype)
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    acc = torch.full((grid[0] * bm, grid[1] * bn), -7.0, device=DEVICE)
    with offsets_in_elements(case):
        probes.k_block_loop_probe[grid](
            descriptor(a, [bm, bk]),
            descriptor(b_store, [bn, bk] if kmajor else [bk, bn]),
            acc,
            acc.stride(0),
            kb_begin,
            kb_end,
            bm,
            bn,
            bk,
            kmajor,
        )
    return acc, a, b_store, grid


def fail_if_swapped_outside(probes, dtype, K, kb_begin, kb_end, kmajor, blocks, tol, case):
    """Where the accumulator was all zeros: the loop run again with M = N = kb_end * BLOCK_K, where a box
    loaded with its coordinates the other way round lies inside A or B (its rows reach every k-block's
    offset); fail naming that load where that run's sum is the one it gives."""
    size = kb_end * blocks[2]
    again = say(
        zh=f"{case}：累加器全是 0；换成 M = N = {size} 再跑一次（反过来的坐标也落在 A、B 之内）",
        en=f"{case}: the accumulator is all zeros; run again with M = N = {size} (where coordinates the other way "
        "round fall inside A and B too)",
    )
    acc, a, b_store, grid = run_k_block_loop(probes, dtype, (size, size, K), kb_begin, kb_end, kmajor, blocks, again)
    fail_if_a_load_swapped(
        acc[:size, :size], a, b_store, kmajor, grid, kb_begin, kb_end, blocks, tol, again, (size,) * 2
    )


def fail_if_offset_by_another_block(acc, a, b, K, blocks, kb_begin, kb_end, tol, case):
    """Fail where acc is the sum of the k-blocks taken at offset kb * BLOCK_M or kb * BLOCK_N (each still
    BLOCK_K wide, the part past K read as zeros), not kb * BLOCK_K: only where that block size differs."""
    bm, bn, bk = blocks
    for name, size in (("BLOCK_N", bn), ("BLOCK_M", bm)):
        if size == bk:
            continue
        spans = [slice(min(kb * size, K), min(kb * size + bk, K)) for kb in range(kb_begin, kb_end)]
        other = sum(a[:, s].double() @ b[s, :].double() for s in spans)
        if rel_err(acc, other) <= tol:
            fail(
                T5,
                f"{case}：累加器正是从第 kb * {name} 列开始取 k-block 的和：沿 K 的偏移是 kb * BLOCK_K，"
                f"这里 {name} = {size}，BLOCK_K = {bk}",
                f"{case}: the accumulator is the sum of the k-blocks taken from column kb * {name} on: the offset "
                f"along K is kb * BLOCK_K, and here {name} = {size}, BLOCK_K = {bk}",
                "3.1",
            )


def fail_if_operands_rounded(acc, a, b, err, tol, case):
    """Fail where float32 operands were rounded to float16 before tl.dot (a.to(tl.float16), say): acc
    is then, within tol, the product of the rounded A and B, and not of A and B themselves."""
    if a.dtype != torch.float32 or rel_err(acc, a.half().double() @ b.half().double()) > tol:
        return
    fail(
        T5,
        f"{case}：相对误差 {err:.2e} > {tol:.0e}；累加器正是 A、B 先舍入成 float16 再相乘的和："
        "操作数在 tl.dot 之前被舍入成了 float16。按描述符载入的 dtype 直接交给 tl.dot",
        f"{case}: relative error {err:.2e} > {tol:.0e}; the accumulator is, within it, the product of A and B "
        "each rounded to float16 first: the operands were rounded to float16 before tl.dot. Hand tl.dot "
        "the boxes in the dtype the descriptors load",
        "3.1",
    )


def fail_if_half_words(acc, ref, err, case):
    """Fail where the low 16 bits of every float32 word of acc hold a 16-bit float near the right sum: the
    interpreter's tl.dot into a float16 or bfloat16 accumulator (tl.zeros(..., dtype=tl.float16) with float32
    operands) stores the narrow sum's bits, 2 bytes a cell, into words read as float32."""
    low_bits = acc.contiguous().view(torch.int32) & 0xFFFF
    narrow = (low_bits - (low_bits >= 0x8000).int() * 0x10000).to(torch.int16)
    for low in (torch.float16, torch.bfloat16):
        if rel_err(narrow.view(low).double(), ref) <= 2e-2:
            fail(
                T5,
                f"{case}：相对误差 {err:.2e}；累加器每个 float32 格子的低 16 位当作 {low} 读，和正确的和相差在 2% "
                f"以内：这个和是用 {low} 累加的（解释器把窄的结果按位放进了 float32 的格子）。acc 要从 "
                "tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32) 开始",
                f"{case}: relative error {err:.2e}; the low 16 bits of each float32 cell of the accumulator, read as "
                f"{low}, are within 2% of the right sum: the sum was accumulated in {low} (the interpreter left the "
                "narrow result's bits in float32 cells). "
                "Start acc as tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
                "3.1",
            )


def fail_if_sum_rounded(acc, a, b, K, bk, kb_begin, kb_end, err, tol, case):
    """Fail where the running sum was rounded to float16 or bfloat16 after each k-block (tl.dot(a, b,
    acc).to(a.dtype), say): acc is then that rounded sum of the right k-blocks, four times nearer it than the
    right sum at least (the kernel's float32 before each rounding, not float64, moves a cell by one step)."""
    for low, product_too in ((torch.float16, False), (torch.bfloat16, False), (torch.float16, True)):
        run = torch.zeros_like(acc, dtype=torch.float64)
        for kb in range(kb_begin, kb_end):
            s = slice(min(kb * bk, K), min((kb + 1) * bk, K))
            block = a[:, s].double() @ b[s, :].double()  # product_too: each k-block's tl.dot rounded before the add
            run = (run + (block.float().to(low).double() if product_too else block)).float().to(low).double()
        if rel_err(acc, run) <= max(tol, err / 4):  # far nearer that sum than the right one (fp32's roundings aside)
            fail(
                T5,
                f"{case}：相对误差 {err:.2e} > {tol:.0e}；累加器正是每加一个 k-block 就把和舍入成 {low} 的结果"
                + ("（每个 k-block 的 tl.dot 在相加之前也舍入了）" if product_too else "")
                + "：acc 要一直是 float32，tl.dot(a, b, acc) 之后不做类型转换",
                f"{case}: relative error {err:.2e} > {tol:.0e}; the accumulator is the sum rounded to "
                f"{low}"
                + (" (and each k-block's tl.dot rounded before the add)" if product_too else "")
                + " after each k-block: keep acc float32 all the way, with no cast after tl.dot(a, b, acc)",
                "3.1",
            )


def fail_if_acc_added_twice(acc, a, b, K, bk, kb_begin, kb_end, tol, case):
    """Fail where each k-block doubled the sum before it: acc += tl.dot(a, b, acc) adds acc once in the dot (its
    third operand is added to the product) and once more by the +=."""
    run = torch.zeros_like(acc, dtype=torch.float64)
    for kb in range(kb_begin, kb_end):
        s = slice(min(kb * bk, K), min((kb + 1) * bk, K))
        run = 2 * run + a[:, s].double() @ b[s, :].double()
    if kb_end - kb_begin > 1 and rel_err(acc, run) <= tol:
        fail(
            T5,
            f"{case}：累加器正是每个 k-block 都把之前的和加了两遍的结果：tl.dot(a, b, acc) 已经把 acc 加到乘积上，"
            "再用 acc += 就又加了一遍；写 acc = tl.dot(a, b, acc)，或 acc += tl.dot(a, b)",
            f"{case}: the accumulator is the sum with everything before each k-block added twice: tl.dot(a, b, acc) "
            "already adds acc to the product, and acc += adds it again; write acc = tl.dot(a, b, acc), or "
            "acc += tl.dot(a, b)",
            "3.1",
        )


def ptrs(tensors):
    return {t.data_ptr() for t in tensors}


@pytest.mark.t5_2
def test_make_descriptors_boxes(t5):
    """Each descriptor spans its tensor, and its box is what the kernel moves: A [BLOCK_M, BLOCK_K], B
    [BLOCK_K, BLOCK_N] or, K-major, [BLOCK_N, BLOCK_K] (k_block_loop loads boxes of B^T then), C
    [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE].  The three block sizes differ, so a box with two of them
    swapped shows here; with equal ones (the products' tests) it would go through unseen.  EPILOGUE_SUBTILE
    1 too: a C box of BLOCK_N // 2 whatever it is failed only in the kernel, with the interpreter's words.
    The last call repeats the one before with other tensors: descriptors kept from a call show there."""
    bm, bn, bk = 16, 64, 32
    M, N, K = 40, 96, 80
    given = []  # every call's tensors, kept alive so that no later tensor takes their memory
    for call, (kmajor, subtile) in enumerate(((False, 2), (True, 2), (False, 1), (False, 1))):
        a = padded(M, K, torch.float16)[0]
        b = padded(N, K, torch.float16)[0] if kmajor else padded(K, N, torch.float16)[0]
        c = padded(M, N, torch.float16)[0]
        got = t5.make_descriptors(a, b, c, kmajor, bm, bn, bk, subtile)
        given.append((a, b, c))
        want = {
            "a_desc": (a, [bm, bk]),
            "b_desc": (b, [bn, bk] if kmajor else [bk, bn]),
            "c_desc": (c, [bm, bn // subtile]),
        }
        blocks = f"BLOCK_M={bm} BLOCK_N={bn} BLOCK_K={bk} EPILOGUE_SUBTILE={subtile}"
        case = say(
            zh=f"make_descriptors，{blocks}，"
            + ("B 为 K-major，b 的形状是 (N, K)" if kmajor else "B 为行主序，b 是 (K, N)"),
            en=f"make_descriptors, {blocks}, " + ("B K-major, b is (N, K)" if kmajor else "B row-major, b is (K, N)"),
        )
        for desc, (name, (t, box)) in zip(got, want.items(), strict=True):
            if list(desc.block_shape) != box:
                why = box_cause(name, list(desc.block_shape), bm, bn, bk, kmajor, subtile)
                fail(
                    T5,
                    f"{case}：{name} 的 box 是 {list(desc.block_shape)}，应当是 {box}{why[0]}",
                    f"{case}: {name}'s box is {list(desc.block_shape)}, {box} expected{why[1]}",
                    "3.1",
                )
            earlier = next((n for n, ts in enumerate(given[:-1]) if desc.base.data_ptr() in ptrs(ts)), None)
            if desc.base.data_ptr() != t.data_ptr() and earlier is not None:
                fail(
                    T5,
                    f"{case}：这是第 {call + 1} 次调用，{name} 却建在第 {earlier + 1} 次调用拿到的张量上："
                    "那次的结果被留下来，又交给了拿着别的张量（形状相同）的这一次；每次调用的描述符要由它拿到的张量建",
                    f"{case}: in call {call + 1}, {name} is built on a tensor that call {earlier + 1} was given: that "
                    "call's result was kept and handed to this one, which was given other tensors (of the same "
                    "shapes); build each call's descriptors on the tensors it is given",
                    "3.1",
                )
            if desc.base.data_ptr() != t.data_ptr() or desc.base.stride() != t.stride():
                fail(
                    T5,
                    f"{case}：{name} 建在了另一个张量上（另一块内存或另一种步长），不是传给 make_descriptors 的那个",
                    f"{case}: {name} is built on another tensor (other memory or other strides), not on the one "
                    "make_descriptors was given",
                    "3.1",
                )
            if list(desc.shape) != list(t.shape):
                fail(
                    T5,
                    f"{case}：{name} 的形状是 {list(desc.shape)}，应当是张量自己的 {list(t.shape)}",
                    f"{case}: {name}'s shape is {list(desc.shape)}, the tensor's own {list(t.shape)} expected",
                    "3.1",
                )
