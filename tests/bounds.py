"""Where a kernel reads and writes, against the tensors it was given.  Lesson-neutral, silent (the
tests that use it say what it found).

    AddressWatch(module, monkeypatch, kernels)   on the interpreter: each load, store and atomic of
                                                 those kernels outside their own tensors, counted
                                                 and masked off (and, with seen=, every address;
                                                 with read_only=, each write into a kernel's input)
    padded_integers(monkeypatch)                 new integer tensors live inside zeroed buffers
    watch_launches(module, names, monkeypatch, strays, report)
                                                 each launch of those kernels under a watch that
                                                 records, in Strays, the first stray access's lines
                                                 of the lesson's files; report(name) when there was one

A GPU stops at an illegal address only sometimes, and Triton's interpreter never: an index read
from the data (an expert id, say) that runs past a tensor reads and writes whatever memory lies
there.  The watch sees every address before the interpreter touches it, so such an access is
reported, and never made.  It reaches into the interpreter's private InterpreterBuilder (its
create_masked_load, create_masked_store and create_atomic_rmw, as in Triton 3.9); where those are
missing it watches nothing and says so in `active`.  tl.atomic_cas has no mask (create_atomic_cas):
a lane of it outside the tensors is counted, and sent to a scratch word of the watch's own instead.
"""

import os
import traceback

import numpy as np
import torch


def _span(t):
    """[first byte, past the last byte] of a tensor's own elements (a view's, not its buffer's)."""
    if t.numel() == 0:
        return None
    last = sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride(), strict=True))
    first = t.data_ptr() - sum((n - 1) * -s for n, s in zip(t.shape, t.stride(), strict=True) if s < 0)
    return first, first + (last + 1) * t.element_size()


def _tensors(values):
    for v in values:
        if isinstance(v, torch.Tensor):
            yield v
        elif isinstance(getattr(v, "base", None), torch.Tensor):  # a TensorDescriptor
            yield v.base


class AddressWatch:
    """While one of `kernels` (attribute names of `module`) runs on the interpreter, every active
    lane of a load, store or atomic must address an element of one of the tensors that launch got.
    outside: {kernel: {"read": lanes, "write": lanes}} of those that did not (their mask cleared).
    seen(what, addresses, inside), where given, is called with each access in the order the
    interpreter makes it: "read" or "write", the byte addresses of its active lanes (a numpy array),
    and which of them fall inside the tensors (the others are not made).
    read_only: {kernel: parameter names} of the tensors that kernel only reads (its inputs, as its lesson
    says): a store or atomic lane inside one of them, and inside no other tensor of the launch (an output
    that shares its memory), is not made either; into(name, lanes) is called with the first such tensor's
    parameter name and how many lanes of that access went into it."""

    def __init__(self, module, monkeypatch, kernels, seen=None, read_only=None, into=None):
        self.outside, self._spans, self._running, self._seen = {}, None, None, seen
        self._read_only, self._into, self._inputs, self._writable = read_only or {}, into, [], []
        self._named, self.all_lanes_on = [], False  # the launch's tensors by parameter name; the last access's mask
        self._scratch = np.zeros(8, dtype=np.int64)  # where a stray atomic_cas lane goes instead
        try:
            from triton.runtime import interpreter

            builder = interpreter.interpreter_builder
            self._handle = interpreter.TensorHandle
        except (ImportError, AttributeError):
            builder = None
        methods = ("create_masked_load", "create_masked_store", "create_atomic_rmw")
        self.active = builder is not None and all(hasattr(builder, m) for m in methods)
        if not self.active:
            return
        for name in kernels:
            monkeypatch.setattr(module, name, _Launch(self, name, getattr(module, name)))
        load, store, rmw = (getattr(builder, m) for m in methods)

        # The rest by keyword too: a TMA descriptor's load calls create_masked_load(..., cache_policy=...).
        def watched_load(ptrs, mask, *rest, **named):
            return load(ptrs, self._inside(ptrs, mask, "read"), *rest, **named)

        def watched_store(ptrs, value, mask, *rest, **named):
            return store(ptrs, value, self._inside(ptrs, mask, "write"), *rest, **named)

        def watched_rmw(op, ptr, val, mask, *rest, **named):
            return rmw(op, ptr, val, self._inside(ptr, mask, "write"), *rest, **named)

        for name, method in zip(methods, (watched_load, watched_store, watched_rmw), strict=True):
            monkeypatch.setattr(builder, name, method)
        cas = getattr(builder, "create_atomic_cas", None)
        if cas is not None:

            def watched_cas(ptr, cmp, val, *rest, **named):
                return cas(self._redirected(ptr), cmp, val, *rest, **named)

            monkeypatch.setattr(builder, "create_atomic_cas", watched_cas)

    def _inside(self, ptrs, mask, what):
        if self._spans is None:
            return mask
        addresses = np.asarray(ptrs.data).astype(np.uint64)
        lanes = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
        ok = self._counted(ptrs, addresses, lanes, what)
        if ok.all():
            return mask
        return self._handle(lanes & ok, mask.dtype)

    def _counted(self, ptrs, addresses, lanes, what):
        """Which lanes address an element of the launch's tensors; the active others counted as outside."""
        size = max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
        ok = np.zeros(addresses.shape, dtype=bool)
        for first, end in self._spans:
            ok |= (addresses >= first) & (addresses + size <= end)
        stray = int((lanes & ~ok).sum())
        self.all_lanes_on = bool(lanes.all())
        if self._seen is not None:
            self._seen(what, addresses[lanes], ok[lanes])
        if stray:
            counts = self.outside.setdefault(self._running, {"read": 0, "write": 0})
            counts[what] += stray
        if what == "write" and self._inputs:
            ok = ok & ~self._into_inputs(addresses, lanes & ok, size)
        return ok | ~lanes

    def _into_inputs(self, addresses, lanes, size):
        """Which of the active lanes write into a tensor the running kernel only reads (and into no other
        tensor of the launch); into() told of the first such tensor."""

        def inside(first, end):
            return (addresses >= first) & (addresses + size <= end)

        writable = np.zeros(addresses.shape, dtype=bool)
        for first, end in self._writable:
            writable |= inside(first, end)
        hit = np.zeros(addresses.shape, dtype=bool)
        for name, (first, end) in self._inputs:
            here = lanes & ~writable & inside(first, end)
            if here.any() and not hit.any() and self._into is not None:
                self._into(name, int(here.sum()))
            hit |= here
        return hit

    def nearest(self, address):
        """(the parameter name of the running launch's tensor nearest to byte `address`, the element index
        the address is at in it: below 0 before its first element, from its length on past its last, its
        length), or None."""
        best = None
        for name, (first, end), size in self._named:
            gap = first - address if address < first else max(0, address - end + size)
            if best is None or gap < best[0]:
                best = gap, name, (address - first) // size, (end - first) // size
        return best and best[1:]

    def _redirected(self, ptrs):
        """ptrs of an atomic_cas (no mask: every lane acts) with each lane outside the tensors counted
        and pointed at the watch's scratch word, so that it is not made where it points."""
        if self._spans is None:
            return ptrs
        data = np.asarray(ptrs.data)
        addresses = data.astype(np.uint64)
        ok = self._counted(ptrs, addresses, np.ones(addresses.shape, dtype=bool), "write")
        if ok.all():
            return ptrs
        moved = np.where(ok, addresses, np.uint64(self._scratch.ctypes.data)).astype(data.dtype)
        return self._handle(moved, ptrs.dtype)


def unmasked_reads(module, monkeypatch, kernel, launch):
    """How many lanes of `kernel`'s loads (an attribute of `module`) read outside every tensor its
    launch got though no mask turned them off, while launch() runs it again under an AddressWatch,
    which does not make those reads; 0 off the interpreter, where the watch cannot see them."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return 0
    watch = AddressWatch(module, monkeypatch, (kernel,))
    if not watch.active:
        return 0
    launch()
    return watch.outside.get(kernel, {}).get("read", 0)


class _Launch:
    def __init__(self, watch, name, kernel):
        self.watch, self.name, self.kernel = watch, name, kernel

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            spans = [_span(t) for t in _tensors([*args, *kwargs.values()])]
            self.watch._spans, self.watch._running = [s for s in spans if s], self.name
            names = list(getattr(self.kernel, "arg_names", ()))
            named = [*zip(names, args, strict=False), *kwargs.items()]
            self.watch._named = [
                (name, span, t.element_size())
                for name, v in named
                for t in _tensors([v])
                for span in [_span(t)]
                if span
            ]
            only = self.watch._read_only.get(self.name, ())
            self.watch._inputs = [(n, span) for n, span, _ in self.watch._named if n in only]
            self.watch._writable = [span for n, span, _ in self.watch._named if n not in only]
            try:
                return self.kernel[grid](*args, **kwargs)
            finally:
                self.watch._spans = self.watch._running = None
                self.watch._inputs, self.watch._writable, self.watch._named = [], [], []

        return launch

    def __getattr__(self, name):
        return getattr(self.kernel, name)


class Strays:
    """What an AddressWatch (seen=) saw outside the tensors during one launch: counts, and the first
    one's frames in the files whose names end with one of `ours` (the lesson's and the earlier
    lessons' files, and its probes'); `probes`, the probes' file name."""

    def __init__(self, ours, probes):
        self.ours, self.probes = tuple(ours), probes
        self.watch = None  # the AddressWatch that calls seen: where it is set, near is recorded too
        self.clear()

    def clear(self):
        self.counts, self.first, self.near = {"read": 0, "write": 0}, {}, {}
        self.input = None  # (parameter name, lanes, frames) of the first write into a tensor only read

    def into(self, name, lanes):
        """AddressWatch's into: a write of `lanes` lanes into the input `name` (not made); the first kept."""
        if self.input is None:
            self.input = (name, lanes, [f for f in traceback.extract_stack() if f.filename.endswith(self.ours)])

    def input_by_learner(self):
        """(name, lanes, frames) of the first write into an input, where a line of the lesson's code made it and
        that line wrote nowhere outside every tensor: one that did was a pointer run past its own tensor, landing
        in an input or in no tensor as memory happened to lie, and is told as that stray."""
        frames = self.input and self.input[2]
        if not frames or frames[-1].filename.endswith(self.probes):
            return None
        out = self.first.get("write") if self.counts["write"] else None
        if out and (out[-1].filename, out[-1].lineno) == (frames[-1].filename, frames[-1].lineno):
            return None
        return self.input

    def by_learner(self):
        """Whether a stray access was made by a line of the lesson's code.  One a probe's own line
        made (a store at an index the learner's function returned, say) was not made either, and is
        left to the test's own checks, which see the values that led to it."""
        firsts = [*self.first.values(), *([self.input[2]] if self.input else [])]
        return any(frames and not frames[-1].filename.endswith(self.probes) for frames in firsts)

    def seen(self, what, addresses, inside):
        stray = int((~inside).sum())
        if not stray:
            return
        self.counts[what] += stray
        if what not in self.first:
            self.first[what] = [f for f in traceback.extract_stack() if f.filename.endswith(self.ours)]
            near = self.watch.nearest(int(addresses[~inside][0])) if self.watch is not None else None
            if near is not None:
                self.near[what] = (*near, self.watch.all_lanes_on)

    def worst(self):
        """(what, how many, frames) of the writes where a line of ours made one, else of the reads."""
        what = "write" if self.counts["write"] and self.first.get("write") else "read"
        return what, self.counts[what], self.first.get(what, [])


def near_words(near):
    """(zh, en) words for Strays.near's (tensor, index, length, every lane on) of a first stray access: the
    tensor of the launch it lies just past or before (within that tensor's length of it, or 64 elements),
    and whether that access had every lane on; ("", "") for None or an address far from every tensor."""
    if near is None:
        return "", ""
    name, index, length, all_on = near
    if index < -max(length, 64) or index >= length + max(length, 64):
        return "", ""
    if index < 0:
        zh = f"第一个落在 {name} 的开头之前 {-index} 个元素处"
        en = f"the first lies {-index} element{'s' * (index != -1)} before the start of {name}"
    else:
        zh = f"第一个落在 {name} 的末尾之后（下标 {index}，共 {length} 个元素）"
        en = f"the first lies past the end of {name} (index {index} of {length})"
    if all_on:
        zh += "；那次访问的每个 lane 都是开着的（没有掩码，或掩码全放行）"
        en += "; every lane of that access was on (no mask, or one that let all through)"
    return zh, en


def place(frame, code=True):
    """A frame as a learner finds it: file line n (function), then `: the line` with code."""
    where = f"{os.path.basename(frame.filename)} line {frame.lineno} ({frame.name})"
    return f"{where}: {(frame.line or '').strip()}" if code else where


def caller_of(frames):
    """The frame that called the last one's function, from a function of its own, or None."""
    return next((f for f in reversed(frames[:-1]) if f.name != frames[-1].name), None) if frames else None


class _Checked:
    """A watched kernel whose launch calls report(name) when a line of ours touched memory outside
    its tensors (report fails the test)."""

    def __init__(self, name, kernel, strays, report):
        self.name, self.kernel, self.strays, self.report = name, kernel, strays, report

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.strays.clear()
            try:
                out = self.kernel[grid](*args, **kwargs)
            except Exception:  # a crash or a wait for good after a stray access: the stray came first
                if self.strays.by_learner():
                    self.report(self.name)
                raise
            if self.strays.by_learner():
                self.report(self.name)
            return out

        return launch

    def __getattr__(self, name):
        return getattr(self.kernel, name)


def watch_launches(module, names, monkeypatch, strays, report, read_only=None):
    """Every launch of module's kernels `names` under an AddressWatch whose stray accesses `strays`
    records, and its writes into the tensors read_only ({kernel: parameter names}) names; report(name)
    after a launch where a line of ours made one.  Where the interpreter's builder cannot be watched,
    nothing."""
    watch = AddressWatch(module, monkeypatch, names, seen=strays.seen, read_only=read_only, into=strays.into)
    strays.watch = watch
    if not watch.active:
        return
    for name in names:
        monkeypatch.setattr(module, name, _Checked(name, getattr(module, name), strays, report))


PAD = 64  # elements of zeros before and after each new integer tensor


def padded_integers(monkeypatch):
    """From now on torch.empty, empty_like, zeros, zeros_like and full make each integer tensor as
    a view in the middle of a zeroed buffer, PAD elements each side: an index a little out of range
    then reads a zero and writes into the padding, not into other tensors (a GPU does not fault
    there either).  Returns the list of (buffer, elements), to look at the padding afterwards."""
    made, zeros = [], torch.zeros

    def padded(make):
        def wrapper(*args, **kwargs):
            t = make(*args, **kwargs)
            if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
                return t
            buf = zeros(t.numel() + 2 * PAD, dtype=t.dtype, device=t.device)
            view = buf[PAD : PAD + t.numel()].view(t.shape)
            view.copy_(t)
            made.append((buf, t.numel()))
            return view

        return wrapper

    for name in ("empty", "empty_like", "zeros", "zeros_like", "full"):
        monkeypatch.setattr(torch, name, padded(getattr(torch, name)))
    return made


def padding_written(made):
    """How many padding cells of padded_integers' buffers are no longer zero."""
    return sum(int((buf[:PAD] != 0).sum()) + int((buf[PAD + n :] != 0).sum()) for buf, n in made)
