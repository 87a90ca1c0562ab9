"""What every lesson's tests share: the device and its tolerances, random and padded operands,
what a message says about wrong cells, and the defences against shortcuts (a tensor the kernel
never wrote, torch computing the product, a launch into another tensor).  Lesson-neutral: it names
no lesson, no section and no graded function; a lesson's tests hand it the names of their kernels
and the "read §x.y" texts (course.messages.read) its messages end with.

    DEVICE, INTERPRETING, DTYPES     where the suite runs, and the dtypes it can check there
    OUT_RTOL, ACC_RTOL               tolerances of a product and of an fp32 accumulator
    rel_err, random, spans, wrong_cells
    copies, changed_cells, cells_changed    the caller's tensors before a call, and what it changed
    poisoned_view, layout_pairs, Layouts, LAYOUTS, PAD     operands in NaN, in three layouts
    padded                           a TMA-legal view inside NaN (rows 16-element aligned)
    descriptor(t, box)               a TensorDescriptor of t with that box
    box(t, row, col, rows, cols)     what a TMA load of that box reads (float64, zeros outside t)
    poison_allocations(monkeypatch)  every new floating tensor starts as NaN (integers: a value too)
    refuse_torch_products(monkeypatch, kernel)   torch's products (TORCH_PRODUCTS) raise HandedToTorch
    refuse_products(monkeypatch, refuse)         each of TORCH_PRODUCTS replaced by a refusal of your own
    LaunchWatch, Launch, same_tensor, UNWRITTEN  what a wrapper launched, into which tensor

The defences live in shortcuts.py (allocations poisoned, torch's products refused) and in
launch_watch.py (the LaunchWatch); they are imported here, so that a lesson's tests take all of it
from this one module.
"""

import os

import torch

from course.i18n import say

from launch_watch import UNWRITTEN, Launch, LaunchWatch, same_tensor  # noqa: F401 - tests import them from here
from shortcuts import (  # noqa: F401 - tests import them from here
    TORCH_PRODUCTS,
    HandedToTorch,
    poison_allocations,
    refuse_products,
    refuse_torch_products,
)

INTERPRETING = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETING else "cuda"
# A model split over GPUs calls a layer on cuda:1 while cuda:0 is current (tests/launch_hooks.py).
TWO_GPUS = not INTERPRETING and torch.cuda.device_count() >= 2
# A skip reason that starts "GPU only" reads "needs a GPU" on the scorecard (tools/learner/scorecard.py):
# so it does here, on the interpreter; on a GPU these say what is missing there.
TWO_GPUS_REASON = ("GPU only, two of them" if INTERPRETING else "needs two GPUs") + (
    ": the inputs on cuda:1 while cuda:0 is current"
)
# Products past 2**31 elements (an LM head's logits over a long prefill) need about 25 GB of GPU memory.
BIG_GPU = (
    not INTERPRETING and torch.cuda.is_available() and torch.cuda.get_device_properties(0).total_memory >= 40 * 2**30
)
BIG_GPU_REASON = ("GPU only, 40 GB or more" if INTERPRETING else "needs a GPU of 40 GB or more") + (
    ": outputs past 2**31 elements, where int32 offsets would wrap"
)
# bf16 only on a GPU: the interpreter's tl.dot multiplies bf16 bit patterns (triton issue 11584).
DTYPES = [torch.float16, torch.float32] + ([] if INTERPRETING else [torch.bfloat16])

# Tolerances on ||out - ref|| / ||ref||, ref in float64 from the same rounded inputs.
# The sum is accumulated in fp32 (relative error ~1e-6), so what remains is rounding C to its
# dtype: at most half an ulp, 2**-11 = 4.9e-4 for fp16 and 2**-8 = 3.9e-3 for bf16, and about a
# third of that over a whole matrix. fp32 inputs on a GPU go through tf32 in tl.dot (10-bit
# mantissa), about 3e-4; on the CPU the interpreter multiplies in fp32.
OUT_RTOL = {torch.float16: 1.5e-3, torch.bfloat16: 1.2e-2, torch.float32: 2e-3 if DEVICE == "cuda" else 1e-5}
# The accumulator itself, before any cast: fp32 sums of exact fp16/bf16 products.
ACC_RTOL = {torch.float16: 1e-5, torch.bfloat16: 1e-5, torch.float32: 2e-3 if DEVICE == "cuda" else 1e-5}


def grad_refusal_missed(call):
    """None where call() raises a ValueError that names grad, or 梯度 in a Chinese learner's words (an input
    requires grad with grad enabled, and the kernels have no backward); else what it did instead, for the
    message: (zh, en) words."""
    try:
        call()
        return say(
            zh="它却返回了一个结果，梯度不会经过它", en="and it returned a result, which no gradient goes through"
        )
    except ValueError as e:
        if "grad" in str(e) or "梯度" in str(e):
            return None
        return say(
            zh=f"它的 ValueError 没有提到 grad（或梯度）：{e}",
            en=f"and its ValueError does not name grad: {e}",
        )


def meta_value_read(e, files):
    """(function, file name, line) of the innermost frame in `files` (realpaths: the graded code) of exception e's
    traceback, where e is torch refusing to read a meta tensor's values (.item(), bool(), .tolist(), ...): the
    tests put a tensor "on another device" on the meta device, which holds no values.  None otherwise."""
    import traceback

    if not any(words in str(e) for words in ("cannot be called on meta tensors", "copy out of meta tensor")):
        return None
    frames = [f for f in traceback.extract_tb(e.__traceback__) if os.path.realpath(f.filename) in files]
    if not frames:
        return None
    named = [f.name for f in frames if not f.name.startswith("<")] or [frames[-1].name]  # a genexpr's function
    return named[-1], os.path.basename(frames[-1].filename), frames[-1].lineno


def rel_err(out, ref):
    """||out - ref|| / ||ref||; inf where out holds a NaN or an inf that ref does not, since a NaN
    error would compare False with every tolerance and let the check pass."""
    out, ref = out.double().cpu(), ref.double().cpu()
    if not torch.isfinite(out).all() and torch.isfinite(ref).all():
        return float("inf")
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def rows_off_past_int32(got, want, row_cells):
    """None if `got` (rows of `row_cells` elements each) is `want` within fp16 rounding, else (zh, en):
    how many rows are off, the first, and whether all lie where row * row_cells passes 2**31."""
    off = torch.cat(
        [
            ((g.float() - w.float()).abs() > 2e-2 + 2e-2 * w.float().abs()).any(dim=1)
            for g, w in zip(got.split(2048), want.split(2048), strict=True)  # in slices: the whole is 5 GB
        ]
    )
    if not off.any():
        return None
    first, wrap = int(off.nonzero()[0, 0]), 2**31 // row_cells
    if first >= wrap:
        return (
            f"{int(off.sum())} 行不对，第一行是 {first}：错的行都在第 {wrap} 行以后，那里 row * {row_cells} 超过 "
            "2**31，偏移量用 int32 算时就是这样",
            f"{int(off.sum())} rows wrong, the first {first}: every wrong row lies past row {wrap}, where row * "
            f"{row_cells} passes 2**31, as when offsets are int32",
        )
    return (
        f"{int(off.sum())} 行不对，第一行是 {first}，在 2**31 之前就错了",
        f"{int(off.sum())} rows wrong, the first {first}, before 2**31 is reached",
    )


def fault_past_int32():
    """None once the GPU has finished its work, else (zh, en): what a fault there means for a product past
    2**31 elements (the context is then lost, and later GPU tests fail too)."""
    try:
        torch.cuda.synchronize()
    except RuntimeError as e:  # an illegal address
        first = (str(e).splitlines() or [""])[0][:100]  # "CUDA error: an illegal memory access was encountered"
        return (
            f"kernel 访问了非法地址（{first}）：某个偏移量超出了缓冲区，比如 int32 的偏移量过了 2**31 回绕成负数",
            f"the kernel touched an illegal address ({first}): an offset past the buffer, such as an int32 "
            "offset wrapped negative past 2**31",
        )
    return None


def random(shape, dtype, device=DEVICE):
    return torch.randn(shape, dtype=torch.float32, device=device).to(dtype)


def spans(indices, limit=4):
    """Sorted indices as ranges, "0-15, 32-47"; more than `limit` ranges end with "…"."""
    runs = []
    for i in indices:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    text = ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:limit])
    return text + (", …" if len(runs) > limit else "")


def wrong_cells(out, want, rtol):
    """Which cells of a 2-D result are wrong, and by how much, in words: what a message says when
    it has not detected why.  A cell is wrong when it is off by more than 10 * rtol times the
    result's root mean square, well above any rounding a correct kernel makes."""
    out, want = out.double().cpu(), want.double().cpu()
    diff = (out - want).abs().nan_to_num(nan=float("inf"))
    rms = want.norm().item() / max(want.numel(), 1) ** 0.5
    bad = diff > 10 * rtol * max(rms, 1e-30)
    n, total = int(bad.sum()), bad.numel()
    i, j = divmod(int(diff.flatten().argmax()), want.shape[1])
    got, right = out[i, j].item(), want[i, j].item()
    digits = next((d for d in range(4, 17) if f"{got:.{d}g}" != f"{right:.{d}g}"), 17)  # enough to differ
    got, right = f"{got:.{digits}g}", f"{right:.{digits}g}"
    worst = say(
        zh=f"差得最多的是 ({i}, {j})：{got}，应为 {right}",
        en=f"the largest difference is at ({i}, {j}): {got} instead of {right}",
    )
    if n == 0:
        return say(
            zh=f"误差分散在所有单元里，没有哪个单元错得特别多；{worst}",
            en=f"the error is spread over all cells, none far off; {worst}",
        )
    rows, cols = bad.any(1).nonzero().flatten().tolist(), bad.any(0).nonzero().flatten().tolist()
    r = (
        say(zh="每一行", en="every row")
        if len(rows) == want.shape[0]
        else say(zh=f"第 {spans(rows)} 行", en=f"row{'s' * (len(rows) > 1)} {spans(rows)}")
    )
    c = (
        say(zh="每一列", en="every column")
        if len(cols) == want.shape[1]
        else say(zh=f"第 {spans(cols)} 列", en=f"column{'s' * (len(cols) > 1)} {spans(cols)}")
    )
    return say(
        zh=f"{total} 个单元里有 {n} 个错了，在{r}、{c}；{worst}",
        en=f"{n} of {total} cells are wrong, in {r} and {c}; {worst}",
    )


# A, B and C live inside larger buffers full of NaN: an unmasked read outside them puts a NaN
# in the result, and a stray write changes a cell that must stay NaN.
LAYOUTS = ("row-major", "column-major", "every-other-column")
PAD = 72  # more than any block the poisoned tests use, so a read past an edge lands in the padding


class Layouts(str):
    """A's layout, as a test's id reads it ("row-major"), with B's alongside in .b, so that a case's
    label names the layout of each operand: case_words(layout="A {0}, B {0.b}")."""

    def __new__(cls, a, b):
        made = super().__new__(cls, a)
        made.b = b
        return made


def copies(given):
    """{name: a copy} of the tensors in given (a call's arguments, by name; None and numbers skipped)."""
    return {name: t.clone() for name, t in given.items() if isinstance(t, torch.Tensor)}


def cells_changed(now, then):
    """How many cells of now differ from the copy then, bit for bit: a NaN the caller passed equals
    itself, and a -0.0 written over 0.0 counts."""
    as_ints = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[then.element_size()]
    return int((now.contiguous().view(as_ints) != then.contiguous().view(as_ints)).sum())


def changed_cells(given, before):
    """{name: cells changed} of the tensors in given that a call changed, against copies(given)."""
    found = {name: cells_changed(given[name], was) for name, was in before.items()}
    return {name: n for name, n in found.items() if n}


def layout_pairs(shift):
    """Each layout for A, with B's the one `shift` places after it: A and B always differ."""
    return [Layouts(a, LAYOUTS[(i + shift) % 3]) for i, a in enumerate(LAYOUTS)]


BOTH_LAYOUTS = say(zh="A 为 {0}，B 为 {0.b}", en="A {0}, B {0.b}")  # a case's label


def poisoned_view(rows, cols, layout, dtype, fill=float("nan"), pad=PAD):
    """A (rows, cols) tensor of random values stored as `layout`, and the buffer around it."""
    if layout == "row-major":
        buf = torch.full((rows + 2 * pad, cols + 2 * pad), fill, dtype=dtype, device=DEVICE)
        view = buf[pad : pad + rows, pad : pad + cols]
    elif layout == "column-major":  # what x.t() of a contiguous tensor looks like
        buf = torch.full((cols + 2 * pad, rows + 2 * pad), fill, dtype=dtype, device=DEVICE)
        view = buf[pad : pad + cols, pad : pad + rows].t()
    else:  # no stride is 1
        buf = torch.full((rows + 2 * pad, 2 * cols + 2 * pad), fill, dtype=dtype, device=DEVICE)
        view = buf[pad : pad + rows, pad : pad + 2 * cols : 2]
    view.copy_(random((rows, cols), dtype))
    return view, buf


PAD_ROWS, PAD_COLS = 8, 16  # 16 elements: 32 or 64 bytes, so a view's base stays 16-byte aligned


def padded(rows, cols, dtype, fill=float("nan"), values=True):
    """A TMA-legal (rows, cols) view inside a larger buffer of `fill`: its row pitch is a multiple of
    16 elements, so the view keeps every TMA rule while whatever surrounds it is poison."""
    width = -(-(cols + 2 * PAD_COLS) // 16) * 16
    buf = torch.full((rows + 2 * PAD_ROWS, width), fill, dtype=dtype, device=DEVICE)
    view = buf[PAD_ROWS : PAD_ROWS + rows, PAD_COLS : PAD_COLS + cols]
    if values:
        view.copy_(random((rows, cols), dtype))
    return view, buf


def box(t, row, col, rows, cols):
    """A descriptor's load of a rows x cols box at [row, col] of t, in float64: the part outside t
    reads as zeros (what the tests work a TMA load's result out with)."""
    out = torch.zeros((rows, cols), dtype=torch.float64, device=t.device)
    part = t[row : row + rows, col : col + cols].double()
    out[: part.shape[0], : part.shape[1]] = part
    return out


def descriptor(t, box):
    """A TensorDescriptor of t whose loads and stores move box-shaped blocks (what a probe's TMA
    device functions take)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor.from_tensor(t, box)


def loop_like(epilogues, starts, programs):
    """(start words, step words) of the one wrong persistent tile loop that finishes each tile exactly
    as often as `epilogues` says (tile ids 0 .. len - 1, by `programs` programs), as a learner would
    write it; None when no loop matches, or when loops with different words do.  starts: {words: each
    program's first tile}, the right start first; the steps tried are NUM_PROGS (right), 1,
    NUM_PROGS + 1, 2 * NUM_PROGS and NUM_PROGS - 1.  Words that give the same numbers here (pid and
    first_tile + pid when first_tile is 0) are one loop: the first words listed are kept."""
    steps = {"NUM_PROGS": programs, "1": 1, "NUM_PROGS + 1": programs + 1, "2 * NUM_PROGS": 2 * programs}
    steps["NUM_PROGS - 1"] = max(programs - 1, 1)
    right = (next(iter(starts)), "NUM_PROGS")
    starts = {v: k for k, v in reversed([(k, tuple(v)) for k, v in starts.items()])}
    steps = {v: k for k, v in reversed(list(steps.items()))}
    matches = []
    for start, start_words in starts.items():
        for step, step_words in steps.items():
            counts = [0] * len(epilogues)
            for first_of_program in start:
                for t in range(first_of_program, len(epilogues), step):
                    counts[t] += 1
            if counts == list(epilogues):
                matches.append((start_words, step_words))
    return matches[0] if len(matches) == 1 and matches[0] != right else None
