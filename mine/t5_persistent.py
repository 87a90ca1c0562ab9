"""Lesson T5: a persistent GEMM with TMA and stream-K (your file: fill in the marked bodies).

Read content/t5.md (中文) or content/t5.en.md (English) first: every banner below names the
section it implements.  mine/t5_persistent.py is this file with the learner's bodies cut out, so
`diff mine/t5_persistent.py solutions/t5_persistent.py` shows only code that a learner writes.
T5 builds on T4: the grouped order, the fused bias + GELU and the input checks come from YOUR t4_matmul.py.
The host side (matmul, the config choice, the plans, the launch) is given, the same for mine/ and
solutions/: given/t5_host.py and given/t5_config.py.  Read it there; this file's last banner binds it here.

The kernel computes C = act(A @ B + bias), with a fixed number of programs instead of one per tile:

    programs = min(#SMs, #tiles)                                       # §2.2  persistent_grid
    program p:
        tiles 0 .. sk_tiles-1 shared out by k-blocks (stream-K)        # §4    stream_k_tiles
        for tile in sk_tiles + p, sk_tiles + p + programs, ...:        # §2.2  data_parallel_tiles
            acc = sum over k-blocks of A_box @ B_box  (TMA loads)      # §3.1  k_block_loop
            C_box = act(acc + bias)  (a TMA store, clipped at the edges)  # §3.3, §5  store_tile

A decode step (M <= 64, mode "swap") takes the same tiles with acc = (B_box^T @ A_box^T)^T  # §6.3  swap_ab_tiles
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
    raise NotImplementedError("T5.1 persistent_grid: return how many persistent programs to launch; read §2.2 in content/t5.md or content/t5.en.md")
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
    raise NotImplementedError("T5.2 k_block_loop: sum A_box @ B_box over k-blocks kb_begin..kb_end-1, loaded through the descriptors; read §3.1 in content/t5.md or content/t5.en.md")
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
        raise NotImplementedError("T5.4 store_tile (EPILOGUE_SUBTILE=2): split the tile into two BLOCK_N/2 halves, bias+activation and store each; read §5 in content/t5.md or content/t5.en.md")
        # ---- T5.4 end ----
    else:
        # ---- T5.2 begin (§3.3) ----
        raise NotImplementedError("T5.2 store_tile: bias+activation, then store the tile through c_desc; read §3.3 in content/t5.md or content/t5.en.md")
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
    raise NotImplementedError("T5.1 data_parallel_tiles: loop over this program's tiles, first_tile + pid, + NUM_PROGS, ...; read §2.2 in content/t5.md or content/t5.en.md")
    # ---- T5.1 end ----


# ----------------------------------------------------------------------------------------------
# §4.1 Stream-K: who holds which k-block (T5.3)
# ----------------------------------------------------------------------------------------------
@triton.jit
def sk_run(pid, total, NUM_PROGS):
    """[begin, end) of program pid's run of the total k-blocks: the first total % NUM_PROGS
    programs get one block more than the others, and the runs lie end to end in pid order."""
    # ---- T5.3 begin (§4.1) ----
    raise NotImplementedError("T5.3 sk_run: [begin, end) of this program's run of k-blocks; read §4.1 in content/t5.md or content/t5.en.md")
    # ---- T5.3 end ----
    return begin, end


@triton.jit
def sk_program_of(it, total, NUM_PROGS):
    """The program whose run holds global k-block `it` (the inverse of sk_run)."""
    # ---- T5.3 begin (§4.1) ----
    raise NotImplementedError("T5.3 sk_program_of: the program whose run holds k-block it; read §4.1 in content/t5.md or content/t5.en.md")
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
    raise NotImplementedError("T5.3 sk_publish_partial: store the partial tile in this program's slot, then raise its flag; read §4.2 in content/t5.md or content/t5.en.md")
    # ---- T5.3 end ----


@triton.jit
def sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Add the partials of programs first_pid .. pid-1 to acc, in that order, each once its flag
    is up (1); put each flag back to 0.  Return the whole tile's sum."""
    # ---- T5.3 begin (§4.2) ----
    raise NotImplementedError("T5.3 sk_collect_partials: wait for and add the partials of first_pid..pid-1 in order; read §4.2 in content/t5.md or content/t5.en.md")
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
    raise NotImplementedError("T5.3 stream_k_tiles: walk this program's run of k-blocks backwards, tile segment by segment; read §4.2 in content/t5.md or content/t5.en.md")
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
    raise NotImplementedError("T5.2 tma_problem: name the TMA rule the tensor breaks, or return None; read §3.2 in content/t5.md or content/t5.en.md")
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
    raise NotImplementedError("T5.2 tma_ready: K-major b, aligned copies, or a ValueError naming the tensor and the rule; read §3.2 in content/t5.md or content/t5.en.md")
    # ---- T5.2 end ----


def make_descriptors(a, b, c, b_kmajor, BLOCK_M, BLOCK_N, BLOCK_K, EPILOGUE_SUBTILE):
    """Host TensorDescriptors (a_desc, b_desc, c_desc): each is the tensor plus the box one load
    or store moves.  b_kmajor: b is the (N, K) tensor, read in [BLOCK_N, BLOCK_K] boxes."""
    # ---- T5.2 begin (§3.1) ----
    raise NotImplementedError("T5.2 make_descriptors: TensorDescriptor.from_tensor for a, b and c with their boxes; read §3.1 in content/t5.md or content/t5.en.md")
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
    raise NotImplementedError("T5.3 stream_k_split: how many tiles go to stream-K, and how many programs run; read §4.3 in content/t5.md or content/t5.en.md")
    # ---- T5.3 end ----


# ----------------------------------------------------------------------------------------------
# §1 The host wrapper, §6 the configs (given: given/t5_host.py, given/t5_config.py)
# ----------------------------------------------------------------------------------------------
# Nothing to write here: the host side is the same for mine/ and solutions/, so it lives in given/.
# Bound to this module, it calls the functions above (and check_inputs) looked up here at each call,
# and sets here the names that the tests, the tools and T6 read: matmul, pick_config, Config, TUNED,
# num_sms, workspace, stream_k_plan, tensor_key, RawLaunch, run_compiled, ... (t5_host.bind).
host = t5_host.bind(sys.modules[__name__])
