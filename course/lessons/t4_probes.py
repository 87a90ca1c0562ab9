"""Small kernels that call one of lesson T4's device functions from the graded file, so that each
step is tested on its own: T4.2 without an epilogue, T4.3 without a main loop, T4.5 without the
wrapper.  The suite (tests/t4/) and the study tools (make tiles) launch the same probes."""

import triton
import triton.language as tl

from course import seam
from course.i18n import say
from course.messages import read
from course.registry import lesson

T4 = lesson("T4")

_t4 = seam.load(T4)
tile_coords = _t4.tile_coords
mainloop = _t4.mainloop
epilogue = _t4.epilogue
bias_and_activation = _t4.bias_and_activation

# tl.static_assert's message is fixed when the kernel compiles, so the language is chosen here, at
# import; a jitted function reads a global only as a constexpr.
ACC_NOT_FP32 = tl.constexpr(
    say(
        zh=f"T4.2：mainloop 必须返回 float32 累加器（tl.zeros(..., dtype=tl.float32)）；{read('T4.2', '4.2')}",
        en=f"T4.2: mainloop must return a float32 accumulator (tl.zeros(..., dtype=tl.float32)); {read('T4.2', '4.2')}",
    )
)
ACC_NOT_A_TILE = tl.constexpr(
    say(
        zh="T4.2：mainloop 必须返回 [BLOCK_M, BLOCK_N] 的块，这里返回的不是二维的块：循环之前就让 acc 是这样的块，"
        f"acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)；{read('T4.2', '4.2')}",
        en="T4.2: mainloop must return a [BLOCK_M, BLOCK_N] block, and what it returned here is not 2-D: make acc "
        f"that block before the loop, acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32); {read('T4.2', '4.2')}",
    )
)
COORDS_NOT_INT32 = tl.constexpr(
    say(
        zh="T4.1：tile_coords 拿到的 pid 是 int32，返回的 pid_m 或 pid_n 却不是 int32：别把它们（或 pid）转成 "
        "tl.int64。T5、T6 把 pid_m * BLOCK_M、pid_n * BLOCK_N 交给 TMA 描述符的 load，那里的偏移必须是 32 位，"
        f"int64 会在那里报 Expected a 32-bit integer；{read('T4.1', '2')}",
        en="T4.1: tile_coords got an int32 pid and returned a pid_m or pid_n that is not int32: do not cast them (or "
        "pid) to tl.int64. T5 and T6 hand pid_m * BLOCK_M and pid_n * BLOCK_N to a TMA descriptor's load, whose "
        f"offsets must be 32-bit, and int64 fails there with Expected a 32-bit integer; {read('T4.1', '2')}",
    )
)
TILE_NOT_FP32 = tl.constexpr(
    say(
        zh=f"T4.5：bias_and_activation 必须返回 float32 的 tile，类型转换只在 epilogue 里做；{read('T4.5')}",
        en=f"T4.5: bias_and_activation must return the float32 tile; cast only in the epilogue; {read('T4.5')}",
    )
)


@triton.jit
def padded_tile_offsets(stride_acc, pid_m, pid_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Offsets of tile (pid_m, pid_n) in a float32 buffer as wide as the grid of tiles, padded, so
    the probes read and write whole tiles without a mask.  T5's probes use it too."""
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    return rows[:, None] * stride_acc + cols[None, :]


@triton.jit
def tile_coords_probe(out_ptr, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    pid_m, pid_n = tile_coords(pid, num_pid_m, num_pid_n, GROUP_M)
    tl.static_assert(pid_m.dtype == tl.int32, COORDS_NOT_INT32.value)
    tl.static_assert(pid_n.dtype == tl.int32, COORDS_NOT_INT32.value)
    tl.store(out_ptr + 2 * pid, pid_m)
    tl.store(out_ptr + 2 * pid + 1, pid_n)


@triton.jit
def mainloop_probe(
    a_ptr,
    b_ptr,
    acc_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_acc,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    acc = mainloop(
        a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n, BLOCK_M, BLOCK_N, BLOCK_K
    )
    tl.static_assert(acc.dtype == tl.float32, ACC_NOT_FP32.value)
    tl.static_assert(len(acc.shape) == 2, ACC_NOT_A_TILE.value)  # a Python 0.0 left as it was when K = 0
    tl.store(acc_ptr + padded_tile_offsets(stride_acc, pid_m, pid_n, BLOCK_M, BLOCK_N), acc)


@triton.jit
def epilogue_probe(
    acc_ptr, stride_acc, c_ptr, M, N, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    acc = tl.load(acc_ptr + padded_tile_offsets(stride_acc, pid_m, pid_n, BLOCK_M, BLOCK_N))
    epilogue(acc, c_ptr, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N)


@triton.jit
def bias_and_activation_probe(
    acc_ptr,
    stride_acc,
    bias_ptr,
    N,
    stride_bias,
    out_ptr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    """One row of tiles across N: every tile, the padding columns past N included, is written to
    out_ptr (as wide as acc_ptr), so a bias read past N shows there."""
    pid_n = tl.program_id(axis=0)
    offsets = padded_tile_offsets(stride_acc, 0, pid_n, BLOCK_M, BLOCK_N)
    acc = tl.load(acc_ptr + offsets)
    acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)
    tl.static_assert(acc.dtype == tl.float32, TILE_NOT_FP32.value)
    tl.store(out_ptr + offsets, acc)
