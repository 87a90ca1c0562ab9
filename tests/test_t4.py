"""Lesson T4's suite: one section per step, each marked so that `make test STEP=T4.2` runs it alone.

Every check compares against an oracle computed independently here (a float64 product, an
enumeration of the grouped order), draws fresh random inputs, and poisons whatever the kernel
must not read or must write, so that a skipped mask or an unwritten tile shows up.
"""

import math
import os
import re

import pytest
import torch
import triton

from course import ROOT, seam
from course.hardware import H100_SMEM, smem_bytes
from course.i18n import say
from course.messages import read, stub_report
from course.registry import lesson
from course.tile_order import grouped_order
from course.warm import run_python

from gpu_compile import check_compiles_for_hopper
from support import (
    ACC_RTOL,
    BOTH_LAYOUTS,
    DEVICE,
    DTYPES,
    INTERPRETING,
    LAYOUTS,
    OUT_RTOL,
    PAD,
    UNWRITTEN,
    HandedToTorch,
    LaunchWatch,
    layout_pairs,
    poison_allocations,
    poisoned_view,
    random,
    refuse_torch_products,
    rel_err,
    same_tensor,
    spans,
    wrong_cells,
)

T4 = lesson("T4")

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


@pytest.fixture(scope="session")
def t4(graded_module):
    return graded_module(T4)


@pytest.fixture(scope="session")
def probes(t4):
    from course.lessons import t4_probes  # its kernels call the graded module's functions, so it loads after `t4`

    return t4_probes


def see_loads(M, N, K, bm, bn, bk, dtype, **layouts):
    """The `make loads` line that draws this case's loads and stores with the learner's own code;
    layouts: layout (of A), layout_b, layout_c, each given only when it is not row-major."""
    flags = f"--m {M} --n {N} --k {K} --block {bm} {bn} {bk}"
    flags += "".join(f" --{k.replace('_', '-')} {v}" for k, v in layouts.items() if v != "row-major")
    flags += " --dtype fp32" if dtype == torch.float32 else ""
    command = f'make loads ARGS="{flags}"'
    return say(zh=f"用 {command} 看看你自己的代码加载和写回了哪些元素", en=f"see your own loads: {command}")


# ================================================================================================
# T4.1 grouped program order
# ================================================================================================
def run_tile_coords(probes, num_pid_m, num_pid_n, group_m):
    out = torch.full((num_pid_m * num_pid_n, 2), -1, dtype=torch.int32, device=DEVICE)
    probes.tile_coords_probe[(num_pid_m * num_pid_n,)](out, num_pid_m, num_pid_n, group_m)
    return [tuple(p) for p in out.cpu().tolist()]


def picture(coords, num_pid_m, num_pid_n):
    """The pid that computed each tile, as the grid of C tiles ('?' never computed, '!' twice)."""
    cells = [["?"] * num_pid_n for _ in range(num_pid_m)]
    for pid, (m, n) in enumerate(coords):
        if 0 <= m < num_pid_m and 0 <= n < num_pid_n:
            cells[m][n] = str(pid) if cells[m][n] == "?" else "!"
    width = max(len(c) for row in cells for c in row) + 1
    return "\n".join("    " + "".join(c.rjust(width) for c in row) for row in cells)


@pytest.mark.t4_1
def test_tile_coords_worked_example(probes):
    coords = run_tile_coords(probes, 4, 4, 2)
    assert coords[5] == (1, 2), say(
        zh=f"4 x 4 的网格、GROUP_M = 2 时，pid 5 应该算 tile (1, 2)，实际是 {coords[5]}。\n"
        f"手算一遍：num_pid_in_group = 8，group_id = 0，first_pid_m = 0，group_size_m = 2；{read('T4.1')}",
        en=f"pid 5 of a 4 x 4 grid with GROUP_M = 2 must compute tile (1, 2), got {coords[5]}.\n"
        f"By hand: num_pid_in_group = 8, group_id = 0, first_pid_m = 0, group_size_m = 2; {read('T4.1')}",
    )


def modulo_group_m_order(num_pid_m, num_pid_n, group_m):
    """The classic slip, in plain Python: inside the last group, divide by GROUP_M, not by its real rows."""
    order = []
    for pid in range(num_pid_m * num_pid_n):
        first = pid // (group_m * num_pid_n) * group_m
        order.append((first + pid % (group_m * num_pid_n) % group_m, pid % (group_m * num_pid_n) // group_m))
    return order


@pytest.mark.t4_1
@pytest.mark.parametrize(
    "num_pid_m, num_pid_n, group_m",
    [(4, 4, 2), (4, 4, 1), (5, 3, 2), (3, 5, 4), (7, 2, 3), (1, 6, 8), (6, 1, 4), (2, 2, 8)],
)
def test_tile_coords_exact_map(probes, num_pid_m, num_pid_n, group_m):
    got = run_tile_coords(probes, num_pid_m, num_pid_n, group_m)
    want = grouped_order(num_pid_m, num_pid_n, group_m)
    if got != want:
        rest = num_pid_m % group_m
        short = (
            ""
            if rest == 0 or got != modulo_group_m_order(num_pid_m, num_pid_n, group_m)
            else say(
                zh=f"最后一组只有 {rest} 行：用 group_size_m，不要用 GROUP_M。",
                en=f" The last group has only {rest} row{'s' if rest > 1 else ''}: use group_size_m, not GROUP_M.",
            )
        )
        yours, expected = picture(got, num_pid_m, num_pid_n), picture(want, num_pid_m, num_pid_n)
        pytest.fail(
            say(
                zh=f"{num_pid_m} x {num_pid_n} 的网格、GROUP_M = {group_m} 时 tile 的顺序不对。{short}\n"
                f"  每个 tile 由哪个 pid 计算，你的：\n{yours}\n  应该是：\n{expected}\n"
                f"  （'?' = 没有程序算这个 tile，'!' = 不止一个程序算它）；{read('T4.1', '2', '2.2')}",
                en=f"wrong tile order for a {num_pid_m} x {num_pid_n} grid, GROUP_M = {group_m}.{short}\n"
                f"  which pid computes each tile, yours:\n{yours}\n  expected:\n{expected}\n"
                f"  ('?' = no program computes that tile, '!' = more than one); {read('T4.1', '2', '2.2')}",
            ),
            pytrace=False,
        )


@pytest.mark.t4_1
def test_tile_coords_is_a_bijection(probes):
    """Every tile computed exactly once, over many grids, short last groups included."""
    grids = [(9, 7, 4), (13, 3, 8), (3, 11, 2)] + [  # and five random ones, from the test's seed
        tuple(int(x) for x in torch.randint(1, 12, (2,))) + (2 ** int(torch.randint(0, 4, (1,))),) for _ in range(5)
    ]
    for num_pid_m, num_pid_n, group_m in grids:
        got = run_tile_coords(probes, num_pid_m, num_pid_n, group_m)
        tiles = {(m, n) for m in range(num_pid_m) for n in range(num_pid_n)}
        missing = sorted(tiles - set(got))
        repeated = sorted({t for t in got if got.count(t) > 1})
        outside = sorted({t for t in got if t not in tiles})
        assert not (missing or repeated or outside), say(
            zh=f"{num_pid_m} x {num_pid_n} 的网格、GROUP_M = {group_m}：每个 tile 必须恰好算一次。\n"
            f"  没人算的：{missing[:6]}\n  算了两次及以上的：{repeated[:6]}\n"
            f"  落在网格外的：{outside[:6]}\n{picture(got, num_pid_m, num_pid_n)}\n{read('T4.1')}",
            en=f"{num_pid_m} x {num_pid_n} grid, GROUP_M = {group_m}: every tile must be computed exactly once.\n"
            f"  never computed: {missing[:6]}\n  computed twice or more: {repeated[:6]}\n"
            f"  outside the grid: {outside[:6]}\n{picture(got, num_pid_m, num_pid_n)}\n{read('T4.1')}",
        )


# ================================================================================================
# T4.2 pointer blocks and the K loop
# ================================================================================================
MAINLOOP_CASES = [  # (M, N, K, BLOCK_M, BLOCK_N, BLOCK_K): tails in every dimension, K < BLOCK_K
    (32, 32, 64, 16, 16, 16),
    (45, 37, 83, 16, 32, 16),
    (17, 50, 7, 16, 16, 32),
    (64, 16, 130, 32, 16, 32),
    (40, 24, 64, 16, 16, 32),  # K whole blocks, rows and columns not: masks still needed
]


def run_mainloop(probes, a, b, blocks):
    bm, bn, bk = blocks
    (M, K), N = a.shape, b.shape[1]
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    acc = torch.full((grid[0] * bm, grid[1] * bn), -7.0, dtype=torch.float32, device=DEVICE)
    probes.mainloop_probe[grid](
        a, b, acc, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), acc.stride(0), bm, bn, bk
    )
    return acc


def first_block_only(a, b, bk):
    """What a loop that never moves its pointers computes: K-block 0 again and again."""
    out = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64, device=a.device)
    for k in range(0, a.shape[1], bk):
        width = min(bk, a.shape[1] - k)
        out += a[:, :width].double() @ b[:width, :].double()
    return out


def simulated_mainloop(a, a_buf, b, b_buf, bk, a_step, b_step):
    """What a K loop with correct pointer blocks and masks computes, in float64, when it advances
    a_ptrs by a_step and b_ptrs by b_step elements per iteration: it reads the buffers around A and
    B as the kernel would.  A read outside a buffer is NaN."""
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

        at_a = a.storage_offset() + rows[:, None] * a.stride(0) + ks[None, :] * a.stride(1) + it * a_step
        at_b = b.storage_offset() + ks[:, None] * b.stride(0) + cols[None, :] * b.stride(1) + it * b_step
        out += read(flat_a, at_a, live[None, :].expand(M, bk)) @ read(flat_b, at_b, live[:, None].expand(bk, N))
    return out


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
    candidates = {
        "a_ptrs": (bk * sam, bk * sbk),
        "b_ptrs": (bk * sak, bk * sbn),
        "a_ptrs, b_ptrs": (bk * sam, bk * sbn),
    }
    for name, (a_step, b_step) in candidates.items():
        if (a_step, b_step) != (bk * sak, bk * sbk):
            if rel_err(got, simulated_mainloop(a, a_buf, b, b_buf, bk, a_step, b_step)) < ACC_RTOL[dtype]:
                return name
    return None


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


def is_the_model(acc, model, err):
    """Whether acc is what a model of a wrong loop computes: as close to it as a right loop comes to
    the exact product (1e-5), and at least 4 times closer to it than to the exact product (err)."""
    return rel_err(acc, model) <= min(1e-5, err / 4)


def blockwise(a, b, bk, round_partials):
    """What two wrong loops compute, in float64: each K-block's product rounded to fp16 before it
    is added (round_partials), or every running sum rounded to fp16 (an fp16 accumulator)."""
    out = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64, device=a.device)
    for k in range(0, a.shape[1], bk):
        part = a[:, k : k + bk].float() @ b[k : k + bk, :].float()
        out = out + part.half().double() if round_partials else (out.float() + part).half().double()
    return out


@pytest.mark.t4_2
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", layout_pairs(1))
@pytest.mark.parametrize("M, N, K, bm, bn, bk", MAINLOOP_CASES)
@pytest.mark.case_words(layout=BOTH_LAYOUTS)
def test_mainloop(probes, dtype, layout, M, N, K, bm, bn, bk):
    layout_b = layout.b
    a, _ = poisoned_view(M, K, layout, dtype)
    b, _ = poisoned_view(K, N, layout_b, dtype)
    acc = run_mainloop(probes, a, b, (bm, bn, bk))
    case = say(
        zh=f"M={M} N={N} K={K}，BLOCK {bm}x{bn}x{bk}，A 为 {layout}、B 为 {layout_b}，{dtype}，"
        f"A 的 stride {a.stride()}、B 的 {b.stride()}",
        en=f"M={M} N={N} K={K}, BLOCK {bm}x{bn}x{bk}, A {layout}, B {layout_b}, {dtype}, "
        f"strides A {a.stride()} B {b.stride()}",
    )
    loads = see_loads(M, N, K, bm, bn, bk, dtype, layout=layout, layout_b=layout_b)
    if acc.isnan().any():
        advance = advance_mistake(probes, M, N, K, (bm, bn, bk), layout, dtype)
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
        elif is_the_model(acc[:M, :N], blockwise(a, b, bk, round_partials=True), err):
            sections = ("4.2",)
            hint = say(
                zh="结果和「每个 tl.dot(a, b) 先舍入成 fp16 再累加」一致：乘积保持 float32，不做类型转换就加进 acc",
                en="it matches each tl.dot(a, b) rounded to fp16 before it is added: keep the product "
                "float32 and add it into acc without a cast",
            )
        elif whole < K and rel_err(acc[:M, :N], a[:, :whole].double() @ b[:whole].double()) < ACC_RTOL[dtype]:
            sections = ("4.1",)
            hint = say(
                zh=f"结果等于只算了前 {whole} 个 k、漏掉 K 尾部 {K - whole} 个 k 的乘积：循环要跑 "
                f"tl.cdiv(K, BLOCK_K) 次，最后一块用掩码遮住 K 之外的部分",
                en=f"it equals the product over the first {whole} k only, without the K tail of {K - whole}: "
                f"the loop must run tl.cdiv(K, BLOCK_K) times, the last block masked past K",
            )
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
    pytest.fail(
        say(
            zh=f"K = {K}、fp16、BLOCK_K = {bk}：相对误差 {err:.1e} > 1e-5；{why}；{read('T4.2', *sections)}",
            en=f"K = {K} in fp16, BLOCK_K = {bk}: relative error {err:.1e} > 1e-5; {why}; {read('T4.2', *sections)}",
        ),
        pytrace=False,
    )


# ================================================================================================
# T4.3 epilogue and masked store
# ================================================================================================
@pytest.mark.t4_3
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("M, N, bm, bn", [(32, 32, 16, 16), (37, 45, 16, 32), (5, 70, 32, 32)])
@pytest.mark.case_words(layout=say(zh="C 为 {}", en="C {}"))  # the case's label
def test_epilogue(probes, dtype, layout, M, N, bm, bn):
    sentinel = -1234.0  # exactly representable in every dtype here
    c, buf = poisoned_view(M, N, layout, dtype, fill=sentinel)
    c.fill_(sentinel)
    before = buf.clone()
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    acc = torch.randn(grid[0] * bm, grid[1] * bn, device=DEVICE)  # the padding rows hold values too
    probes.epilogue_probe[grid](acc, acc.stride(0), c, M, N, c.stride(0), c.stride(1), bm, bn)
    case = say(
        zh=f"C 为 {M}x{N}、{layout}、{dtype}，stride {c.stride()}，BLOCK {bm}x{bn}",
        en=f"C {M}x{N} {layout} {dtype}, strides {c.stride()}, BLOCK {bm}x{bn}",
    )
    loads = see_loads(M, N, 16, bm, bn, 16, dtype, layout_c=layout)
    inside = torch.zeros(buf.shape, dtype=torch.bool, device=DEVICE)
    inside.as_strided(c.shape, c.stride(), c.storage_offset()).fill_(True)  # C's cells in buf
    written_outside = (buf != before) & ~inside
    stray = written_outside.sum().item()
    if stray and overhang_only(written_outside, c, grid, bm, bn):
        pytest.fail(
            say(
                zh=f"{case}：C 之外有 {stray} 个单元被写了，全都在边上的 tile 伸出 C 的位置（第 M 行、第 N 列以外）："
                f"写回时要带掩码 (offs_m[:, None] < M) & (offs_n[None, :] < N)；{read('T4.3')}。{loads}",
                en=f"{case}: {stray} cells outside C were written, all of them where edge tiles stick out of C past "
                f"row M or column N: store with mask (offs_m[:, None] < M) & (offs_n[None, :] < N); "
                f"{read('T4.3')}. {loads}",
            ),
            pytrace=False,
        )
    assert stray == 0, say(
        zh=f"{case}：C 之外有 {stray} 个单元被写了，有些不在任何 tile 伸出 C 的位置上：C 的地址不对，"
        f"按 stride_cm、stride_cn 给 C 寻址；{read('T4.3')}。{loads}",
        en=f"{case}: {stray} cells outside C were written, some where no tile of C reaches even past its "
        f"edges: C's addresses are off; address C with stride_cm and stride_cn; {read('T4.3')}. {loads}",
    )
    unwritten = (c == sentinel).sum().item()
    assert unwritten == 0, say(
        zh=f"{case}：C 的 {M * N} 个单元里有 {unwritten} 个从没被写过；{read('T4.3')}。{loads}",
        en=f"{case}: {unwritten} of {M * N} cells of C were never written; {read('T4.3')}. {loads}",
    )
    want = acc[:M, :N].to(dtype)
    if torch.equal(c, want):
        return
    for other in (d for d in (torch.float16, torch.bfloat16) if d != dtype):
        if torch.equal(c, acc[:M, :N].to(other).to(dtype)):
            pytest.fail(
                say(
                    zh=f"{case}：C 里是 acc 舍入成 {other} 的值，不是 {dtype}：写回 acc.to(c_ptr.dtype.element_ty)，"
                    f"转换成 C 自己的 dtype；{read('T4.3')}。{loads}",
                    en=f"{case}: C holds acc rounded to {other}, not to {dtype}: store acc.to(c_ptr.dtype.element_ty), "
                    f"C's own dtype; {read('T4.3')}. {loads}",
                ),
                pytrace=False,
            )
    pytest.fail(
        say(
            zh=f"{case}：C 和转换成 {dtype} 的 acc 不一样：{wrong_cells(c, want, 0)}；{read('T4.3')}。{loads}",
            en=f"{case}: C differs from acc cast to {dtype}: {wrong_cells(c, want, 0)}; {read('T4.3')}. {loads}",
        ),
        pytrace=False,
    )


def overhang_only(written, c, grid, bm, bn):
    """Whether every cell written outside C (a boolean tensor over C's buffer) lies where the grid's
    tiles stick out of C: C's own addresses, continued past row M and column N."""
    rows = torch.arange(grid[0] * bm, device=written.device)
    cols = torch.arange(grid[1] * bn, device=written.device)
    at = (c.storage_offset() + rows[:, None] * c.stride(0) + cols[None, :] * c.stride(1)).flatten()
    overhang = torch.zeros(written.numel(), dtype=torch.bool, device=written.device)
    overhang[at[(at >= 0) & (at < written.numel())]] = True
    return not (written.flatten() & ~overhang).any()


# ================================================================================================
# T4.5 (advanced) bias_and_activation alone, through a probe
# ================================================================================================
def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))  # exact GELU, x * Phi(x)


def tanh_gelu(x):
    """The tanh approximation of GELU (GPT-2's, PyTorch's approximate="tanh"): not what T4.5 asks."""
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def tanh_gelu_hint(x):
    """What to say when the result is the tanh GELU of x (the pre-activation, in float64)."""
    far = rel_err(tanh_gelu(x), gelu(x))
    return say(
        zh=f"这是 GELU 的 tanh 近似，和课程要求的精确（erf）GELU 差 {far:.0e}：要的是 "
        f"0.5 * x * (1 + erf(x / sqrt(2)))，用 tl.erf",
        en=f"this is the tanh approximation of GELU, {far:.0e} away from the exact (erf) GELU the lesson "
        f"asks for: 0.5 * x * (1 + erf(x / sqrt(2))), with tl.erf",
    )


@pytest.mark.t4_5
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("has_bias, activation", [(True, "none"), (False, "gelu"), (True, "gelu")])
@pytest.mark.parametrize("N, bn", [(40, 16), (70, 32), (5, 16)])
def test_bias_and_activation(probes, dtype, has_bias, activation, N, bn):
    """The tile of a row of programs across N, padding columns included: the bias sits inside NaN
    padding with stride 2, so a load past its end or between its elements puts NaN in the tile."""
    bm, tiles = 16, triton.cdiv(N, bn)
    acc = 3 * torch.randn(bm, tiles * bn, device=DEVICE)
    out = torch.full_like(acc, -7.0)
    bias, _ = poisoned_view(1, N, "every-other-column", dtype)
    bias = bias[0]
    probes.bias_and_activation_probe[(tiles,)](
        acc, acc.stride(0), bias, N, bias.stride(0), out, bm, bn, has_bias, activation
    )
    case = say(
        zh=f"N={N}，BLOCK_N={bn}，HAS_BIAS={has_bias}，ACTIVATION={activation!r}，bias 为 {dtype}、stride 为 2",
        en=f"N={N}, BLOCK_N={bn}, HAS_BIAS={has_bias}, ACTIVATION={activation!r}, bias {dtype} with stride 2",
    )
    nan_columns = out[:, :N].isnan().any(0).cpu()
    if nan_columns.any():
        # bias[n] sits at 2 * n, NaN between: a load with stride 1 takes NaN in exactly the odd columns.
        if torch.equal(nan_columns, torch.arange(N) % 2 == 1):
            pytest.fail(
                say(
                    zh=f"{case}：NaN 正好出现在列号 < N 的奇数列，和按 stride 1 读 bias 一样（bias 的元素之间"
                    f"这里是 NaN）：按 bias_ptr + offs_n * stride_bias 寻址；{read('T4.5')}",
                    en=f"{case}: NaN in exactly the odd columns < N, as a bias read with stride 1 gets (between "
                    f"the bias's elements is NaN here): address it as bias_ptr + offs_n * stride_bias; "
                    f"{read('T4.5')}",
                ),
                pytrace=False,
            )
        columns = spans(nan_columns.nonzero().flatten().tolist())
        pytest.fail(
            say(
                zh=f"{case}：第 {columns} 列（都 < N）出现了 NaN：那里的 bias 不是从 bias 的元素读的，而是读到了"
                f"它周围的 NaN 填充；{read('T4.5')}",
                en=f"{case}: NaN in columns {columns}, all < N: the bias added there was read from the NaN "
                f"padding around the bias, not from its elements; {read('T4.5')}",
            ),
            pytrace=False,
        )
    if out[:, N:].isnan().any():
        pytest.fail(
            say(
                zh=f"{case}：tile 里列号 >= N 的部分是 NaN，说明 bias 的 load 读过了末尾（这里是 NaN 填充；"
                f"在 GPU 上这种读是未定义行为，可能直接出错）。写回时这些列被掩掉了，别的测试看不出来："
                f"load 时加 mask=offs_n < N, other=0.0；{read('T4.5')}",
                en=f"{case}: the tile's columns >= N hold NaN, so the bias load read past its end (NaN "
                f"padding here; on a GPU that read is undefined and can fault). The store masks those "
                f"columns off, so no other test sees it: load with mask=offs_n < N, other=0.0; "
                f"{read('T4.5')}",
            ),
            pytrace=False,
        )
    x = acc[:, :N].double() + (bias.double()[None, :] if has_bias else 0)  # before the activation
    want = gelu(x) if activation == "gelu" else x
    err = rel_err(out[:, :N], want)
    if err <= 1e-5:
        return
    hint = wrong_cells(out[:, :N], want, 1e-5)
    if has_bias and activation == "gelu" and rel_err(out[:, :N], gelu(acc[:, :N].double()) + bias.double()) <= 1e-5:
        hint = say(
            zh="bias 是在 GELU 之后加的：先加 bias，gelu(acc + bias)",
            en="the bias was added after the GELU: add it first, gelu(acc + bias)",
        )
    elif activation == "gelu" and rel_err(out[:, :N], tanh_gelu(x)) <= 1e-5:
        hint = tanh_gelu_hint(x)
    pytest.fail(
        say(
            zh=f"{case}：相对误差 {err:.2e} > 1e-5；{hint}；{read('T4.5')}",
            en=f"{case}: relative error {err:.2e} > 1e-5; {hint}; {read('T4.5')}",
        ),
        pytrace=False,
    )


# ================================================================================================
# T4.4 autotune configs and the host wrapper
# ================================================================================================
BLOCK_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")


def config_problems(cfg):
    if not isinstance(cfg, triton.Config):
        return [say(zh=f"{cfg!r} 不是 triton.Config", en=f"{cfg!r} is not a triton.Config")]
    found = [say(zh=f"kwargs 里没有 {k}", en=f"kwargs lack {k}") for k in BLOCK_KEYS if k not in cfg.kwargs]
    found += [
        say(zh=f"{k}={cfg.kwargs[k]!r} 不是 2 的幂", en=f"{k}={cfg.kwargs[k]!r} is not a power of two")
        for k in BLOCK_KEYS
        if k in cfg.kwargs
        and not (isinstance(cfg.kwargs[k], int) and cfg.kwargs[k] > 0 and cfg.kwargs[k] & (cfg.kwargs[k] - 1) == 0)
    ]
    found += [
        say(
            zh=f"BLOCK_{d}={cfg.kwargs.get('BLOCK_' + d)} < 16：tl.dot 至少要 16",
            en=f"BLOCK_{d}={cfg.kwargs.get('BLOCK_' + d)} < 16: tl.dot needs at least 16",
        )
        for d in "MNK"
        if isinstance(cfg.kwargs.get("BLOCK_" + d), int) and cfg.kwargs["BLOCK_" + d] < 16
    ]
    if not (cfg.num_warps and cfg.num_warps & (cfg.num_warps - 1) == 0):
        found.append(
            say(zh=f"num_warps={cfg.num_warps} 不是 2 的幂", en=f"num_warps={cfg.num_warps} is not a power of two")
        )
    if not (cfg.num_stages and cfg.num_stages >= 1):
        found.append(
            say(zh=f"num_stages={cfg.num_stages} 至少要是 1", en=f"num_stages={cfg.num_stages} must be at least 1")
        )
    return found


def require_configs(t4):
    if not t4.AUTOTUNE_CONFIGS:
        pytest.fail(stub_report("T4.4 AUTOTUNE_CONFIGS is empty", sections=("6.1",)), pytrace=False)


@pytest.mark.t4_4
def test_autotune_configs_are_well_formed(t4):
    require_configs(t4)
    found = {str(cfg): config_problems(cfg) for cfg in t4.AUTOTUNE_CONFIGS}
    found = {k: v for k, v in found.items() if v}
    assert not found, say(
        zh=f"这些配置写得不对：{found}；{read('T4.4', '6.1')}",
        en=f"malformed configs: {found}; {read('T4.4', '6.1')}",
    )


@pytest.mark.t4_4
def test_autotune_configs_fit_hopper_shared_memory(t4):
    require_configs(t4)
    too_big = [(str(cfg), smem_bytes(cfg, 2)) for cfg in t4.AUTOTUNE_CONFIGS if smem_bytes(cfg, 2) > H100_SMEM]
    assert not too_big, say(
        zh=f"这些配置需要的共享内存超过了 H100/H200 上一个 block 能用的 {H100_SMEM:,} B"
        f"（fp16 下是 num_stages * (BM*BK + BK*BN) * 2 B），autotuner 在那里会悄悄跳过它们："
        f"{too_big}；{read('T4.4', '4.4', '6.1')}",
        en=f"these configs need more than the {H100_SMEM:,} B of shared memory an H100/H200 block may "
        f"use (num_stages * (BM*BK + BK*BN) * 2 B in fp16), so the autotuner would silently skip them "
        f"there: {too_big}; {read('T4.4', '4.4', '6.1')}",
    )
    assert any(smem_bytes(cfg, 4) <= H100_SMEM for cfg in t4.AUTOTUNE_CONFIGS), say(
        zh=f"输入是 4 字节的 fp32 时，没有一个配置能放进 {H100_SMEM:,} B，fp32 在 H100 上就跑不了；"
        f"加一个小一点的配置；{read('T4.4', '4.4', '6.1')}",
        en=f"no config fits {H100_SMEM:,} B with 4-byte fp32 inputs, so fp32 could not run on an H100; "
        f"add a smaller one; {read('T4.4', '4.4', '6.1')}",
    )


@pytest.mark.t4_4
def test_autotune_configs_use_the_grouped_order(t4):
    """GROUP_M = 1 is row-major order: with it in every config, T4.1's grouped order never runs on a GPU."""
    require_configs(t4)
    groups = sorted({cfg.kwargs.get("GROUP_M") for cfg in t4.AUTOTUNE_CONFIGS}, key=str)
    assert any(isinstance(g, int) and g > 1 for g in groups), say(
        zh=f"AUTOTUNE_CONFIGS 里的 GROUP_M 只有 {groups}：GROUP_M = 1 就是按行的顺序，T4.1 的分组顺序在 GPU 上"
        f"一次也不会用到。至少一个配置要用 GROUP_M > 1（如 8）；{read('T4.4', '2.3', '6.1')}",
        en=f"the AUTOTUNE_CONFIGS have GROUP_M {groups} only: GROUP_M = 1 is row-major order, so T4.1's grouped "
        f"order would never run on a GPU. Give at least one config GROUP_M > 1 (8, say); {read('T4.4', '2.3', '6.1')}",
    )


@pytest.mark.t4_4
def test_interpret_config(t4):
    cfg = t4.INTERPRET_CONFIG
    if cfg is None:
        pytest.fail(stub_report("T4.4 INTERPRET_CONFIG is None", sections=("6.1",)), pytrace=False)
    assert not config_problems(cfg), f"INTERPRET_CONFIG: {config_problems(cfg)}; {read('T4.4', '6.1')}"
    tile = cfg.kwargs["BLOCK_M"] * cfg.kwargs["BLOCK_N"]
    assert tile <= 64 * 64, say(
        zh=f"INTERPRET_CONFIG 应该小一点（BLOCK_M * BLOCK_N <= 4096，现在是 {tile}）："
        f"解释器用 numpy 逐个跑每个程序；{read('T4.4', '6.1')}",
        en=f"INTERPRET_CONFIG should be small (BLOCK_M * BLOCK_N <= 4096, got {tile}): "
        f"the interpreter runs every program in numpy; {read('T4.4', '6.1')}",
    )


@pytest.mark.t4_4
def test_autotuned_kernel(t4):
    require_configs(t4)
    tuned = t4.matmul_kernel_autotuned
    wanted = "triton.autotune(configs=AUTOTUNE_CONFIGS, key=[...])(matmul_kernel)"
    assert isinstance(tuned, triton.runtime.Autotuner), say(
        zh=f"matmul_kernel_autotuned 应该是 {wanted}，实际是 {tuned!r}；{read('T4.4', '6.1')}",
        en=f"matmul_kernel_autotuned must be {wanted}, got {tuned!r}; {read('T4.4', '6.1')}",
    )
    assert tuned.fn is t4.matmul_kernel, say(
        zh=f"matmul_kernel_autotuned 必须包的是 matmul_kernel 本身；{read('T4.4', '6.1')}",
        en=f"matmul_kernel_autotuned must wrap matmul_kernel itself; {read('T4.4', '6.1')}",
    )
    assert list(tuned.configs) == list(t4.AUTOTUNE_CONFIGS), say(
        zh=f"要在全部 AUTOTUNE_CONFIGS 上调优，一个都不能少；{read('T4.4', '6.1')}",
        en=f"autotune over AUTOTUNE_CONFIGS, all of them; {read('T4.4', '6.1')}",
    )
    missing = [k for k in ("M", "N", "K") if k not in tuned.keys]
    assert not missing, say(
        zh=f"autotune 的 key {tuned.keys} 缺了 {missing}：为一种形状调出来的配置会被其他所有形状沿用"
        f"（K 一变，最好的 BLOCK_K 就变）；{read('T4.4', '6.1')}",
        en=f"the autotune key {tuned.keys} lacks {missing}: a config tuned for one shape "
        f"would be reused for every other (K changes the best BLOCK_K); {read('T4.4', '6.1')}",
    )


MATMUL_SHAPES = [(64, 64, 64), (45, 37, 83), (1, 50, 70), (50, 1, 33), (33, 40, 1), (96, 20, 200)]


@pytest.fixture
def poisoned_allocations(monkeypatch):
    """Every new floating tensor starts as NaN, so a tile the kernel never writes cannot pass."""
    poison_allocations(monkeypatch)


@pytest.fixture
def no_torch_matmul(monkeypatch):
    """Make torch's own products fail, so only the kernel can compute C."""
    refuse_torch_products(monkeypatch, "matmul_kernel")


def launch_watch(t4, monkeypatch, run_tuned=True):
    """matmul's two kernels under a LaunchWatch (tests/support.py)."""
    kernels = {"matmul_kernel": True, "matmul_kernel_autotuned": run_tuned}
    return LaunchWatch(t4, monkeypatch, kernels, wrapper="matmul")


def check_launch(watch, c, a, b, bias, activation, case, step):
    """Fail unless C came whole from one launch that got this call's a, b (not copies), bias and
    flags, with a program for every tile."""

    def flags_and_bias(args):
        given = {"stride_am": (a, 0), "stride_ak": (a, 1), "stride_bk": (b, 0), "stride_bn": (b, 1)}
        given.update({"stride_cm": (c, 0), "stride_cn": (c, 1)})
        wrong = {  # a stride along a dimension of size 1 is never used, so any value does there
            k: (args[k], t.stride(d))
            for k, (t, d) in given.items()
            if k in args and t.shape[d] > 1 and args[k] != t.stride(d)
        }
        if wrong:
            got = ", ".join(f"{k}={v[0]}" for k, v in wrong.items())
            want = ", ".join(f"{k}={v[1]}" for k, v in wrong.items())
            pytest.fail(
                say(
                    zh=f"{case}：launch 收到的 stride 是 {got}，这些张量实际的 stride 是 {want}："
                    f"把 a.stride(0)、a.stride(1)、b.stride(0)、b.stride(1)、c.stride(0)、c.stride(1) 原样传给内核，"
                    f"不要假定张量是连续存放的；{launch_where(step)}",
                    en=f"{case}: the launch got {got}, where the tensors' own strides are {want}: pass "
                    f"a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1) as they are, "
                    f"never assume a tensor is contiguous; {launch_where(step)}",
                ),
                pytrace=False,
            )
        for flag, want in (("HAS_BIAS", bias is not None), ("ACTIVATION", activation or "none")):
            if args.get(flag) != want:
                pytest.fail(
                    say(
                        zh=f"{case}：这次调用需要 {flag}={want!r}，launch 收到的却是 {flag}={args.get(flag)!r}："
                        f"按调用的 bias 和 activation 设 HAS_BIAS 和 ACTIVATION，bias 和激活在内核里做"
                        f"（bias_and_activation）；{launch_where(step)}",
                        en=f"{case}: the launch got {flag}={args.get(flag)!r} for this call, which needs "
                        f"{flag}={want!r}: set HAS_BIAS and ACTIVATION from the call's bias and activation; the "
                        f"kernel adds the bias and applies the activation (bias_and_activation); {launch_where(step)}",
                    ),
                    pytrace=False,
                )
        if bias is not None and not same_tensor(args.get("bias_ptr"), bias):
            pytest.fail(
                say(
                    zh=f"{case}：launch 的 bias_ptr 不是调用者传进来的那个 bias 张量（直接传 bias 本身，"
                    f"配上 bias.stride(0)）；{launch_where(step)}",
                    en=f"{case}: the launch did not get the caller's bias tensor as bias_ptr (pass bias "
                    f"itself, with bias.stride(0)); {launch_where(step)}",
                ),
                pytrace=False,
            )

    launch, copy = read("T4.4", "6.2"), read("T4.4", "3.1", "6.2")
    watch.check(c, {"a": a, "b": b}, case, launch, copy, launch_where(step), also=flags_and_bias)


def launch_where(step):
    """The launch is §6.2's for T4.4; for T4.5, what belongs in the kernel is §5.2's."""
    return read(step, "6.2") if step == "T4.4" else read(step)


@pytest.fixture
def watched(t4, monkeypatch):
    """matmul under a LaunchWatch: watched(a, b, step=..., **kwargs) returns C once its launch checks out."""

    def call(a, b, step="T4.4", **kwargs):
        call.watch = watch = launch_watch(t4, monkeypatch)  # the last call's, for a test that asks what ran
        c = t4.matmul(a, b, **kwargs)
        case = f"{tuple(a.shape)} @ {tuple(b.shape)} {a.dtype}"
        check_launch(watch, c, a, b, kwargs.get("bias"), kwargs.get("activation"), case, step)
        return c

    return call


def quick(t4):
    """The config for tests of what the kernel computes. Under the interpreter that is the default
    path anyway; on a GPU it skips autotuning, which would time every config for every new shape
    and layout (test_default_launch_path checks that the GPU's default path autotunes)."""
    return None if INTERPRETING else t4.INTERPRET_CONFIG


def check_product(c, a, b, dtype, case):
    shape = (a.shape[0], b.shape[1])
    got = f"{getattr(c, 'dtype', type(c))} {tuple(getattr(c, 'shape', ()))}"
    assert isinstance(c, torch.Tensor) and c.dtype == dtype and tuple(c.shape) == shape, say(
        zh=f"{case}：matmul 应该返回 {shape}、{dtype} 的张量，实际是 {got}；{read('T4.4', '6.2')}",
        en=f"{case}: matmul must return a {shape} tensor of {dtype}, got {got}; {read('T4.4', '6.2')}",
    )
    assert c.device == a.device, say(
        zh=f"{case}：C 应该在 {a.device} 上，实际在 {c.device}；{read('T4.4', '6.2')}",
        en=f"{case}: C must be on {a.device}, got {c.device}; {read('T4.4', '6.2')}",
    )
    unwritten = (c == UNWRITTEN).sum().item()
    if unwritten:
        rows, cols = (spans((c == UNWRITTEN).any(d).nonzero().flatten().tolist()) for d in (1, 0))
        pytest.fail(
            say(
                zh=f"{case}：C 有 {unwritten} 个元素从没被写过（launch 之前它们被填成 {UNWRITTEN}），"
                f"在第 {rows} 行、第 {cols} 列；{read('T4.4', '6.2')}",
                en=f"{case}: {unwritten} cells of C were never written (they are set to {UNWRITTEN} before the "
                f"launch), in rows {rows} and columns {cols}; {read('T4.4', '6.2')}",
            ),
            pytrace=False,
        )
    computed_nan = c.isnan().sum().item()
    assert not computed_nan, say(
        zh=f"{case}：C 有 {computed_nan} 个元素算出来是 NaN：kernel 读到了 A 或 B 外面的 NaN 填充，"
        f"先让 T4.2（make test STEP=T4.2）通过；{read('T4.2', '4.1')}",
        en=f"{case}: {computed_nan} cells of C came out NaN: the kernel read the NaN padding outside A or B; "
        f"get T4.2 passing first (make test STEP=T4.2); {read('T4.2', '4.1')}",
    )
    ref = a.double() @ b.double()
    err = rel_err(c, ref)
    assert err <= OUT_RTOL[dtype], say(
        zh=f"{case}：相对误差 {err:.2e} > {OUT_RTOL[dtype]:.1e}；{wrong_cells(c, ref, OUT_RTOL[dtype])}；"
        f"{read('T4.4', '6.2')}",
        en=f"{case}: relative error {err:.2e} > {OUT_RTOL[dtype]:.1e}; {wrong_cells(c, ref, OUT_RTOL[dtype])}; "
        f"{read('T4.4', '6.2')}",
    )


@pytest.mark.t4_4
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", layout_pairs(2))
@pytest.mark.parametrize("M, N, K", MATMUL_SHAPES)
@pytest.mark.case_words(layout=BOTH_LAYOUTS)
def test_matmul(t4, watched, poisoned_allocations, dtype, layout, M, N, K):
    a, _ = poisoned_view(M, K, layout, dtype)
    b, _ = poisoned_view(K, N, layout.b, dtype)
    case = say(
        zh=f"{M}x{K} @ {K}x{N} {dtype}，A 为 {layout}、B 为 {layout.b}",
        en=f"{M}x{K} @ {K}x{N} {dtype}, A {layout}, B {layout.b}",
    )
    check_product(watched(a, b, config=quick(t4)), a, b, dtype, case)


@pytest.mark.t4_4
def test_matmul_of_plain_tensors_and_linear_weights(t4, watched):
    x, w = random((40, 72), torch.float16), random((24, 72), torch.float16)  # nn.Linear keeps W as (N, K)
    case = say(zh="x @ W.t()，没有 .contiguous()", en="x @ W.t() without .contiguous()")
    check_product(watched(x, w.t(), config=quick(t4)), x, w.t(), torch.float16, case)


@pytest.mark.t4_4
def test_grid_follows_the_config(t4, watched, poisoned_allocations):
    """The same product under configs of different block shapes: a fixed grid misses tiles."""
    a, b = random((100, 72), torch.float16), random((72, 90), torch.float16)
    for bm, bn, bk in ((16, 16, 16), (64, 32, 32), (32, 64, 16)):
        cfg = triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=2), num_warps=4, num_stages=2)
        case = say(zh=f"配置 BLOCK {bm}x{bn}x{bk}", en=f"config BLOCK {bm}x{bn}x{bk}")
        check_product(watched(a, b, config=cfg), a, b, torch.float16, case)


@pytest.mark.t4_4
def test_every_autotune_config_runs(t4, watched, poisoned_allocations):
    require_configs(t4)
    for cfg in t4.AUTOTUNE_CONFIGS:
        kw = cfg.kwargs
        M, N, K = kw["BLOCK_M"] + 3, kw["BLOCK_N"] + 5, 2 * kw["BLOCK_K"] + 7  # tails everywhere
        a, b = random((M, K), torch.float16), random((K, N), torch.float16)
        check_product(watched(a, b, config=cfg), a, b, torch.float16, say(zh=f"配置 {cfg}", en=f"config {cfg}"))


@pytest.mark.t4_4
@pytest.mark.parametrize("M, N, K", [(0, 5, 7), (6, 0, 7), (0, 0, 0), (6, 5, 0)])
def test_empty_dimensions(t4, watched, poisoned_allocations, M, N, K):
    a, b = random((M, K), torch.float16), random((K, N), torch.float16)
    c = watched(a, b)
    assert tuple(c.shape) == (M, N) and c.dtype == torch.float16, say(
        zh=f"{M}x{K} @ {K}x{N}：应该得到 {(M, N)}、torch.float16，实际是 {tuple(c.shape)} {c.dtype}；"
        f"{read('T4.4', '6.2')}",
        en=f"{M}x{K} @ {K}x{N}: expected {(M, N)} torch.float16, got {tuple(c.shape)} {c.dtype}; {read('T4.4', '6.2')}",
    )
    assert torch.equal(c, torch.zeros_like(c)), say(
        zh=f"K = 0 时结果必须全是 0，实际是 {c}；{read('T4.4', '6.2')}",
        en=f"K = 0 must give zeros, got {c}; {read('T4.4', '6.2')}",
    )


@pytest.mark.t4_4
def test_every_call_returns_a_new_c(t4, monkeypatch, poisoned_allocations):
    """Two calls of one shape on contiguous square inputs: C must be a fresh tensor each time (in any
    layout: a column-major C is still the product), neither A or B (the kernel would then read cells
    it has already overwritten) nor a buffer kept from an earlier call (the next call would overwrite
    that result), launched one program per tile."""
    n = 64
    a1, b1, a2, b2 = (random((n, n), torch.float16) for _ in range(4))
    kept = {"a": a1.clone(), "b": b1.clone()}
    watch = launch_watch(t4, monkeypatch)
    c1 = t4.matmul(a1, b1, config=quick(t4))
    first = c1.clone()
    t4.matmul(a2, b2, config=quick(t4))
    case = say(zh=f"{n}x{n} @ {n}x{n} float16，连续两次调用", en=f"{n}x{n} @ {n}x{n} float16, called twice")
    for name, was in kept.items():
        now = a1 if name == "a" else b1
        assert torch.equal(now, was), say(
            zh=f"{case}：matmul 改动了它的输入 {name}（{(now != was).sum().item()} 个元素变了）："
            f"C 要写进一个新的张量，不能写进 A 或 B；{read('T4.4', '6.2')}",
            en=f"{case}: matmul changed its input {name} ({(now != was).sum().item()} cells): write C into "
            f"a new tensor, never into A or B; {read('T4.4', '6.2')}",
        )
    changed = (c1 != first).sum().item()
    assert changed == 0, say(
        zh=f"{case}：第二次调用改动了第一次调用返回的 C（{changed} 个元素变了）：两次调用共用了同一块输出；"
        f"每次调用都要用 torch.empty 分配新的 C；{read('T4.4', '6.2')}",
        en=f"{case}: the second call changed the C the first call returned ({changed} cells): both calls "
        f"wrote into one buffer; allocate a new C with torch.empty on every call; {read('T4.4', '6.2')}",
    )
    for launch in watch.launches:
        args = launch[1]
        if not all(isinstance(args.get(k), int) for k in ("BLOCK_M", "BLOCK_N")):
            continue  # the autotuned kernel: its grid depends on the autotuner's choice
        programs = math.prod(int(d) for d in (launch.grid(dict(args)) if callable(launch.grid) else launch.grid))
        tiles = triton.cdiv(n, args["BLOCK_M"]) * triton.cdiv(n, args["BLOCK_N"])
        assert programs <= tiles, say(
            zh=f"{case}：launch 的网格有 {programs} 个程序，比 C 的 {tiles} 个 tile 多：每个 tile 一个程序，"
            f"多出来的程序对应不到 C 的任何 tile；{read('T4.4', '6.2')}",
            en=f"{case}: the launch's grid has {programs} programs, more than the {tiles} tiles of C: one "
            f"program per tile; the extra ones map to no tile of C; {read('T4.4', '6.2')}",
        )
    check_product(c1, a1, b1, torch.float16, case)


@pytest.mark.t4_4
def test_wrapper_launches_the_kernel(t4, monkeypatch, no_torch_matmul):
    """Handing the product to torch would pass every numeric test, and teach nothing."""
    watch = launch_watch(t4, monkeypatch)
    a, b = random((40, 30), torch.float16), random((30, 20), torch.float16)
    cfg = triton.Config(dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2), num_warps=2, num_stages=3)
    try:
        c = t4.matmul(a, b, config=cfg)
    except HandedToTorch as e:
        pytest.fail(f"{e}; {read('T4.4', '6.2')}", pytrace=False)
    times = watch.count("matmul_kernel")
    assert times == 1, say(
        zh=f"matmul(config=...) 启动了 {times} 次 matmul_kernel，应该只启动一次：一次 launch 算出整个 C；"
        f"{read('T4.4', '6.2')}",
        en=f"matmul(config=...) launched matmul_kernel {times} times, expected once: one "
        f"launch computes all of C; {read('T4.4', '6.2')}",
    )
    # The interpreter ignores num_warps and num_stages, so only this can tell config.kwargs (which
    # drops them) from config.all_kwargs().
    got = {k: watch.launches[0][1].get(k) for k in ("num_warps", "num_stages")}
    assert got == {"num_warps": 2, "num_stages": 3}, say(
        zh=f"配置是 num_warps=2, num_stages=3，launch 收到的却是 {got}：传 **config.all_kwargs()，它带着这两项；"
        f"**config.kwargs 不带；{read('T4.4', '6.2')}",
        en=f"the launch got {got} from a config with num_warps=2, num_stages=3: pass **config.all_kwargs(), "
        f"which holds them, not **config.kwargs; {read('T4.4', '6.2')}",
    )
    check_launch(watch, c, a, b, None, None, "40x30 @ 30x20", "T4.4")


@pytest.mark.t4_4
def test_default_launch_path(t4, monkeypatch, no_torch_matmul):
    """Interpreter: INTERPRET_CONFIG on the plain kernel, never autotune. GPU: the autotuned kernel."""
    # Under the interpreter the autotuner would fail ("0 active drivers") before we could say why.
    watch = launch_watch(t4, monkeypatch, run_tuned=not INTERPRETING)
    a, b = random((40, 30), torch.float16), random((30, 20), torch.float16)
    t4.matmul(a, b)
    plain, tuned = watch.count("matmul_kernel"), watch.count("matmul_kernel_autotuned")
    if INTERPRETING:
        assert (plain, tuned) == (1, 0), say(
            zh=f"在 TRITON_INTERPRET 下，matmul 必须用 INTERPRET_CONFIG 启动 matmul_kernel（没有 GPU 驱动，"
            f"autotune 跑不起来）；实际启动了普通内核 {plain} 次、autotune 版 {tuned} 次；{read('T4.4', '6.2')}",
            en=f"under TRITON_INTERPRET matmul must launch matmul_kernel with INTERPRET_CONFIG (autotune cannot "
            f"run without a GPU driver); it launched the plain kernel {plain} and the autotuned "
            f"one {tuned} times; {read('T4.4', '6.2')}",
        )
    else:
        assert (plain, tuned) == (0, 1), say(
            zh=f"在 GPU 上，不带 config 的 matmul 必须启动 matmul_kernel_autotuned；实际启动了普通内核 {plain} 次、"
            f"autotune 版 {tuned} 次；{read('T4.4', '6.2')}",
            en=f"on a GPU matmul without config must launch matmul_kernel_autotuned; it launched the plain "
            f"kernel {plain} and the autotuned one {tuned} times; {read('T4.4', '6.2')}",
        )


def bad_inputs():
    f16 = lambda *s: torch.randn(*s).to(torch.float16)  # noqa: E731
    return [  # (id, a, b, kwargs, exception, words the message must contain)
        ("a is a list", [[1.0]], f16(1, 1), {}, TypeError, ["list"]),
        (
            "int32 inputs",
            torch.ones(2, 2, dtype=torch.int32),
            torch.ones(2, 2, dtype=torch.int32),
            {},
            TypeError,
            ["int32"],
        ),
        ("mixed dtypes", f16(2, 3), torch.randn(3, 2), {}, TypeError, ["float16", "float32"]),
        ("3-D a", f16(2, 3, 4), f16(4, 2), {}, ValueError, ["(2, 3, 4)"]),
        ("1-D a", f16(3), f16(3, 2), {}, ValueError, ["(3,)"]),
        ("3-D b", f16(4, 3), f16(3, 5, 2), {}, ValueError, ["(3, 5, 2)"]),
        ("1-D b", f16(4, 3), f16(3), {}, ValueError, ["(3,)"]),
        ("inner dims differ", f16(4, 5), f16(6, 3), {}, ValueError, ["(4, 5)", "(6, 3)"]),
        ("bias shape", f16(4, 5), f16(5, 3), {"bias": f16(4)}, ValueError, ["(4,)"]),
        ("bias dtype", f16(4, 5), f16(5, 3), {"bias": torch.randn(3)}, TypeError, ["float32"]),
        ("activation", f16(4, 5), f16(5, 3), {"activation": "relu"}, ValueError, ["relu"]),
        ("devices differ", f16(4, 5), torch.empty(5, 3, dtype=torch.float16, device="meta"), {}, ValueError, ["meta"]),
        ("float64 inputs", torch.randn(2, 3).double(), torch.randn(3, 2).double(), {}, TypeError, ["float64"]),
        ("bias is a list", f16(4, 5), f16(5, 3), {"bias": [0.0, 0.0, 0.0]}, TypeError, ["list"]),
        (
            "bias on another device",
            f16(4, 5),
            f16(5, 3),
            {"bias": torch.empty(3, dtype=torch.float16, device="meta")},
            ValueError,
            ["meta"],
        ),
    ]


def mentions(message, word):
    """Whether message names word; a shape such as "(2, 3, 4)" may be written in any readable form:
    (2, 3, 4), [2, 3, 4], torch.Size([2, 3, 4]), or, with two dimensions or more, 2x3x4 (x or ×,
    spaced or not); a lone number ("3") does not read as a shape."""
    dims = re.fullmatch(r"\((\d+(?:, \d+)*),?\)", word)
    if not dims:
        return word in message
    sizes = dims[1].split(", ")
    bracketed = r",\s*".join(sizes)
    if re.search(rf"[(\[]\s*{bracketed}\s*,?\s*[)\]]", message):
        return True
    crossed = r"\s*[x×]\s*".join(sizes)
    return len(sizes) > 1 and re.search(rf"(?<![\d.]){crossed}(?![\d.])", message) is not None


class Launched(Exception):
    """Raised in place of a launch: the inputs got past the checks."""


class _NoLaunch:
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            raise Launched()

        return launch

    def __getattr__(self, name):
        return getattr(self.kernel, name)


@pytest.mark.t4_4
@pytest.mark.parametrize("case", bad_inputs(), ids=lambda c: c[0])
def test_input_validation(t4, monkeypatch, case):
    """Bad inputs must be refused before the launch: reaching the kernel, or a body of another step
    not written yet, means matmul accepted them, whatever the kernel would have done next."""
    name, a, b, kwargs, exc, words = case
    move = lambda t: t.to(DEVICE) if isinstance(t, torch.Tensor) and t.device.type == "cpu" else t  # noqa: E731
    a, b = move(a), move(b)
    kwargs = {k: move(v) for k, v in kwargs.items()}
    for kernel in ("matmul_kernel", "matmul_kernel_autotuned"):
        if getattr(t4, kernel) is not None:
            monkeypatch.setattr(t4, kernel, _NoLaunch(getattr(t4, kernel)))
    accepted = say(
        zh=f"{name}：matmul 接受了这个输入{{}}；它应该抛出 {exc.__name__}，并在信息里写明 {words}；"
        f"{read('T4.4', '6.3')}",
        en=f"{name}: matmul accepted it{{}}; it must raise {exc.__name__} naming {words}; {read('T4.4', '6.3')}",
    )
    try:
        t4.matmul(a, b, **kwargs)
    except Launched:
        pytest.fail(
            accepted.format(say(zh="（都已经走到 launch 内核这一步了）", en=" (it went on to launch the kernel)")),
            pytrace=False,
        )
    except NotImplementedError as e:
        stub = seam.stub_message(e)
        if stub is None or stub.startswith("T4.4"):
            raise
        went = say(
            zh=f"（一直走到了还没写的 {stub.split(':')[0]}）",
            en=f" (it went on as far as {stub.split(':')[0]}, not written yet)",
        )
        pytest.fail(accepted.format(went), pytrace=False)
    except Exception as e:  # noqa: BLE001 - which exception it is, is what this test checks
        caught = e
    else:
        pytest.fail(accepted.format(""), pytrace=False)
    assert isinstance(caught, exc), say(
        zh=f"{name}：应该抛出 {exc.__name__}，实际是 {type(caught).__name__}: {caught}；{read('T4.4', '6.3')}",
        en=f"{name}: expected {exc.__name__}, got {type(caught).__name__}: {caught}; {read('T4.4', '6.3')}",
    )
    missing = [w for w in words if not mentions(str(caught), w)]
    assert not missing, say(
        zh=f"{name}：报错信息应该写明 {missing}，调用者才知道错在哪；实际是 {str(caught)!r}；{read('T4.4', '6.3')}",
        en=f"{name}: the message should name {missing} so the caller sees what is wrong; "
        f"got {str(caught)!r}; {read('T4.4', '6.3')}",
    )


@pytest.mark.t4_4
def test_cpu_tensors_need_the_interpreter(t4):
    a, b = torch.randn(4, 5).half(), torch.randn(5, 3).half()
    if not INTERPRETING:
        with pytest.raises(ValueError, match="TRITON_INTERPRET"):
            t4.matmul(a, b)
        return
    # Already interpreting here, so ask a fresh process without it.
    code = (
        "import torch\nfrom course import seam\nfrom course.registry import lesson\n"
        "t4 = seam.load(lesson('T4'))\ntry:\n"
        "    t4.matmul(torch.ones(4, 5).half(), torch.ones(5, 3).half())\n"
        "    print('NO ERROR')\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
    )
    env = dict(os.environ, TRITON_INTERPRET="0")  # a child forked warm where safe (course/warm.py), else fresh
    _, out, err = run_python(["-c", code], ROOT, env, 120)
    said = (out + err).strip().splitlines()[-1:] or ["nothing"]
    if said[0].startswith("NotImplementedError "):
        pytest.fail(stub_report(said[0].split(" ", 1)[1]), pytrace=False)
    assert said[0].startswith("ValueError") and "TRITON_INTERPRET" in said[0], say(
        zh=f"没开 TRITON_INTERPRET=1 时传入 CPU 张量，必须抛出 ValueError，并说明怎么打开它；"
        f"实际是：{said[0]}；{read('T4.4', '6.3')}",
        en=f"CPU tensors without TRITON_INTERPRET=1 must raise ValueError saying how to switch it on; "
        f"got: {said[0]}; {read('T4.4', '6.3')}",
    )


@pytest.mark.t4_4
@pytest.mark.skipif(not INTERPRETING, reason="bf16 runs for real on a GPU")
def test_bf16_is_never_silently_wrong_on_the_interpreter(t4):
    a, b = random((20, 24), torch.bfloat16), random((24, 12), torch.bfloat16)
    try:
        c = t4.matmul(a, b)
    except (TypeError, ValueError) as e:
        assert "bf16" in str(e) or "bfloat16" in str(e), say(
            zh=f"拒绝 bf16 时要说明原因（信息里写出 bf16 或 bfloat16）：{e}；{read('T4.4', '6.3')}",
            en=f"say why bf16 is refused (name bf16 or bfloat16): {e}; {read('T4.4', '6.3')}",
        )
        return
    err = rel_err(c, a.double() @ b.double()) if isinstance(c, torch.Tensor) and c.shape == (20, 12) else None
    assert err is None or err <= OUT_RTOL[torch.bfloat16], say(
        zh=f"bf16 在解释器上跑了，结果是错的（相对误差 {err:.2e}）：解释器的 tl.dot 把 bf16 的位模式当数乘"
        f"（triton issue 11584）。在 check_inputs 里拒绝它：TRITON_INTERPRET 下遇到 bf16 抛出 TypeError；"
        f"{read('T4.4', '6.3')}",
        en=f"bf16 ran on the interpreter and came out wrong (relative error {err:.2e}): the interpreter's tl.dot "
        f"multiplies bf16 bit patterns (triton issue 11584). Refuse it in check_inputs: raise TypeError for "
        f"bf16 under TRITON_INTERPRET; {read('T4.4', '6.3')}",
    )
    check_product(c, a, b, torch.bfloat16, say(zh="解释器下的 bf16", en="bf16 under the interpreter"))


# ================================================================================================
# T4.5 (advanced) fused bias and GELU
# ================================================================================================
def fused_reference(a, b, bias, activation):
    out = a.double() @ b.double()
    if bias is not None:
        out = out + bias.double()
    return torch.nn.functional.gelu(out) if activation == "gelu" else out


# Tile indices a bias load may take in place of pid_n, in words: each program's C tile gets the bias
# of other columns then.  (The interpreter numbers programs by pid, as tl.program_id(0) does.)
WRONG_BIAS_TILES = {
    "pid": say(
        zh="tl.program_id(0)（分组顺序下它不是 pid_n）",
        en="tl.program_id(0), which is not pid_n in grouped order",
    ),
    "zero": say(zh="0，每个 tile 都拿第 0 到 BLOCK_N - 1 列的", en="0: every tile takes columns 0 to BLOCK_N - 1"),
    "pid_m": say(zh="pid_m（tile 的行号）", en="pid_m, the tile's row"),
}


def bias_of_other_columns(c, a, b, bias, activation, watch, rtol):
    """What to say when C is what the kernel computes with the bias offsets built from another tile
    index than pid_n (WRONG_BIAS_TILES), from the launch's own block sizes; None when it is not."""
    if len(watch.launches) != 1 or not all(k in watch.launches[0][1] for k in BLOCK_KEYS):
        return None
    cfg = watch.launches[0][1]
    (M, N), bm, bn = c.shape, cfg["BLOCK_M"], cfg["BLOCK_N"]
    order = grouped_order(triton.cdiv(M, bm), triton.cdiv(N, bn), cfg["GROUP_M"])
    product, values = a.double() @ b.double(), bias.double().cpu()
    for index, words in WRONG_BIAS_TILES.items():
        added = torch.zeros(M, N, dtype=torch.float64)
        for pid, (pid_m, pid_n) in enumerate(order):
            tile = {"pid": pid, "zero": 0, "pid_m": pid_m}[index]
            taken = torch.arange(tile * bn, tile * bn + bn)
            cols = torch.arange(pid_n * bn, min(pid_n * bn + bn, N))
            got = torch.where(taken < N, values[taken.clamp(max=N - 1)], 0.0)[: len(cols)]
            added[pid_m * bm : (pid_m + 1) * bm, cols] = got
        x = product + added.to(product.device)
        if rel_err(c, torch.nn.functional.gelu(x) if activation == "gelu" else x) <= rtol:
            return say(
                zh=f"C 正好是每个 tile 加上了别的列的 bias 的结果：bias 的偏移按 {words} 算，而不是按 pid_n；"
                f"应该是 pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
                en=f"C is exactly what the kernel computes when each tile adds the bias of other columns: "
                f"offsets from {words}, not from pid_n; they must be pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            )
    return None


@pytest.mark.t4_5
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("with_bias, activation", [(True, None), (False, "gelu"), (True, "gelu")])
@pytest.mark.parametrize("M, N, K", [(48, 48, 40), (37, 70, 33), (20, 9, 0)])
def test_bias_and_gelu(t4, watched, poisoned_allocations, dtype, with_bias, activation, M, N, K):
    a, b = random((M, K), dtype), random((K, N), dtype)
    bias, _ = poisoned_view(1, N, "every-other-column", dtype) if with_bias else (None, None)
    bias = bias[0] if with_bias else None  # a bias with stride 2, inside NaN padding
    c = watched(a, b, step="T4.5", bias=bias, activation=activation, config=quick(t4))
    case = say(
        zh=f"{M}x{K} @ {K}x{N} {dtype}，bias={'有' if with_bias else '无'}，activation={activation}",
        en=f"{M}x{K} @ {K}x{N} {dtype}, bias={'yes' if with_bias else 'no'}, activation={activation}",
    )
    ref = fused_reference(a, b, bias, activation)
    err = rel_err(c, ref)
    if err <= OUT_RTOL[dtype] and not c.isnan().any():
        return
    hint = wrong_cells(c, ref, OUT_RTOL[dtype])
    x = fused_reference(a, b, bias, None)  # before the activation, in float64
    shifted = with_bias and bias_of_other_columns(c, a, b, bias, activation, watched.watch, OUT_RTOL[dtype])
    if c.isnan().any():
        # A and B hold no NaN here; the bias sits in NaN padding, so a NaN came from around the bias.
        columns = spans(c.isnan().any(0).nonzero().flatten().tolist())
        hint = say(
            zh=f"第 {columns} 列有 NaN：那里加上的 bias 是从 bias 周围的 NaN 填充读来的，不是它的元素",
            en=f"NaN in columns {columns}: the bias added there was read from the NaN padding around the "
            f"bias, not from its elements",
        )
    elif shifted:
        hint = shifted
    elif (
        with_bias and activation and rel_err(c, fused_reference(a, b, None, "gelu") + bias.double()) <= OUT_RTOL[dtype]
    ):
        hint = say(
            zh="bias 是在 GELU 之后加的：先加 bias，C = gelu(A @ B + bias)",
            en="the bias was added after the GELU: add it first, C = gelu(A @ B + bias)",
        )
    elif activation == "gelu" and rel_err(c, tanh_gelu(x)) <= OUT_RTOL[dtype]:  # the bias right, the GELU tanh's
        hint = tanh_gelu_hint(x)
    pytest.fail(
        say(
            zh=f"{case}：相对误差 {err:.2e} > {OUT_RTOL[dtype]:.1e}；{hint}；{read('T4.5')}",
            en=f"{case}: relative error {err:.2e} > {OUT_RTOL[dtype]:.1e}; {hint}; {read('T4.5')}",
        ),
        pytrace=False,
    )


@pytest.mark.t4_5
def test_bias_is_one_value_per_column(t4, watched, poisoned_allocations):
    """With K = 0 the product is zero, so C must be the bias itself, repeated down every row."""
    M = N = 32
    bias = random((N,), torch.float16)
    c = watched(random((M, 0), torch.float16), random((0, N), torch.float16), step="T4.5", bias=bias, config=quick(t4))
    want = bias[None, :].expand(M, N)
    if torch.equal(c, want):
        return
    by_row = bool((c == c[:, :1]).all()) and not bool((c == c[:1, :]).all())
    hint = (
        say(
            zh="C 的每一行只有一个值，说明 bias 是沿行方向加的：bias 每列一个值，要广播成 bias[None, :]",
            en="each row of C holds one value, so the bias went down the rows: it has one value per "
            "column, so broadcast it as bias[None, :]",
        )
        if by_row
        else say(zh="这里 C 必须等于 bias[None, :]", en="C must equal bias[None, :] here")
    )
    pytest.fail(
        say(
            zh=f"K = 0，C 为 {M}x{N}，带 bias：{hint}；{read('T4.5')}",
            en=f"K = 0, C {M}x{N} with a bias: {hint}; {read('T4.5')}",
        ),
        pytrace=False,
    )


# ================================================================================================
# The kernel as a Hopper GPU compiles it (CPU): what the interpreter lets through and a GPU refuses
# ================================================================================================
T4_SIGNATURE = {
    **{name: "*fp16" for name in ("a_ptr", "b_ptr", "c_ptr", "bias_ptr")},
    **{
        name: "i32"
        for name in (
            "M",
            "N",
            "K",
            "stride_am",
            "stride_ak",
            "stride_bk",
            "stride_bn",
            "stride_cm",
            "stride_cn",
            "stride_bias",
        )
    },
}
T4_COMPILES = {  # step: the compiles that take in that step's code (constexpr branches prune the rest)
    "T4.3": [dict(constexprs=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, HAS_BIAS=False, ACTIVATION="none"))],
    "T4.5": [dict(constexprs=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, HAS_BIAS=True, ACTIVATION="gelu"))],
}


@pytest.mark.t4_3
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU every kernel of the suite is compiled for real")
def test_the_kernel_compiles_for_a_hopper_gpu(t4):
    check_compiles_for_hopper("T4.3", "matmul_kernel", T4_SIGNATURE, T4_COMPILES, read("T4.3", "5.1"))


@pytest.mark.t4_5
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU every kernel of the suite is compiled for real")
def test_the_fused_kernel_compiles_for_a_hopper_gpu(t4):
    check_compiles_for_hopper("T4.5", "matmul_kernel", T4_SIGNATURE, T4_COMPILES, read("T4.5", "5.2"))
