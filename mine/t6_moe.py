"""Lesson T6: grouped GEMM for a mixture-of-experts layer (your file: fill in the marked bodies).

Read content/t6.md (中文) or content/t6.en.md (English) first: each banner names its section.  T6 builds on
YOUR t5_persistent.py and t4_matmul.py; the host side is given/t6_host.py.  Slot t * top_k + j: token t's j-th:

    routing = route(topk_ids, E)                  # §2  a counting sort of the slots by expert (T6.1)
        counts[e], offsets[e] (row ends), sorted_slots[pos] = s, slot_pos[s] = pos
    out = grouped_matmul(x, w, routing, ...)      # §3, §4  one persistent launch (T6.2, T6.3)
        for tile in pid, pid + programs, ... < total tiles (read on the device):
            expert, pid_m, pid_n = locate_tile(tile)                  # §3.3  no tile mixes two experts
            rows = its first row + pid_m*BM .. +BM, cut at its end (§3.2)
            acc = x[sorted_slots[rows] // top_k] @ w[expert][cols].T  # §4.1 gather, §4.2 TMA
            out[rows] = acc * topk_weights[slot]                      # §4.3
        combine: y[t] = sum over j of out[t * top_k + j], in j order  # §4.4
    moe_mlp: gate/up with SwiGLU, then down with the combine          # §5 (T6.4)
"""
import sys

import torch
import triton
import triton.language as tl

from given import t6_host  # the host side, given (bound at the end); check_expert_inputs uses these two:
from given.t6_host import Routing, check_offsets

from .t4_matmul import tile_coords  # the T4 of the same side: yours in mine/
from .t5_persistent import (  # noqa: F401 - and your T5's launch helpers (t5.perf §2): given/t6_host.py reads them
    RawLaunch,
    aligned_copy,
    no_launch_hooks,
    num_sms,
    persistent_grid,
    run_compiled,
    tensor_key,
    tma_problem,
)

TRACE_INTS = tl.constexpr(7)  # per tile: epilogues, expert, pid_m, pid_n, first row, row end, program


# ----------------------------------------------------------------------------------------------
# §2.1, §2.3 Routing as a counting sort: histogram, exclusive scan, stable scatter (T6.1)
# ----------------------------------------------------------------------------------------------
@triton.jit
def count_experts(ids_ptr, block_counts_ptr, num_slots, num_experts, BLOCK: tl.constexpr, E_BLOCK: tl.constexpr):
    """block_counts[b, e] (rows of E_BLOCK) = how many of slots b*BLOCK .. b*BLOCK+BLOCK-1 chose expert e."""
    # ---- T6.1 begin (§2.1) ----
    raise NotImplementedError("T6.1 count_experts: a histogram of this block's expert ids into block_counts[b, :]; read §2.1 and §2.3 in content/t6.md or content/t6.en.md")
    # ---- T6.1 end ----


@triton.jit
def scan_counts(block_counts_ptr, block_base_ptr, counts_ptr, offsets_ptr, num_blocks, num_experts,
                SCAN_ROWS: tl.constexpr, E_BLOCK: tl.constexpr):
    """One program.  counts[e]: the sum of block_counts[:, e]; offsets: the inclusive cumulative sum
    of counts (each expert's row end); block_base[b, e]: the sum of block_counts[:b, e], where block
    b's first slot of expert e goes within the expert's rows."""
    # ---- T6.1 begin (§2.1) ----
    raise NotImplementedError("T6.1 scan_counts: counts, offsets (inclusive cumsum) and block_base (an exclusive scan down the blocks); read §2.1 and §2.3 in content/t6.md or content/t6.en.md")
    # ---- T6.1 end ----


@triton.jit
def scatter_slots(ids_ptr, block_base_ptr, counts_ptr, offsets_ptr, sorted_slots_ptr, slot_pos_ptr, num_slots,
                  num_experts, BLOCK: tl.constexpr, E_BLOCK: tl.constexpr):
    """Put each slot of block b at its sorted position: its expert's first row, plus the slots of that expert in
    earlier blocks (block_base), plus those earlier in this block.  Stable: an expert's slots keep their order."""
    # ---- T6.1 begin (§2.1) ----
    raise NotImplementedError("T6.1 scatter_slots: each slot's sorted position = its expert's first row + block_base + its rank in the block; read §2.1 and §2.3 in content/t6.md or content/t6.en.md")
    # ---- T6.1 end ----


def check_routing_inputs(topk_ids, num_experts, check_ids=True):
    """Raise a ValueError (TypeError for a wrong type) naming the argument when topk_ids is not a
    2-D integer tensor, num_experts not a positive int, or (check_ids) an id is outside [0, num_experts)."""
    # ---- T6.1 begin (§2.3) ----
    raise NotImplementedError("T6.1 check_routing_inputs: raise an error naming topk_ids or num_experts when they are wrong; read §2.3 in content/t6.md or content/t6.en.md")
    # ---- T6.1 end ----


# ----------------------------------------------------------------------------------------------
# §3.3 One global tile index over ragged groups (T6.2)
# ----------------------------------------------------------------------------------------------
@triton.jit
def expert_tile_counts(counts_ptr, num_experts, num_pid_n, BLOCK_M: tl.constexpr, E_BLOCK: tl.constexpr):
    """(m_blocks, tile_ends), vectors of E_BLOCK lanes: each expert's m-blocks, cdiv(count, BLOCK_M) (0 past
    num_experts), and the inclusive cumulative sum of its tiles, m_blocks * num_pid_n (so past num_experts, the
    total: only the first num_experts lanes are read as experts')."""
    # ---- T6.2 begin (§3.3) ----
    raise NotImplementedError("T6.2 expert_tile_counts: each expert's m-blocks and the running sum of its tiles; read §3.3 in content/t6.md or content/t6.en.md")
    # ---- T6.2 end ----
    return m_blocks, tile_ends


@triton.jit
def locate_tile(tile_id, m_blocks, tile_ends, num_pid_n, GROUP_M: tl.constexpr, E_BLOCK: tl.constexpr):
    """(expert, pid_m, pid_n) of global tile tile_id < the last of tile_ends: the expert whose tiles hold it, and
    its place among them: T4's grouped order through your tile_coords, or any order giving each of its tiles once."""
    # ---- T6.2 begin (§3.3) ----
    raise NotImplementedError("T6.2 locate_tile: the expert whose tiles hold tile_id, and its (pid_m, pid_n) there; read §3.3 in content/t6.md or content/t6.en.md")
    # ---- T6.2 end ----
    return expert, pid_m, pid_n


# ----------------------------------------------------------------------------------------------
# §4.1 - §4.3 A's rows gathered, the expert's weights by TMA, the routing weights in the epilogue (T6.3)
# ----------------------------------------------------------------------------------------------
@triton.jit
def gathered_rows(sorted_slots_ptr, row_begin, row_end, TOP_K: tl.constexpr, X_SORTED: tl.constexpr,
                  BLOCK_M: tl.constexpr):
    """(x_rows, live): for sorted rows row_begin .. row_begin+BLOCK_M-1, the row of x each reads
    (its slot's token; the sorted row itself when X_SORTED) and whether it is below row_end."""
    # ---- T6.3 begin (§4.1) ----
    raise NotImplementedError("T6.3 gathered_rows: the row of x each sorted row reads, and which rows are live; read §4.1 in content/t6.md or content/t6.en.md")
    # ---- T6.3 end ----
    return x_rows, live


@triton.jit
def gathered_product(x_ptr, w_desc, x_rows, live, w_row, K, stride_xm, stride_xk,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """float32 [BLOCK_M, BLOCK_N]: x[x_rows, :] @ w2d[w_row : w_row + BLOCK_N, :].T, with w2d the
    (E*N, K) weights read by TMA through w_desc (box [BLOCK_N, BLOCK_K]) and x's rows not live as 0."""
    # ---- T6.3 begin (§4.2) ----
    raise NotImplementedError("T6.3 gathered_product: sum gathered A boxes times the expert's TMA boxes of w over K; read §4.1 and §4.2 in content/t6.md or content/t6.en.md")
    # ---- T6.3 end ----
    return acc


@triton.jit
def store_rows(out_ptr, acc, weights_ptr, sorted_slots_ptr, row_begin, row_end, pid_n, N, stride_om, stride_on,
               HAS_WEIGHTS: tl.constexpr, BY_SLOT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Store acc (times each row's routing weight, weights[slot], when HAS_WEIGHTS) into rows
    row_begin .. row_end-1 (at most BLOCK_M) and columns pid_n*BLOCK_N .. < N of out, in out's dtype.
    The row of out is the sorted row; with BY_SLOT, the row's slot."""
    # ---- T6.3 begin (§4.3) ----
    raise NotImplementedError("T6.3 store_rows: scale by the routing weights, store the live rows and columns; read §4.3 in content/t6.md or content/t6.en.md")
    # ---- T6.3 end ----


# ----------------------------------------------------------------------------------------------
# §5.1 Gate and up in one pass, SwiGLU in the epilogue (T6.4)
# ----------------------------------------------------------------------------------------------
@triton.jit
def gate_up_product(x_ptr, w_desc, x_rows, live, gate_row, up_row, K, stride_xm, stride_xk,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """(gate, up): float32 x[x_rows] @ w2d[gate_row : +BLOCK_N].T and @ w2d[up_row : +BLOCK_N].T, one A load."""
    # ---- T6.4 begin (§5.1) ----
    raise NotImplementedError("T6.4 gate_up_product: the gate and up products, each A box loaded once; read §5.1 in content/t6.md or content/t6.en.md")
    # ---- T6.4 end ----
    return gate, up


@triton.jit
def swiglu(gate, up):
    """silu(gate) * up = gate * sigmoid(gate) * up, in float32."""
    # ---- T6.4 begin (§5.1) ----
    raise NotImplementedError("T6.4 swiglu: silu(gate) * up; read §5.1 in content/t6.md or content/t6.en.md")
    # ---- T6.4 end ----


# ----------------------------------------------------------------------------------------------
# §3 One tile's work and its trace (given); §3.2, §3.4 the persistent loop over every expert's tiles (T6.2)
# ----------------------------------------------------------------------------------------------
@triton.jit
def tile_product(x_ptr, w_desc, sorted_slots_ptr, row_begin, row_end, expert, pid_n, N, K, stride_xm, stride_xk,
                 TOP_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 X_SORTED: tl.constexpr, ACTIVATION: tl.constexpr, TRACE: tl.constexpr):
    """The float32 tile of `expert`'s sorted rows row_begin .. row_end-1 (SwiGLU's for "swiglu"); zeros, with
    TRACE = 2: record only, no loads, no stores, so the tile schedule is tested alone (TRACE 0: compute, 1: both)."""
    if TRACE == 2:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    else:
        x_rows, live = gathered_rows(sorted_slots_ptr, row_begin, row_end, TOP_K, X_SORTED, BLOCK_M)
        if ACTIVATION == "swiglu":  # w holds [gate; up], 2N rows per expert
            gate, up = gate_up_product(x_ptr, w_desc, x_rows, live, expert * 2 * N + pid_n * BLOCK_N,
                                       expert * 2 * N + N + pid_n * BLOCK_N, K, stride_xm, stride_xk,
                                       BLOCK_M, BLOCK_N, BLOCK_K)
            acc = swiglu(gate, up)
        else:
            acc = gathered_product(x_ptr, w_desc, x_rows, live, expert * N + pid_n * BLOCK_N, K, stride_xm,
                                   stride_xk, BLOCK_M, BLOCK_N, BLOCK_K)
    return acc


@triton.jit
def finish_tile(out_ptr, acc, weights_ptr, sorted_slots_ptr, trace_ptr, tile_id, expert, pid_m, pid_n,
                row_begin, row_end, N, stride_om, stride_on, HAS_WEIGHTS: tl.constexpr, BY_SLOT: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, TRACE: tl.constexpr):
    """The tile's epilogue (not with TRACE = 2), recorded in the trace (not with TRACE = 0)."""
    if TRACE != 2:
        store_rows(out_ptr, acc, weights_ptr, sorted_slots_ptr, row_begin, row_end, pid_n, N, stride_om,
                   stride_on, HAS_WEIGHTS, BY_SLOT, BLOCK_M, BLOCK_N)
    if TRACE != 0:
        at = trace_ptr + TRACE_INTS * tile_id
        tl.atomic_add(at, 1)
        tl.store(at + 1, expert)
        tl.store(at + 2, pid_m)
        tl.store(at + 3, pid_n)
        tl.store(at + 4, row_begin)
        tl.store(at + 5, row_end)
        tl.store(at + 6, tl.program_id(0))


@triton.jit
def grouped_tiles(x_ptr, w_desc, out_ptr, weights_ptr, sorted_slots_ptr, counts_ptr, offsets_ptr, trace_ptr,
                  N, K, num_experts, stride_xm, stride_xk, stride_om, stride_on, NUM_PROGS,
                  TOP_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, E_BLOCK: tl.constexpr, X_SORTED: tl.constexpr, HAS_WEIGHTS: tl.constexpr,
                  BY_SLOT: tl.constexpr, ACTIVATION: tl.constexpr, TRACE: tl.constexpr, FLATTEN: tl.constexpr):
    """Program p does global tiles p, p + NUM_PROGS, ... below the total that the counts give (read here, on the
    device): each at its (expert, pid_m, pid_n), on the expert's sorted rows first_row + pid_m*BLOCK_M .. cut at
    its end: tile_product, then finish_tile.  FLATTEN: tl.range(..., flatten=FLATTEN), a GPU speed hint (§3.4)."""
    # ---- T6.2 begin (§3.4) ----
    raise NotImplementedError("T6.2 grouped_tiles: loop over this program's global tiles below the total read on the device; read §3.2 and §3.4 in content/t6.md or content/t6.en.md")
    # ---- T6.2 end ----


@triton.jit
def moe_kernel(x_ptr, w_desc, out_ptr, weights_ptr, sorted_slots_ptr, counts_ptr, offsets_ptr, trace_ptr,
               N, K, num_experts, stride_xm, stride_xk, stride_om, stride_on, NUM_PROGS,
               TOP_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr, E_BLOCK: tl.constexpr, X_SORTED: tl.constexpr, HAS_WEIGHTS: tl.constexpr,
               BY_SLOT: tl.constexpr, ACTIVATION: tl.constexpr, TRACE: tl.constexpr, FLATTEN: tl.constexpr,
               WIDE: tl.constexpr):
    if WIDE:  # set by the host for x or out past 2**31 elements (§4.3): your row offsets turn int64 too
        stride_xm, stride_xk = tl.cast(stride_xm, tl.int64), tl.cast(stride_xk, tl.int64)
        stride_om, stride_on = tl.cast(stride_om, tl.int64), tl.cast(stride_on, tl.int64)
    grouped_tiles(x_ptr, w_desc, out_ptr, weights_ptr, sorted_slots_ptr, counts_ptr, offsets_ptr, trace_ptr,
                  N, K, num_experts, stride_xm, stride_xk, stride_om, stride_on, NUM_PROGS, TOP_K,
                  BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, E_BLOCK, X_SORTED, HAS_WEIGHTS, BY_SLOT, ACTIVATION, TRACE,
                  FLATTEN)


# ----------------------------------------------------------------------------------------------
# §4.4 A deterministic combine over the top-k, §4 the checks on the host (T6.3)
# ----------------------------------------------------------------------------------------------
@triton.jit
def combine_topk(by_slot_ptr, out_ptr, N: tl.int64, TOP_K: tl.constexpr, BLOCK_N: tl.constexpr):  # N int64: §4.3
    """out[t, cols] = by_slot[t*TOP_K + 0, cols] + ... + by_slot[t*TOP_K + TOP_K-1, cols], summed in
    float32 in that order (program (t, column block)), stored in out's dtype; both are [rows, N]."""
    # ---- T6.3 begin (§4.4) ----
    raise NotImplementedError("T6.3 combine_topk: sum each token's top_k rows in order, in float32; read §4.4 in content/t6.md or content/t6.en.md")
    # ---- T6.3 end ----


def check_expert_inputs(x, w, routing, topk_weights=None, activation=None, x_sorted=False):
    """Raise a ValueError (TypeError for a wrong type) naming the argument: x 2-D [rows, K], w 3-D [E, N, K] (2N
    rows for "swiglu"), one floating dtype (fp16, bf16, fp32) and one device for x and w, a Routing over E experts
    for x's tokens, topk_weights [tokens, top_k] floating on that device; a Routing not made by route() (checked
    false) goes on to check_offsets (a host sync: not route's)."""
    # ---- T6.3 begin (§4) ----
    raise NotImplementedError("T6.3 check_expert_inputs: raise an error naming the argument that is wrong; read §4 in content/t6.md or content/t6.en.md")
    # ---- T6.3 end ----


# ----------------------------------------------------------------------------------------------
# §5.2 The layer: one route, then two grouped launches (T6.4); after it, the host side (§4, §6.4), given
# ----------------------------------------------------------------------------------------------
@t6_host.layer_inputs_named  # given: an argument that does not fit is refused by its name here
def moe_mlp(x, w_gate_up, w_down, topk_ids, topk_weights, *, config=None):
    """An MoE layer's experts: y[t] = sum over j of topk_weights[t, j] * down_e(silu(gate_e x) * up_e x),
    e = topk_ids[t, j]; w_gate_up [E, 2F, K], w_down [E, K', F].  Two grouped launches (and the combine),
    both handed the caller's config as it is (config=config; None: pick_config picks)."""
    # ---- T6.4 begin (§5.2) ----
    raise NotImplementedError("T6.4 moe_mlp: route, gate/up with SwiGLU, then down with the weights and the combine; read §5.2 in content/t6.md or content/t6.en.md")
    # ---- T6.4 end ----


# given/t6_host.py's bind sets Config, CONFIGS, pick_config, upper_bound_tiles and this file's plans here
host = t6_host.bind(sys.modules[__name__])
route, grouped_matmul = host.route, host.grouped_matmul  # they launch the kernels above; moe_mlp calls them
