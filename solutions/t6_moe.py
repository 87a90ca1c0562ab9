"""Lesson T6: grouped GEMM for a mixture-of-experts layer (reference solution).

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
    slots = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ids = tl.load(ids_ptr + slots, mask=slots < num_slots, other=0)  # int64 stays int64 until checked
    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts)
    hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)
    tl.store(block_counts_ptr + tl.program_id(0) * E_BLOCK + tl.arange(0, E_BLOCK), hist)
    # ---- T6.1 end ----


@triton.jit
def scan_counts(block_counts_ptr, block_base_ptr, counts_ptr, offsets_ptr, num_blocks, num_experts,
                SCAN_ROWS: tl.constexpr, E_BLOCK: tl.constexpr):
    """One program.  counts[e]: the sum of block_counts[:, e]; offsets: the inclusive cumulative sum
    of counts (each expert's row end); block_base[b, e]: the sum of block_counts[:b, e], where block
    b's first slot of expert e goes within the expert's rows."""
    # ---- T6.1 begin (§2.1) ----
    experts = tl.arange(0, E_BLOCK)
    running = tl.zeros((E_BLOCK,), dtype=tl.int32)
    for b0 in range(0, num_blocks, SCAN_ROWS):
        blocks = b0 + tl.arange(0, SCAN_ROWS)
        where = blocks[:, None] * E_BLOCK + experts[None, :]
        here = tl.load(block_counts_ptr + where, mask=blocks[:, None] < num_blocks, other=0)
        before = running[None, :] + tl.cumsum(here, axis=0) - here  # exclusive, down the blocks
        tl.store(block_base_ptr + where, before, mask=blocks[:, None] < num_blocks)
        running += tl.sum(here, axis=0)
    tl.store(counts_ptr + experts, running, mask=experts < num_experts)
    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts)
    # ---- T6.1 end ----


@triton.jit
def scatter_slots(ids_ptr, block_base_ptr, counts_ptr, offsets_ptr, sorted_slots_ptr, slot_pos_ptr, num_slots,
                  num_experts, BLOCK: tl.constexpr, E_BLOCK: tl.constexpr):
    """Put each slot of block b at its sorted position: its expert's first row, plus the slots of that expert in
    earlier blocks (block_base), plus those earlier in this block.  Stable: an expert's slots keep their order."""
    # ---- T6.1 begin (§2.1) ----
    lane = tl.arange(0, BLOCK)
    slots = tl.program_id(0) * BLOCK + lane
    ids = tl.load(ids_ptr + slots, mask=slots < num_slots, other=0)
    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts)
    earlier_same = (ids[:, None] == ids[None, :]) & (lane[None, :] < lane[:, None]) & valid[None, :]
    rank = tl.sum(earlier_same.to(tl.int32), axis=1)
    first_row = tl.load(offsets_ptr + ids, mask=valid, other=0) - tl.load(counts_ptr + ids, mask=valid, other=0)
    pos = first_row + tl.load(block_base_ptr + tl.program_id(0) * E_BLOCK + ids, mask=valid, other=0) + rank
    tl.store(sorted_slots_ptr + pos, slots, mask=valid)
    tl.store(slot_pos_ptr + slots, pos, mask=valid)
    # ---- T6.1 end ----


def check_routing_inputs(topk_ids, num_experts, check_ids=True):
    """Raise a ValueError (TypeError for a wrong type) naming the argument when topk_ids is not a
    2-D integer tensor, num_experts not a positive int, or (check_ids) an id is outside [0, num_experts)."""
    # ---- T6.1 begin (§2.3) ----
    if not isinstance(topk_ids, torch.Tensor):
        raise TypeError(f"route: topk_ids must be a tensor, got {type(topk_ids).__name__}")
    if topk_ids.dim() != 2:
        raise ValueError(f"route: topk_ids must be 2-D [tokens, top_k], got shape {tuple(topk_ids.shape)}")
    if topk_ids.dtype == torch.bool or topk_ids.is_floating_point() or topk_ids.is_complex():
        raise ValueError(f"route: topk_ids must hold integer expert ids, got {topk_ids.dtype}")
    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:
        raise ValueError(f"route: num_experts must be a positive int, got {num_experts!r}")
    if check_ids and topk_ids.numel():
        lo, hi = (int(v) for v in torch.aminmax(topk_ids))  # one look at the ids: a host sync
        if lo < 0 or hi >= num_experts:
            bad = lo if lo < 0 else hi
            raise ValueError(f"route: topk_ids holds expert {bad}, outside [0, {num_experts}) for num_experts")
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
    experts = tl.arange(0, E_BLOCK)
    counts = tl.load(counts_ptr + experts, mask=experts < num_experts, other=0)
    m_blocks = tl.cdiv(counts, BLOCK_M)
    tile_ends = tl.cumsum(m_blocks * num_pid_n, axis=0)
    # ---- T6.2 end ----
    return m_blocks, tile_ends


@triton.jit
def locate_tile(tile_id, m_blocks, tile_ends, num_pid_n, GROUP_M: tl.constexpr, E_BLOCK: tl.constexpr):
    """(expert, pid_m, pid_n) of global tile tile_id < the last of tile_ends: the expert whose tiles hold it, and
    its place among them: T4's grouped order through your tile_coords, or any order giving each of its tiles once."""
    # ---- T6.2 begin (§3.3) ----
    expert = tl.sum((tile_ends <= tile_id).to(tl.int32), axis=0)
    this = tl.arange(0, E_BLOCK) == expert
    expert_m_blocks = tl.sum(tl.where(this, m_blocks, 0), axis=0)
    first_tile = tl.sum(tl.where(this, tile_ends, 0), axis=0) - expert_m_blocks * num_pid_n
    pid_m, pid_n = tile_coords(tile_id - first_tile, expert_m_blocks, num_pid_n, GROUP_M)
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
    rows = row_begin + tl.arange(0, BLOCK_M)
    live = rows < row_end
    if X_SORTED:
        x_rows = tl.where(live, rows, 0)
    else:
        x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0) // TOP_K
    # ---- T6.3 end ----
    return x_rows, live


@triton.jit
def gathered_product(x_ptr, w_desc, x_rows, live, w_row, K, stride_xm, stride_xk,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """float32 [BLOCK_M, BLOCK_N]: x[x_rows, :] @ w2d[w_row : w_row + BLOCK_N, :].T, with w2d the
    (E*N, K) weights read by TMA through w_desc (box [BLOCK_N, BLOCK_K]) and x's rows not live as 0."""
    # ---- T6.3 begin (§4.2) ----
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    cols = tl.arange(0, BLOCK_K)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,
                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)
        b = w_desc.load([w_row, k0])  # past K: zeros; past the expert's N rows: the next expert's, never stored
        acc = tl.dot(a, b.T, acc)
    # ---- T6.3 end ----
    return acc


@triton.jit
def store_rows(out_ptr, acc, weights_ptr, sorted_slots_ptr, row_begin, row_end, pid_n, N, stride_om, stride_on,
               HAS_WEIGHTS: tl.constexpr, BY_SLOT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Store acc (times each row's routing weight, weights[slot], when HAS_WEIGHTS) into rows
    row_begin .. row_end-1 (at most BLOCK_M) and columns pid_n*BLOCK_N .. < N of out, in out's dtype.
    The row of out is the sorted row; with BY_SLOT, the row's slot."""
    # ---- T6.3 begin (§4.3) ----
    rows = row_begin + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    live = rows < row_end
    slots = tl.load(sorted_slots_ptr + rows, mask=live, other=0)
    if HAS_WEIGHTS:
        acc = acc * tl.load(weights_ptr + slots, mask=live, other=0.0).to(tl.float32)[:, None]
    out_rows = slots if BY_SLOT else rows
    tl.store(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on,
             acc.to(out_ptr.dtype.element_ty), mask=live[:, None] & (cols < N)[None, :])
    # ---- T6.3 end ----


# ----------------------------------------------------------------------------------------------
# §5.1 Gate and up in one pass, SwiGLU in the epilogue (T6.4)
# ----------------------------------------------------------------------------------------------
@triton.jit
def gate_up_product(x_ptr, w_desc, x_rows, live, gate_row, up_row, K, stride_xm, stride_xk,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """(gate, up): float32 x[x_rows] @ w2d[gate_row : +BLOCK_N].T and @ w2d[up_row : +BLOCK_N].T, one A load."""
    # ---- T6.4 begin (§5.1) ----
    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    cols = tl.arange(0, BLOCK_K)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,
                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)
        gate = tl.dot(a, w_desc.load([gate_row, k0]).T, gate)
        up = tl.dot(a, w_desc.load([up_row, k0]).T, up)
    # ---- T6.4 end ----
    return gate, up


@triton.jit
def swiglu(gate, up):
    """silu(gate) * up = gate * sigmoid(gate) * up, in float32."""
    # ---- T6.4 begin (§5.1) ----
    return gate * tl.sigmoid(gate) * up
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
    num_pid_n = tl.cdiv(N, BLOCK_N)
    m_blocks, tile_ends = expert_tile_counts(counts_ptr, num_experts, num_pid_n, BLOCK_M, E_BLOCK)
    total = tl.max(tile_ends, axis=0)
    for tile_id in tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN):
        expert, pid_m, pid_n = locate_tile(tile_id, m_blocks, tile_ends, num_pid_n, GROUP_M, E_BLOCK)
        expert_end = tl.load(offsets_ptr + expert)
        row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_M
        row_end = tl.minimum(row_begin + BLOCK_M, expert_end)
        acc = tile_product(x_ptr, w_desc, sorted_slots_ptr, row_begin, row_end, expert, pid_n, N, K, stride_xm,
                           stride_xk, TOP_K, BLOCK_M, BLOCK_N, BLOCK_K, X_SORTED, ACTIVATION, TRACE)
        finish_tile(out_ptr, acc, weights_ptr, sorted_slots_ptr, trace_ptr, tile_id, expert, pid_m, pid_n,
                    row_begin, row_end, N, stride_om, stride_on, HAS_WEIGHTS, BY_SLOT, BLOCK_M, BLOCK_N, TRACE)
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
    t = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for j in tl.static_range(TOP_K):
        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(out_ptr + t * N + cols, acc.to(out_ptr.dtype.element_ty), mask=cols < N)
    # ---- T6.3 end ----


def check_expert_inputs(x, w, routing, topk_weights=None, activation=None, x_sorted=False):
    """Raise a ValueError (TypeError for a wrong type) naming the argument: x 2-D [rows, K], w 3-D [E, N, K] (2N
    rows for "swiglu"), one floating dtype (fp16, bf16, fp32) and one device for x and w, a Routing over E experts
    for x's tokens, topk_weights [tokens, top_k] floating on that device; a Routing not made by route() (checked
    false) goes on to check_offsets (a host sync: not route's)."""
    # ---- T6.3 begin (§4) ----
    for name, t in (("x", x), ("w", w)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"grouped_matmul: {name} must be a tensor, got {type(t).__name__}")
    if not isinstance(routing, Routing):
        raise TypeError(f"grouped_matmul: routing must be a Routing (from route()), got {type(routing).__name__}")
    if x.dim() != 2:
        raise ValueError(f"grouped_matmul: x must be 2-D [tokens, K], got shape {tuple(x.shape)}")
    if w.dim() != 3:
        raise ValueError(f"grouped_matmul: w must be 3-D [experts, N, K], got shape {tuple(w.shape)}")
    if x.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"grouped_matmul: x must be float16, bfloat16 or float32, got {x.dtype}")
    if w.dtype != x.dtype:
        raise ValueError(f"grouped_matmul: x and w must have one dtype, got x {x.dtype} and w {w.dtype}")
    if w.device != x.device:
        raise ValueError(f"grouped_matmul: x and w must be on one device, got x on {x.device}, w on {w.device}")
    if w.shape[2] != x.shape[1]:
        raise ValueError(f"grouped_matmul: w's K ({w.shape[2]}) must equal x's K ({x.shape[1]}): w is [E, N, K]")
    if w.shape[0] != routing.num_experts:
        raise ValueError(f"grouped_matmul: w has {w.shape[0]} experts, routing {routing.num_experts}")
    if activation not in (None, "swiglu"):
        raise ValueError(f"grouped_matmul: activation must be None or 'swiglu', got {activation!r}")
    if activation == "swiglu" and w.shape[1] % 2:
        raise ValueError(f"grouped_matmul: w for swiglu holds [gate; up], 2F rows, got {w.shape[1]}")
    rows = routing.num_tokens * routing.top_k if x_sorted else routing.num_tokens
    if x.shape[0] != rows:
        raise ValueError(f"grouped_matmul: x has {x.shape[0]} rows, the routing needs {rows}")
    for name in ("counts", "offsets", "sorted_slots", "slot_pos"):
        t = getattr(routing, name)
        if t.dtype != torch.int32 or t.device != x.device or t.dim() != 1:
            raise ValueError(f"grouped_matmul: routing.{name} must be 1-D int32 on {x.device}, got "
                             f"{t.dtype} {tuple(t.shape)} on {t.device}")
    if topk_weights is not None:
        if not isinstance(topk_weights, torch.Tensor):
            raise TypeError(f"grouped_matmul: topk_weights must be a tensor, got {type(topk_weights).__name__}")
        if not topk_weights.is_floating_point():
            raise ValueError(f"grouped_matmul: topk_weights must be floating [tokens, top_k], got {topk_weights.dtype}")
        if tuple(topk_weights.shape) != (routing.num_tokens, routing.top_k) or topk_weights.device != x.device:
            raise ValueError(f"grouped_matmul: topk_weights must be [{routing.num_tokens}, {routing.top_k}] on "
                             f"{x.device}, got {tuple(topk_weights.shape)} on {topk_weights.device}")
    if not routing.checked:  # made by hand: its offsets must be the row ends of its counts
        check_offsets(routing)
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
    routing = route(topk_ids, w_gate_up.shape[0])
    hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)
    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, config=config)
    # ---- T6.4 end ----


# given/t6_host.py's bind sets Config, CONFIGS, pick_config, upper_bound_tiles and this file's plans here
host = t6_host.bind(sys.modules[__name__])
route, grouped_matmul = host.route, host.grouped_matmul  # they launch the kernels above; moe_mlp calls them
