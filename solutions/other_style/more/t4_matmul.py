"""Lesson T4: a fast matrix multiply in Triton (one more correct solution in another style, for make check).

The reference is solutions/t4_matmul.py; solutions/other_style/t4_matmul.py is a first other style.
This one computes the same again with other code in the learner's bodies (tools/checks/other_styles.py runs it).
"""
import os

import torch
import triton
import triton.language as tl

from given.launch_device import on_inputs_device  # matmul launches on its inputs' GPU (given)
from given.t4_capture import tuned_outside_capture  # no autotuning inside a CUDA graph capture (given)
from given.t4_config import config_checked  # a config that is no triton.Config refused (given)

# ---- other style begin: no b_is_k_major (given/t4_layout.py): this mainloop reads B one way in both layouts
# ---- other style end
from given.t4_limits import within_int32_reach  # A and B past int32 offsets refused (given)

# Read once, at import: Triton itself decides at import time whether @triton.jit interprets.
INTERPRETING = os.environ.get("TRITON_INTERPRET") == "1"


# ----------------------------------------------------------------------------------------------
# §2 Grouped program order (T4.1)
# ----------------------------------------------------------------------------------------------
@triton.jit
def tile_coords(pid, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Return (pid_m, pid_n), the C tile that program `pid` computes, in grouped order.

    GROUP_M rows of tiles form a group; inside a group the ids run down a column first, then
    move right.  The last group may have fewer than GROUP_M rows.  GROUP_M = 1 is row-major.
    """
    # ---- T4.1 begin (§2) ----
    # the group's rows with tl.where, the column first, the position inside the group by subtraction
    in_group = GROUP_M * num_pid_n
    group = pid // in_group
    top = group * GROUP_M
    rows_here = tl.where(num_pid_m - top < GROUP_M, num_pid_m - top, GROUP_M)
    local = pid - group * in_group
    pid_n = local // rows_here
    pid_m = top + (local - pid_n * rows_here)
    # ---- T4.1 end ----
    return pid_m, pid_n


# ----------------------------------------------------------------------------------------------
# §3 2-D pointer blocks and §4 the main loop (T4.2)
# ----------------------------------------------------------------------------------------------
@triton.jit
def mainloop(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Return A[rows, :] @ B[:, cols] for tile (pid_m, pid_n) as a float32 [BLOCK_M, BLOCK_N].

    The tail past K must contribute zeros.  Rows past M and columns past N are never stored (the
    epilogue masks them), so they may hold anything: masked to zeros or wrapped around (§4).
    """
    # ---- T4.2 begin (§3, §4) ----
    # no masked loads: every lane reads inside A and B (indices clamped to the last row, column and k),
    # and tl.where puts 0 where the lane lies past K (rows past M and columns past N are never stored)
    rm = tl.minimum(pid_m * BLOCK_M + tl.arange(0, BLOCK_M), M - 1)
    rn = tl.minimum(pid_n * BLOCK_N + tl.arange(0, BLOCK_N), N - 1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        kk = tl.minimum(rk, K - 1)
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :] * stride_bn)
        acc += tl.dot(tl.where(rk[None, :] < K, a, 0.0), tl.where(rk[:, None] < K, b, 0.0))
    # ---- T4.2 end ----
    return acc


# ----------------------------------------------------------------------------------------------
# §5.2 Fused bias and GELU (T4.5, advanced)
# ----------------------------------------------------------------------------------------------
@triton.jit
def bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n,
                        BLOCK_N: tl.constexpr, HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr):
    """Return act(acc + bias[cols]) while the tile is still in registers.

    HAS_BIAS and ACTIVATION ("none" or "gelu") are compile-time constants, so the branches
    that do not apply are not even compiled.
    """
    # ---- T4.5 begin (§5.2) ----
    if HAS_BIAS:
        cols = tl.arange(0, BLOCK_N) + pid_n * BLOCK_N
        bias = tl.load(bias_ptr + cols * stride_bias, mask=cols < N)
        acc += tl.where(cols < N, bias.to(tl.float32), 0.0)[None, :]  # lanes past N: 0, set after the load
    if ACTIVATION == "gelu":
        acc = acc * 0.5 * (1.0 + tl.math.erf(acc / 1.4142135623730951))
    # ---- T4.5 end ----
    return acc


# ----------------------------------------------------------------------------------------------
# §5.1 The epilogue: cast and masked store (T4.3)
# ----------------------------------------------------------------------------------------------
@triton.jit
def epilogue(acc, c_ptr, M, N, stride_cm, stride_cn, pid_m, pid_n,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Write the float32 tile `acc` into C[rows, cols] in C's dtype, touching nothing else."""
    # ---- T4.3 begin (§5.1) ----
    # the masks as a where of two range checks, the pointers built from a row base and column offsets
    row_base = c_ptr + (pid_m * BLOCK_M + tl.arange(0, BLOCK_M))[:, None] * stride_cm
    col_off = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N))[None, :]
    ok = tl.where((pid_m * BLOCK_M + tl.arange(0, BLOCK_M))[:, None] < M, col_off < N, False)
    tl.store(row_base + col_off * stride_cn, value=acc.to(c_ptr.dtype.element_ty), mask=ok)
    # ---- T4.3 end ----


# ----------------------------------------------------------------------------------------------
# §1 The whole kernel: one program per BLOCK_M x BLOCK_N tile of C
# ----------------------------------------------------------------------------------------------
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, stride_bias,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = tile_coords(pid, num_pid_m, num_pid_n, GROUP_M)
    # C's strides as int64, so that your offsets times them are int64 too: past 2**31 elements (an LM
    # head's logits, 20,000 tokens x 128,256 words) an int32 offset wraps and the store faults (§5.1).
    stride_cm, stride_cn = tl.cast(stride_cm, tl.int64), tl.cast(stride_cn, tl.int64)
    acc = mainloop(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n,
                   BLOCK_M, BLOCK_N, BLOCK_K)
    acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)
    epilogue(acc, c_ptr, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N)


# ----------------------------------------------------------------------------------------------
# §6 Autotuning (T4.4)
# ----------------------------------------------------------------------------------------------
# ---- T4.4 begin (§6) ----
def _config(bm, bn, bk, group_m, warps, stages):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m),
                         num_warps=warps, num_stages=stages)


# Shared memory per config: stages * (BM*BK + BK*BN) * bytes per element (§4, make smem).
# Bytes below are for fp16/bf16; the GPUs named are the smallest common ones that fit.
AUTOTUNE_CONFIGS = [
    _config(128, 256, 64, 8, 8, 4),  # 196,608 B: H100/H200 only; the best large-shape tile there
    _config(128, 256, 64, 8, 8, 3),  # 147,456 B: A100
    _config(256, 128, 64, 8, 8, 3),  # 147,456 B: A100
    _config(128, 128, 64, 8, 8, 4),  # 131,072 B: A100
    _config(128, 256, 32, 8, 8, 4),  #  98,304 B: RTX 4090
    _config(32, 64, 128, 8, 4, 4),   #  98,304 B: RTX 4090; few rows, as in decoding
    _config(128, 128, 32, 8, 4, 4),  #  65,536 B: T4
    _config(64, 128, 32, 8, 4, 4),   #  49,152 B: T4
    _config(128, 64, 32, 8, 4, 4),   #  49,152 B: T4
    _config(64, 64, 32, 8, 4, 3),    #  24,576 B: T4, also in fp32 (49,152 B)
    _config(64, 32, 32, 8, 2, 5),    #  30,720 B: T4; small and skinny problems
]
# The interpreter runs one program at a time in numpy: timing means nothing there, and
# autotune cannot run without a GPU driver, so the CPU path uses this one small config.
INTERPRET_CONFIG = _config(32, 32, 32, 4, 4, 2)
# K is in the key: the best block shape for K = 64 is not the best for K = 8192.  stride_bn too:
# 1 for a row-major B, K for nn.Linear's W.t(), whose best config is another (t5.perf §5).
matmul_kernel_autotuned = triton.autotune(configs=AUTOTUNE_CONFIGS, key=["M", "N", "K", "stride_bn"])(matmul_kernel)
# ---- T4.4 end ----


# ----------------------------------------------------------------------------------------------
# §6 The host wrapper (T4.4)
# ----------------------------------------------------------------------------------------------
SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
ACTIVATIONS = (None, "gelu")


def check_inputs(a, b, bias=None, activation=None):
    """Raise TypeError or ValueError, naming what is wrong, unless matmul can run on these."""
    # ---- T4.4 begin (§6.3) ----
    given = [("a", a), ("b", b)] + ([] if bias is None else [("bias", bias)])
    for name, t in given:
        if not torch.is_tensor(t):
            raise TypeError(f"matmul: {name} is a {type(t).__name__}, not a tensor")
    if activation not in ACTIVATIONS:  # the arguments that are not tensors first
        raise ValueError(f"matmul: activation {activation!r} is not one of {ACTIVATIONS}")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"matmul: a is {a.dim()}-D, b {b.dim()}-D; both must be 2-D")  # the ranks, not the shapes
    if a.size(1) != b.size(0):
        raise ValueError(f"matmul: a.size(1) = {a.size(1)} != b.size(0) = {b.size(0)}")  # the two sizes that differ
    if bias is not None and (bias.dim() != 1 or bias.numel() != b.size(1)):
        raise ValueError(f"matmul: bias of shape {tuple(bias.shape)} for {b.size(1)} columns")
    for name, t in given:
        if t.dtype not in SUPPORTED_DTYPES or t.dtype != a.dtype:
            raise TypeError(f"matmul: {name} is a {t.type()} (a: {a.type()}); one floating type for all, 16 or 32-bit")
        if t.device != a.device:
            raise ValueError(f"matmul: {name} is on {t.device}, a on {a.device}")
    if not INTERPRETING and a.device.type != "cuda":
        raise ValueError("matmul: tensors on the CPU need TRITON_INTERPRET=1")
    if INTERPRETING and a.dtype is torch.bfloat16:
        raise TypeError("matmul: bf16 is refused on the interpreter, whose tl.dot gets it wrong")
    if torch.is_grad_enabled() and any(t.requires_grad for _, t in given):
        raise ValueError("matmul: no backward here; detach the inputs or call it under torch.no_grad()")
    # ---- T4.4 end ----


@on_inputs_device  # given: Triton launches on the current device, not the tensors' (given/launch_device.py)
@within_int32_reach  # given: an A or B past 2**31 - 1 elements' offsets is refused (given/t4_limits.py)
@tuned_outside_capture  # given: a shape's first call, which autotunes, refused inside a graph capture
@config_checked  # given: a config that is neither None nor a triton.Config refused (given/t4_config.py)
def matmul(a, b, *, bias=None, activation=None, config=None):
    """C = activation(a @ b + bias) computed by matmul_kernel, in the inputs' dtype.

    config: a triton.Config to launch the plain kernel with; by default INTERPRET_CONFIG under
    the interpreter and the autotuned kernel on a GPU.
    """
    check_inputs(a, b, bias, activation)
    # ---- T4.4 begin (§6.2) ----
    M, K = a.shape
    _, N = b.shape
    c = a.new_empty((M, N))  # every cell is written by the kernel
    if min(M, N) > 0:
        def grid(META):
            return (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]), 1, 1)
        kernel = matmul_kernel_autotuned
        extra = {}
        if config is not None or INTERPRETING:
            kernel = matmul_kernel
            chosen = config if config is not None else INTERPRET_CONFIG
            extra = dict(chosen.kwargs, num_warps=chosen.num_warps, num_stages=chosen.num_stages)
        kernel[grid](a, b, c, bias, M, N, K, *a.stride(), *b.stride(), *c.stride(),
                     bias.stride(0) if bias is not None else 0, HAS_BIAS=bias is not None,
                     ACTIVATION="none" if activation is None else activation, **extra)
    # ---- T4.4 end ----
    return c
