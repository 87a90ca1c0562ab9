"""See your own loads and stores: which elements of A and B each K step of one program loads, which
lanes its masks switch off, and which cells of C its epilogue writes (explainer §3, §4, §5.1).

This runs YOUR mainloop and epilogue (mine/t4_matmul.py, or the reference with --solution) through
the suite's probe kernels (course/t4_probes.py) under Triton's interpreter, always, even on a GPU
machine: there tl.load and tl.store are Python, so make loads can note the address and the mask
of every lane of every tl.load / tl.store your file makes, without changing your code.  Each
address is mapped back to A[m, k], B[k, n] or C[m, n] through the tensor's data_ptr and strides.

A, B and C sit inside larger buffers full of NaN, as in the suite, so a load a mask should have
switched off reads the padding instead of a neighbour, and shows as '!'.  A lane that points
outside every buffer is switched off by make loads before the interpreter reads it (so that it
cannot crash) and is listed with its address.

    python -m tools.study.loads                              # §3's example: A (6, 8), blocks of 4
    python -m tools.study.loads --k 6 --pid-m 1              # a K tail, and the tile at M's edge
    python -m tools.study.loads --layout column-major         # A, B and C stored as x.t() gives them
    python -m tools.study.loads --m 5 --n 7 --k 9 --block 4 4 4 --pid-n 1 --solution
    python -m tools.study.loads --png loads.png              # the same as a picture

In the grids, rows and columns are the tensor's own indices (A[m, k]: m down, k across):
    #   loaded (written, for C) by this step      .   a lane its mask switched off
    !   loaded or written OUTSIDE the tensor     2-9  the same element loaded that many times
    -   an element of the tensor this step did not touch
    x   (C only) written with a value other than the tile's result
Cells outside the tensor are drawn only where a lane points at them.  Every program of the grid
runs; below the grids of the chosen one, a line for each other program says whether its loads and
stores stayed inside.

The default problem is §3's worked example: A of shape (6, 8), BLOCK_M = BLOCK_K = 4, pid_m = 0;
§3 does not fix N, so B is (8, 6) and BLOCK_N = 4, and the default program (0, 0) needs no mask.
Try --k 6 (a K tail) and --pid-m 1 (rows past M) to see masks at work.  Through make, pass the
options as ARGS: make loads ARGS="--k 6 --pid-m 1".  The text follows the course's language
(COURSE_LANG=zh or en, else the locale); the picture (--png, drawn instead of the text) is in
English.  Exits 1 with the stub's message while mainloop or epilogue is not written yet (showing
whichever of the two is).
"""

import argparse
import os
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from course.i18n import say
from course.registry import T4
from tools.study import common as study

LAYOUTS = ("row-major", "column-major", "every-other-column")  # tests/test_t4.py's poisoned_view
DTYPES = ("fp16", "fp32")
MAX_DIM = 160  # wider grids wrap in a terminal; the suite's failing cases go up to K = 130
SHOWN = 8  # addresses or elements listed before "..."


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


def element(name, rc):
    return f"{name}[{rc[0]},{rc[1]}]"


def listing(items):
    items = list(items)
    return ", ".join(items[:SHOWN]) + (", ..." if len(items) > SHOWN else "")


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
    """Patches the interpreter's create_masked_load / create_masked_store (tl.load and tl.store
    without a mask reach them too) for as long as it is entered."""

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
        from triton.runtime import interpreter

        builder = interpreter.InterpreterBuilder
        self.saved = builder.create_masked_load, builder.create_masked_store
        load, store, recorder = self.saved[0], self.saved[1], self

        def create_masked_load(self, ptrs, mask, other, *rest):
            return load(self, ptrs, recorder.watch("load", self, ptrs, mask), other, *rest)

        def create_masked_store(self, ptrs, value, mask, *rest):
            return store(self, ptrs, value, recorder.watch("store", self, ptrs, mask), *rest)

        builder.create_masked_load, builder.create_masked_store = create_masked_load, create_masked_store
        return self

    def __exit__(self, *exc):
        from triton.runtime import interpreter

        interpreter.InterpreterBuilder.create_masked_load, interpreter.InterpreterBuilder.create_masked_store = (
            self.saved
        )


# ------------------------------------------------------------------------------------------------
# What one call did to one tensor
# ------------------------------------------------------------------------------------------------
@dataclass
class Step:
    """One tl.load (or tl.store) seen through one tensor."""

    line: int
    hits: Counter  # (row, col) inside the tensor -> unmasked lanes there
    masked: set  # (row, col), inside or in the padding, of lanes the mask switched off
    outside: list  # (row, col) in the padding of unmasked lanes
    stray: list  # descriptions of unmasked lanes in no buffer or in another tensor's


def owner(call, tensors):
    """The tensor most of the call's lanes point into (masked lanes too), else None."""
    counts = Counter(t.name for addr in call.addrs for t in tensors if t.holds(addr))
    return max(tensors, key=lambda t: counts[t.name]) if counts else None


def describe(addr, tensors):
    for t in tensors:
        rc = t.where.get(addr)
        if rc is not None:
            return element(t.name, rc) + ("" if t.inside(rc) else say(zh="（填充区）", en=" (padding)"))
    return f"0x{addr:x}"


def see(call, t, tensors):
    step = Step(call.line, Counter(), set(), [], [])
    for addr, on in zip(call.addrs, call.mask, strict=True):
        rc = t.where.get(addr)
        if not on:
            if rc is not None:
                step.masked.add(rc)
        elif t.inside(rc):
            step.hits[rc] += 1
        elif rc is not None:
            step.outside.append(rc)
        else:
            step.stray.append(describe(addr, tensors))
    return step


@dataclass
class Program:
    """What one program (pid_m, pid_n) did: the K steps of A and of B, the stores into C."""

    pid: tuple
    a: list
    b: list
    c: list
    other: list  # calls whose lanes point into no tensor at all


def programs(calls, tensors, grid):
    a, b, c = tensors[:3]
    found = {pid: Program(pid, [], [], [], []) for pid in grid}
    for call in calls:
        t = owner(call, tensors)
        p = found[call.pid]
        if t is None:
            p.other.append(call)
        else:
            to = {"A": p.a, "B": p.b, "C": p.c}.get(t.name, p.other)
            to.append(see(call, t, tensors))
    return found


# ------------------------------------------------------------------------------------------------
# Verdicts
# ------------------------------------------------------------------------------------------------
def needed(t, rows, cols):
    """The elements of t a tile needs: rows x cols, clipped to the tensor."""
    return {(r, c) for r in rows for c in cols if t.inside((r, c))}


def verdict(t, steps, need, verb):
    """(ok, sentence) about the elements of t the steps touched, against the set it needs."""
    hits = sum((s.hits for s in steps), Counter())
    outside = sum(len(s.outside) + len(s.stray) for s in steps)
    missing = sorted(need - set(hits))
    twice = sorted(rc for rc, n in hits.items() if n > 1 and rc in need)
    extra = sorted(set(hits) - need)
    problems = []
    if missing:
        problems.append(
            say(
                zh=f"需要的 {len(need)} 个元素里有 {len(missing)} 个没有被{verb}"
                f"（{listing(element(t.name, rc) for rc in missing)}）",
                en=f"{len(missing)} of the {len(need)} elements needed never {verb} "
                f"({listing(element(t.name, rc) for rc in missing)})",
            )
        )
    if twice:
        problems.append(
            say(
                zh=f"{len(twice)} 个元素被{verb}了不止一次（{listing(element(t.name, rc) for rc in twice)}）",
                en=f"{len(twice)} {verb} more than once ({listing(element(t.name, rc) for rc in twice)})",
            )
        )
    if extra:
        problems.append(
            say(
                zh=f"{len(extra)} 个元素不属于这个 tile（{listing(element(t.name, rc) for rc in extra)}）",
                en=f"{len(extra)} elements of other tiles {verb} ({listing(element(t.name, rc) for rc in extra)})",
            )
        )
    if outside:
        problems.append(
            say(
                zh=f"{outside} 次{verb}落在 {t.name} 之外",
                en=f"{outside} {'loads' if verb == 'loaded' else 'writes'} fall outside {t.name}",
            )
        )
    if not steps:
        return False, say(zh=f"{t.name}：一次也没有{verb}", en=f"{t.name}: nothing {verb}")
    if problems:
        return False, t.name + say(zh="：", en=": ") + say(zh="；", en="; ").join(problems)
    return True, say(
        zh=f"{t.name}：这个 tile 需要的 {len(need)} 个元素每个恰好{verb}一次，没有多余，没有越界",
        en=f"{t.name}: the {len(need)} elements this tile needs, each {verb} exactly once; "
        f"nothing else, nothing outside {t.name}",
    )


# ------------------------------------------------------------------------------------------------
# Text
# ------------------------------------------------------------------------------------------------
def marks(t, step, wrong=()):
    """(row, col) -> character for the cells a step touched, inside the tensor and out."""
    out = {rc: "." for rc in step.masked}
    for rc, n in step.hits.items():
        out[rc] = "x" if rc in wrong else "#" if n == 1 else str(min(n, 9))
    for rc in step.outside:
        out[rc] = "!"
    return out


def grid_lines(t, cells):
    """The tensor's grid, widened to every marked cell outside it: a header of column numbers,
    then one line per row."""
    rows, cols = t.shape
    r0, r1 = min([0] + [r for r, _ in cells]), max([rows - 1] + [r for r, _ in cells])
    c0, c1 = min([0] + [c for _, c in cells]), max([cols - 1] + [c for _, c in cells])
    label = max(len(str(r0)), len(str(r1)))
    lines = [" " * (label + 1) + " ".join(str(abs(c) % 10) for c in range(c0, c1 + 1))]
    for r in range(r0, r1 + 1):
        row = [cells.get((r, c), "-" if t.inside((r, c)) else " ") for c in range(c0, c1 + 1)]
        lines.append(f"{r:>{label}} " + " ".join(row))
    return [line.rstrip() for line in lines]


def shown_width(text):
    """Columns a terminal gives the text: two for each wide (Chinese) character."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def side_by_side(left, right, gap=6):
    width = max(shown_width(line) for line in left) + gap
    height = max(len(left), len(right))
    left, right = left + [""] * (height - len(left)), right + [""] * (height - len(right))
    return [(a + " " * (width - shown_width(a)) + b).rstrip() for a, b in zip(left, right, strict=True)]


def step_problems(t, step, k, verb):
    """Lines that make a step's stray lanes stand out."""
    lines = []
    if step.outside:
        where = listing(element(t.name, rc) for rc in step.outside)
        lines.append(
            say(
                zh=f"!! K 第 {k} 步（第 {step.line} 行）：{len(step.outside)} 次对 {t.name} 的{verb}"
                f"落在 {t.name} 之外：{where}（NaN 填充区：少了掩码，还是 stride 用错了？）",
                en=f"!! K step {k} (line {step.line}): {len(step.outside)} {verb} of {t.name} fall outside "
                f"{t.name}: {where} (the NaN padding around it: a missing mask, or a wrong stride?)",
            )
            if k is not None
            else say(
                zh=f"!! 第 {step.line} 行：{len(step.outside)} 次{verb}落在 {t.name} 之外：{where}",
                en=f"!! line {step.line}: {len(step.outside)} {verb} fall outside {t.name}: {where}",
            )
        )
    if step.stray:
        lines.append(
            say(
                zh=f"!! 第 {step.line} 行：{len(step.stray)} 条 lane 指向别的张量或任何张量之外：{listing(step.stray)}"
                "（make loads 把指向所有缓冲区之外的 lane 关掉了，免得解释器崩溃）",
                en=f"!! line {step.line}: {len(step.stray)} lanes point into another tensor or outside every "
                f"tensor: {listing(step.stray)} (make loads switched off those outside every buffer, so that "
                "the interpreter cannot crash)",
            )
        )
    return lines


def header(args, t_a, t_b, grid_shape, path):
    pm, pn = args.pid_m, args.pid_n
    bm, bn, bk = args.block
    return [
        say(
            zh=f"make loads：{path} 的 mainloop 和 epilogue，程序 (pid_m, pid_n) = ({pm}, {pn})，网格共 "
            f"{grid_shape[0]} x {grid_shape[1]} 个程序",
            en=f"make loads: the mainloop and epilogue of {path}, program (pid_m, pid_n) = ({pm}, {pn}) "
            f"of a {grid_shape[0]} x {grid_shape[1]} grid",
        ),
        f"M = {args.m}, N = {args.n}, K = {args.k}; BLOCK_M = {bm}, BLOCK_N = {bn}, BLOCK_K = {bk}; {args.dtype}",
        say(
            zh=f"A {t_a.shape} {args.layout}，stride {tuple(t_a.view.stride())}；"
            f"B {t_b.shape} {args.layout_b}，stride {tuple(t_b.view.stride())}；C {args.layout_c}",
            en=f"A {t_a.shape} {args.layout}, strides {tuple(t_a.view.stride())}; "
            f"B {t_b.shape} {args.layout_b}, strides {tuple(t_b.view.stride())}; C {args.layout_c}",
        ),
        say(
            zh="A、B、C 都放在填满 NaN 的更大缓冲区里，所以 stride 里也算上了填充区；漏掉的掩码会读到 NaN，标成 !",
            en="A, B and C sit inside larger buffers full of NaN, so the strides count the padding too; "
            "a load a mask should have stopped reads the NaN there, and shows as !",
        ),
        say(
            zh=f"这个程序的行：{rows_text(args.pid_m, bm, args.m)}；列：{rows_text(args.pid_n, bn, args.n)}",
            en=f"this program's rows: {rows_text(args.pid_m, bm, args.m)}; "
            f"columns: {rows_text(args.pid_n, bn, args.n)}",
        ),
    ]


def rows_text(pid, block, size):
    first, last = pid * block, pid * block + block - 1
    inside = min(last, size - 1)
    if inside < first:
        return say(zh=f"{first}-{last}（全部在外）", en=f"{first}-{last} (all past the edge)")
    if inside == last:
        return f"{first}-{last}"
    return say(
        zh=f"{first}-{last}（{inside + 1}-{last} 超出边界 {size}）",
        en=f"{first}-{last} ({inside + 1}-{last} past the edge at {size})",
    )


def loads_text(prog, t_a, t_b):
    lines = []
    for k in range(max(len(prog.a), len(prog.b))):
        blocks = []
        for t, steps in ((t_a, prog.a), (t_b, prog.b)):
            if k < len(steps):
                s = steps[k]
                title = say(
                    zh=f"{t.name}（第 {s.line} 行）：{sum(s.hits.values())} 次加载，{len(s.masked)} 条 lane 被掩掉",
                    en=f"{t.name} (line {s.line}): {sum(s.hits.values())} loaded, {len(s.masked)} masked",
                )
                blocks.append([title] + grid_lines(t, marks(t, s)))
            else:
                blocks.append([say(zh=f"{t.name}：这一步没有加载", en=f"{t.name}: no load in this step")])
        lines.append(say(zh=f"K 第 {k} 步", en=f"K step {k}"))
        lines += ["  " + line for line in side_by_side(*blocks)]
        for t, steps in ((t_a, prog.a), (t_b, prog.b)):
            if k < len(steps):
                lines += ["  " + line for line in step_problems(t, steps[k], k, say(zh="加载", en="loads"))]
        lines.append("")
    return lines


def legend():
    return say(
        zh="# 加载（C：写入）   . 被掩码关掉的 lane   ! 张量之外   2-9 同一元素的次数   "
        "- 这一步没碰的元素   x 写入的值不对",
        en="# loaded (C: written)   . lane masked off   ! outside the tensor   2-9 that many times   "
        "- element not touched this step   x written with a wrong value",
    )


# ------------------------------------------------------------------------------------------------
# Running it
# ------------------------------------------------------------------------------------------------
@dataclass
class Observed:
    tensors: list
    grid: list
    loads: dict  # pid -> Program of the mainloop's calls
    stores: dict  # pid -> Program of the epilogue's calls, or None if the epilogue is a stub
    wrong: set  # cells of C written with a value other than the tile's result
    acc_note: str  # what the mainloop returned, against A @ B
    epilogue_stub: str  # the stub's message, or ""
    mainloop_stub: str = ""  # the same for mainloop: then only C is shown


def observe(args):
    """Run the graded mainloop, then epilogue, over the whole grid, watching every load and store."""
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: the interpreter, on any machine
    study.load_graded(args.solution)
    import torch
    import triton

    from course import seam, t4_probes  # its kernels call the graded module's mainloop and epilogue

    dtype = {"fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    bm, bn, bk = args.block
    pad = 2 * max(bm, bn, bk) + 2  # a read up to a block past an edge lands in the padding
    gen = torch.Generator().manual_seed(0)
    a_vals = torch.randn(args.m, args.k, generator=gen).to(dtype)
    b_vals = torch.randn(args.k, args.n, generator=gen).to(dtype)
    a, a_buf = padded(args.m, args.k, args.layout, dtype, pad, a_vals)
    b, b_buf = padded(args.k, args.n, args.layout_b, dtype, pad, b_vals)
    c, c_buf = padded(args.m, args.n, args.layout_c, dtype, pad, torch.zeros(args.m, args.n, dtype=dtype))
    c_buf.fill_(float("nan"))
    gm, gn = triton.cdiv(args.m, bm), triton.cdiv(args.n, bn)
    exact = a_vals.double() @ b_vals.double()
    acc_in = torch.zeros(gm * bm, gn * bn, dtype=torch.float32)
    acc_in[: args.m, : args.n] = exact.float()
    acc_out = torch.full_like(acc_in, -7.0)
    tensors = [Tracked("A", a, a_buf, pad), Tracked("B", b, b_buf, pad), Tracked("C", c, c_buf, pad)]
    scratch = [Tracked("acc", acc_in, acc_in, 0), Tracked("acc", acc_out, acc_out, 0)]
    grid = [(m, n) for m in range(gm) for n in range(gn)]

    def launch(kernel, *kargs):
        recorder = Recorder(seam.path(T4), tensors + scratch)
        try:
            with recorder:
                kernel[(gm, gn)](*kargs)
        except Exception as e:
            message = seam.stub_message(e)
            if message is None:
                raise
            return None, message
        return recorder.calls, ""

    calls, stub = launch(
        t4_probes.mainloop_probe,
        *(a, b, acc_out, args.m, args.n, args.k, *a.stride(), *b.stride(), acc_out.stride(0), bm, bn, bk),
    )
    loads = programs(calls or [], tensors, grid)
    acc_note = acc_verdict(acc_out, exact, args) if calls is not None else ""
    mainloop_stub = stub
    calls, epilogue_stub = launch(
        t4_probes.epilogue_probe, acc_in, acc_in.stride(0), c, args.m, args.n, *c.stride(), bm, bn
    )
    if mainloop_stub and epilogue_stub:
        study.not_written_yet(mainloop_stub)  # nothing to show
    stores = programs(calls, tensors, grid) if calls is not None else None
    expected = exact.float().to(dtype)
    wrong = {
        (r, col)
        for r in range(args.m)
        for col in range(args.n)
        if not torch.isnan(c[r, col]) and c[r, col] != expected[r, col]
    }
    return Observed(tensors, grid, loads, stores, wrong, acc_note, epilogue_stub, mainloop_stub)


def acc_verdict(acc_out, exact, args):
    """A sentence on the tile the mainloop returned for the chosen program, against float64 A @ B."""
    bm, bn, _ = args.block
    rows = slice(args.pid_m * bm, min(args.pid_m * bm + bm, args.m))
    cols = slice(args.pid_n * bn, min(args.pid_n * bn + bn, args.n))
    got, ref = acc_out[rows, cols].double(), exact[rows, cols]
    if got.numel() == 0:
        return ""
    nans = int(got.isnan().sum())
    if nans:
        return say(
            zh=f"mainloop 返回的 tile 里有 {nans} 个 NaN：有加载读到了 NaN 填充区",
            en=f"the tile mainloop returned holds {nans} NaN: a load read the NaN padding",
        )
    err = ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    if err < 1e-3:
        return say(
            zh="mainloop 返回的 tile 等于 A @ B 的这一块", en="the tile mainloop returned is this block of A @ B"
        )
    return say(
        zh=f"mainloop 返回的 tile 与 A @ B 不符（最大相对误差 {err:.2e}）",
        en=f"the tile mainloop returned differs from A @ B (largest relative error {err:.2e})",
    )


def tile_needs(args, pid, tensors):
    bm, bn, bk = args.block
    t_a, t_b, t_c = tensors
    rows = range(pid[0] * bm, pid[0] * bm + bm)
    cols = range(pid[1] * bn, pid[1] * bn + bn)
    return needed(t_a, rows, range(args.k)), needed(t_b, range(args.k), cols), needed(t_c, rows, cols)


def merge(steps):
    """All the stores of one program as one step: C's grid shows them together."""
    line = steps[0].line if steps else 0
    return Step(
        line,
        sum((s.hits for s in steps), Counter()),
        set().union(*(s.masked for s in steps)),
        [rc for s in steps for rc in s.outside],
        [d for s in steps for d in s.stray],
    )


def store_steps(seen, pid):
    return [] if seen.stores is None else seen.stores[pid].c


def summary(seen, args, pid):
    """[(ok, sentence)] for one program: its loads of A and B, its stores into C."""
    t_a, t_b, t_c = seen.tensors
    need_a, need_b, need_c = tile_needs(args, pid, seen.tensors)
    prog = seen.loads[pid]
    results = []
    if not seen.mainloop_stub:
        results.append(verdict(t_a, prog.a, need_a, say(zh="加载", en="loaded")))
        results.append(verdict(t_b, prog.b, need_b, say(zh="加载", en="loaded")))
    if seen.stores is not None:
        steps = store_steps(seen, pid)
        ok, text = verdict(t_c, steps, need_c, say(zh="写入", en="written"))
        wrong = sorted(rc for s in steps for rc in s.hits if rc in seen.wrong)
        if wrong:
            ok = False
            text += say(
                zh=f"；{len(wrong)} 个格子写入的值不对（{listing(element('C', rc) for rc in wrong)}）",
                en=f"; {len(wrong)} cells written with a wrong value ({listing(element('C', rc) for rc in wrong)})",
            )
        results.append((ok, text))
    stray = prog.other + ([] if seen.stores is None else seen.stores[pid].other)
    if stray:
        results.append(
            (
                False,
                say(
                    zh=f"{len(stray)} 次调用（第 {', '.join(str(c.line) for c in stray)} 行）完全指向 A、B、C 之外",
                    en=f"{len(stray)} calls (line {', '.join(str(c.line) for c in stray)}) point outside A, B and C "
                    "altogether",
                ),
            )
        )
    return results


def report(seen, args, path):
    t_a, t_b, t_c = seen.tensors
    pid = (args.pid_m, args.pid_n)
    grid_shape = (max(m for m, _ in seen.grid) + 1, max(n for _, n in seen.grid) + 1)
    lines = header(args, t_a, t_b, grid_shape, path) + ["", legend(), ""]
    prog = seen.loads[pid]
    lines += loads_text(prog, t_a, t_b)
    want = -(-args.k // args.block[2])
    if seen.mainloop_stub:
        lines += [say(zh="A、B：mainloop 还没写", en="A, B: mainloop is not written yet"), ""]
    elif max(len(prog.a), len(prog.b)) != want:
        lines.append(
            say(
                zh=f"!! 看到 {len(prog.a)} 次对 A、{len(prog.b)} 次对 B 的加载；cdiv(K, BLOCK_K) = {want}",
                en=f"!! {len(prog.a)} loads of A and {len(prog.b)} of B seen; cdiv(K, BLOCK_K) = {want}",
            )
        )
    if seen.stores is None:
        lines.append(say(zh="C：epilogue 还没写", en="C: the epilogue is not written yet"))
    else:
        steps = store_steps(seen, pid)
        cells = marks(t_c, merge(steps), seen.wrong)
        line_no = ", ".join(sorted({str(s.line) for s in steps})) or "-"
        lines.append(
            say(
                zh=f"C（epilogue，第 {line_no} 行）：写入 {sum(sum(s.hits.values()) for s in steps)} 次",
                en=f"C (epilogue, line {line_no}): {sum(sum(s.hits.values()) for s in steps)} written",
            )
        )
        lines += ["  " + line for line in grid_lines(t_c, cells)]
        for s in steps:
            lines += ["  " + line for line in step_problems(t_c, s, None, say(zh="写入", en="writes"))]
        lines.append("")
    lines.append(say(zh=f"程序 {pid} 合计：", en=f"Program {pid} over all its steps:"))
    lines += [("   " if ok else "!! ") + text for ok, text in summary(seen, args, pid)]
    if seen.acc_note:
        lines.append("   " + seen.acc_note)
    others = [p for p in seen.grid if p != pid]
    if others:
        lines += ["", say(zh="其他程序：", en="The other programs:")]
        for p in others:
            bad = [text for ok, text in summary(seen, args, p) if not ok]
            head = f"{p}" + say(zh="：", en=": ")
            if not bad:
                everything = say(
                    zh="加载和写入都在张量之内，各恰好一次", en="every load and store inside, each exactly once"
                )
                lines.append("   " + head + everything)
                continue
            lines.append("!! " + head + say(zh="；", en="; ").join(bad))
            lines.append(
                "   "
                + say(
                    zh=f'看这一个：make loads ARGS="... --pid-m {p[0]} --pid-n {p[1]}"',
                    en=f'to see it: make loads ARGS="... --pid-m {p[0]} --pid-n {p[1]}"',
                )
            )
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# Picture
# ------------------------------------------------------------------------------------------------
FILLS = {"#": "#9ecae1", ".": "#eeeeee", "!": "#e34a33", "x": "#fdae6b", "-": "white"}


def extent(t, cells):
    """(first row, last row, first column, last column) of the tensor widened to the marked cells."""
    rows, cols = t.shape
    r0, r1 = min([0] + [r for r, _ in cells]), max([rows - 1] + [r for r, _ in cells])
    c0, c1 = min([0] + [c for _, c in cells]), max([cols - 1] + [c for _, c in cells])
    return r0, r1, c0, c1


def draw_tensor(ax, x0, y0, t, cells, title):
    """The tensor's cells with their indices, then the marked cells outside it; (x0, y0) is the top
    left corner of the widened grid."""
    r0, r1, c0, c1 = extent(t, cells)
    rows, cols = t.shape
    shown = [[cells.get((r, c), "-") for c in range(cols)] for r in range(rows)]
    labels = [["" if ch in "-." else ch for ch in row] for row in shown]
    fills = [[FILLS.get(ch, FILLS["#"]) for ch in row] for row in shown]
    study.draw_grid(ax, x0 - c0, y0 + r0, labels, fills)
    for (r, c), ch in sorted(cells.items()):
        if not t.inside((r, c)):
            study.draw_grid(ax, x0 + c - c0, y0 - (r - r0), [["" if ch == "." else ch]], [[FILLS.get(ch, FILLS["#"])]])
    for c in range(c0, c1 + 1):
        ax.text(x0 + c - c0 + 0.5, y0 + 0.3, str(c), ha="center", va="center", fontsize=7, color="0.45")
    for r in range(r0, r1 + 1):
        ax.text(x0 - 0.4, y0 - (r - r0) - 0.5, str(r), ha="center", va="center", fontsize=7, color="0.45")
    ax.text(x0, y0 + 0.75, title, ha="left", va="bottom", fontsize=10)


def draw(seen, args, path):
    """The chosen program as a picture: a row per K step (A beside B), then C."""
    t_a, t_b, t_c = seen.tensors
    pid = (args.pid_m, args.pid_n)
    prog = seen.loads[pid]
    panels = []  # one row of [(tensor, cells, title)] per K step, then C's
    for k in range(max(len(prog.a), len(prog.b))):
        row = []
        for t, steps in ((t_a, prog.a), (t_b, prog.b)):
            if k < len(steps):
                row.append((t, marks(t, steps[k]), f"K step {k}: {t.name} (line {steps[k].line})"))
        panels.append(row)
    if seen.stores is not None:
        steps = store_steps(seen, pid)
        lines = ", ".join(sorted({str(s.line) for s in steps})) or "-"
        panels.append([(t_c, marks(t_c, merge(steps), seen.wrong), f"C: the epilogue's stores (line {lines})")])
    sizes = [[extent(t, cells) for t, cells, _ in row] for row in panels]
    widths = [max((s[i][3] - s[i][2] + 1 for s in sizes if len(s) > i), default=0) for i in range(2)]
    heights = [max(r1 - r0 + 1 for r0, r1, _, _ in row) for row in sizes]
    lefts = (1.0, 1.0 + max(widths[0], 12) + 2.0)  # room for the row numbers and the titles
    width = lefts[1] + max(widths[1], 12) + 0.5
    height = sum(heights) + 2.0 * len(panels) + 0.5
    scale = min(0.3, 18 / width, 30 / height)  # inches per cell
    top, bottom = 0.5, 0.4  # inches for the title and the legend
    fig, axes = study.figure(width * scale, height * scale + top + bottom)
    ax = axes[0][0]
    y = -0.3
    for row, h in zip(panels, heights, strict=True):
        y -= 1.5
        for x, (t, cells, title) in zip(lefts, row, strict=False):
            draw_tensor(ax, x, y, t, cells, title)
        y -= h + 0.5
    ax.set_xlim(0, width)
    ax.set_ylim(-height, 0)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.subplots_adjust(left=0, right=1, bottom=bottom / fig.get_figheight(), top=1 - top / fig.get_figheight())
    fig.suptitle(
        f"program ({pid[0]}, {pid[1]}): M={args.m} N={args.n} K={args.k}, blocks {tuple(args.block)}, A {args.layout}",
        fontsize=10,
    )
    fig.text(
        0.5,
        0.01,
        "blue #: loaded / written   grey: masked lane   red !: outside the tensor   orange x: wrong value",
        ha="center",
        va="bottom",
        fontsize=8,
        color="0.3",
    )
    study.save_png(fig, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--m", type=int, default=6, help="rows of A and C (default 6, §3's example)")
    parser.add_argument("--n", type=int, default=6, help="columns of B and C (default 6)")
    parser.add_argument("--k", type=int, default=8, help="columns of A, rows of B (default 8, §3's example)")
    parser.add_argument(
        "--block", type=int, nargs=3, default=[4, 4, 4], metavar=("BM", "BN", "BK"), help="default 4 4 4"
    )
    parser.add_argument("--layout", choices=LAYOUTS, default="row-major", help="how A is stored (default row-major)")
    parser.add_argument("--layout-b", choices=LAYOUTS, help="how B is stored (default: as A)")
    parser.add_argument("--layout-c", choices=LAYOUTS, help="how C is stored (default: as A)")
    parser.add_argument("--pid-m", type=int, default=0, help="the program to show: its row of tiles (default 0)")
    parser.add_argument("--pid-n", type=int, default=0, help="its column of tiles (default 0)")
    parser.add_argument("--dtype", choices=DTYPES, default="fp16", help="of A, B and C (default fp16)")
    parser.add_argument("--png", metavar="PATH", help="draw the chosen program's loads and stores into PATH")
    study.add_solution_flag(parser)
    args = parser.parse_args(argv)
    args.layout_b, args.layout_c = args.layout_b or args.layout, args.layout_c or args.layout
    if not all(1 <= d <= MAX_DIM for d in (args.m, args.n, args.k)) or min(args.block) < 1:
        parser.error(f"M, N and K must be 1 to {MAX_DIM}, the blocks at least 1")
    if not (0 <= args.pid_m < -(-args.m // args.block[0]) and 0 <= args.pid_n < -(-args.n // args.block[1])):
        parser.error(
            f"--pid-m must be 0 to {-(-args.m // args.block[0]) - 1} and --pid-n 0 to {-(-args.n // args.block[1]) - 1}"
        )
    seen = observe(args)
    if args.png:
        draw(seen, args, args.png)
    else:
        print(report(seen, args, study.graded_path()))
    if seen.mainloop_stub or seen.epilogue_stub:
        study.not_written_yet(seen.mainloop_stub or seen.epilogue_stub)


if __name__ == "__main__":
    main()
