"""How many bytes host code copies out of tensors while it runs: every torch function and tensor method
called under a TorchFunctionMode, each one that writes data read from a tensor counted by those bytes (an
in-place method such as copy_ or an assignment buf[...] = t: the elements it takes from its source, at most
the ones it writes into; clone, contiguous, to, F.pad: the source's elements, at most the new tensor's).
Allocations (empty, zeros, full, zeros_like, ...), fills (fill_, zero_) and views copy nothing: a zeroed
buffer the operand is then copied into is one copy, as aligned_copy's empty buffer is.  For T5.2's tma_ready,
whose copies cost a GPU a read and a write of the operand each (no test here: a helper of
tests/t5/test_tma_ready.py).  A function mode, not a dispatch mode: the latter imports torch._dynamo on its
first use, 3 s of the suite's time."""

import torch
from torch.overrides import TorchFunctionMode

from course.messages import fail

from .common import T5

# memory handed out, empty or filled with one value: nothing read from a tensor is written into it
ALLOCATES = {"empty", "empty_strided", "zeros", "ones", "full"}
ALLOCATES |= {f"{name}_like" for name in ("empty", "zeros", "ones", "full")}
ALLOCATES |= {f"new_{name}" for name in ("empty", "empty_strided", "zeros", "ones", "full")}


def _storage(t):
    return t.untyped_storage().data_ptr()


def _tensors(values):
    """The tensors among values, those in a list or tuple (torch.cat's) included."""
    for v in values:
        if isinstance(v, torch.Tensor):
            yield v
        elif isinstance(v, (tuple, list)):
            yield from (x for x in v if isinstance(x, torch.Tensor))


class BytesWritten(TorchFunctionMode):
    """with BytesWritten() as w: ...; then w.bytes is what the torch calls inside copied out of tensors."""

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if name in ALLOCATES or not args:
            return out
        if name == "__setitem__":  # buf[index] = value: value's elements are written into buf
            target, sources = args[0], list(_tensors(args[2:3]))
        elif name.endswith("_") and not name.startswith("__"):  # copy_, add_: into self, from the other tensors
            target, sources = args[0], [t for t in _tensors((*args[1:], *kwargs.values())) if t is not args[0]]
        else:  # a new tensor (clone, contiguous, to, pad, cat); a view or the input itself copies nothing
            given = {_storage(t) for t in _tensors((*args, *kwargs.values()))}
            outs = [t for t in _tensors(out if isinstance(out, (tuple, list)) else (out,)) if _storage(t) not in given]
            target, sources = (outs[0], list(_tensors((*args, *kwargs.values())))) if outs else (None, [])
        if isinstance(target, torch.Tensor) and sources:
            read = sum(s.numel() for s in sources)
            self.bytes += min(read, target.numel()) * target.element_size()
        return out


def fail_if_copied_more_than_once(written, given, got, case):
    """Fail where tma_ready copied more bytes out of tensors than one copy of each operand it returned in memory
    of its own: given and got, {name: tensor} of the operands passed and returned; written, BytesWritten's bytes
    (zeroing a buffer is no copy)."""
    copied = [name for name, t in got.items() if t.data_ptr() != given[name].data_ptr()]
    once = sum(got[name].numel() * got[name].element_size() for name in copied)
    if written <= once:
        return
    zh_names, en_names = "、".join(copied) or "（没有）", " and ".join(copied) or "none"
    fail(
        T5,
        f"{case[0]}：tma_ready 运行时从张量复制写入了 {written} 字节（清零或分配不算），"
        f"而它返回的副本（{zh_names}）各复制一次一共只有 {once} 字节："
        "写了不止一份副本的量（比如同一个操作数复制了两次）。"
        "GPU 上每多复制一次，就把操作数多读一遍、多写一遍；违规的操作数直接从调用者的"
        f"张量 aligned_copy(t) 一次（先 .contiguous() 或 .clone() 就又复制了一遍），合规的不复制",
        f"{case[1]}: tma_ready wrote {written} bytes copied from tensors while it ran (an allocation or a zero "
        f"fill counts none), while one copy of each operand it returned as a copy ({en_names}) is {once} bytes: it "
        "wrote more than one copy's worth (an operand copied twice, say). Each extra copy costs a GPU "
        "a read and a write of the operand; copy an operand that breaks a rule once, aligned_copy(t) straight from "
        "the caller's tensor (a .contiguous() or .clone() first is a copy of its own), and leave the others alone",
        "3.2",
    )
