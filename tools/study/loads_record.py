"""make loads, recording: A, B and C in NaN-padded buffers, every byte address mapped back to an
element, and every tl.load / tl.store the graded file makes under Triton's interpreter, noted by
patching two private methods of its InterpreterBuilder (loads_guard.py: the one place that
does, and checks the Triton version)."""

import os
import sys
from dataclasses import dataclass, field

from tools.study import loads_guard


# ------------------------------------------------------------------------------------------------
# The tensors: NaN-padded buffers, and every byte address mapped back to an element
# ------------------------------------------------------------------------------------------------
def padded(rows, cols, layout, dtype, pad, values):
    """(view, buffer): a (rows, cols) view stored as `layout` inside a NaN buffer, as the suite does."""
    import torch

    if layout == "row-major":
        buf = torch.full((rows + 2 * pad, cols + 2 * pad), float("nan"), dtype=dtype)
        view = buf[pad : pad + rows, pad : pad + cols]
    elif layout == "column-major":
        buf = torch.full((cols + 2 * pad, rows + 2 * pad), float("nan"), dtype=dtype)
        view = buf[pad : pad + cols, pad : pad + rows].t()
    else:  # every other column: no stride is 1
        buf = torch.full((rows + 2 * pad, 2 * cols + 2 * pad), float("nan"), dtype=dtype)
        view = buf[pad : pad + rows, pad : pad + 2 * cols : 2]
    view.copy_(values)
    return view, buf


@dataclass
class Tracked:
    """A tensor the kernel may touch: its view, the buffer around it, and byte address -> (row, col).

    The map covers the whole buffer; a padding element gets the indices it would have if the view
    went on past its edge (A[6, 0] is the row after the last of a 6-row A)."""

    name: str
    view: object
    buf: object
    pad: int
    where: dict = field(default_factory=dict)

    def __post_init__(self):
        rows, cols = self.view.shape
        stride_r, stride_c = self.view.stride()
        size, first = self.buf.numel(), self.view.storage_offset() - self.buf.storage_offset()
        self.esize, self.lo = self.view.element_size(), self.buf.data_ptr()
        self.hi = self.lo + size * self.esize
        best = {}
        for r in range(-self.pad, rows + self.pad):
            for c in range(-self.pad, cols + self.pad):
                offset = first + r * stride_r + c * stride_c
                if 0 <= offset < size:
                    far = max(0, -r, r - rows + 1) + max(0, -c, c - cols + 1)
                    if offset not in best or far < best[offset][0]:
                        best[offset] = (far, (r, c))
        self.where = {self.lo + offset * self.esize: rc for offset, (_, rc) in best.items()}

    @property
    def shape(self):
        return tuple(self.view.shape)

    def inside(self, rc):
        return rc is not None and 0 <= rc[0] < self.shape[0] and 0 <= rc[1] < self.shape[1]

    def holds(self, addr):
        return self.lo <= addr < self.hi


# ------------------------------------------------------------------------------------------------
# Watching the interpreter: every tl.load and tl.store made from the graded file
# ------------------------------------------------------------------------------------------------
@dataclass
class Call:
    kind: str  # "load" or "store"
    pid: tuple  # (pid_m, pid_n)
    line: int  # the line of the graded file that made it
    addrs: list  # one byte address per lane
    mask: list  # one bool per lane


class Recorder:
    """Notes every masked load and store of the interpreter made from the graded file, for as long
    as it is entered (loads_guard.wrap_loads_and_stores)."""

    def __init__(self, graded_file, tensors):
        self.graded_file, self.tensors, self.calls = graded_file, tensors, []

    def line_in_graded_file(self):
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename.replace(os.sep, "/").endswith(self.graded_file):
                return frame.f_lineno
            frame = frame.f_back
        return None

    def watch(self, kind, builder, ptrs, mask):
        """Note the call if the graded file made it; return the mask with lanes that point outside
        every buffer switched off."""
        import numpy as np

        line = self.line_in_graded_file()
        if line is None:
            return mask
        addrs = np.asarray(ptrs.data).astype(np.int64)
        lanes = np.broadcast_to(np.asarray(mask.data, dtype=bool), addrs.shape)
        pid = tuple(int(i) for i in builder.grid_idx[:2])
        self.calls.append(Call(kind, pid, line, addrs.ravel().tolist(), lanes.ravel().tolist()))
        known = np.zeros(addrs.shape, dtype=bool)
        for t in self.tensors:
            known |= (addrs >= t.lo) & (addrs + t.esize <= t.hi)
        return type(mask)(lanes & known, mask.dtype)

    def __enter__(self):
        self.restore = loads_guard.wrap_loads_and_stores(self.watch)
        return self

    def __exit__(self, *exc):
        self.restore()
