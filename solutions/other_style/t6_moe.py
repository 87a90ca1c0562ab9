"""Lesson T6: grouped GEMM for a mixture-of-experts layer (a solution in another style: tools/checks/other_styles.py).

The reference is solutions/t6_moe.py; this one computes the same with other code in the learner's bodies.
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
    b = tl.program_id(0)
    s = b * BLOCK + tl.arange(0, BLOCK)
    ids = tl.load(ids_ptr + s, mask=s < num_slots, other=-1)  # -1: no expert's, so never counted
    for e in range(0, E_BLOCK):  # one expert at a time: the sum of one compare (0 past num_experts)
        n_e = tl.sum((ids == e).to(tl.int32), axis=0)
        tl.store(block_counts_ptr + b * E_BLOCK + e, tl.where(e < num_experts, n_e, 0))
    # ---- T6.1 end ----


@triton.jit
def scan_counts(block_counts_ptr, block_base_ptr, counts_ptr, offsets_ptr, num_blocks, num_experts,
                SCAN_ROWS: tl.constexpr, E_BLOCK: tl.constexpr):
    """One program.  counts[e]: the sum of block_counts[:, e]; offsets: the inclusive cumulative sum
    of counts (each expert's row end); block_base[b, e]: the sum of block_counts[:b, e], where block
    b's first slot of expert e goes within the expert's rows."""
    # ---- T6.1 begin (§2.1) ----
    experts = tl.arange(0, E_BLOCK)
    total = tl.zeros((E_BLOCK,), dtype=tl.int32)
    b = 0
    while b < num_blocks:  # one block's row at a time: what came before it, then its own counts
        tl.store(block_base_ptr + b * E_BLOCK + experts, total)
        total = total + tl.load(block_counts_ptr + b * E_BLOCK + experts)
        b += 1
    tl.store(offsets_ptr + experts, tl.cumsum(total, axis=0), mask=experts < num_experts)
    tl.store(counts_ptr + experts, total, mask=experts < num_experts)
    # ---- T6.1 end ----


@triton.jit
def scatter_slots(ids_ptr, block_base_ptr, counts_ptr, offsets_ptr, sorted_slots_ptr, slot_pos_ptr, num_slots,
                  num_experts, BLOCK: tl.constexpr, E_BLOCK: tl.constexpr):
    """Put each slot of block b at its sorted position: its expert's first row, plus the slots of that expert in
    earlier blocks (block_base), plus those earlier in this block.  Stable: an expert's slots keep their order."""
    # ---- T6.1 begin (§2.1) ----
    b = tl.program_id(0)
    s = b * BLOCK + tl.arange(0, BLOCK)
    ids = tl.load(ids_ptr + s, mask=s < num_slots, other=-1)
    ok = (s < num_slots) & (ids >= 0) & (ids < num_experts)
    onehot = ((ids[:, None] == tl.arange(0, E_BLOCK)[None, :]) & ok[:, None]).to(tl.int32)
    rank = tl.sum((tl.cumsum(onehot, axis=0) - onehot) * onehot, axis=1)  # how many earlier lanes chose the same
    e = tl.where(ok, ids, 0).to(tl.int32)
    start = tl.load(offsets_ptr + e, mask=ok, other=0) - tl.load(counts_ptr + e, mask=ok, other=0)
    dest = start + tl.load(block_base_ptr + b * E_BLOCK + e, mask=ok, other=0) + rank
    tl.store(slot_pos_ptr + s, dest, mask=ok)
    tl.store(sorted_slots_ptr + dest, s, mask=ok)
    # ---- T6.1 end ----


def check_routing_inputs(topk_ids, num_experts, check_ids=True):
    """Raise a ValueError (TypeError for a wrong type) naming the argument when topk_ids is not a
    2-D integer tensor, num_experts not a positive int, or (check_ids) an id is outside [0, num_experts)."""
    # ---- T6.1 begin (§2.3) ----
    if type(topk_ids) is not torch.Tensor:
        raise TypeError("topk_ids: expected a torch.Tensor")
    if topk_ids.is_floating_point() or topk_ids.dtype == torch.bool or topk_ids.ndim != 2:
        raise ValueError(f"topk_ids: need a 2-D int tensor, have {topk_ids.dtype} of shape {topk_ids.shape}")
    if not (type(num_experts) is int and num_experts > 0):
        raise ValueError(f"num_experts={num_experts!r} is not a positive integer")
    if check_ids and topk_ids.numel() and not 0 <= int((ids := topk_ids.cpu()).min()) <= int(ids.max()) < num_experts:
        raise ValueError(f"topk_ids: some ids are not in range(num_experts={num_experts})")
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
    lanes = tl.arange(0, E_BLOCK)
    rows = tl.where(lanes < num_experts, tl.load(counts_ptr + lanes, mask=lanes < num_experts), 0)
    m_blocks = (rows + BLOCK_M - 1) // BLOCK_M
    tile_ends = tl.cumsum(m_blocks, axis=0) * num_pid_n
    # ---- T6.2 end ----
    return m_blocks, tile_ends


@triton.jit
def locate_tile(tile_id, m_blocks, tile_ends, num_pid_n, GROUP_M: tl.constexpr, E_BLOCK: tl.constexpr):
    """(expert, pid_m, pid_n) of global tile tile_id < the last of tile_ends: the expert whose tiles hold it, and
    its place among them: T4's grouped order through your tile_coords, or any order giving each of its tiles once."""
    # ---- T6.2 begin (§3.3) ----
    lanes = tl.arange(0, E_BLOCK)
    expert = tl.zeros((), dtype=tl.int32)  # bisection: the first expert whose tiles end past tile_id
    step = tl.full((), E_BLOCK // 2, dtype=tl.int32)  # (E_BLOCK is a power of two)
    while step > 0:
        probe_end = tl.sum(tl.where(lanes == expert + step - 1, tile_ends, 0), axis=0)
        expert = tl.where(probe_end <= tile_id, expert + step, expert)
        step = step // 2
    rows_of_tiles = tl.sum(tl.where(lanes == expert, m_blocks, 0), axis=0)
    local = tile_id - tl.sum(tl.where(lanes == expert, tile_ends, 0), axis=0) + rows_of_tiles * num_pid_n
    pid_m, pid_n = tile_coords(local, rows_of_tiles, num_pid_n, 1)  # row-major in the expert: another valid order
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
    sorted_row = tl.arange(0, BLOCK_M) + row_begin
    live = sorted_row < row_end
    slot = tl.load(sorted_slots_ptr + sorted_row, mask=live & (not X_SORTED), other=0)
    x_rows = sorted_row * live if X_SORTED else slot // TOP_K
    # ---- T6.3 end ----
    return x_rows, live


@triton.jit
def gathered_product(x_ptr, w_desc, x_rows, live, w_row, K, stride_xm, stride_xk,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """float32 [BLOCK_M, BLOCK_N]: x[x_rows, :] @ w2d[w_row : w_row + BLOCK_N, :].T, with w2d the
    (E*N, K) weights read by TMA through w_desc (box [BLOCK_N, BLOCK_K]) and x's rows not live as 0."""
    # ---- T6.3 begin (§4.2) ----
    kk = tl.arange(0, BLOCK_K)
    rows_at = x_ptr + x_rows[:, None] * stride_xm
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in tl.range(0, tl.cdiv(K, BLOCK_K)):
        ok = live[:, None] & (kb * BLOCK_K + kk < K)[None, :]
        a = tl.where(ok, tl.load(rows_at + (kb * BLOCK_K + kk)[None, :] * stride_xk, mask=ok), 0.0)  # 0 after the load
        acc = tl.dot(a, tl.trans(tl.load_tensor_descriptor(w_desc, (w_row, kb * BLOCK_K))), acc)
    # ---- T6.3 end ----
    return acc


@triton.jit
def store_rows(out_ptr, acc, weights_ptr, sorted_slots_ptr, row_begin, row_end, pid_n, N, stride_om, stride_on,
               HAS_WEIGHTS: tl.constexpr, BY_SLOT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Store acc (times each row's routing weight, weights[slot], when HAS_WEIGHTS) into rows
    row_begin .. row_end-1 (at most BLOCK_M) and columns pid_n*BLOCK_N .. < N of out, in out's dtype.
    The row of out is the sorted row; with BY_SLOT, the row's slot."""
    # ---- T6.3 begin (§4.3) ----
    m = tl.arange(0, BLOCK_M)
    n = tl.arange(0, BLOCK_N) + pid_n * BLOCK_N
    keep_row = m < row_end - row_begin
    slot = tl.load(sorted_slots_ptr + row_begin + m, mask=keep_row, other=0)
    scale = tl.load(weights_ptr + slot, mask=keep_row & HAS_WEIGHTS, other=1.0).to(tl.float32)
    result = acc * scale[:, None] if HAS_WEIGHTS else acc
    where = tl.where(keep_row, slot, 0) if BY_SLOT else row_begin + m
    ptrs = out_ptr + where[:, None] * stride_om + n[None, :] * stride_on
    tl.store(ptrs, result.to(out_ptr.dtype.element_ty), mask=keep_row[:, None] & (n[None, :] < N))
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
    a_ptrs = x_ptr + x_rows[:, None] * stride_xm + tl.arange(0, BLOCK_K)[None, :] * stride_xk  # advanced along K
    for k0 in tl.range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=live[:, None] & (tl.arange(0, BLOCK_K)[None, :] < K - k0), other=0.0)  # one box, both
        gate += tl.dot(a, tl.trans(w_desc.load([gate_row, k0])))
        up += tl.dot(a, tl.trans(w_desc.load([up_row, k0])))
        a_ptrs += BLOCK_K * stride_xk
    # ---- T6.4 end ----
    return gate, up


@triton.jit
def swiglu(gate, up):
    """silu(gate) * up = gate * sigmoid(gate) * up, in float32."""
    # ---- T6.4 begin (§5.1) ----
    return up * (gate / (1.0 + tl.exp(-gate)))
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
    num_pid_n = (N + BLOCK_N - 1) // BLOCK_N
    m_blocks, tile_ends = expert_tile_counts(counts_ptr, num_experts, num_pid_n, BLOCK_M, E_BLOCK)
    total = tl.sum(m_blocks, axis=0) * num_pid_n
    tile_id = tl.program_id(0)
    while tile_id < total:
        expert, pid_m, pid_n = locate_tile(tile_id, m_blocks, tile_ends, num_pid_n, GROUP_M, E_BLOCK)
        first = tl.load(offsets_ptr + expert) - tl.load(counts_ptr + expert)
        row_begin = first + pid_m * BLOCK_M
        row_end = tl.minimum(first + tl.load(counts_ptr + expert), row_begin + BLOCK_M)
        acc = tile_product(x_ptr, w_desc, sorted_slots_ptr, row_begin, row_end, expert, pid_n, N, K,
                           stride_xm, stride_xk, TOP_K=TOP_K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                           X_SORTED=X_SORTED, ACTIVATION=ACTIVATION, TRACE=TRACE)
        finish_tile(out_ptr, acc, weights_ptr, sorted_slots_ptr, trace_ptr, tile_id, expert, pid_m, pid_n,
                    row_begin, row_end, N, stride_om, stride_on, HAS_WEIGHTS=HAS_WEIGHTS, BY_SLOT=BY_SLOT,
                    BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, TRACE=TRACE)
        tile_id += NUM_PROGS
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
    n = tl.arange(0, BLOCK_N) + tl.program_id(1) * BLOCK_N
    src = by_slot_ptr + tl.program_id(0) * TOP_K * N + n  # the token's row j = 0, then each next row N further
    total = tl.zeros((BLOCK_N,), dtype=tl.float32)
    j = 0
    while j < TOP_K:  # j = 0, 1, ..., TOP_K - 1, in that order
        total += tl.load(src + j * N, mask=n < N, other=0.0).to(tl.float32)
        j += 1
    tl.store(out_ptr + tl.program_id(0) * N + n, total.to(out_ptr.dtype.element_ty), mask=n < N)
    # ---- T6.3 end ----


def check_expert_inputs(x, w, routing, topk_weights=None, activation=None, x_sorted=False):
    """Raise a ValueError (TypeError for a wrong type) naming the argument: x 2-D [rows, K], w 3-D [E, N, K] (2N
    rows for "swiglu"), one floating dtype (fp16, bf16, fp32) and one device for x and w, a Routing over E experts
    for x's tokens, topk_weights [tokens, top_k] floating on that device; a Routing not made by route() (checked
    false) goes on to check_offsets (a host sync: not route's)."""
    # ---- T6.3 begin (§4) ----
    if not (torch.is_tensor(x) and torch.is_tensor(w)):
        raise TypeError("grouped_matmul expects tensors for x and w")
    if not isinstance(routing, Routing):
        raise TypeError(f"expected a Routing, as route() returns, got {type(routing).__name__}")
    if x.ndim != 2 or w.ndim != 3:
        raise ValueError(f"shapes: x {tuple(x.shape)} must be 2-D and w {tuple(w.shape)} 3-D")
    if x.dtype != w.dtype or x.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"dtypes: x is {x.dtype}, w is {w.dtype}; they must match (fp16, bf16 or fp32)")
    if x.device != w.device:
        raise ValueError(f"devices: x is on {x.device}, w is on {w.device}")
    E, rows_w, k_w = w.shape
    if k_w != x.shape[1] or E != routing.num_experts:
        raise ValueError(f"w {tuple(w.shape)} does not fit x {tuple(x.shape)} and {routing.num_experts} experts")
    if activation is not None and (activation != "swiglu" or rows_w % 2 == 1):
        raise ValueError(f"activation={activation!r} with w's {rows_w} rows")
    expected = routing.num_tokens * (routing.top_k if x_sorted else 1)
    if x.shape[0] != expected:
        raise ValueError(f"the routing is made for {expected} rows, got {x.shape[0]}")  # named by the routing alone
    for part in (routing.counts, routing.offsets, routing.sorted_slots, routing.slot_pos):
        if part.dtype != torch.int32 or part.device != x.device:
            raise ValueError("routing: its tensors must be int32 on x's device")
    if topk_weights is not None and not isinstance(topk_weights, torch.Tensor):
        raise TypeError(f"topk_weights: a tensor expected, got {type(topk_weights).__name__}")
    if topk_weights is not None and topk_weights.shape != (routing.num_tokens, routing.top_k):
        raise ValueError(f"routing: {routing.num_tokens} tokens, top_k {routing.top_k}: not {list(topk_weights.shape)}")
    if topk_weights is not None and (not torch.is_floating_point(topk_weights) or topk_weights.device != x.device):
        raise ValueError(f"topk_weights: want {(routing.num_tokens, routing.top_k)} floats on {x.device}")
    if not routing.checked:  # a hand-made routing: the given check of its offsets (a host sync)
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
    r = route(topk_ids, num_experts=w_gate_up.shape[0])
    h = grouped_matmul(x, w_gate_up, r, None, activation="swiglu", config=config)
    return grouped_matmul(h, w_down, r, topk_weights=topk_weights, x_sorted=True, combine=True, config=config)
    # ---- T6.4 end ----


# given/t6_host.py's bind sets Config, CONFIGS, pick_config, upper_bound_tiles and this file's plans here
host = t6_host.bind(sys.modules[__name__])
route, grouped_matmul = host.route, host.grouped_matmul  # they launch the kernels above; moe_mlp calls them
