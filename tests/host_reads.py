"""Reads of tensor values back to the host by a lesson's graded code, recorded on the CPU, where nothing syncs:
on a GPU each such read waits for the device (a host sync), and a CUDA graph refuses it.  Lesson-neutral, like
shortcuts.py: each lesson's tests pass the files whose code counts as the learner's (`graded`, realpaths).

    host_reads(graded, allowed=())   a torch function mode; inside `with ... as mode`, mode.reads lists
                                     (what, function, file, line) for each read made by that code
"""

import os
import sys

import torch

# What turns a tensor's value into a Python one: on a GPU each waits for the device (a host sync).
VALUE_READS = {"item", "tolist", "numpy", "__array__", "__bool__", "__int__", "__float__", "__index__", "equal"}
VALUE_READS |= {"allclose", "__format__", "__repr__", "__str__"}


def host_reads(graded, allowed=()):
    """A torch function mode recording (what, function, file, line) for each read of a tensor's value made
    by the graded code itself (`graded`, a set of realpaths: not by torch, Triton's
    interpreter or the tests): on the CPU nothing syncs, so this is how a read that a CUDA graph would
    refuse shows there.  Reads made while a function of that code named in `allowed` runs are not recorded."""
    from torch.overrides import TorchFunctionMode

    class HostReads(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.reads = []
            # waited: the reads that met a value the code computed since its last read (the first read too):
            # on a GPU each waits for the device, where a read of a value already read back does not
            self.waited, self.fresh = [], True
            # host: ids of the tensors copied to the host (.cpu(), .to("cpu")) by the code, and of those it
            # computed from them alone: on a GPU computing those waits for nothing, so a read of one is no wait
            self.host, self.kept = set(), []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name not in VALUE_READS:
                result = func(*args, **(kwargs or {}))
                if not isinstance(result, torch.Tensor):
                    return result
                if on_host(self.host, args, kwargs):  # computed from host copies alone: no device work
                    self.host.add(id(result))
                    self.kept.append(result)  # alive while the mode is: its id is not handed out again
                    return result
                if self.fresh and not to_host(name, args, kwargs):
                    return result
                frame = caller_outside_torch()
                ours = frame is not None and os.path.realpath(frame.f_code.co_filename) in graded
                if ours and to_host(name, args, kwargs):  # .cpu(): a read back; on a GPU the copy itself waits
                    where = site(name, frame)
                    if not called_from(frame, allowed, graded):
                        self.reads.append(where)
                    if self.fresh:
                        self.waited.append(where)
                    self.fresh = False
                    self.host.add(id(result))
                    self.kept.append(result)
                else:
                    self.fresh = self.fresh or ours
                return result
            if name in VALUE_READS:
                frame = caller_outside_torch()
                if frame is not None and os.path.realpath(frame.f_code.co_filename) in graded:
                    if called_from(frame, allowed, graded):
                        return func(*args, **(kwargs or {}))
                    self.reads.append(site(name, frame))
                    if self.fresh:
                        self.waited.append(self.reads[-1])
                    self.fresh = False
            return func(*args, **(kwargs or {}))

    return HostReads()


def caller_outside_torch():
    """The frame of the code that called into torch (the mode's caller's caller, past torch's own frames)."""
    frame = sys._getframe(2)
    while frame is not None and f"{os.sep}torch{os.sep}" in frame.f_code.co_filename:
        frame = frame.f_back
    return frame


def site(name, frame):
    """(what, function, file, line) of a read made at frame: a comprehension's frame is named by the function
    it is in; the file is the side's file or its given host."""
    function = frame
    while function.f_code.co_name.startswith("<") and function.f_back is not None:
        function = function.f_back
    return name, function.f_code.co_name, os.path.basename(frame.f_code.co_filename), frame.f_lineno


def called_from(frame, allowed, graded):
    """Whether frame runs inside a function of the graded code named in allowed (its reads are not recorded)."""
    while frame is not None:
        if frame.f_code.co_name in allowed and os.path.realpath(frame.f_code.co_filename) in graded:
            return True
        frame = frame.f_back
    return False


def to_host(name, args, kwargs):
    """Whether a call copies a tensor to the host: .cpu(), or .to() with the CPU named as its device."""
    if name == "cpu":
        return True
    wanted = [*args[1:], *(kwargs or {}).values()] if name == "to" else []
    return any(str(v) == "cpu" for v in wanted if isinstance(v, (str, torch.device)))


def on_host(host, args, kwargs):
    """Whether every tensor a call takes is one of the host copies (ids in host), and it takes one."""
    given = [v for v in (*args, *(kwargs or {}).values()) if isinstance(v, torch.Tensor)]
    return bool(given) and all(id(v) in host for v in given)
