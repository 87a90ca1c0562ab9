"""Lesson T4: a fast matrix multiply in Triton (reference solution).

Read content/t4.md (中文) or content/t4.en.md (English) first: every banner below names the
section it implements.  mine/t4_matmul.py is this file with the learner's bodies cut out, so
`diff mine/t4_matmul.py solutions/t4_matmul.py` shows only code that a learner writes: the
lines between a `---- T4.x begin` and a `---- T4.x end` marker.

The kernel computes C = act(A @ B + bias) for A of shape (M, K) and B of shape (K, N):

    for every tile (pid_m, pid_n) of C, in grouped order:          # §2  tile_coords
        acc = zeros(BLOCK_M, BLOCK_N, float32)
        for k in 0, BLOCK_K, 2*BLOCK_K, ... < K:                    # §3, §4  mainloop
            acc += A[rows, k:k+BLOCK_K] @ B[k:k+BLOCK_K, cols]
        acc = act(acc + bias[cols])                                  # §5.2  bias_and_activation
        C[rows, cols] = acc.to(C.dtype)                              # §5.1  epilogue
"""
import os

import torch
import triton
import triton.language as tl

from given.launch_device import on_inputs_device  # matmul launches on its inputs' GPU (given)
from given.t4_capture import tuned_outside_capture  # no autotuning inside a CUDA graph capture (given)
from given.t4_config import config_checked  # a config that is no triton.Config refused (given)
from given.t4_layout import b_is_k_major  # B's layout, known when compiling (given; the reference's speed)
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
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)  # the last group may be short
    pid_in_group = pid % num_pid_in_group
    pid_m = first_pid_m + pid_in_group % group_size_m
    pid_n = pid_in_group // group_size_m
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
    # §3: one row offset per row of the tile, one column offset per column; broadcasting
    # [BLOCK_M, 1] against [1, BLOCK_K] gives a [BLOCK_M, BLOCK_K] block of addresses.
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    # §4: march both blocks along K; masked lanes load 0.0 and so add nothing to the dot.
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # ---- speed only begin (t4 §4.6, t5.perf §5): mistakes are planted with these lines cut ----
    if b_is_k_major(stride_bk, stride_bn):  # nn.Linear's W.t(), known when compiling (given/t4_layout.py)
        # Rows and columns wrapped with % are real values that the epilogue never stores, so every whole
        # BLOCK_K step loads without a mask; the loop below is then left the tail of K alone.
        a_ptrs = a_ptr + (offs_m % M)[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + (offs_n % N)[None, :] * stride_bn
        for _ in range(0, K // BLOCK_K):
            acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        K = K % BLOCK_K
    # ---- speed only end ----
    k_steps = tl.cdiv(K, BLOCK_K)
    for k in range(0, k_steps):
        k_remaining = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_remaining) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # acc += a @ b on tensor cores, accumulating in float32
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
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
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)
        acc = acc + bias.to(tl.float32)[None, :]  # one bias value per column of C
    if ACTIVATION == "gelu":
        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))  # exact GELU: x * Phi(x)
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
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)
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
    tensors = {"a": a, "b": b} if bias is None else {"a": a, "b": b, "bias": bias}
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"matmul: {name} must be a torch.Tensor, got {type(t).__name__}")
    dtypes = {name: t.dtype for name, t in tensors.items()}
    if any(d not in SUPPORTED_DTYPES for d in dtypes.values()) or len(set(dtypes.values())) > 1:
        raise TypeError(f"matmul: inputs must share one dtype out of float16, bfloat16, float32; got {dtypes}")
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"matmul: a and b must be 2-D, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    if bias is not None and tuple(bias.shape) != (b.shape[1],):
        raise ValueError(f"matmul: bias must have shape ({b.shape[1]},), got {tuple(bias.shape)}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"matmul: activation must be one of {ACTIVATIONS}, got {activation!r}")
    devices = {name: str(t.device) for name, t in tensors.items()}
    if len(set(devices.values())) > 1:
        raise ValueError(f"matmul: inputs are on different devices: {devices}")
    if a.device.type == "cpu" and not INTERPRETING:
        raise ValueError("matmul: CPU tensors need Triton's interpreter: set TRITON_INTERPRET=1 "
                         "before triton is imported, or move the tensors to a GPU")
    if a.dtype == torch.bfloat16 and INTERPRETING:
        raise TypeError("matmul: bfloat16 is refused under TRITON_INTERPRET: the interpreter's tl.dot "
                        "multiplies bf16 bit patterns (triton issue 11584); use float16 or float32 on CPU")
    needs_grad = [name for name, t in tensors.items() if t.requires_grad]
    if needs_grad and torch.is_grad_enabled():  # C would come back without a grad_fn: gradients silently lost
        raise ValueError(f"matmul: {', '.join(needs_grad)} require grad, and matmul has no backward: call it "
                         "under torch.no_grad() or torch.inference_mode(), or pass .detach()ed tensors")
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
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if M == 0 or N == 0:
        return c  # no tiles, so no programs to launch
    # The grid is a function of the config: only the launcher knows which BLOCK_M and BLOCK_N run.
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    args = (a, b, c, bias, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1), 0 if bias is None else bias.stride(0))
    flags = dict(HAS_BIAS=bias is not None, ACTIVATION=activation or "none")
    if config is None and INTERPRETING:
        config = INTERPRET_CONFIG
    if config is None:
        matmul_kernel_autotuned[grid](*args, **flags)
    else:
        matmul_kernel[grid](*args, **config.all_kwargs(), **flags)
    # ---- T4.4 end ----
    return c
