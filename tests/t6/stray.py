"""T6's launches on the interpreter under an AddressWatch (tests/bounds.py): the routing's three
kernels, moe_kernel (the grouped launches and the MLP's two), combine_topk and the probes' kernels.
A load, store or atomic outside every tensor a launch was given is never made, and the test fails at
once, naming the line of the lesson's files that made it, and the step and section of the function
it is in.  Made, such an access reads or overwrites whatever memory lies there (a combine's store
past the result's last row, say), and the crash, if one comes, comes in a later test, at a line that
has nothing to do with it.  A test that watches a launch itself (accesses.py) keeps its own, more
precise, message: its watch stops the stray lanes before this one sees them.  On input the call must
refuse (input_to_refuse), a stray access is stopped and left to the test, which says that the call did
not refuse it: the launch should not have been made."""

from contextlib import contextmanager

import numpy as np

from course.i18n import cells
from course.messages import fail

import bounds
from .common import ROUTE_BLOCK, T6
from bounds import Strays, caller_of, near_words, place

OURS = ("t6_moe.py", "t5_persistent.py", "t4_matmul.py", "t6_probes.py")
KERNELS = ("count_experts", "scan_counts", "scatter_slots", "moe_kernel", "combine_topk")
# Tensors each kernel only reads, as §2.1, §3 and §4.4 say (inputs; it writes the others).
INPUTS = {
    "count_experts": ("ids_ptr",),
    "scan_counts": ("block_counts_ptr",),
    "scatter_slots": ("ids_ptr", "block_base_ptr", "counts_ptr", "offsets_ptr"),
    "moe_kernel": ("x_ptr", "w_desc", "weights_ptr", "sorted_slots_ptr", "counts_ptr", "offsets_ptr"),
    "combine_topk": ("by_slot_ptr",),
}
ROUTING = ("count_experts", "scan_counts", "scatter_slots")
_own_route_checks = []  # True while route's own checks watch it (routing_inputs_left_to_the_test)


class _ReadOnly(dict):
    """INPUTS as the address watch asks for them at each launch: the routing's kernels' left out while a T6.1 test
    that looks at ids, counts and block_base after the call (ids_kept, stores_kept, the atomic cursors' order)
    watches route itself: those name what changed them, where a write stopped here would leave them unchanged."""

    def get(self, name, default=None):
        return default if _own_route_checks and name in ROUTING else super().get(name, default)


READ_ONLY = _ReadOnly(INPUTS)


@contextmanager
def routing_inputs_left_to_the_test():
    """While on, a routing kernel's write into its input is made, and left to the test's own checks."""
    _own_route_checks.append(True)
    try:
        yield
    finally:
        _own_route_checks.pop()


SECTION_OF = {  # the functions a learner writes in T6's kernels, and the section each is in
    "count_experts": "2.1",
    "scan_counts": "2.1",
    "scatter_slots": "2.1",
    "expert_tile_counts": "3.3",
    "locate_tile": "3.3",
    "grouped_tiles": "3.4",
    "gathered_rows": "4.1",
    "gathered_product": "4.2",
    "store_rows": "4.3",
    "combine_topk": "4.4",
    "gate_up_product": "5.1",
    "swiglu": "5.1",
}


def step_of(function):
    """The step whose body `function` is (course/lessons/t6.py), or None."""
    return next((s.id for s in T6.steps if function in s.writes), None)


def fail_stray(name, strays):
    """Fail for the launch of `name` whose accesses outside its tensors `strays` counted, or whose write
    into a tensor it only reads: at which line, in which function of which step (short: every test that
    launches it may say it)."""
    what, n, frames = strays.worst()
    written = strays.input_by_learner()
    if written:
        tensor, n, frames = written
    where_zh = where_en = ""
    if frames:
        where_zh, where_en = f"，第一个在 {place(frames[-1])}", f", first at {place(frames[-1])}"
        # the line that called it (store_rows from finish_tile, say); not the launch's own line
        caller = caller_of(frames) if frames[-1].name != name else None
        if caller is not None:
            where_zh += f"（由 {place(caller)} 调用）"
            where_en += f" (called from {place(caller)})"
    section, owner = "3", None  # no learner's function on the way: where the grouped launch is explained
    for f in reversed(frames):
        if f.name in SECTION_OF:
            section, owner = SECTION_OF[f.name], f.name
            break
    step = step_of(owner) if owner else None
    mine_zh, mine_en = (f"，在 {step} 的 {owner} 里", f", in {owner} ({step})") if step else ("", "")
    if written:
        fail(
            T6,
            f"{name} 往 {tensor} 里写了 {n} 个单元：{tensor} 是它的输入，它只该读，不该写{mine_zh}{where_zh}"
            "（这里拦下了，没有真的做；在 GPU 上这会改掉输入，后面读它的代码和测试都会看到错的值）",
            f"{name} wrote {cells(n)} into {tensor}, an input it should only read{mine_en}{where_en} (stopped "
            "here, not made; on a GPU the input is overwritten, and what reads it later sees wrong values)",
            section,
        )
    verb = ("写", "wrote") if what == "write" else ("读", "read")
    near_zh, near_en = near_words(strays.near.get(what))
    fail(
        T6,
        f"{name} {verb[0]}了 {n} 个不属于它拿到的任何张量的单元{mine_zh}{where_zh}"
        "（这里拦下了，没有真的做；在 GPU 上会碰到别处的内存，崩溃出现在后面的测试里）"
        + (f"；{near_zh}" if near_zh else ""),
        f"{name} {verb[1]} {cells(n)} outside every tensor it was given{mine_en}{where_en} (stopped here, not "
        "made; on a GPU they reach other memory, and a crash comes in a later test)"
        + (f"; {near_en}" if near_en else ""),
        section,
    )


_refusing = []  # True while input_to_refuse is on


@contextmanager
def input_to_refuse():
    """While on, a stray access is stopped and not reported: on input the call must refuse, the launch
    should not have been made at all, and the test says so (a ValueError expected, none raised); the
    lines of the launch are not to blame."""
    _refusing.append(True)
    try:
        yield
    finally:
        _refusing.pop()


def report(name, strays):
    """Fail for a stray access of `name`'s launch, unless input_to_refuse is on."""
    if not _refusing:
        fail_stray(name, strays)


def watch_launches(module, names, monkeypatch):
    """Every launch of module's kernels `names` (those it has) watched, failing on a stray access."""
    strays = Strays(OURS, "t6_probes.py")
    names = tuple(n for n in names if hasattr(module, n))
    bounds.watch_launches(module, names, monkeypatch, strays, lambda name: report(name, strays), READ_ONLY)


UNDEFINED_INT = 3  # what the lanes a masked integer load leaves out, given no `other`, read as (a count of 3)


def undefined_lanes_as_nan(monkeypatch):
    """On the interpreter, the lanes that a masked tl.load leaves out, given no `other`, read as NaN
    where they hold floats, UNDEFINED_INT where they hold integers: on a GPU they are undefined
    (whatever the registers held), where the interpreter alone gives 0.  Code that never uses them
    is unchanged; code that does (a k-box's A past K times TMA's zeros, counts past num_experts in
    the tile total, say) goes wrong here, as it may on a GPU.  TMA's loads pass their own zeros."""
    try:
        from triton.runtime import interpreter

        builder, handle, np_dtype = interpreter.interpreter_builder, interpreter.TensorHandle, interpreter._get_np_dtype
        load = builder.create_masked_load
    except (ImportError, AttributeError):
        return

    def undefined_as_nan(ptrs, mask, other, *rest, **named):
        # A scalar's: its other=0 reaches here as None (the interpreter drops an `other` that is falsy), so
        # only blocks' lanes (more than one: a scalar's handle holds one) are made undefined
        if other is None and np.size(ptrs.data) > 1:
            element = ptrs.get_element_ty()
            kind = np.dtype(np_dtype(element))
            if kind.kind in "fiu":  # floats NaN, integers UNDEFINED_INT
                fill = np.nan if kind.kind == "f" else UNDEFINED_INT
                other = handle(np.full(np.shape(ptrs.data), fill, dtype=kind), element)
        return load(ptrs, mask, other, *rest, **named)

    monkeypatch.setattr(builder, "create_masked_load", undefined_as_nan)


def undefined_rows_words(counts, want_counts, words):
    """words where they say something; else (zh, en) where every expert's count is the same positive multiple of
    UNDEFINED_INT too many: the rows of block_counts past num_blocks, read by a load without other=, were added
    in; ("", "") otherwise."""
    extra = (counts.long() - want_counts.long()).tolist() if counts.shape == want_counts.shape else []
    if words[0] or not extra or len(set(extra)) > 1 or extra[0] <= 0 or extra[0] % UNDEFINED_INT:
        return words
    return (
        f"：每个专家都多了 {extra[0]}，是 {UNDEFINED_INT} 的倍数：T6 的测试把不带 other= 的掩码加载挡住的 lane 填成 "
        f"{UNDEFINED_INT}，"
        "block_counts 里 num_blocks 之后那些被掩码挡住的行也加了进来。加载时给 other=0（没有它，这些 lane 在 GPU 上"
        "没有定义）",
        f": every expert's count is {extra[0]} too many, a multiple of {UNDEFINED_INT}, the value the T6 tests give "
        "the lanes a masked load without other= leaves out: block_counts' rows past num_blocks, masked off, were "
        "added in. Load them with other=0 (without it those lanes are undefined on a GPU)",
    )


HISTOGRAM_STRAYS = []  # (value, bins) of each lane tl.histogram counted outside its bins (cleared for each test)


def histogram_out_of_range(monkeypatch):
    """On the interpreter, record each lane that tl.histogram counts (not masked off) whose value lies
    outside [0, bins): the interpreter drops such a value, but a GPU's tl.histogram has no range check,
    it bins a value by its low bits (Triton's lowering ballots log2(bins) bits, bins at least 32), so
    -32 counts in bin 0 and 33 in bin 1.  A test of ids out of range reads HISTOGRAM_STRAYS."""
    HISTOGRAM_STRAYS.clear()
    try:
        from triton.runtime import interpreter

        builder = interpreter.interpreter_builder
        histogram = builder.create_histogram
    except (ImportError, AttributeError):
        return

    def watched(data, bins, mask, *rest, **named):
        values = np.asarray(data.data)
        counted = np.ones(values.shape, dtype=bool) if mask is None else np.asarray(mask.data, dtype=bool)
        outside = counted & ((values < 0) | (values >= bins))
        HISTOGRAM_STRAYS.extend((int(v), int(bins)) for v in values[outside].tolist())
        return histogram(data, bins, mask, *rest, **named)

    monkeypatch.setattr(builder, "create_histogram", watched)


def tail_lanes_counted(counts, want_counts, ids, experts):
    """(zh, en) where every count but one expert's is right and that expert has exactly the lanes of the last block
    past the last slot too many (with the slots of ids out of range, or without): those lanes were counted as its
    (expert 0's: the load's other=0); ("", "") otherwise."""
    flat = ids.reshape(-1).cpu()
    pad, bad = -flat.numel() % ROUTE_BLOCK, int(((flat < 0) | (flat >= experts)).sum())
    extra = (counts.long() - want_counts.long()).tolist()
    off = [e for e, n in enumerate(extra) if n]
    if not pad or len(off) != 1 or extra[off[0]] not in (pad, pad + bad):
        return "", ""
    e, more = off[0], bool(bad) and extra[off[0]] != pad  # more: the ids out of range counted there too
    also_zh, also_en = (
        (f"，以及专家号越界的 {bad} 个 slot", f" and the {bad} slots whose ids are out of range") if more else ("", "")
    )
    counted_zh, counted_en = (
        (
            "它们被当成专家 0 数了（代替它们的专家号是 0：加载的 other=0，或 tl.where 换的 0）",
            "they were counted as expert 0 (a 0 in place of their id: the load's other=0, or a tl.where's)",
        )
        if e == 0
        else (
            f"它们全被算给了专家 {e}（代替它们专家号的是 {e}：比如 tl.where 换上的值）",
            f"they were all counted for expert {e} (with {e} in place of their id: a tl.where's, say)",
        )
    )
    return (
        f"：多出来的都在专家 {e} 上，正好是最后一块里最后一个 slot 之后的 {pad} 个 lane{also_zh}：{counted_zh}；"
        "count_experts 只数 slot < num_slots、专家号在范围内的 lane",
        f": the extra ones are all expert {e}'s, exactly the {pad} lanes of the last block past the last slot"
        f"{also_en}: {counted_en}; count_experts counts the lanes at slot < num_slots with an id in range alone",
    )
