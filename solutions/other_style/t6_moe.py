"""Lesson T6: grouped GEMM for a mixture-of-experts layer (a solution in another style: tools/checks/other_styles.py).

Read content/t6.md (中文) or content/t6.en.md (English) first: every banner below names the
section it implements.  mine/t6_moe.py is this file with the learner's bodies cut out, so
`diff mine/t6_moe.py solutions/t6_moe.py` shows only code that a learner writes.
T6 builds on T5 (and so on T4): the persistent grid, TMA's rules and the grouped tile order come
from YOUR t5_persistent.py and t4_matmul.py.

Token t's j-th choice is the slot s = t * top_k + j.  The layer, in two steps:

    routing = route(topk_ids, E)                  # §2  a counting sort of the slots by expert (T6.1)
        counts[e], offsets[e] (row ends), sorted_slots[pos] = s, slot_pos[s] = pos
    out = grouped_matmul(x, w, routing, ...)      # §3, §4  one persistent launch (T6.2, T6.3)
        for tile in pid, pid + programs, ... < total tiles (read on the device):
            expert, pid_m, pid_n = locate_tile(tile)                  # §3.3  no tile mixes two experts
            rows = the expert's sorted rows pid_m*BM .. +BM, cut at its end (§3.2)
            acc = x[sorted_slots[rows] // top_k] @ w[expert][cols].T  # §4.1 gather, §4.2 TMA
            out[rows] = acc * topk_weights[slot]                      # §4.3
        combine: y[t] = sum over j of out[t * top_k + j], in j order  # §4.4
    moe_mlp: gate/up with SwiGLU, then down with the combine          # §5 (T6.4)
"""
import os
from dataclasses import dataclass

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

# ---- other style begin: T4's grouped order is imported as in the reference but not used here
from .t4_matmul import tile_coords  # noqa: F401 - this variant orders an expert's tiles its own way

# ---- other style end
from .t5_persistent import (  # and your T5, with its given launch helpers (t5.perf §2)
    RawLaunch,
    aligned_copy,
    no_launch_hooks,
    num_sms,
    persistent_grid,
    run_compiled,
    tensor_key,
    tma_problem,
)

INTERPRETING = os.environ.get("TRITON_INTERPRET") == "1"
ROUTE_BLOCK = 128  # slots per program of the routing kernels
SCAN_ROWS = 16  # per-block histograms summed at once by scan_counts
TRACE_INTS = tl.constexpr(7)  # per tile: epilogues, expert, pid_m, pid_n, first row, row end, program


@dataclass(frozen=True)
class Routing:
    """The slots sorted by expert.  counts[e]: expert e's rows; offsets[e]: the end of its rows in
    sorted order (torch._grouped_mm's offs); sorted_slots[pos]: the slot at sorted position pos;
    slot_pos[s]: where slot s went.  checked: made by route(), so its invariants hold."""

    counts: torch.Tensor
    offsets: torch.Tensor
    sorted_slots: torch.Tensor
    slot_pos: torch.Tensor
    num_tokens: int
    top_k: int
    checked: bool = False

    @property
    def num_experts(self):
        return self.counts.numel()


# ----------------------------------------------------------------------------------------------
# §2.1, §2.3 Routing as a counting sort: histogram, exclusive scan, stable scatter (T6.1)
# ----------------------------------------------------------------------------------------------
@triton.jit
def count_experts(ids_ptr, block_counts_ptr, num_slots, num_experts, BLOCK: tl.constexpr, E_BLOCK: tl.constexpr):
    """block_counts[b, e] (rows of E_BLOCK) = how many of slots b*BLOCK .. b*BLOCK+BLOCK-1 chose expert e."""
    # ---- T6.1 begin (§2.1) ----
    b = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    ids = tl.load(ids_ptr + b * BLOCK + lanes, mask=b * BLOCK + lanes < num_slots, other=-1)
    experts = tl.arange(0, E_BLOCK)
    onehot = (ids[:, None] == experts[None, :]) & (experts[None, :] < num_experts)
    tl.store(block_counts_ptr + b * E_BLOCK + experts, tl.sum(onehot.to(tl.int32), axis=0))
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
    while b < num_blocks:
        row = tl.load(block_counts_ptr + b * E_BLOCK + experts)
        tl.store(block_base_ptr + b * E_BLOCK + experts, total)
        total = total + row
        b += 1
    ends = tl.cumsum(total, axis=0)
    keep = experts < num_experts
    tl.store(offsets_ptr + experts, ends, mask=keep)
    tl.store(counts_ptr + experts, total, mask=keep)
    # ---- T6.1 end ----


@triton.jit
def scatter_slots(ids_ptr, block_base_ptr, counts_ptr, offsets_ptr, sorted_slots_ptr, slot_pos_ptr, num_slots,
                  num_experts, BLOCK: tl.constexpr, E_BLOCK: tl.constexpr):
    """Put each slot of block b at its sorted position: its expert's first row, plus the slots of
    that expert in earlier blocks (block_base), plus those earlier in this block.  Stable: within an
    expert the slots keep their order."""
    # ---- T6.1 begin (§2.1) ----
    b = tl.program_id(0)
    s = b * BLOCK + tl.arange(0, BLOCK)
    inside = s < num_slots
    ids = tl.load(ids_ptr + s, mask=inside, other=-1)
    experts = tl.arange(0, E_BLOCK)
    onehot = ((ids[:, None] == experts[None, :]) & inside[:, None]).to(tl.int32)
    running = tl.cumsum(onehot, axis=0) - onehot  # per expert, how many earlier lanes chose it
    rank = tl.sum(running * onehot, axis=1)
    ok = inside & (ids >= 0) & (ids < num_experts)
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
    if check_ids and bool(((topk_ids < 0) | (topk_ids >= num_experts)).any()):
        raise ValueError(f"topk_ids: some ids are not in range(num_experts={num_experts})")
    # ---- T6.1 end ----


def route(topk_ids, num_experts, *, check_ids=True):
    """The Routing of topk_ids [T, top_k] over num_experts experts: three launches, no host sync
    (but check_ids's look at the ids; pass check_ids=False under CUDA graph capture)."""
    check_routing_inputs(topk_ids, num_experts, check_ids and not _capturing(topk_ids))
    tokens, top_k = topk_ids.shape
    slots = tokens * top_k
    dev = topk_ids.device
    ids = topk_ids.reshape(-1)  # a view where it can be: the caller's tensor is only read
    e_block = max(2, triton.next_power_of_2(num_experts))
    blocks = triton.cdiv(slots, ROUTE_BLOCK)
    counts = torch.zeros(num_experts, device=dev, dtype=torch.int32)
    offsets = torch.zeros(num_experts, device=dev, dtype=torch.int32)
    sorted_slots = torch.empty(slots, device=dev, dtype=torch.int32)
    slot_pos = torch.empty(slots, device=dev, dtype=torch.int32)
    if slots:
        block_counts = torch.empty((blocks, e_block), device=dev, dtype=torch.int32)
        block_base = torch.empty_like(block_counts)
        launches = (
            (count_experts, (blocks,), (ids, block_counts, slots, num_experts, ROUTE_BLOCK, e_block)),
            (scan_counts, (1,), (block_counts, block_base, counts, offsets, blocks, num_experts, SCAN_ROWS, e_block)),
            (scatter_slots, (blocks,), (ids, block_base, counts, offsets, sorted_slots, slot_pos, slots, num_experts,
                                        ROUTE_BLOCK, e_block)),
        )
        launch_in_order(route_key(topk_ids, num_experts), launches, dev)
    return Routing(counts, offsets, sorted_slots, slot_pos, tokens, top_k, checked=True)


def _capturing(t):
    return t.is_cuda and torch.cuda.is_current_stream_capturing()


_route_plans = {}  # route_key -> route's three kernels, compiled


def route_key(topk_ids, num_experts):
    """What route's launches hang on (the ids' shape, strides, dtype, device, alignment; the expert
    count), or None while the suite stands in for one of its kernels, watching the launch."""
    if not all(isinstance(k, triton.runtime.JITFunction) for k in (count_experts, scan_counts, scatter_slots)):
        return None
    return tensor_key(topk_ids), num_experts


def launch_in_order(key, launches, device):
    """Each (kernel, grid, arguments) launched in turn: through kernel[grid] the first time, then, on
    a GPU with no launch hook set, the compiled kernels directly, without Triton's argument binding (§6.4)."""
    compiled = _route_plans.get(key) if key is not None else None
    if compiled is not None and no_launch_hooks():
        for kernel, (_, grid, args) in zip(compiled, launches, strict=True):
            run_compiled(kernel, grid, device, args)
        return
    made = [kernel[grid](*args) for kernel, grid, args in launches]
    if key is not None and device.type == "cuda" and None not in made:
        _route_plans[key] = made


# ----------------------------------------------------------------------------------------------
# §3.3 One global tile index over ragged groups (T6.2)
# ----------------------------------------------------------------------------------------------
@triton.jit
def expert_tile_counts(counts_ptr, num_experts, num_pid_n, BLOCK_M: tl.constexpr, E_BLOCK: tl.constexpr):
    """(m_blocks, tile_ends), vectors of E_BLOCK lanes: each expert's m-blocks, cdiv(count, BLOCK_M)
    (0 past num_experts), and the inclusive cumulative sum of its tiles, m_blocks * num_pid_n (so
    past num_experts, the total: only the first num_experts lanes are read as experts')."""
    # ---- T6.2 begin (§3.3) ----
    lanes = tl.arange(0, E_BLOCK)
    rows = tl.where(lanes < num_experts, tl.load(counts_ptr + lanes, mask=lanes < num_experts), 0)
    m_blocks = (rows + BLOCK_M - 1) // BLOCK_M
    tile_ends = tl.cumsum(m_blocks, axis=0) * num_pid_n
    # ---- T6.2 end ----
    return m_blocks, tile_ends


@triton.jit
def locate_tile(tile_id, m_blocks, tile_ends, num_pid_n, GROUP_M: tl.constexpr, E_BLOCK: tl.constexpr):
    """(expert, pid_m, pid_n) of global tile tile_id < the last of tile_ends: the expert whose tiles
    hold it, and its place among them: T4's grouped order through your tile_coords, or any order
    that gives each of the expert's tiles once (§3.3)."""
    # ---- T6.2 begin (§3.3) ----
    lanes = tl.arange(0, E_BLOCK)
    starts = tile_ends - m_blocks * num_pid_n
    hit = (starts <= tile_id) & (tile_id < tile_ends)
    expert = tl.max(tl.where(hit, lanes, -1), axis=0)
    local = tile_id - tl.max(tl.where(hit, starts, 0), axis=0)
    rows_of_tiles = tl.max(tl.where(hit, m_blocks, 0), axis=0)
    pid_m = local % rows_of_tiles  # down a column of tiles first: another order within the expert
    pid_n = local // rows_of_tiles
    # ---- T6.2 end ----
    return expert, pid_m, pid_n


# ----------------------------------------------------------------------------------------------
# §4.1, §4.2 A's rows gathered, the expert's weights by TMA (T6.3)
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
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = x_ptr + x_rows[:, None] * stride_xm + offs_k[None, :] * stride_xk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(tl.cdiv(K, BLOCK_K)):
        left = K - kb * BLOCK_K
        a = tl.load(a_ptrs, mask=live[:, None] & (offs_k[None, :] < left), other=0.0)
        w_box = w_desc.load([w_row, kb * BLOCK_K])
        acc += tl.dot(a, tl.trans(w_box))
        a_ptrs += BLOCK_K * stride_xk
    # ---- T6.3 end ----
    return acc


# ----------------------------------------------------------------------------------------------
# §4.3 Masks and the epilogue: the routing weights (T6.3)
# ----------------------------------------------------------------------------------------------
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
    """(gate, up): float32 x[x_rows] @ w2d[gate_row : +BLOCK_N].T and @ w2d[up_row : +BLOCK_N].T,
    each A box loaded once for both."""
    # ---- T6.4 begin (§5.1) ----
    offs_k = tl.arange(0, BLOCK_K)
    g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(tl.cdiv(K, BLOCK_K)):
        k = kb * BLOCK_K + offs_k
        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + k[None, :] * stride_xk,
                    mask=live[:, None] & (k[None, :] < K), other=0.0)
        wg = w_desc.load([gate_row, kb * BLOCK_K])
        wu = w_desc.load([up_row, kb * BLOCK_K])
        g += tl.dot(a, tl.trans(wg))
        u += tl.dot(a, tl.trans(wu))
    gate, up = g, u
    # ---- T6.4 end ----
    return gate, up


@triton.jit
def swiglu(gate, up):
    """silu(gate) * up = gate * sigmoid(gate) * up, in float32."""
    # ---- T6.4 begin (§5.1) ----
    return up * (gate / (1.0 + tl.exp(-gate)))
    # ---- T6.4 end ----


# ----------------------------------------------------------------------------------------------
# §3 One tile's work, and the trace the tests read (given: nothing to write here)
# ----------------------------------------------------------------------------------------------
# TRACE = 0: compute.  1: compute and record.  2: record only (no loads, no stores), so the tile
# schedule is tested without T6.3.  The trace holds TRACE_INTS int32 per global tile id.
@triton.jit
def tile_product(x_ptr, w_desc, sorted_slots_ptr, row_begin, row_end, expert, pid_n, N, K, stride_xm, stride_xk,
                 TOP_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 X_SORTED: tl.constexpr, ACTIVATION: tl.constexpr, TRACE: tl.constexpr):
    """The float32 tile of sorted rows row_begin .. row_end-1 of `expert`, columns pid_n*BLOCK_N ..:
    x's gathered rows times the expert's weights (SwiGLU of gate and up for "swiglu")."""
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
    """The tile's epilogue, recorded in the trace."""
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


# ----------------------------------------------------------------------------------------------
# §3.2, §3.4 The persistent loop over every expert's tiles (T6.2)
# ----------------------------------------------------------------------------------------------
@triton.jit
def grouped_tiles(x_ptr, w_desc, out_ptr, weights_ptr, sorted_slots_ptr, counts_ptr, offsets_ptr, trace_ptr,
                  N, K, num_experts, stride_xm, stride_xk, stride_om, stride_on, NUM_PROGS,
                  TOP_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, E_BLOCK: tl.constexpr, X_SORTED: tl.constexpr, HAS_WEIGHTS: tl.constexpr,
                  BY_SLOT: tl.constexpr, ACTIVATION: tl.constexpr, TRACE: tl.constexpr, FLATTEN: tl.constexpr):
    """Program p does global tiles p, p + NUM_PROGS, ... below the total that the counts give (read
    here, on the device): each at its (expert, pid_m, pid_n), on the expert's sorted rows
    first_row + pid_m*BLOCK_M .. cut at the expert's end: tile_product, then finish_tile.
    FLATTEN: a speed hint for the GPU, tl.range(..., flatten=FLATTEN) (§3.4); the CPU ignores it."""
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
               BY_SLOT: tl.constexpr, ACTIVATION: tl.constexpr, TRACE: tl.constexpr, FLATTEN: tl.constexpr):
    grouped_tiles(x_ptr, w_desc, out_ptr, weights_ptr, sorted_slots_ptr, counts_ptr, offsets_ptr, trace_ptr,
                  N, K, num_experts, stride_xm, stride_xk, stride_om, stride_on, NUM_PROGS, TOP_K,
                  BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, E_BLOCK, X_SORTED, HAS_WEIGHTS, BY_SLOT, ACTIVATION, TRACE,
                  FLATTEN)


# ----------------------------------------------------------------------------------------------
# §4.4 A deterministic combine over the top-k (T6.3)
# ----------------------------------------------------------------------------------------------
@triton.jit
def combine_topk(by_slot_ptr, out_ptr, N, TOP_K: tl.constexpr, BLOCK_N: tl.constexpr):
    """out[t, cols] = by_slot[t*TOP_K + 0, cols] + ... + by_slot[t*TOP_K + TOP_K-1, cols], summed in
    float32 in that order (program (t, column block)), stored in out's dtype; both are [rows, N]."""
    # ---- T6.3 begin (§4.4) ----
    token = tl.program_id(0)
    n = tl.arange(0, BLOCK_N) + tl.program_id(1) * BLOCK_N
    rows = by_slot_ptr + token * TOP_K * N + n
    total = tl.load(rows, mask=n < N, other=0.0).to(tl.float32)
    for j in range(1, TOP_K):
        total = total + tl.load(rows + j * N, mask=n < N, other=0.0).to(tl.float32)
    tl.store(out_ptr + token * N + n, total.to(out_ptr.dtype.element_ty), mask=n < N)
    # ---- T6.3 end ----


# ----------------------------------------------------------------------------------------------
# §4 The checks on the host (T6.3)
# ----------------------------------------------------------------------------------------------
def check_expert_inputs(x, w, routing, topk_weights=None, activation=None, x_sorted=False):
    """Raise a ValueError (TypeError for a wrong type) naming the argument: x 2-D [rows, K], w 3-D
    [E, N, K] (2N rows for "swiglu"), one floating dtype (fp16, bf16, fp32) and one device for x and
    w, a Routing over E experts for x's tokens, topk_weights [tokens, top_k] floating on that device;
    a Routing not made by route() (checked false) goes on to check_offsets (a host sync: not route's)."""
    # ---- T6.3 begin (§4) ----
    if not (torch.is_tensor(x) and torch.is_tensor(w)):
        raise TypeError("grouped_matmul expects tensors for x and w")
    if type(routing).__name__ != "Routing":
        raise TypeError("routing: pass what route() returned")
    if x.ndim != 2 or w.ndim != 3:
        raise ValueError(f"shapes: x {tuple(x.shape)} must be 2-D and w {tuple(w.shape)} 3-D")
    if x.dtype != w.dtype or x.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"dtypes: x is {x.dtype}, w is {w.dtype}; they must match (fp16, bf16 or fp32)")
    if x.device != w.device:
        raise ValueError(f"devices: x is on {x.device}, w is on {w.device}")
    E, rows_w, k_w = w.shape
    if k_w != x.shape[1] or E != routing.num_experts:
        raise ValueError(f"w of shape {tuple(w.shape)} does not fit x {tuple(x.shape)} "
                         f"and {routing.num_experts} experts")
    if activation is not None and (activation != "swiglu" or rows_w % 2 == 1):
        raise ValueError(f"activation={activation!r} with w's {rows_w} rows")
    expected = routing.num_tokens * (routing.top_k if x_sorted else 1)
    if x.shape[0] != expected:
        raise ValueError(f"x: {x.shape[0]} rows given, {expected} expected")
    for part in (routing.counts, routing.offsets, routing.sorted_slots, routing.slot_pos):
        if part.dtype != torch.int32 or part.device != x.device:
            raise ValueError("routing: its tensors must be int32 on x's device")
    if topk_weights is not None and (
        not torch.is_floating_point(topk_weights) or topk_weights.shape != (routing.num_tokens, routing.top_k)
        or topk_weights.device != x.device
    ):
        raise ValueError(f"topk_weights: want {(routing.num_tokens, routing.top_k)} floats on {x.device}")
    if not routing.checked:
        if routing.sorted_slots.numel() != routing.num_tokens * routing.top_k:
            raise ValueError(f"routing: {routing.sorted_slots.numel()} sorted slots for {routing.num_tokens} tokens")
        ends = routing.offsets.tolist()
        if ends != sorted(ends) or (ends and ends[-1] != routing.sorted_slots.numel()) or ends != [
                sum(routing.counts.tolist()[: i + 1]) for i in range(len(ends))]:
            raise ValueError(f"routing.offsets {ends[:16]} are not the running row ends of the counts")
    # ---- T6.3 end ----


def check_offsets(routing):
    """A hand-made Routing's offsets: non-decreasing, each the previous plus the expert's count,
    the last one the number of slots, num_tokens * top_k (a host sync: route()'s own routings skip it)."""
    offsets, counts = routing.offsets.long().cpu(), routing.counts.long().cpu()
    slots = routing.sorted_slots.numel()
    if slots != routing.num_tokens * routing.top_k or routing.slot_pos.numel() != slots:
        raise ValueError(f"grouped_matmul: routing has {slots} sorted slots and {routing.slot_pos.numel()} slot "
                         f"positions for num_tokens * top_k = {routing.num_tokens * routing.top_k}")
    if (counts < 0).any() or (offsets.diff() < 0).any():
        raise ValueError(f"grouped_matmul: routing.offsets must not decrease, got {offsets.tolist()[:16]}")
    if offsets.numel() and (int(offsets[-1]) != slots or not torch.equal(offsets, counts.cumsum(0))):
        raise ValueError(f"grouped_matmul: routing.offsets must be the running sum of counts ending at "
                         f"{slots} rows, got {offsets.tolist()[:16]}")


# ----------------------------------------------------------------------------------------------
# Block sizes (tuned on the H200 by content/t6.md §6: change the table and pick_config only)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    BLOCK_M: int = 64
    BLOCK_N: int = 128
    BLOCK_K: int = 64
    GROUP_M: int = 8
    num_warps: int = 4
    num_stages: int = 3
    FLATTEN: bool = False  # tl.range(..., flatten=True): the next tile's loads overlap this tile's epilogue


CONFIGS = {
    "interpret": Config(16, 32, 32, 2, 4, 1),  # the CPU: small boxes, several tiles per expert
    "few": Config(16, 256, 128, 8, 4, 3),  # at most 16 rows per expert: read the weights fast
    "some": Config(64, 256, 64, 8, 8, 4),  # at most 64 rows per expert, or 64-row blocks waste less
    "many": Config(128, 256, 64, 8, 8, 4, True),  # measured: 128 x 256 tiles beat 128 x 128 by 1.3-1.4x;
}  # flatten: Mixtral 4096 (a tuning case) 0.90 -> 0.94 of grouped_mm, H200 2026-12-02 (t6 §6).  Not with
# SwiGLU (not measured) nor a combine: its float32 tile's epilogue beside a flattened pipeline asks
# 327,712 B of shared memory, past the H200's 232,448 (measured)


def pick_config(rows, N, K, num_experts, dtype, sms, activation=None):
    """The block sizes for `rows` sorted rows over num_experts experts, N x K weights each."""
    if INTERPRETING:
        return CONFIGS["interpret"]
    per_expert = rows / max(1, num_experts)
    padded = {bm: -(-per_expert // bm) * bm for bm in (64, 128)}  # an expert's rows in whole m-blocks
    wide = per_expert > 64 and padded[128] <= 1.1 * padded[64]
    cfg = CONFIGS["few" if per_expert <= 16 else "many" if wide else "some"]
    if dtype == torch.float32:  # 4-byte elements: half the k-box in the same shared memory
        cfg = Config(cfg.BLOCK_M, cfg.BLOCK_N, max(32, cfg.BLOCK_K // 2), cfg.GROUP_M, cfg.num_warps, 3)
    if activation == "swiglu":  # two accumulators (gate, up): half the columns keeps them in registers
        cfg = Config(cfg.BLOCK_M, max(64, cfg.BLOCK_N // 2), cfg.BLOCK_K, cfg.GROUP_M, cfg.num_warps, cfg.num_stages)
    return cfg


# ----------------------------------------------------------------------------------------------
# §1, §4 The host wrappers (given)
# ----------------------------------------------------------------------------------------------
def grouped_matmul(x, w, routing, topk_weights=None, *, combine=False, activation=None, x_sorted=False,
                   config=None, num_programs=None, trace=None):
    """One persistent launch over every expert's tiles.  x [T, K] (or [T*top_k, K] in sorted order
    with x_sorted); w [E, N, K] as nn.Linear stores it ([E, 2F, K], gate rows then up rows, for
    activation="swiglu", giving F columns).  Returns [T*top_k, N] in sorted order, scaled by
    topk_weights [T, top_k] where given; with combine, [T, N]: each token's top_k rows summed.
    trace: int32 zeros, TRACE_INTS per tile of upper_bound_tiles (tests).
    A later call of the same kind (shapes, strides, dtypes, devices, alignment, options, and a
    routing made by route()) launches from the first one's plan, on a GPU (t6 §6)."""
    key = plan_key(x, w, routing, topk_weights, combine, activation, x_sorted, config, num_programs, trace)
    plan = _plans.get(key) if key is not None else None
    if plan is not None:
        return plan.launch(x, w, routing, topk_weights)
    check_expert_inputs(x, w, routing, topk_weights, activation, x_sorted)
    experts, w_rows, K = w.shape
    N = w_rows // 2 if activation == "swiglu" else w_rows
    slots = routing.sorted_slots.numel()
    out_rows = routing.num_tokens if combine else slots
    sms = num_programs or num_sms(x.device)
    cfg = config or pick_config(slots, N, K, experts, x.dtype, sms, activation)
    out = torch.empty((slots, N), device=x.device, dtype=torch.float32 if combine else x.dtype)
    if slots == 0 or N == 0 or K == 0:
        return torch.zeros((out_rows, N), device=x.device, dtype=x.dtype)
    w2d = w.reshape(experts * w_rows, K)  # a view of a contiguous w: TMA reads the caller's weights
    if tma_problem(w2d, "w") is not None:
        w2d, key = aligned_copy(w2d), None  # e.g. fp16 with K not a multiple of 8
    w_desc = TensorDescriptor.from_tensor(w2d, [cfg.BLOCK_N, cfg.BLOCK_K])
    tiles = upper_bound_tiles(slots, N, experts, cfg)
    programs = persistent_grid(tiles, sms)
    weights = topk_weights.reshape(-1) if topk_weights is not None else out
    args = dict(
        x_ptr=x, w_desc=w_desc, out_ptr=out, weights_ptr=weights, sorted_slots_ptr=routing.sorted_slots,
        counts_ptr=routing.counts, offsets_ptr=routing.offsets, trace_ptr=out if trace is None else trace, N=N, K=K,
        num_experts=experts, stride_xm=x.stride(0), stride_xk=x.stride(1), stride_om=out.stride(0),
        stride_on=out.stride(1), NUM_PROGS=programs, TOP_K=routing.top_k, BLOCK_M=cfg.BLOCK_M, BLOCK_N=cfg.BLOCK_N,
        BLOCK_K=cfg.BLOCK_K, GROUP_M=cfg.GROUP_M, E_BLOCK=max(2, triton.next_power_of_2(experts)), X_SORTED=x_sorted,
        HAS_WEIGHTS=topk_weights is not None, BY_SLOT=combine, ACTIVATION=activation or "none",
        TRACE=0 if trace is None else 1, FLATTEN=cfg.FLATTEN and activation is None and not combine)
    options = dict(num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    kernel = moe_kernel[(programs,)](**args, **options)
    if key is not None and kernel is not None and x.is_cuda and list(args) == list(moe_kernel.arg_names):
        _plans[key] = GroupedPlan(kernel, args, options, x.dtype if combine else None)
    return combined(out, out_rows, N, routing.top_k, x.dtype) if combine else out


def combined(by_slot, rows, N, top_k, dtype):
    """[rows, N] in dtype: each token's top_k float32 rows of by_slot summed by combine_topk."""
    y = torch.empty((rows, N), device=by_slot.device, dtype=dtype)
    block_n = min(1024, triton.next_power_of_2(N))
    combine_topk[(rows, triton.cdiv(N, block_n))](by_slot, y, N, top_k, block_n)
    return y


# ----------------------------------------------------------------------------------------------
# §6 Plans: a later call of one kind, launched without Triton's argument binding (given)
# ----------------------------------------------------------------------------------------------
_plans = {}  # plan_key -> GroupedPlan
ROUTING_TENSORS = ("counts", "offsets", "sorted_slots", "slot_pos")


def plan_key(x, w, routing, topk_weights, combine, activation, x_sorted, config, num_programs, trace):
    """What grouped_matmul's checks and choices read, or None (no plan): with a trace, or a routing
    not made by route() (its offsets are checked on the host at every call), or a kernel stood in for
    (the suite watching the launch)."""
    if trace is not None or not isinstance(routing, Routing) or not routing.checked:
        return None
    if not isinstance(moe_kernel, triton.runtime.JITFunction) or not isinstance(combine_topk,
                                                                                triton.runtime.JITFunction):
        return None
    try:
        key = (tensor_key(x), tensor_key(w), tensor_key(topk_weights),
               *(tensor_key(getattr(routing, name)) for name in ROUTING_TENSORS), routing.num_tokens,
               routing.top_k, combine, activation, x_sorted, config, num_programs)
        hash(key)
    except (AttributeError, TypeError):  # not tensors, say: check_expert_inputs names what is wrong
        return None
    return key


class GroupedPlan:
    """The first call's launch again, with this call's tensors and the first call's numbers (the key
    fixes them): the compiled moe_kernel run without Triton's argument binding, the weights' tensor
    map kept per address as T5's Plan keeps its operands' (t5.perf §2).  Where a launch hook is set,
    through moe_kernel[grid] as the first call; where this Triton's launcher is not 3.6's kind,
    through the compiled kernel's own launcher."""

    TENSORS = ("x_ptr", "w_desc", "out_ptr", "weights_ptr", "sorted_slots_ptr", "counts_ptr", "offsets_ptr",
               "trace_ptr")

    def __init__(self, kernel, args, options, combine_dtype):
        self.kernel, self.options, self.combine_dtype = kernel, options, combine_dtype
        out, self.box = args["out_ptr"], args["w_desc"].block_shape
        self.out, self.device, self.programs = (out.shape, out.dtype), out.device, args["NUM_PROGS"]
        self.rest = [value for name, value in args.items() if name not in self.TENSORS]  # held: no tensor
        self.raw = RawLaunch.of(kernel, [self.box])  # the weights' tensor map kept per address

    def descriptor(self, w):
        w2d = w.reshape(-1, w.shape[-1])
        return TensorDescriptor(w2d, list(w2d.shape), list(w2d.stride()), self.box)

    def launch(self, x, w, routing, topk_weights):
        out = torch.empty(self.out[0], device=self.device, dtype=self.out[1])
        weights = out if topk_weights is None else topk_weights.reshape(-1)
        rows = (out, weights, routing.sorted_slots, routing.counts, routing.offsets, out)  # out again: the trace
        if not no_launch_hooks():  # a profiler's hook: the public launch, which calls it
            moe_kernel[(self.programs,)](x, self.descriptor(w), *rows, *self.rest, **self.options)
        elif self.raw is not None:
            self.raw.launch(self.programs, self.device, (x,), (w.reshape(-1, w.shape[-1]),), *rows, *self.rest)
        else:
            run_compiled(self.kernel, (self.programs,), self.device, (x, self.descriptor(w), *rows, *self.rest))
        if self.combine_dtype is None:
            return out
        return combined(out, routing.num_tokens, self.out[0][1], routing.top_k, self.combine_dtype)


def upper_bound_tiles(slots, N, experts, cfg):
    """At least the tiles any routing of `slots` rows gives: each non-empty expert wastes less than
    one m-block, so sum of cdiv(count_e, BM) <= cdiv(slots, BM) + min(E, slots)."""
    return (triton.cdiv(slots, cfg.BLOCK_M) + min(experts, slots)) * triton.cdiv(N, cfg.BLOCK_N)


def moe_mlp(x, w_gate_up, w_down, topk_ids, topk_weights, *, config=None):
    """An MoE layer's experts: y[t] = sum over j of topk_weights[t, j] * down_e(silu(gate_e x) * up_e x),
    e = topk_ids[t, j]; w_gate_up [E, 2F, K], w_down [E, K', F].  Two grouped launches (and the combine)."""
    # ---- T6.4 begin (§5.2) ----
    r = route(topk_ids, num_experts=w_gate_up.shape[0])
    h = grouped_matmul(x, w_gate_up, r, None, activation="swiglu", config=config)
    return grouped_matmul(h, w_down, r, topk_weights=topk_weights, x_sorted=True, combine=True, config=config)
    # ---- T6.4 end ----
