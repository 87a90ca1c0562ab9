"""A constant of the config lost on its way down (T5.1's code, seen by T5.2's products): t5_kernel gets
HAS_BIAS, ACTIVATION and B_KMAJOR right, and the tile loop passes them on to k_segment and finish_tile.
T5.1's tests run the loop with TRACE = 2, which reads and writes nothing, so they cannot see a loop that
passes a literal (False, "none") instead.  The product then is exactly what the constant's other value
gives; a message names that only when C is that product, and names the tile loop only when your own
store_tile, run alone on the same kind of tile, did use the constant (zhlearner15b's walk, 2026-12-05)."""

import torch

from course.messages import fail

from .common import T5, gelu
from .stored import run_store_tile
from support import padded, rel_err


def store_tile_alone_adds_bias_and_gelu(probes):
    """Whether store_tile, called alone through its probe with HAS_BIAS and GELU, gives act(acc + bias)."""
    M, N = 40, 72
    bias = padded(1, N, torch.float32)[0][0]
    c, _, _, acc = run_store_tile(probes, M, N, torch.float32, 1, bias=bias, activation="gelu")
    return rel_err(c, gelu(acc[:M, :N].double() + bias.double()[None, :])) <= 1e-5


def fail_if_epilogue_constant_lost(probes, c, a, b, bias, tol, case):
    """Fail where the data-parallel product with bias and GELU is the one without the bias, without the
    activation, or without both, naming data_parallel_tiles where store_tile alone does both."""
    prod = a.double() @ b.double()
    right = gelu(prod + bias.double()[None, :])
    biased = prod + bias.double()[None, :]
    lost = {  # (the constant(s) lost, zh, en): (the product then, zh, en)
        ("HAS_BIAS", "HAS_BIAS"): (gelu(prod), "少了 bias，GELU 做了", "the bias not added, GELU applied"),
        ("ACTIVATION", "ACTIVATION"): (biased, "加了 bias，没有做 GELU", "the bias added, no GELU"),
        ("HAS_BIAS 和 ACTIVATION", "HAS_BIAS and ACTIVATION"): (prod, "bias 和 GELU 都没有", "neither bias nor GELU"),
    }
    for (names_zh, names_en), (model, zh, en) in lost.items():
        if rel_err(c, model) > tol or rel_err(model, right) <= tol:
            continue
        if not store_tile_alone_adds_bias_and_gelu(probes):
            fail(
                T5,
                f"{case}：C 是这样的乘积：{zh}；单独调用你的 store_tile（HAS_BIAS=True，ACTIVATION='gelu'）也不对："
                "test_store_tile_bias_and_activation 说的是哪里",
                f"{case}: C is the product with {en}; your store_tile called alone (HAS_BIAS=True, "
                "ACTIVATION='gelu') is wrong too: test_store_tile_bias_and_activation says where",
                "3.3",
            )
        fail(
            T5,
            f"{case}：C 是这样的乘积：{zh}；而你的 store_tile 单独调用时（HAS_BIAS=True，ACTIVATION='gelu'）"
            "两样都做了。t5_kernel 和 finish_tile（给定的代码）拿到什么就原样往下传，所以是 data_parallel_tiles "
            f"交给 finish_tile 的 {names_zh} 不是 kernel 拿到的那个：config 的常量原样传下去（T5.1 的检查只计数，"
            "看不出这一点）",
            f"{case}: C is the product with {en}, while your store_tile called alone (HAS_BIAS=True, "
            f"ACTIVATION='gelu') does both. t5_kernel and finish_tile (given code) hand them on as they get them, "
            f"so data_parallel_tiles handed finish_tile another {names_en} than the kernel's: pass the config's "
            "constants on as they are (T5.1's checks only count, and cannot see this)",
            "2.3",
        )


def b_read_row_major(a, b):
    """The product when b = W.t() is described K-major (b_desc holds the (N, K) W, boxes [BLOCK_N, BLOCK_K]) but
    k_block_loop takes its B_KMAJOR=False branch, b_desc.load([kb * BLOCK_K, off_n]) used as it comes: W read as
    if it were the (K, N) B, zero outside W's shape (BLOCK_N == BLOCK_K, or tl.dot would refuse the shapes)."""
    K, N = b.shape
    w = b.t().double()  # (N, K)
    r = min(K, N)
    read = torch.zeros((K, N), dtype=torch.float64, device=b.device)
    read[:r, :r] = w[:r, :r]
    return a.double() @ read


def fail_if_kmajor_lost(c, a, b, tol, case):
    """Fail, naming B_KMAJOR, where a b = W.t() product is exactly W read as a row-major B."""
    model = b_read_row_major(a, b)
    if rel_err(c, model) > tol or rel_err(model, a.double() @ b.double()) <= tol:
        return
    fail(
        T5,
        f"{case}：C 正是把 W（b = W.t() 的那个 (N, K) 张量）当成行主序的 B、按 [kb * BLOCK_K, off_n] 读出来的乘积："
        "tma_ready 说的是 b_kmajor=True，描述符也是按 K-major 建的，k_block_loop 却走了 B_KMAJOR 为 False 的那一支。"
        "t5_kernel（给定的代码）拿到什么就原样往下传；test_k_block_loop 的 K-major 用例通过的话，就是 "
        "data_parallel_tiles 交给 k_segment 的 B_KMAJOR 不是 kernel 拿到的那个：把 B_KMAJOR 原样传下去",
        f"{case}: C is exactly W (the (N, K) tensor of b = W.t()) read as if it were a row-major B, at "
        "[kb * BLOCK_K, off_n]: tma_ready said b_kmajor=True and the descriptor is K-major, yet k_block_loop took "
        "its B_KMAJOR=False branch. t5_kernel (given code) hands it on as it gets it; if test_k_block_loop's K-major "
        "cases pass, data_parallel_tiles handed k_segment another B_KMAJOR than the kernel's: pass B_KMAJOR on as "
        "it is",
        "2.3",
        "3.1",
    )
