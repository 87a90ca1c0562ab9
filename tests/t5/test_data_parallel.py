"""T5.2: the data-parallel matmul: products on every shape, layout and grid, and the copies and the
refusals of its host wrapper."""

import pytest
import torch
import triton

from course.i18n import say
from course.messages import fail

from .common import T5, cfg, check_product, check_trace, product_case, run_matmul
from .lost_constants import fail_if_kmajor_lost
from .swaps import fail_if_sums_turned
from .test_tma_ready import names_operand
from support import DTYPES, OUT_RTOL, random, rel_err

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


@pytest.mark.t5_2
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["row-major", "b = W.t()", "column-major a"])
@pytest.mark.parametrize("M, N, K, progs", [(45, 37, 83, 3), (64, 96, 64, 2), (100, 40, 33, 5)])
def test_matmul_data_parallel(t5, dtype, layout, M, N, K, progs):
    """The persistent data-parallel kernel end to end: every tile once, the product right."""
    config = cfg(t5)
    c, a, b, rows = product_case(t5, M, N, K, dtype, layout, progs, config)
    case = say(
        zh=f"{M}x{K} @ {K}x{N} {dtype}，{layout}，{progs} 个程序",
        en=f"{M}x{K} @ {K}x{N} {dtype}, {layout}, {progs} programs",
    )
    if rel_err(c, a.double() @ b.double()) > OUT_RTOL[dtype]:  # the tile loop's sums taken elsewhere, named
        fail_if_sums_turned(c, a, b, 32, 32, lambda x: x, OUT_RTOL[dtype], case)
        fail_if_rounded_to_fp16(c, a, b, dtype, case, "2.2")
        if layout == "b = W.t()":
            fail_if_kmajor_lost(c, a, b, OUT_RTOL[dtype], case)
    check_product(c, a, b, dtype, case, "3")
    tiles = triton.cdiv(M, 32) * triton.cdiv(N, 32)
    check_trace(
        rows,
        triton.cdiv(M, 32),
        triton.cdiv(N, 32),
        4,
        triton.cdiv(K, 32),
        case,
        "2.2",
        loop=(min(tiles, progs), 0),
        K=K,
    )


def fail_if_rounded_to_fp16(c, a, b, dtype, case, section):
    """Fail where a float32 C is the product rounded to float16 on its way (acc.to(tl.float16) between the
    k-blocks' sum and finish_tile, say): C then matches the float32 product rounded to fp16 far better
    than the product itself.  section: the loop's (§2.2 whole tiles, §4.2 stream-K); the store's is §3.3."""
    want = a.double() @ b.double()
    err = rel_err(c, want)
    if dtype != torch.float32 or rel_err(c, (a.float() @ b.float()).half().double()) > err / 10:
        return
    fail(
        T5,
        f"{case}：相对误差 {err:.2e}；float32 的 C 正是乘积先舍入成 float16 的值：k-block 的和从 k_segment 到 "
        "finish_tile、再到存储，一路保持 float32，只在存储时转成 C 的 dtype 一次",
        f"{case}: relative error {err:.2e}; the float32 C is the product rounded to float16 on its way: the sum "
        "of the k-blocks goes from k_segment to finish_tile and to the store in float32, cast once, to C's "
        "dtype, at the store",
        section,
        "3.3",
    )


@pytest.mark.t5_2
def test_two_programs_per_sm(t5):
    """Config.occupancy = 2 plans two programs per SM: with 3 "SMs", 6 programs share the 20 tiles,
    program p finishing tiles p, p + 6, ...; every tile once, the product right (§2.1)."""
    M, N, K = 150, 100, 64
    config = t5.Config(32, 32, 32, 4, 4, 2, 1, False, "dp", 2)
    c, a, b, rows = product_case(t5, M, N, K, torch.float16, "row-major", 3, config)
    case = say(
        zh=f"{M}x{K} @ {K}x{N} fp16，每个 SM 两个程序，3 个 SM",
        en=f"{M}x{K} @ {K}x{N} fp16, two programs per SM, 3 SMs",
    )
    check_product(c, a, b, torch.float16, case, "2.1")
    check_trace(rows, 5, 4, 4, 2, case, "2.2", owner=lambda tile: tile % 6, loop=(6, 0))


@pytest.mark.t5_2
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("layout", ["row-major", "b = W.t()"])
@pytest.mark.parametrize("M, N, K, progs", [(1, 70, 45, 3), (16, 96, 64, 2), (40, 37, 83, 3)])
def test_decode_turned_around(t5, dtype, layout, M, N, K, progs):
    """mode "swap" (§6.3): the kernel given for a decode step sums each tile as B^T A^T on your
    descriptors, T4's order and your store_tile: every tile once, the product right."""
    config = t5.Config(16, 32, 32, 2, 4, 2, 1, False, "swap")
    c, a, b, rows = product_case(t5, M, N, K, dtype, layout, progs, config)
    case = say(
        zh=f"{M}x{K} @ {K}x{N} {dtype}，{layout}，mode swap，{progs} 个程序",
        en=f"{M}x{K} @ {K}x{N} {dtype}, {layout}, mode swap, {progs} programs",
    )
    check_product(c, a, b, dtype, case, "6.3")
    tiles = triton.cdiv(M, 16) * triton.cdiv(N, 32)
    check_trace(
        rows, triton.cdiv(M, 16), triton.cdiv(N, 32), 2, triton.cdiv(K, 32), case, "6.3", loop=(min(tiles, progs), 0)
    )


@pytest.mark.t5_2
def test_matmul_refuses_or_copies_both_ways(t5):
    """fp16 with odd K: by default a copy and the right product; with tma_fallback=False a ValueError
    that names a and the rule."""
    a, b = random((20, 33), torch.float16), random((33, 24), torch.float16)
    c = run_matmul(t5, "fp16, K = 33", "3.2", a, b, config=cfg(t5))
    check_product(c, a, b, torch.float16, "fp16 K = 33", "3.2")
    try:
        run_matmul(t5, "fp16, K = 33, tma_fallback=False", "3.2", a, b, config=cfg(t5), tma_fallback=False)
    except ValueError as e:
        if not names_operand(str(e), "a", t5, a) or "16" not in str(e):
            fail(
                T5,
                f"ValueError 要写出张量 a 和 16 字节的规矩，得到 {e}",
                f"the ValueError must name a and the 16-byte rule, got {e}",
                "3.2",
            )
        return
    fail(
        T5,
        "fp16、K = 33、tma_fallback=False：应当抛 ValueError",
        "fp16, K = 33, tma_fallback=False: expected a ValueError",
        "3.2",
    )


@pytest.mark.t5_2
@pytest.mark.parametrize("M, N, K", [(6, 5, 0), (40, 33, 0)])
def test_empty_k_gives_zeros(t5, M, N, K):
    case = f"{M}x{K} @ {K}x{N}"
    c = run_matmul(t5, case, "3.1", random((M, K), torch.float16), random((K, N), torch.float16), config=cfg(t5))
    if tuple(c.shape) != (M, N) or not torch.equal(c, torch.zeros_like(c)):
        fail(T5, f"{M}x{K} @ {K}x{N}：应当是 ({M}, {N}) 的全零", f"{M}x{K} @ {K}x{N}: expected ({M}, {N}) zeros", "3.1")
