"""What T4's kernel can address (given: read it, nothing to write here).

T4 computes pointer offsets as `offs * stride`, in int32 wherever Triton types the values int32 (an
integer argument that fits, `tl.arange`): past 2**31 - 1 they wrap.  The given matmul_kernel makes C's
strides int64, since C is what grows past that in a real model (an LM head's logits over a long
prefill); making A's and B's int64 too cost 3-13 % of T4's time on the H200 (content/t4.md §5.1), so
an A or a B whose largest offset passes 2**31 - 1 (a 4 GB fp16 operand) is refused here with a clear
error instead of a fault.  T5 reads through TMA descriptors, which hold 64-bit strides: it takes them.
"""
import functools

import torch

INT32_REACH = 2**31 - 1


def reach(t, past=0):
    """The largest element offset a tensor's cells lie at (0 for an expanded tensor's stride 0); with
    `past`, that of a cell `past` places beyond the last along every dimension, as masked lanes of a
    block that sticks out of the tensor form (T6's host asks that, given/t6_host.py)."""
    return sum((size - 1 + past) * abs(stride) for size, stride in zip(t.shape, t.stride(), strict=True) if size)


def within_int32_reach(fn):
    """fn(a, b, ...), refusing with a ValueError an a or b whose offsets pass int32's range; anything
    that is not a 2-D tensor goes on to fn, whose checks name what is wrong with it."""
    @functools.wraps(fn)
    def call(a, b, *args, **kwargs):
        for name, t in (("a", a), ("b", b)):
            if isinstance(t, torch.Tensor) and t.ndim == 2 and reach(t) > INT32_REACH:
                raise ValueError(f"matmul: {name} {tuple(t.shape)} with strides {t.stride()} reaches offset "
                                 f"{reach(t):,}, past the 2**31 - 1 that T4's int32 offsets into A and B hold "
                                 "(content/t4.md §5.1); T5's matmul takes it")
        return fn(a, b, *args, **kwargs)

    return call
