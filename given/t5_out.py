"""What T5's matmul takes as out= (given: read it, nothing to write here): check_out, which the host wrapper
(given/t5_host.py) calls on a first call of each kind, and out_shares_nothing, which it calls again on every later
call of a kind it has a plan for (a new out may overlap a or b where the last one did not).  Apart from t5_host.py,
which would pass 400 lines with them.
"""
import torch


def check_out(out, a, b, bias):
    """Raise unless matmul can write C = a @ b into `out`: a tensor of shape (M, N) in the inputs' dtype
    and on their device, with no two of its cells at one address (an expanded tensor has stride 0), that
    shares no memory with a, b or bias.  A TypeError for a wrong type, else a ValueError naming out."""
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"matmul: out must be a torch.Tensor, got {type(out).__name__}")
    M, N = a.shape[0], b.shape[1]
    if tuple(out.shape) != (M, N) or out.dtype != a.dtype or out.device != a.device:
        raise ValueError(f"matmul: out must be ({M}, {N}) {a.dtype} on {a.device}, like the product, got "
                         f"{tuple(out.shape)} {out.dtype} on {out.device}")
    if out.requires_grad and torch.is_grad_enabled():  # as torch's out= arguments: no autograd through them
        raise ValueError("matmul: out requires grad, and matmul has no backward: call it under torch.no_grad() "
                         "or pass an out that needs none")
    if overlaps_itself(out):
        raise ValueError(f"matmul: out has cells at one address (shape {tuple(out.shape)}, strides "
                         f"{tuple(out.stride())}): each cell of C needs its own")
    out_shares_nothing(out, a, b, bias)


def overlaps_itself(t):
    """Whether two elements of t lie at one address: its dimensions of more than one element, by
    stride, must each step past the whole of the ones before it."""
    reach = 1
    for stride, size in sorted((s, n) for n, s in zip(t.shape, t.stride(), strict=True) if n > 1):
        if stride < reach:
            return True
        reach = stride * size
    return False


def out_shares_nothing(out, a, b, bias):
    """Raise a ValueError where out's bytes and those of a, b or bias overlap (their spans, from the
    first element to the last: an interleaved pair counts too): the kernel would read what it wrote."""
    def span(t):
        last = sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
        return t.data_ptr(), t.data_ptr() + (last + 1) * t.element_size()

    if out.numel() == 0:
        return
    start, end = span(out)
    for name, t in (("a", a), ("b", b), ("bias", bias)):
        if t is not None and t.numel() and t.device == out.device:
            first, stop = span(t)
            if first < end and start < stop:
                raise ValueError(f"matmul: out shares memory with {name}: the kernel would read what it "
                                 "has already written; give out memory of its own")
