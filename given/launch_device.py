"""Launch on the inputs' GPU (given: read it, nothing to write here).

Triton launches a kernel on the *current* CUDA device and its current stream, whatever device the
tensors are on (triton/runtime/jit.py reads `driver.active.get_current_device()`; triton issues 310
and 2441).  A model split over GPUs (Hugging Face's `device_map="auto"`, pipeline stages) calls a
layer with its tensors on cuda:1 while cuda:0 is still current: the kernel would then be compiled
for, and launched on, cuda:0 with cuda:1's addresses, which fails or faults (the same report for
Liger-Kernel: its issue 1303).  torch.matmul switches to its inputs' device by itself; so does each
public call of the lessons, through the decorator below.  It costs one device query per call when
the device is already right (the common case), and a switch there and back when it is not.
"""
import functools

import torch


def gpu_to_switch_to(args, kwargs):
    """The index of the GPU of the call's first tensor argument when that GPU is not the current
    device, else None (CPU tensors, no tensor, or the right device already current)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            if not value.is_cuda:
                return None
            index = value.get_device()
            return None if index == torch.cuda.current_device() else index
    return None


def on_inputs_device(fn):
    """fn, called with its first tensor argument's GPU current (and that GPU's current stream), and
    the caller's device current again afterwards."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        index = gpu_to_switch_to(args, kwargs)
        if index is None:
            return fn(*args, **kwargs)
        with torch.cuda.device(index):
            return fn(*args, **kwargs)

    return call
