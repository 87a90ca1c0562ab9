"""Small kernels that call one of lesson T6's device functions from the graded file, so that each
step is tested on its own: the tile schedule (T6.2) in record-only mode (TRACE = 2: no loads, no
stores, so T6.3 need not be written), each expert's tiles and one tile's place alone, the gather
and the masked store of T6.3 on one tile, and T6.4's gate/up product on one tile.  The suite
(tests/t6/) launches them."""

import triton
import triton.language as tl

from course import seam
from course.registry import lesson

T6 = lesson("T6")

_t6 = seam.load(T6)
grouped_tiles = _t6.grouped_tiles
expert_tile_counts = _t6.expert_tile_counts
locate_tile = _t6.locate_tile
gathered_rows = _t6.gathered_rows
gathered_product = _t6.gathered_product
store_rows = _t6.store_rows
gate_up_product = _t6.gate_up_product

RECORD_ONLY = 2  # TRACE mode of the graded file: record each tile's place, compute nothing


@triton.jit
def schedule_probe(
    counts_ptr,
    offsets_ptr,
    trace_ptr,
    N,
    num_experts,
    NUM_PROGS,
    TOP_K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    GROUP_M: tl.constexpr,
    E_BLOCK: tl.constexpr,
):
    """grouped_tiles, record-only: the trace says which program did which tile, where."""
    grouped_tiles(
        trace_ptr,
        trace_ptr,
        trace_ptr,
        trace_ptr,
        trace_ptr,
        counts_ptr,
        offsets_ptr,
        trace_ptr,
        N,
        16,
        num_experts,
        0,
        0,
        0,
        0,
        NUM_PROGS,
        TOP_K,
        BLOCK_M,
        BLOCK_N,
        16,
        GROUP_M,
        E_BLOCK,
        False,
        False,
        False,
        "none",
        2,
        False,
    )


@triton.jit
def locate_probe(
    counts_ptr, found_ptr, num_experts, num_pid_n, BLOCK_M: tl.constexpr, GROUP_M: tl.constexpr, E_BLOCK: tl.constexpr
):
    """Program p: found[p] = (expert, pid_m, pid_n) of global tile p, by expert_tile_counts and
    locate_tile; program 0 also writes m_blocks (num_experts lanes) and tile_ends (all E_BLOCK lanes,
    the spare ones last) after the last tile's triple."""
    m_blocks, tile_ends = expert_tile_counts(counts_ptr, num_experts, num_pid_n, BLOCK_M, E_BLOCK)
    tile = tl.program_id(0)
    expert, pid_m, pid_n = locate_tile(tile, m_blocks, tile_ends, num_pid_n, GROUP_M, E_BLOCK)
    tl.store(found_ptr + 3 * tile, expert)
    tl.store(found_ptr + 3 * tile + 1, pid_m)
    tl.store(found_ptr + 3 * tile + 2, pid_n)
    if tile == 0:
        lanes = tl.arange(0, E_BLOCK)
        tail = found_ptr + 3 * tl.num_programs(0)
        tl.store(tail + lanes, m_blocks, mask=lanes < num_experts)
        tl.store(tail + num_experts + lanes, tile_ends)


@triton.jit
def gather_probe(
    x_ptr,
    w_desc,
    sorted_slots_ptr,
    acc_ptr,
    rows_ptr,
    row_begin,
    row_end,
    w_row,
    K,
    stride_xm,
    stride_xk,
    TOP_K: tl.constexpr,
    X_SORTED: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """One tile: rows[i] = (x row, live) by gathered_rows, acc = gathered_product (float32)."""
    x_rows, live = gathered_rows(sorted_slots_ptr, row_begin, row_end, TOP_K, X_SORTED, BLOCK_M)
    i = tl.arange(0, BLOCK_M)
    tl.store(rows_ptr + 2 * i, x_rows)
    tl.store(rows_ptr + 2 * i + 1, live.to(tl.int32))
    acc = gathered_product(x_ptr, w_desc, x_rows, live, w_row, K, stride_xm, stride_xk, BLOCK_M, BLOCK_N, BLOCK_K)
    j = tl.arange(0, BLOCK_N)
    tl.store(acc_ptr + i[:, None] * BLOCK_N + j[None, :], acc)


@triton.jit
def store_probe(
    out_ptr,
    acc_ptr,
    weights_ptr,
    sorted_slots_ptr,
    row_begin,
    row_end,
    pid_n,
    N,
    stride_om,
    stride_on,
    HAS_WEIGHTS: tl.constexpr,
    BY_SLOT: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """One tile's epilogue: store_rows of the float32 tile acc ([BLOCK_M, BLOCK_N], row-major)."""
    i = tl.arange(0, BLOCK_M)
    j = tl.arange(0, BLOCK_N)
    acc = tl.load(acc_ptr + i[:, None] * BLOCK_N + j[None, :])
    store_rows(
        out_ptr,
        acc,
        weights_ptr,
        sorted_slots_ptr,
        row_begin,
        row_end,
        pid_n,
        N,
        stride_om,
        stride_on,
        HAS_WEIGHTS,
        BY_SLOT,
        BLOCK_M,
        BLOCK_N,
    )


@triton.jit
def gate_up_probe(
    x_ptr,
    w_desc,
    x_rows_ptr,
    gate_ptr,
    up_ptr,
    gate_row,
    up_row,
    K,
    stride_xm,
    stride_xk,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """One tile of gate_up_product: x's rows x_rows[i] (live where >= 0; no gathered_rows, so T6.3's
    gather need not be right), gate and up stored as float32 [BLOCK_M, BLOCK_N], row-major."""
    i = tl.arange(0, BLOCK_M)
    x_rows = tl.load(x_rows_ptr + i)
    live = x_rows >= 0
    gate, up = gate_up_product(
        x_ptr,
        w_desc,
        tl.where(live, x_rows, 0),
        live,
        gate_row,
        up_row,
        K,
        stride_xm,
        stride_xk,
        BLOCK_M,
        BLOCK_N,
        BLOCK_K,
    )
    j = tl.arange(0, BLOCK_N)
    tl.store(gate_ptr + i[:, None] * BLOCK_N + j[None, :], gate)
    tl.store(up_ptr + i[:, None] * BLOCK_N + j[None, :], up)


def e_block(num_experts):
    return max(2, triton.next_power_of_2(num_experts))
