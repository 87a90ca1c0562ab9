"""Lesson T4: a fast matrix multiply in Triton (a correct solution in another style, for make check).

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
    # Triton's own helper: pid's row-major (row, column) of tiles, swizzled into bands of GROUP_M rows
    pid_m, pid_n = tl.swizzle2d(pid // num_pid_n, pid % num_pid_n, num_pid_m, num_pid_n, GROUP_M)
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
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # pointers rebuilt from k0 each time instead of advanced, and K walked from its last piece down
    for k0 in range(tl.cdiv(K, BLOCK_K) * BLOCK_K - BLOCK_K, -1, -BLOCK_K):
        ks = k0.to(tl.int64) + tl.arange(0, BLOCK_K)  # int64 offsets, from a method of the loop's variable
        a_in = (rows[:, None] < M) & (ks[None, :] < K)
        b_in = (ks[:, None] < K) & (cols[None, :] < N)
        # no other=: the lanes a mask turns off are undefined, and tl.where makes them 0 after the load
        a = tl.where(a_in, tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak, mask=a_in), 0.0)
        b = tl.where(b_in, tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn, mask=b_in), 0.0)
        acc += tl.dot(a, b)
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
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        # an index inside the bias for every lane, so the load needs no mask; lanes past N get 0 after it
        row = tl.where(cols < N, tl.load(bias_ptr + tl.where(cols < N, cols, 0) * stride_bias), 0.0)
        acc += tl.expand_dims(row.to(tl.float32), 0)
    if ACTIVATION == "gelu":
        INV_SQRT2: tl.constexpr = 0.7071067811865476
        acc = acc * (0.5 + 0.5 * tl.erf(acc * INV_SQRT2))
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
    i = tl.arange(0, BLOCK_M * BLOCK_N)  # one lane per cell of the tile, row-major: a 1-D store
    rows = pid_m * BLOCK_M + i // BLOCK_N
    cols = pid_n * BLOCK_N + i % BLOCK_N
    out = c_ptr + rows * stride_cm + cols * stride_cn
    tl.store(out, tl.reshape(acc, (BLOCK_M * BLOCK_N,)).to(out.dtype.element_ty), mask=(rows < M) & (cols < N))
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
AUTOTUNE_CONFIGS = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s)
    for bm, bn, bk, w, s in ((128, 256, 64, 8, 3), (128, 128, 32, 4, 4), (64, 64, 32, 4, 3), (32, 32, 32, 2, 2))
]
INTERPRET_CONFIG = triton.Config({"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2}, num_warps=2, num_stages=1)


def _fit_hopper(configs, named_args, **kwargs):
    """fp32 inputs take twice fp16's shared memory: the configs that still fit an H100/H200 (§4.4)."""
    size = named_args["a_ptr"].element_size()
    fit = [c for c in configs if c.num_stages * (c.kwargs["BLOCK_M"] + c.kwargs["BLOCK_N"]) * c.kwargs["BLOCK_K"] * size
           <= 232448]
    return fit or list(configs)[-1:]


matmul_kernel_autotuned = triton.autotune(AUTOTUNE_CONFIGS, key=["K", "N", "M"],
                                          prune_configs_by={"early_config_prune": _fit_hopper})(matmul_kernel)
# ---- T4.4 end ----


# ----------------------------------------------------------------------------------------------
# §6 The host wrapper (T4.4)
# ----------------------------------------------------------------------------------------------
SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
ACTIVATIONS = (None, "gelu")


def check_inputs(a, b, bias=None, activation=None):
    """Raise TypeError or ValueError, naming what is wrong, unless matmul can run on these."""
    # ---- T4.4 begin (§6.3) ----
    if not all(isinstance(t, torch.Tensor) for t in (a, b) + (() if bias is None else (bias,))):
        kinds = [type(t).__name__ for t in (a, b, bias)]
        raise TypeError(f"matmul wants tensors, got {kinds}")
    named = [("a", a), ("b", b)] + ([("bias", bias)] if bias is not None else [])
    if len({t.dtype for _, t in named}) != 1 or a.dtype not in SUPPORTED_DTYPES:
        short = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32", torch.float64: "fp64"}
        raise TypeError("matmul: dtypes " + ", ".join(f"{n}={short.get(t.dtype, t.dtype)}" for n, t in named)
                        + " are not one and the same supported dtype")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"matmul: need 2-D a and b, got {a.shape} and {b.shape}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: a {list(a.shape)} and b {list(b.shape)} do not chain")
    if bias is not None and list(bias.shape) != [b.shape[1]]:
        raise ValueError(f"matmul: bias shape {tuple(bias.shape)} should be ({b.shape[1]},)")
    if activation not in ACTIVATIONS:
        raise ValueError(f"matmul: unknown activation {activation!r}")
    if len({t.device for _, t in named}) != 1:
        raise ValueError("matmul: devices " + ", ".join(f"{n}={t.device}" for n, t in named))
    if not INTERPRETING and not a.is_cuda:  # any tensor not on a GPU, as a learner may check it
        class NeedsInterpreter(ValueError):  # a ValueError of this file's own, as a learner may write one
            pass
        raise NeedsInterpreter("matmul: CPU tensors run only under TRITON_INTERPRET=1")
    if INTERPRETING and a.dtype == torch.bfloat16:
        raise TypeError("matmul: the interpreter's tl.dot gets BF16 wrong, so BF16 is refused there")
    if torch.is_grad_enabled() and any(t.requires_grad for _, t in named):
        raise ValueError("matmul 没有反向传播：开着梯度时不收需要梯度的张量（"  # a Chinese learner's own words
                         + "、".join(n for n, t in named if t.requires_grad) + "），先 detach 或关掉梯度再调用")
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
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    # without a bias, C stands in for its pointer: HAS_BIAS is False, so the kernel never reads it
    launch = dict(a_ptr=a, b_ptr=b, c_ptr=c, bias_ptr=c if bias is None else bias, M=M, N=N, K=K,
                  stride_am=a.stride(0), stride_ak=a.stride(1), stride_bk=b.stride(0), stride_bn=b.stride(1),
                  stride_cm=c.stride(0), stride_cn=c.stride(1), stride_bias=bias.stride(0) if bias is not None else 0,
                  HAS_BIAS=bias is not None, ACTIVATION="gelu" if activation == "gelu" else "none")
    chosen = config or (INTERPRET_CONFIG if INTERPRETING else None)
    if chosen is None:
        matmul_kernel_autotuned[grid](**launch)
    else:  # the block sizes, then the warps and stages, each spelled out
        matmul_kernel[grid](**launch, **chosen.kwargs, num_warps=chosen.num_warps, num_stages=chosen.num_stages)
    # ---- T4.4 end ----
    return c
