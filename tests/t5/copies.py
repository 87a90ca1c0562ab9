"""How many bytes host code writes into tensors while it runs: every torch function and tensor method
called under a TorchFunctionMode, each one that writes counted by the bytes of what it writes (an in-place
method such as copy_: the tensor it writes into, a view's elements alone; clone, contiguous, to: the new
tensor's, where it has memory of its own).  Allocations (empty) and views write nothing.  For T5.2's
tma_ready, whose copies cost a GPU a read and a write of the operand each (no test here: a helper of
tests/t5/test_tma_ready.py).  A function mode, not a dispatch mode: the latter imports torch._dynamo on its
first use, 3 s of the suite's time."""

import torch
from torch.overrides import TorchFunctionMode

from course.messages import fail

from .common import T5

ALLOCATES = ("empty", "empty_like", "empty_strided", "new_empty")  # memory handed out, nothing written into it


def _storage(t):
    return t.untyped_storage().data_ptr()


class BytesWritten(TorchFunctionMode):
    """with BytesWritten() as w: ...; then w.bytes is what the torch calls inside wrote."""

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        given = {_storage(t) for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor)}
        out = func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if name in ALLOCATES:
            return out
        in_place = name.endswith("_") and not name.startswith("__")  # copy_, fill_: into the tensor returned
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor) and (in_place or _storage(t) not in given):
                self.bytes += t.numel() * t.element_size()
        return out


def fail_if_copied_more_than_once(written, given, got, case):
    """Fail where tma_ready wrote more bytes than one copy of each operand it returned in memory of its own:
    given and got, {name: tensor} of the operands passed and returned; written, BytesWritten's bytes."""
    copied = [name for name, t in got.items() if t.data_ptr() != given[name].data_ptr()]
    once = sum(got[name].numel() * got[name].element_size() for name in copied)
    if written <= once:
        return
    zh_names, en_names = "、".join(copied) or "（没有）", " and ".join(copied) or "none"
    fail(
        T5,
        f"{case[0]}：tma_ready 运行时往张量里写了 {written} 字节，而它返回的副本（{zh_names}）各复制一次一共只有 "
        f"{once} 字节：写了不止一份副本的量（比如同一个操作数复制了两次）。"
        "GPU 上每多复制一次，就把操作数多读一遍、多写一遍；违规的操作数直接从调用者的"
        f"张量 aligned_copy(t) 一次（先 .contiguous() 或 .clone() 就又复制了一遍），合规的不复制",
        f"{case[1]}: tma_ready wrote {written} bytes into tensors while it ran, where one copy of each operand it "
        f"returned copied ({en_names}) is {once} bytes: it wrote more than one copy's worth (an operand copied "
        f"twice, say). Each extra copy costs a GPU "
        f"a read and a write of the operand; copy an operand that breaks a rule once, aligned_copy(t) straight from "
        f"the caller's tensor (a .contiguous() or .clone() first is a copy of its own), and leave the others alone",
        "3.2",
    )
