"""Lesson T6: grouped GEMM for a mixture-of-experts layer (one more correct solution in another style, for make check).

The reference is solutions/t6_moe.py; solutions/other_style/t6_moe.py is a first other style.
This one computes the same again with other code in the learner's bodies (tools/checks/other_styles.py runs it).
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
    slot = tl.arange(0, BLOCK) + BLOCK * tl.program_id(0)
    expert = tl.arange(0, E_BLOCK)
    ids = tl.load(ids_ptr + slot, mask=slot < num_slots, other=num_experts)  # an id no expert has
    hit = (ids[:, None] == expert[None, :]) & (expert < num_experts)[None, :]
    tl.store(block_counts_ptr + tl.program_id(0) * E_BLOCK + expert, tl.sum(hit.to(tl.int32), axis=0))
    # ---- T6.1 end ----


@triton.jit
def scan_counts(block_counts_ptr, block_base_ptr, counts_ptr, offsets_ptr, num_blocks, num_experts,
                SCAN_ROWS: tl.constexpr, E_BLOCK: tl.constexpr):
    """One program.  counts[e]: the sum of block_counts[:, e]; offsets: the inclusive cumulative sum
    of counts (each expert's row end); block_base[b, e]: the sum of block_counts[:b, e], where block
    b's first slot of expert e goes within the expert's rows."""
    # ---- T6.1 begin (§2.1) ----
    cols = tl.arange(0, E_BLOCK)
    carry = tl.zeros((E_BLOCK,), dtype=tl.int32)
    start = 0
    while start < num_blocks:  # SCAN_ROWS rows at a time, lanes past num_blocks read as 0 by tl.where
        r = start + tl.arange(0, SCAN_ROWS)
        inside = (r < num_blocks)[:, None] & (cols >= 0)[None, :]
        tile = tl.where(inside, tl.load(block_counts_ptr + r[:, None] * E_BLOCK + cols[None, :], mask=inside), 0)
        incl = tl.cumsum(tile, axis=0)
        tl.store(block_base_ptr + r[:, None] * E_BLOCK + cols[None, :], carry[None, :] + incl - tile, mask=inside)
        carry = carry + tl.sum(tile, axis=0)
        start += SCAN_ROWS
    row_end = tl.zeros((E_BLOCK,), dtype=tl.int32)
    acc = 0
    for x in tl.static_range(E_BLOCK):  # the inclusive sum over experts, one lane at a time
        acc += tl.sum(tl.where(cols == x, carry, 0), axis=0)
        row_end = tl.where(cols == x, acc, row_end)
    tl.store(counts_ptr + cols, carry, mask=cols < num_experts)
    tl.store(offsets_ptr + cols, row_end, mask=cols < num_experts)
    # ---- T6.1 end ----


@triton.jit
def scatter_slots(ids_ptr, block_base_ptr, counts_ptr, offsets_ptr, sorted_slots_ptr, slot_pos_ptr, num_slots,
                  num_experts, BLOCK: tl.constexpr, E_BLOCK: tl.constexpr):
    """Put each slot of block b at its sorted position: its expert's first row, plus the slots of that expert in
    earlier blocks (block_base), plus those earlier in this block.  Stable: an expert's slots keep their order."""
    # ---- T6.1 begin (§2.1) ----
    slot = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = slot < num_slots
    ids = tl.load(ids_ptr + slot, mask=live, other=0)
    live = live & (ids >= 0) & (ids < num_experts)
    e = tl.where(live, ids, 0)
    rank = tl.zeros((BLOCK,), dtype=tl.int32)
    for x in tl.static_range(E_BLOCK):  # one expert at a time: its lanes numbered 0, 1, ... in lane order
        chose = live & (e == x)
        rank = tl.where(chose, tl.cumsum(chose.to(tl.int32), axis=0) - 1, rank)
    base = tl.load(block_base_ptr + tl.program_id(0) * E_BLOCK + e, mask=live, other=0)
    start = tl.load(offsets_ptr + e, mask=live, other=0) - tl.load(counts_ptr + e, mask=live, other=0)
    tl.store(slot_pos_ptr + slot, start + base + rank, mask=live)
    tl.store(sorted_slots_ptr + start + base + rank, slot, mask=live)
    # ---- T6.1 end ----


def check_routing_inputs(topk_ids, num_experts, check_ids=True):
    """Raise a ValueError (TypeError for a wrong type) naming the argument when topk_ids is not a
    2-D integer tensor, num_experts not a positive int, or (check_ids) an id is outside [0, num_experts)."""
    # ---- T6.1 begin (§2.3) ----
    if not torch.is_tensor(topk_ids):
        raise TypeError(f"route: topk_ids is a {type(topk_ids).__name__}; a 2-D integer tensor is wanted")
    if type(num_experts) is not int or num_experts <= 0:  # bool is an int subclass, refused by type() too
        raise ValueError(f"route: num_experts = {num_experts!r}; a positive int is wanted")
    kind = topk_ids.dtype
    if topk_ids.ndim != 2 or kind == torch.bool or kind.is_floating_point or kind.is_complex:
        raise ValueError(f"route: topk_ids is {topk_ids.dtype} of shape {list(topk_ids.shape)}; "
                         "a 2-D integer tensor [tokens, top_k] is wanted")
    if check_ids and topk_ids.numel() > 0:
        outside = (topk_ids < 0) | (topk_ids >= num_experts)
        if outside.any().item():  # the one look at the ids: a host sync
            neg = bool((topk_ids < 0).any())  # ids >= 0 but too many: named by num_experts alone, as one may word it
            raise ValueError("route: topk_ids holds negative expert ids" if neg else
                             f"route: expert {int(topk_ids.max())} is not below num_experts = {num_experts}")
    # ---- T6.1 end ----


# ----------------------------------------------------------------------------------------------
# §3.3 One global tile index over ragged groups (T6.2)
# ----------------------------------------------------------------------------------------------
# ---- other style begin: a helper of this style's own
@triton.jit
def _plus(a, b):
    return a + b
# ---- other style end


@triton.jit
def expert_tile_counts(counts_ptr, num_experts, num_pid_n, BLOCK_M: tl.constexpr, E_BLOCK: tl.constexpr):
    """(m_blocks, tile_ends), vectors of E_BLOCK lanes: each expert's m-blocks, cdiv(count, BLOCK_M) (0 past
    num_experts), and the inclusive cumulative sum of its tiles, m_blocks * num_pid_n (so past num_experts, the
    total: only the first num_experts lanes are read as experts')."""
    # ---- T6.2 begin (§3.3) ----
    lane = tl.arange(0, E_BLOCK)
    rows = tl.where(lane < num_experts, tl.load(counts_ptr + lane, mask=lane < num_experts, other=0), 0)
    m_blocks = (rows + (BLOCK_M - 1)) // BLOCK_M
    tile_ends = tl.associative_scan(m_blocks * num_pid_n, 0, _plus)
    # ---- T6.2 end ----
    return m_blocks, tile_ends


@triton.jit
def locate_tile(tile_id, m_blocks, tile_ends, num_pid_n, GROUP_M: tl.constexpr, E_BLOCK: tl.constexpr):
    """(expert, pid_m, pid_n) of global tile tile_id < the last of tile_ends: the expert whose tiles hold it, and
    its place among them: T4's grouped order through your tile_coords, or any order giving each of its tiles once."""
    # ---- T6.2 begin (§3.3) ----
    # the first expert whose tiles end past tile_id: argmax of a 0/1 vector gives its first 1
    expert = tl.argmax((tile_ends > tile_id).to(tl.int32), axis=0)
    lane = tl.arange(0, E_BLOCK)
    mb = tl.max(tl.where(lane == expert, m_blocks, 0), axis=0)
    end = tl.max(tl.where(lane == expert, tile_ends, 0), axis=0)
    pid_m, pid_n = tile_coords(tile_id - (end - mb * num_pid_n), mb, num_pid_n, GROUP_M)
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
    # the rows not live are left as they come: every read of x through them is masked off by live
    x_rows = rows if X_SORTED else tl.load(sorted_slots_ptr + rows, mask=live) // TOP_K
    # ---- T6.3 end ----
    return x_rows, live


@triton.jit
def gathered_product(x_ptr, w_desc, x_rows, live, w_row, K, stride_xm, stride_xk,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """float32 [BLOCK_M, BLOCK_N]: x[x_rows, :] @ w2d[w_row : w_row + BLOCK_N, :].T, with w2d the
    (E*N, K) weights read by TMA through w_desc (box [BLOCK_N, BLOCK_K]) and x's rows not live as 0."""
    # ---- T6.3 begin (§4.2) ----
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    rows = tl.where(live, x_rows, 0)  # a row of x for every lane: the lanes not live read row 0, then count 0
    for k0 in tl.range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(x_ptr + rows[:, None] * stride_xm + tl.minimum(ks, K - 1)[None, :] * stride_xk)
        a = tl.where(live[:, None] & (ks < K)[None, :], a, tl.zeros_like(a))
        acc = tl.dot(a, w_desc.load([w_row, k0]).T, acc)
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
    slots = tl.load(sorted_slots_ptr + rows, mask=live)  # lanes not live: undefined, never used unmasked
    if HAS_WEIGHTS:
        acc *= tl.load(weights_ptr + slots, mask=live)[:, None].to(tl.float32)
    if BY_SLOT:
        rows = slots
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on, acc.to(out_ptr.dtype.element_ty),
             mask=live[:, None] & (cols[None, :] < N))
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
    up = tl.zeros_like(gate)
    for kb in tl.range(0, tl.cdiv(K, BLOCK_K)):
        k = kb * BLOCK_K + tl.arange(0, BLOCK_K)
        ok = live[:, None] & (k < K)[None, :]
        a = tl.where(ok, tl.load(x_ptr + x_rows[:, None] * stride_xm + k[None, :] * stride_xk, mask=ok), 0.0)
        g = w_desc.load([gate_row, kb * BLOCK_K])
        u = w_desc.load([up_row, kb * BLOCK_K])
        up = tl.dot(a, tl.permute(u, (1, 0)), acc=up)
        gate = tl.dot(a, tl.permute(g, (1, 0)), acc=gate)
    # ---- T6.4 end ----
    return gate, up


@triton.jit
def swiglu(gate, up):
    """silu(gate) * up = gate * sigmoid(gate) * up, in float32."""
    # ---- T6.4 begin (§5.1) ----
    return up * gate / (1.0 + tl.exp(-gate))
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
    pid = tl.program_id(0)
    n_tiles_n = tl.cdiv(N, BLOCK_N)
    m_blocks, tile_ends = expert_tile_counts(counts_ptr, num_experts, n_tiles_n, BLOCK_M, E_BLOCK)
    total = tl.sum(tl.where(tl.arange(0, E_BLOCK) == E_BLOCK - 1, tile_ends, 0), axis=0)  # the last lane: the total
    mine = tl.cdiv(tl.maximum(total - pid, 0), NUM_PROGS)
    for i in tl.range(0, mine, flatten=FLATTEN):
        g = pid + i * NUM_PROGS
        e, pm, pn = locate_tile(g, m_blocks, tile_ends, n_tiles_n, GROUP_M, E_BLOCK)
        cnt = tl.load(counts_ptr + e)
        r0 = tl.load(offsets_ptr + e) - cnt + pm * BLOCK_M
        r1 = tl.where(cnt - pm * BLOCK_M < BLOCK_M, r0 + cnt - pm * BLOCK_M, r0 + BLOCK_M)
        acc = tile_product(x_ptr, w_desc, sorted_slots_ptr, r0, r1, e, pn, N, K, stride_xm, stride_xk, TOP_K,
                           BLOCK_M, BLOCK_N, BLOCK_K, X_SORTED, ACTIVATION, TRACE)
        finish_tile(out_ptr, acc, weights_ptr, sorted_slots_ptr, trace_ptr, g, e, pm, pn, r0, r1, N, stride_om,
                    stride_on, HAS_WEIGHTS, BY_SLOT, BLOCK_M, BLOCK_N, TRACE)
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
    tok = tl.program_id(0)
    n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row = by_slot_ptr + tok * TOP_K * N
    y = tl.load(row + n, mask=n < N, other=0.0).to(tl.float32)  # j = 0 ...
    for j in range(1, TOP_K):  # ... then j = 1, 2, ... added in order
        y = y + tl.load(row + j * N + n, mask=n < N, other=0.0).to(tl.float32)
    tl.store(out_ptr + tok * N + n, y.to(out_ptr.dtype.element_ty), mask=n < N)
    # ---- T6.3 end ----


def check_expert_inputs(x, w, routing, topk_weights=None, activation=None, x_sorted=False):
    """Raise a ValueError (TypeError for a wrong type) naming the argument: x 2-D [rows, K], w 3-D [E, N, K] (2N
    rows for "swiglu"), one floating dtype (fp16, bf16, fp32) and one device for x and w, a Routing over E experts
    for x's tokens, topk_weights [tokens, top_k] floating on that device; a Routing not made by route() (checked
    false) goes on to check_offsets (a host sync: not route's)."""
    # ---- T6.3 begin (§4) ----
    for label, given in (("x", x), ("w", w), ("topk_weights", topk_weights)):
        if (given is not None or label != "topk_weights") and not torch.is_tensor(given):
            raise TypeError(f"grouped_matmul: {label} is a {type(given).__name__}, not a tensor")
    if type(routing) is not Routing and not isinstance(routing, Routing):
        raise TypeError(f"grouped_matmul: routing is a {type(routing).__name__}; route() makes a Routing")
    if activation is not None and activation != "swiglu":
        raise ValueError(f"grouped_matmul: activation {activation!r}: None or 'swiglu'")
    if (x.ndim, w.ndim) != (2, 3):
        raise ValueError(f"grouped_matmul: x {list(x.shape)} must be [rows, K], w {list(w.shape)} [E, N, K]")
    if {x.dtype, w.dtype} - {torch.float16, torch.bfloat16, torch.float32} or x.dtype != w.dtype:
        raise ValueError(f"grouped_matmul: x is {x.dtype}, w is {w.dtype}: one of fp16, bf16, fp32 for both")
    if x.device != w.device:
        raise ValueError(f"grouped_matmul: x on {x.device}, w on {w.device}")
    n_experts, n_rows, k_w = w.shape
    if k_w != x.shape[1]:
        raise ValueError(f"grouped_matmul: w's K is {k_w}, x's K is {x.shape[1]}")
    if n_experts != routing.num_experts:
        raise ValueError(f"grouped_matmul: w holds {n_experts} experts, the routing {routing.num_experts}")
    if activation == "swiglu" and n_rows % 2 != 0:
        raise ValueError(f"grouped_matmul: swiglu's w holds gate and up rows, an even number; got {n_rows}")
    want = routing.num_tokens * routing.top_k if x_sorted else routing.num_tokens
    if x.shape[0] != want:
        raise ValueError(f"grouped_matmul: x has {x.shape[0]} rows; this routing wants {want}")
    for field in ("counts", "offsets", "sorted_slots", "slot_pos"):
        part = getattr(routing, field)
        if part.dim() != 1 or part.dtype != torch.int32 or part.device != x.device:
            raise ValueError(f"grouped_matmul: routing.{field} is {part.dtype} {list(part.shape)} on {part.device}")
    if topk_weights is not None and (not topk_weights.dtype.is_floating_point or topk_weights.device != x.device
                                     or topk_weights.shape != (routing.num_tokens, routing.top_k)):
        raise ValueError(f"grouped_matmul: topk_weights {topk_weights.dtype} {list(topk_weights.shape)} on "
                         f"{topk_weights.device}: floating [{routing.num_tokens}, {routing.top_k}] on {x.device}")
    if not routing.checked:
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
    num_experts = w_gate_up.shape[0]
    routing = route(topk_ids, num_experts)
    h = grouped_matmul(x, w_gate_up, routing, None, activation="swiglu", config=config)
    return grouped_matmul(h, w_down, routing, topk_weights=topk_weights, x_sorted=True, combine=True, config=config)
    # ---- T6.4 end ----


# given/t6_host.py's bind sets Config, CONFIGS, pick_config, upper_bound_tiles and this file's plans here
host = t6_host.bind(sys.modules[__name__])
route, grouped_matmul = host.route, host.grouped_matmul  # they launch the kernels above; moe_mlp calls them
