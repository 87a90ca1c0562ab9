"""Lesson T4: a fast matrix multiply in Triton (your file: fill in the marked bodies).

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
    raise NotImplementedError("T4.1 tile_coords: map pid to (pid_m, pid_n) in grouped order; read §2 in content/t4.md or content/t4.en.md")
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
    raise NotImplementedError("T4.2 mainloop: build the A and B pointer blocks, then loop over K into a float32 acc; read §3 and §4 in content/t4.md or content/t4.en.md")
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
    if HAS_BIAS or ACTIVATION != "none":
        raise NotImplementedError("T4.5 bias_and_activation: add the bias, then apply GELU; read §5.2 in content/t4.md or content/t4.en.md")
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
    raise NotImplementedError("T4.3 epilogue: cast acc and store it into C with a mask; read §5.1 in content/t4.md or content/t4.en.md")
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
AUTOTUNE_CONFIGS = []  # T4.4: a list of triton.Config; read §6.1
INTERPRET_CONFIG = None  # T4.4: one small triton.Config for TRITON_INTERPRET
matmul_kernel_autotuned = None  # T4.4: triton.autotune(configs=..., key=[...])(matmul_kernel)
# ---- T4.4 end ----


# ----------------------------------------------------------------------------------------------
# §6 The host wrapper (T4.4)
# ----------------------------------------------------------------------------------------------
SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
ACTIVATIONS = (None, "gelu")


def check_inputs(a, b, bias=None, activation=None):
    """Raise TypeError or ValueError, naming what is wrong, unless matmul can run on these."""
    # ---- T4.4 begin (§6.3) ----
    raise NotImplementedError("T4.4 check_inputs: refuse bad inputs with TypeError or ValueError; read §6.3 in content/t4.md or content/t4.en.md")
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
    raise NotImplementedError("T4.4 matmul: allocate C, build the grid from meta and launch the kernel; read §6.2 in content/t4.md or content/t4.en.md")
    # ---- T4.4 end ----
    return c
