"""Lesson T5: a persistent GEMM with TMA and stream-K (a correct solution in another style, for make check).

The reference is solutions/t5_persistent.py; this one computes the same with other code in the learner's bodies.
"""
import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from given import t5_host  # the host side, given: read it there (this file's last banner)

# The T4 of the same side (yours in mine/); matmul (given/t5_host.py) calls check_inputs on this module.
from .t4_matmul import bias_and_activation, check_inputs, tile_coords  # noqa: F401


# ----------------------------------------------------------------------------------------------
# §2.2 How many programs (T5.1)
# ----------------------------------------------------------------------------------------------
def persistent_grid(num_tiles, num_sms):
    """The number of persistent programs: one per SM, but never more than there are tiles."""
    # ---- T5.1 begin (§2.2) ----
    return num_tiles if num_tiles < num_sms else num_sms  # an SM per program, no idle programs
    # ---- T5.1 end ----


# ----------------------------------------------------------------------------------------------
# §3.1 The k loop over TMA descriptors (T5.2)
# ----------------------------------------------------------------------------------------------
@triton.jit
def k_block_loop(a_desc, b_desc, off_m, off_n, kb_begin, kb_end,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, B_KMAJOR: tl.constexpr):
    """float32 sum over k-blocks kb_begin .. kb_end-1 of A[off_m:+BM, kb*BK:+BK] @ B[kb*BK:+BK, off_n:+BN].

    B_KMAJOR: b_desc describes B^T, an (N, K) row-major tensor (b.t() of a contiguous one).
    """
    # ---- T5.2 begin (§3.1) ----
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(kb_begin * BLOCK_K, kb_end * BLOCK_K, BLOCK_K):  # the k offsets, not the block numbers
        a = tl.load_tensor_descriptor(a_desc, (off_m, k0))  # the functional form of a_desc.load([...])
        if B_KMAJOR:
            b = tl.trans(tl.load_tensor_descriptor(b_desc, (off_n, k0)))  # a [BLOCK_N, BLOCK_K] box of B^T
        else:
            b = tl.load_tensor_descriptor(b_desc, (k0, off_n))
        acc += tl.dot(a, b)  # TMA fills what lies past A and B with zeros: no mask
    # ---- T5.2 end ----
    return acc


# ----------------------------------------------------------------------------------------------
# §3.3 The store through a descriptor, and §5 its sub-tiled form (T5.2, T5.4)
# ----------------------------------------------------------------------------------------------
@triton.jit
def store_tile(c_desc, acc, bias_ptr, N, stride_bias, pid_m, pid_n,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr,
               HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr):
    """C[tile] = act(acc + bias) in C's dtype, stored through c_desc (rows and columns past M and N
    are clipped by the store).  c_desc's box is [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE]."""
    if EPILOGUE_SUBTILE == 2:
        # ---- T5.4 begin (§5) ----
        HALF: tl.constexpr = BLOCK_N // 2
        halves = tl.split(tl.trans(tl.reshape(acc, (BLOCK_M, 2, HALF)), (0, 2, 1)))  # columns [0, HALF), [HALF, BN)
        for h in tl.static_range(2):  # half h is a tile of width HALF, number 2 * pid_n + h
            part = bias_and_activation(halves[h], bias_ptr, N, stride_bias, 2 * pid_n + h, HALF, HAS_BIAS, ACTIVATION)
            tl.store_tensor_descriptor(c_desc, (pid_m * BLOCK_M, (2 * pid_n + h) * HALF), part.to(c_desc.dtype))
        # ---- T5.4 end ----
    else:
        # ---- T5.2 begin (§3.3) ----
        out = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)
        tl.store_tensor_descriptor(c_desc, (pid_m * BLOCK_M, pid_n * BLOCK_N), out.to(c_desc.dtype))  # clipped at M, N
        # ---- T5.2 end ----


# ----------------------------------------------------------------------------------------------
# §2.3 One tile's work, and the trace the tests read (given: nothing to write here)
# ----------------------------------------------------------------------------------------------
# TRACE = 0: compute.  1: compute and count.  2: count only (no loads, no stores), so the tile
# loop and the stream-K split are tested without the TMA step.  The trace holds 5 int32 per tile:
# epilogues, k-blocks summed, the program that ran the epilogue, pid_m, pid_n.
@triton.jit
def k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, kb_begin, kb_end,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, B_KMAJOR: tl.constexpr,
              TRACE: tl.constexpr):
    """The float32 sum of k-blocks kb_begin .. kb_end-1 of tile (pid_m, pid_n), counted in the trace."""
    if TRACE == 2:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    else:
        acc = k_block_loop(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, kb_begin, kb_end,
                           BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR)
    if TRACE != 0:
        tl.atomic_add(trace_ptr + 5 * tile_id + 1, kb_end - kb_begin)
    return acc


@triton.jit
def finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr,
                HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr, TRACE: tl.constexpr):
    """The epilogue of a whole tile, counted in the trace."""
    if TRACE != 2:
        store_tile(c_desc, acc, bias_ptr, N, stride_bias, pid_m, pid_n,
                   BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION)
    if TRACE != 0:
        tl.atomic_add(trace_ptr + 5 * tile_id, 1)
        tl.store(trace_ptr + 5 * tile_id + 2, tl.program_id(0))
        tl.store(trace_ptr + 5 * tile_id + 3, pid_m)
        tl.store(trace_ptr + 5 * tile_id + 4, pid_n)


# ----------------------------------------------------------------------------------------------
# §2.2 The persistent tile loop (T5.1)
# ----------------------------------------------------------------------------------------------
@triton.jit
def data_parallel_tiles(a_desc, b_desc, c_desc, bias_ptr, trace_ptr, N, K, stride_bias,
                        first_tile, num_tiles, num_pid_m, num_pid_n, NUM_PROGS,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr, B_KMAJOR: tl.constexpr,
                        HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr, FLATTEN: tl.constexpr,
                        TRACE: tl.constexpr):
    """Program p computes whole tiles first_tile + p, first_tile + p + NUM_PROGS, ... < num_tiles,
    each at the place T4's grouped order gives it: k_segment over all of K, then finish_tile.  The loop
    is tl.range(..., flatten=FLATTEN), FLATTEN passed on as the config gives it (§2.2; a test checks)."""
    # ---- T5.1 begin (§2.2) ----
    me = tl.program_id(0)
    kb_all = (K + BLOCK_K - 1) // BLOCK_K
    # the waves of NUM_PROGS tiles from first_tile: this program takes its place in each (the last may be short)
    for wave in tl.range(first_tile, num_tiles, NUM_PROGS, flatten=FLATTEN):
        tile = wave + me
        if tile < num_tiles:
            tm, tn = tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
            whole = k_segment(a_desc, b_desc, trace_ptr, tile, tm, tn, 0, kb_all,
                              BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)
            finish_tile(c_desc, whole, bias_ptr, trace_ptr, N, stride_bias, tile, tm, tn,
                        BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)
    # ---- T5.1 end ----


# ----------------------------------------------------------------------------------------------
# §4.1 Stream-K: who holds which k-block (T5.3)
# ----------------------------------------------------------------------------------------------
@triton.jit
def sk_run(pid, total, NUM_PROGS):
    """[begin, end) of program pid's run of the total k-blocks: the first total % NUM_PROGS
    programs get one block more than the others, and the runs lie end to end in pid order."""
    # ---- T5.3 begin (§4.1) ----
    short = total // NUM_PROGS
    longer = total - short * NUM_PROGS  # how many runs have short + 1 blocks
    # as if every run had short + 1 blocks, less one for each short run before
    begin = pid * (short + 1) - tl.maximum(pid - longer, 0)
    end = (pid + 1) * (short + 1) - tl.maximum(pid + 1 - longer, 0)
    # ---- T5.3 end ----
    return begin, end


@triton.jit
def sk_program_of(it, total, NUM_PROGS):
    """The program whose run holds global k-block `it` (the inverse of sk_run)."""
    # ---- T5.3 begin (§4.1) ----
    lo = it * 0  # bisection over the runs' starts: the last program whose run begins at or before `it`
    hi = lo + NUM_PROGS - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        mid_begin, _ = sk_run(mid, total, NUM_PROGS)
        lo, hi = tl.where(mid_begin <= it, mid, lo), tl.where(mid_begin <= it, hi, mid - 1)
    owner = lo
    # ---- T5.3 end ----
    return owner


# ----------------------------------------------------------------------------------------------
# §4.2 Stream-K: the deterministic fix-up (T5.3)
# ----------------------------------------------------------------------------------------------
@triton.jit
def sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Write this program's float32 partial tile to its own slot, then raise its flag to 1.  Slot p is
    partials[p*BLOCK_M*BLOCK_N : (p+1)*BLOCK_M*BLOCK_N], the tile row-major (§4.2): the tests read it so."""
    # ---- T5.3 begin (§4.2) ----
    slot = partials_ptr + pid * BLOCK_M * BLOCK_N
    r = tl.arange(0, BLOCK_M)
    c = tl.arange(0, BLOCK_N)
    # the slot is free once the last launch's owner put the flag back to 0: an atomic that only reads
    # it comes first (it raises nothing; the memory-order test must not take it for the raise)
    while tl.atomic_cas(flags_ptr + pid, 0, 0, sem="relaxed") != 0:
        pass
    tl.store(slot + r[:, None] * BLOCK_N + c[None, :], acc)
    tl.debug_barrier()  # the whole tile is written before anyone can see the flag
    tl.atomic_add(flags_ptr + pid, 1, sem="release")  # 0 -> 1: owners put it back to 0
    # ---- T5.3 end ----


@triton.jit
def sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Add the partials of programs first_pid .. pid-1 to acc, in that order, each once its flag
    is up (1); put each flag back to 0.  Return the whole tile's sum."""
    # ---- T5.3 begin (§4.2) ----
    tile = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    for src in range(first_pid, pid):  # every flag up first: an acquire read that leaves it as it is ...
        while tl.atomic_cas(flags_ptr + src, 1, 1, sem="acquire") != 1:
            pass
    for src in range(first_pid, pid):  # ... then the partials added in program order, each flag put back to 0
        acc += tl.load(partials_ptr + src.to(tl.int64) * (BLOCK_M * BLOCK_N) + tile, volatile=True)  # int64 slots
        tl.atomic_xchg(flags_ptr + src, 0, sem="relaxed")
    # ---- T5.3 end ----
    return acc


@triton.jit
def stream_k_tiles(a_desc, b_desc, c_desc, bias_ptr, trace_ptr, partials_ptr, flags_ptr, N, K, stride_bias,
                   sk_tiles, num_pid_m, num_pid_n, NUM_PROGS,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr, B_KMAJOR: tl.constexpr,
                   HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr, TRACE: tl.constexpr):
    """Tiles 0 .. sk_tiles-1: their k-blocks laid end to end, tile after tile, and cut into one run
    per program.  Walk the run from its end backwards, a tile's segment at a time: the program
    holding a tile's last k-block owns the tile (adds the others' partials, runs the epilogue);
    any other segment is published as a partial."""
    # ---- T5.3 begin (§4.2) ----
    me = tl.program_id(0)
    kpt = (K + BLOCK_K - 1) // BLOCK_K  # k-blocks per tile
    blocks = sk_tiles * kpt
    lo, hi = sk_run(me, blocks, NUM_PROGS)
    top_tile = (hi - 1) // kpt
    # the tiles this run touches, highest first: top_tile, top_tile - 1, ..., the tile of block lo
    segments = tl.where(hi > lo, top_tile - lo // kpt + 1, 0)
    for back in range(0, segments):
        tile = top_tile - back
        t0 = tile * kpt  # the tile's first global k-block
        t1 = t0 + kpt
        seg_lo = tl.maximum(lo, t0)
        seg_hi = tl.minimum(hi, t1)
        tm, tn = tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        part = k_segment(a_desc, b_desc, trace_ptr, tile, tm, tn, seg_lo - t0, seg_hi - t0,
                         BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)
        if seg_hi == t1:  # the tile's last k-block is ours: we finish it
            part = sk_collect_partials(part, partials_ptr, flags_ptr, sk_program_of(t0, blocks, NUM_PROGS), me,
                                       BLOCK_M, BLOCK_N)
            finish_tile(c_desc, part, bias_ptr, trace_ptr, N, stride_bias, tile, tm, tn,
                        BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)
        else:  # only possible on the first pass (the run's top segment): hand it to the owner
            sk_publish_partial(part, partials_ptr, flags_ptr, me, BLOCK_M, BLOCK_N)
    # ---- T5.3 end ----


# ----------------------------------------------------------------------------------------------
# §6.3 A decode step, turned around (given)
# ----------------------------------------------------------------------------------------------
@triton.jit
def swap_ab_tiles(a_desc, b_desc, c_desc, bias_ptr, trace_ptr, N, K, stride_bias, num_pid_m, num_pid_n, NUM_PROGS,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  EPILOGUE_SUBTILE: tl.constexpr, B_KMAJOR: tl.constexpr, HAS_BIAS: tl.constexpr,
                  ACTIVATION: tl.constexpr, TRACE: tl.constexpr):
    """Whole tiles, as data_parallel_tiles, for a short A (a decode step): the sum is taken turned
    around, acc_t = B_box^T @ A_box^T of shape [BLOCK_N, BLOCK_M], so that N fills the 64 rows a
    Hopper warp group multiplies at once (wgmma) and BLOCK_M can be 16.  Same boxes, same
    descriptors; the epilogue gets acc_t^T, the tile the right way round."""
    k_blocks = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_PROGS):
        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc_t = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
        if TRACE != 2:
            for kb in range(0, k_blocks):
                if B_KMAJOR:
                    b_t = b_desc.load([pid_n * BLOCK_N, kb * BLOCK_K])  # a [BLOCK_N, BLOCK_K] box of B^T
                else:
                    b_t = b_desc.load([kb * BLOCK_K, pid_n * BLOCK_N]).T
                acc_t = tl.dot(b_t, a_desc.load([pid_m * BLOCK_M, kb * BLOCK_K]).T, acc_t)
        if TRACE != 0:
            tl.atomic_add(trace_ptr + 5 * tile_id + 1, k_blocks)
        finish_tile(c_desc, acc_t.T, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,
                    BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)


# ----------------------------------------------------------------------------------------------
# §1 The kernel: the stream-K tiles first (all programs together), then whole tiles
# ----------------------------------------------------------------------------------------------
# The int arguments are not specialized on divisibility by 16: the descriptors carry the shapes,
# and one compiled kernel per config then serves every problem size.
@triton.jit(do_not_specialize=["M", "N", "K", "stride_bias", "sk_tiles", "NUM_PROGS"])
def t5_kernel(a_desc, b_desc, c_desc, bias_ptr, partials_ptr, flags_ptr, trace_ptr,
              M, N, K, stride_bias, sk_tiles, NUM_PROGS,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              GROUP_M: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr, B_KMAJOR: tl.constexpr,
              HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr, FLATTEN: tl.constexpr,
              USE_SK: tl.constexpr, SWAP_AB: tl.constexpr, TRACE: tl.constexpr, PDL: tl.constexpr):
    if PDL:  # §6.4: launched before the kernel ahead of it finished; touch no memory until it has
        tl.extra.cuda.gdc_wait()
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    if SWAP_AB:  # §6.3
        swap_ab_tiles(a_desc, b_desc, c_desc, bias_ptr, trace_ptr, N, K, stride_bias, num_pid_m, num_pid_n,
                      NUM_PROGS, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, EPILOGUE_SUBTILE, B_KMAJOR,
                      HAS_BIAS, ACTIVATION, TRACE)
    else:
        if USE_SK:
            stream_k_tiles(a_desc, b_desc, c_desc, bias_ptr, trace_ptr, partials_ptr, flags_ptr, N, K, stride_bias,
                           sk_tiles, num_pid_m, num_pid_n, NUM_PROGS, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
                           EPILOGUE_SUBTILE, B_KMAJOR, HAS_BIAS, ACTIVATION, TRACE)
        data_parallel_tiles(a_desc, b_desc, c_desc, bias_ptr, trace_ptr, N, K, stride_bias,
                            sk_tiles, num_pid_m * num_pid_n, num_pid_m, num_pid_n, NUM_PROGS,
                            BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, EPILOGUE_SUBTILE, B_KMAJOR,
                            HAS_BIAS, ACTIVATION, FLATTEN, TRACE)


# ----------------------------------------------------------------------------------------------
# §3.2 TMA's rules on the host (T5.2)
# ----------------------------------------------------------------------------------------------
def tma_problem(t, name):
    """None if TMA can read or write the 2-D tensor t as it is; else one line naming the tensor and
    the first rule it breaks, checked in this order: the last dimension contiguous (stride 1), the
    other stride a multiple of 16 bytes, the base address 16-byte aligned."""
    # ---- T5.2 begin (§3.2) ----
    itemsize = t.element_size()
    if t.stride(-1) != 1:
        return f"TMA needs {name} to be contiguous in its last dimension; its stride(1) is {t.stride(-1)}"
    pitch = t.stride(0) * itemsize
    if pitch % 16 != 0:
        return f"TMA cannot read {name} directly: its rows lie {pitch} bytes apart, not a multiple of 16 bytes"
    misalign = t.data_ptr() % 16
    if misalign:
        return f"{name} starts {misalign} bytes past a 16-byte boundary, where TMA cannot start a read"
    return None
    # ---- T5.2 end ----


def aligned_copy(t):
    """A copy of 2-D t whose rows start 128-byte aligned (the row pitch rounded up: TMA needs 16, and
    reads 128 fastest, §3.2), seen as a view of t's shape: the pad columns are never read."""
    rows, cols = t.shape
    per128 = 128 // t.element_size()
    buf = torch.empty((rows, max(per128, -(-cols // per128) * per128)), device=t.device, dtype=t.dtype)
    view = buf[:, :cols]
    view.copy_(t)
    return view


def tma_ready(a, b, fallback=True):
    """(a, b, b_kmajor): operands that keep TMA's rules.  b given as b.t() of a row-major (N, K)
    tensor is read K-major as it is (b_kmajor True, b returned as that (N, K) tensor).  Any other
    operand that breaks a rule is replaced by aligned_copy(), or, with fallback=False, refused with
    a ValueError naming the tensor and the rule."""
    # ---- T5.2 begin (§3.2) ----
    kmajor = b.stride(0) == 1 and tma_problem(b, "b") is not None and tma_problem(b.t(), "b") is None
    if kmajor:
        b = b.t()  # the (N, K) tensor itself: read in [BLOCK_N, BLOCK_K] boxes, never copied
    ready = []
    for label, operand in (("a", a), ("b", b)):
        why = tma_problem(operand, label)
        if why is not None and not fallback:
            raise ValueError(f"tma_ready refuses an operand ({why}); tma_fallback=True would copy it")
        if why is not None:  # a zeroed buffer, rows padded to 16 bytes, the operand assigned into its left part
            buf = operand.new_zeros(operand.shape[0], -(-operand.shape[1] * operand.element_size() // 16) * 16
                                    // operand.element_size())
            buf[:, : operand.shape[1]] = operand
            operand = buf[:, : operand.shape[1]]  # a view: its rows keep the padded pitch
        ready.append(operand)
    return ready + [kmajor]  # a list: matmul unpacks it as it would a tuple
    # ---- T5.2 end ----


def make_descriptors(a, b, c, b_kmajor, BLOCK_M, BLOCK_N, BLOCK_K, EPILOGUE_SUBTILE):
    """Host TensorDescriptors (a_desc, b_desc, c_desc): each is the tensor plus the box one load
    or store moves.  b_kmajor: b is the (N, K) tensor, read in [BLOCK_N, BLOCK_K] boxes."""
    # ---- T5.2 begin (§3.1) ----
    a_desc = TensorDescriptor(a, list(a.shape), list(a.stride()), [BLOCK_M, BLOCK_K])  # base, shape, strides, box
    b_desc = TensorDescriptor.from_tensor(b, (BLOCK_N, BLOCK_K) if b_kmajor else (BLOCK_K, BLOCK_N))  # a tuple box
    c_desc = TensorDescriptor(c, list(c.shape), list(c.stride()), [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])
    # ---- T5.2 end ----
    return a_desc, b_desc, c_desc


# ----------------------------------------------------------------------------------------------
# §4.3 The hybrid rule: how many tiles go to stream-K (T5.3)
# ----------------------------------------------------------------------------------------------
def stream_k_split(num_tiles, k_blocks, num_sms, mode):
    """(sk_tiles, programs).  mode "dp", or a single k-block whatever the mode: no stream-K.  "sk": every
    tile.  "auto": whole waves stay data-parallel; a last wave at least half full stays too; a thinner
    last wave is merged with one full wave (if there is one) and those tiles go to stream-K."""
    # ---- T5.3 begin (§4.3) ----
    chosen = 0
    if k_blocks > 1 and mode != "dp":
        waves, tail = divmod(num_tiles, num_sms)
        if mode == "sk":
            chosen = num_tiles
        elif tail and 2 * tail < num_sms:  # a thin last wave, with one full wave if there is one
            chosen = tail + num_sms * min(waves, 1)
    # a list: the host unpacks it as it would a tuple; at least one k-block per stream-K program
    return [chosen, min(num_sms, chosen * k_blocks) if chosen else persistent_grid(num_tiles, num_sms)]
    # ---- T5.3 end ----


# ----------------------------------------------------------------------------------------------
# §1 The host wrapper, §6 the configs (given: given/t5_host.py, given/t5_config.py)
# ----------------------------------------------------------------------------------------------
# Nothing to write here: the host side is the same for mine/ and solutions/, so it lives in given/.
# Bound to this module, it calls the functions above (and check_inputs) looked up here at each call,
# and sets here the names that the tests, the tools and T6 read: matmul, pick_config, Config, TUNED,
# num_sms, workspace, stream_k_plan, tensor_key, RawLaunch, run_compiled, ... (t5_host.bind).
host = t5_host.bind(sys.modules[__name__])
