"""Small kernels that call one of lesson T5's device functions from the graded file, so that each
step is tested on its own: the tile loop (T5.1) and the stream-K split (T5.3) in count-only mode
(TRACE = 2: no loads, no stores, so no TMA step needed), the k loop and the store (T5.2, T5.4)
on one tile per program, and the fix-up's two halves, publish and collect (T5.3), alone and as
a pair.  The suite (tests/t5/) launches them."""

import triton
import triton.language as tl

from course import seam
from course.i18n import say
from course.lessons.t4_probes import padded_tile_offsets  # loads T4's graded file, which T5's imports anyway
from course.messages import read
from course.registry import lesson

T5 = lesson("T5")

_t5 = seam.load(T5)
data_parallel_tiles = _t5.data_parallel_tiles
stream_k_tiles = _t5.stream_k_tiles
sk_run = _t5.sk_run
sk_program_of = _t5.sk_program_of
k_block_loop = _t5.k_block_loop
store_tile = _t5.store_tile
sk_publish_partial = _t5.sk_publish_partial
sk_collect_partials = _t5.sk_collect_partials

# tl.static_assert's message is fixed when the kernel compiles: the language is chosen at import.
ACC_NOT_FP32 = tl.constexpr(
    say(
        zh="T5.2：k_block_loop 返回的累加器不是 float32：它要从 acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32) "
        f"开始，tl.dot 往它里面累加；{read('T5.2', '3.1')}",
        en="T5.2: k_block_loop returned an accumulator that is not float32: start it as acc = tl.zeros((BLOCK_M, "
        f"BLOCK_N), dtype=tl.float32) and let tl.dot add into it; {read('T5.2', '3.1')}",
    )
)


@triton.jit
def tile_loop_probe(
    trace_ptr,
    K,
    first_tile,
    num_tiles,
    num_pid_m,
    num_pid_n,
    NUM_PROGS,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    FLATTEN: tl.constexpr,
):
    """data_parallel_tiles, count-only: the trace says which program finished which tile."""
    data_parallel_tiles(
        trace_ptr,
        trace_ptr,
        trace_ptr,
        trace_ptr,
        trace_ptr,
        1,
        K,
        0,
        first_tile,
        num_tiles,
        num_pid_m,
        num_pid_n,
        NUM_PROGS,
        16,
        16,
        BLOCK_K,
        GROUP_M,
        1,
        False,
        False,
        "none",
        FLATTEN,
        2,
    )


@triton.jit
def stream_k_probe(
    trace_ptr,
    partials_ptr,
    flags_ptr,
    K,
    sk_tiles,
    num_pid_m,
    num_pid_n,
    NUM_PROGS,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    """stream_k_tiles alone, count-only: partial tiles of zeros go through the real fix-up."""
    stream_k_tiles(
        trace_ptr,
        trace_ptr,
        trace_ptr,
        trace_ptr,
        trace_ptr,
        partials_ptr,
        flags_ptr,
        1,
        K,
        0,
        sk_tiles,
        num_pid_m,
        num_pid_n,
        NUM_PROGS,
        16,
        16,
        BLOCK_K,
        GROUP_M,
        1,
        False,
        False,
        "none",
        2,
    )


@triton.jit
def sk_run_probe(runs_ptr, owners_ptr, total, NUM_PROGS):
    """Program p writes its run [begin, end) and, for each k-block of it, sk_program_of's answer."""
    pid = tl.program_id(0)
    begin, end = sk_run(pid, total, NUM_PROGS)
    tl.store(runs_ptr + 2 * pid, begin)
    tl.store(runs_ptr + 2 * pid + 1, end)
    for it in range(begin, end):
        tl.store(owners_ptr + it, sk_program_of(it, total, NUM_PROGS))


@triton.jit
def k_block_loop_probe(
    a_desc,
    b_desc,
    acc_ptr,
    stride_acc,
    kb_begin,
    kb_end,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    B_KMAJOR: tl.constexpr,
):
    """One tile per program (axis 0: rows of tiles, axis 1: columns), written whole to acc_ptr."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = k_block_loop(
        a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, kb_begin, kb_end, BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR
    )
    tl.static_assert(acc.dtype == tl.float32, ACC_NOT_FP32.value)
    tl.store(acc_ptr + padded_tile_offsets(stride_acc, pid_m, pid_n, BLOCK_M, BLOCK_N), acc)


@triton.jit
def store_tile_probe(
    acc_ptr,
    stride_acc,
    c_desc,
    bias_ptr,
    N,
    stride_bias,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EPILOGUE_SUBTILE: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    """store_tile of one tile per program, from a float32 buffer as wide as the grid of tiles."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.load(acc_ptr + padded_tile_offsets(stride_acc, pid_m, pid_n, BLOCK_M, BLOCK_N))
    store_tile(
        c_desc, acc, bias_ptr, N, stride_bias, pid_m, pid_n, BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION
    )


@triton.jit
def tile_offsets(BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    return tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]


@triton.jit
def publish_probe(src_ptr, partials_ptr, flags_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Program p publishes tile p of src (tiles of BLOCK_M x BLOCK_N float32, end to end)."""
    pid = tl.program_id(0)
    acc = tl.load(src_ptr + pid * BLOCK_M * BLOCK_N + tile_offsets(BLOCK_M, BLOCK_N))
    sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)


@triton.jit
def collect_probe(
    acc_ptr, partials_ptr, flags_ptr, out_ptr, first_pid, pid, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    """One program, standing for program `pid`: collects the partials of first_pid .. pid-1 onto acc."""
    offs = tile_offsets(BLOCK_M, BLOCK_N)
    acc = sk_collect_partials(tl.load(acc_ptr + offs), partials_ptr, flags_ptr, first_pid, pid, BLOCK_M, BLOCK_N)
    tl.store(out_ptr + offs, acc)


@triton.jit
def publish_collect_probe(src_ptr, partials_ptr, flags_ptr, out_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The pair at work: programs 0 .. n-2 publish tile p of src; the last program, n-1, owns the
    tile: it adds their partials onto its own tile n-1 and writes the sum to out."""
    pid = tl.program_id(0)
    last = tl.num_programs(0) - 1
    offs = tile_offsets(BLOCK_M, BLOCK_N)
    acc = tl.load(src_ptr + pid * BLOCK_M * BLOCK_N + offs)
    if pid < last:
        sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)
    else:
        acc = sk_collect_partials(acc, partials_ptr, flags_ptr, 0, pid, BLOCK_M, BLOCK_N)
        tl.store(out_ptr + offs, acc)
