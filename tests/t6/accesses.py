"""Lesson T6's watch on what its kernels read and write: their own tensors, nothing before the offsets
(T6.2, T6.3).  Accesses records a launch's accesses under an AddressWatch (tests/bounds.py);
check_inside says what it found."""

import traceback

import numpy as np
import torch

from course.i18n import cells
from course.messages import fail

from .common import T6
from .stray import OURS
from bounds import caller_of, near_words, place

OFFSETS_POISON = 1 << 20  # what the cells before the tests' offsets hold: a row past every expert's


FRONT = 16  # cells of poison before the offsets (64 bytes: the view stays aligned)


def offsets_after_poison(offsets):
    """offsets' values in a view with OFFSETS_POISON in the FRONT cells before it: what lies before
    a fresh tensor is often 0, so offsets[-1] (for expert 0's first row, say) would read right by
    luck; here a GPU, where nothing watches addresses, puts that tile past every expert's rows."""
    buf = torch.full((FRONT + offsets.numel(),), OFFSETS_POISON, dtype=offsets.dtype, device=offsets.device)
    buf[FRONT:] = offsets
    return buf[FRONT:]


class Accesses:
    """Every access of a launch under an AddressWatch (tests/bounds.py, seen=): (what, addresses, inside)."""

    def __init__(self):
        self.log, self.kernels = [], []  # kernels[i]: the kernel that made log[i], where the watch said
        self.first_stray = None  # (frames in the lesson's files, byte address) of the first access outside

    def __call__(self, what, addresses, inside, kernel=None):
        self.log.append((what, addresses.copy(), inside.copy()))
        self.kernels.append(kernel)
        if self.first_stray is None and not inside.all():
            frames = [f for f in traceback.extract_stack() if f.filename.endswith(OURS)]
            self.first_stray = frames, int(addresses[~inside][0])

    def first_stray_words(self, watch):
        """(zh, en) naming the line of the first access outside every tensor (and the line that called its
        function), and the tensor of the watched launch it lies just past or before; ("", "") if unknown."""
        if self.first_stray is None:
            return "", ""
        frames, address = self.first_stray
        zh = en = ""
        if frames:
            zh, en = f"，第一个在 {place(frames[-1])}", f", first at {place(frames[-1])}"
            caller = caller_of(frames)
            if caller is not None:
                zh, en = zh + f"（由 {place(caller)} 调用）", en + f" (called from {place(caller)})"
        near = watch.nearest(address) if hasattr(watch, "nearest") else None
        near_zh, near_en = near_words(near and (*near, False))
        return zh + (f"；{near_zh}" if near_zh else ""), en + (f"; {near_en}" if near_en else "")

    def writes_into(self, t):
        """{kernel: lanes} of the stores that fell inside t's bytes (t one of the launch's tensors)."""
        first = t.data_ptr()
        end = first + t.numel() * t.element_size()
        found = {}
        for (what, addresses, inside), kernel in zip(self.log, self.kernels, strict=True):
            hits = int((inside & (addresses >= first) & (addresses < end)).sum()) if what == "write" else 0
            if hits:
                found[kernel] = found.get(kernel, 0) + hits
        return found

    def read_just_before(self, t):
        """Whether a read outside every tensor hit the cell right before t: t[-1]."""
        cell = t.data_ptr() - t.element_size()
        return any(what == "read" and (addresses[~inside] == cell).any() for what, addresses, inside in self.log)

    def writes_past_end(self, t):
        """How many writes outside every tensor fell at or past t's end (none before it)."""
        end = t.data_ptr() + t.numel() * t.element_size()
        outside = [addresses[~inside] for what, addresses, inside in self.log if what == "write"]
        outside = [out for out in outside if out.size]
        if any((out < end).any() for out in outside):
            return 0
        return sum(int(out.size) for out in outside)

    def furthest_write(self, t):
        """The index, in t's elements from its start, of the furthest write outside every tensor (-1: none)."""
        outside = [addresses[~inside] for what, addresses, inside in self.log if what == "write"]
        far = max((int(out.max()) for out in outside if out.size), default=None)
        return -1 if far is None else (far - t.data_ptr()) // t.element_size()

    def writes_before(self, t):
        """How many writes outside every tensor fell before t's start (none at or past it)."""
        outside = [addresses[~inside] for what, addresses, inside in self.log if what == "write"]
        outside = [out for out in outside if out.size]
        if any((out >= t.data_ptr()).any() for out in outside):
            return 0
        return sum(int(out.size) for out in outside)

    def reads_reach(self, t, cells):
        """Whether a read outside every tensor fell `cells` cells or more past t's end."""
        far = t.data_ptr() + (t.numel() + cells) * t.element_size()
        return any(what == "read" and (addresses[~inside] >= far).any() for what, addresses, inside in self.log)

    def reads_just_after(self, t, cells):
        """Whether every access outside every tensor (at least one) read one of the `cells` cells
        right after t's end."""
        end = t.data_ptr() + t.numel() * t.element_size()
        hits = 0
        for what, addresses, inside in self.log:
            out = addresses[~inside]
            if not out.size:
                continue
            if what != "read" or ((out < end) | (out >= end + cells * t.element_size())).any():
                return 0
            hits += int(out.size)
        return hits > 0


def check_inside(watch, accesses, offsets, case, who, section, sorted_slots=None, block_m=0, x=None, top_k=1):
    """Fail when the watched launch read or wrote outside every tensor it was given; by name when it
    read offsets[-1], or (sorted_slots given) only the BLOCK_M cells past sorted_slots' end, or (x, a
    contiguous [T, K], given) only rows past x's last, up to row T * top_k - 1."""
    whole_rows = x is not None and accesses.reads_reach(x, x.shape[1])  # a row past x's last, or further
    if whole_rows and top_k > 1 and watch.outside and accesses.reads_just_after(x, (top_k - 1) * x.numel()):
        fail(
            T6,
            f"{case}：{who} 读了 x 最后一行（token {x.shape[0] - 1}）之后的行（这里拦下了，没有真的读），"
            f"最远不超过第 {x.shape[0] * top_k - 1} 行：这正是拿 slot 当 x 的行号时能到的地方；"
            "排好序的第 i 行读的是 x 的第 sorted_slots[i] // top_k 行，也就是这个 slot 的 token",
            f"{case}: {who} read rows of x past its last (token {x.shape[0] - 1}) (stopped here, not made), none "
            f"past row {x.shape[0] * top_k - 1}: as far as a slot taken for x's row number reaches; sorted row i "
            "reads row sorted_slots[i] // top_k of x, the slot's token",
            "4.1",
        )
    if x is not None and watch.outside and not whole_rows and accesses.reads_just_after(x, x.shape[1]):
        fail(
            T6,
            f"{case}：{who} 读了 x 末尾之后、不到一行之内的单元（这里拦下了，没有真的读）："
            "A 的每次读取都要停在 x 的最后一行和第 K - 1 列（k0 + cols < K 的掩码）",
            f"{case}: {who} read cells just past the end of x, less than a row past it (stopped here, not made): "
            "every load of A stops at x's last row and at column K - 1 (the mask k0 + cols < K)",
            "4.1",
        )
    past = accesses.reads_just_after(sorted_slots, block_m) if sorted_slots is not None and watch.outside else 0
    if past:
        fail(
            T6,
            f"{case}：{who} 读了 sorted_slots 末尾之后的单元（这里拦下了，没有真的读）："
            "最后一个 tile 里越过专家末行的行不是 live 行，每次读 sorted_slots（gathered_rows 的、store_rows 的）"
            "都要用 live 把它们遮掉",
            f"{case}: {who} read cells just past the end of sorted_slots (stopped here, not made): the rows of "
            "the last tile past the expert's end are not live, and every load of sorted_slots (gathered_rows's, "
            "store_rows's) must mask them off",
            "4.1",
        )
    for lanes in watch.outside.values():
        if accesses.read_just_before(offsets):
            fail(
                T6,
                f"{case}：{who} 读了 offsets[-1]，也就是 offsets 前面的那个单元（这里拦下了，没有真的读）："
                "专家 0 的行从 0 开始，并没有 offsets[-1]；专家 e 的第一行是 offsets[e] - counts[e]",
                f"{case}: {who} read offsets[-1], the cell just before offsets (stopped here, not made): expert 0's "
                "rows start at 0, and there is no offsets[-1]; expert e's first row is offsets[e] - counts[e]",
                section,
            )
        if accesses.reads_just_after(offsets, 1):
            fail(
                T6,
                f"{case}：{who} 读了 offsets[num_experts]，也就是 offsets 末尾之后的那个单元"
                "（这里拦下了，没有真的读）：专家 e 的行尾是 offsets[e]（行首是 offsets[e] - counts[e]），"
                "并没有 offsets[num_experts]",
                f"{case}: {who} read offsets[num_experts], the cell just past offsets' end (stopped here, not made): "
                "expert e's rows end at offsets[e] (and start at offsets[e] - counts[e]); there is no "
                "offsets[num_experts]",
                section,
            )
        where_zh, where_en = accesses.first_stray_words(watch)
        fail(
            T6,
            f"{case}：{who} 读了 {lanes['read']} 个、写了 {lanes['write']} 个不属于它拿到的任何张量的单元{where_zh}"
            "（这里拦下了，没有真的读写）",
            f"{case}: {who} read {lanes['read']} and wrote {cells(lanes['write'])} outside every tensor it was "
            f"given{where_en} (stopped here, not made)",
            section,
        )


def fail_if_read_past_k(accesses, x, K, rows, block_k, who, section):
    """Fail where `who` read cells of x's padding (x a view whose rows hold K values, then padding).
    Named as the K tail left unmasked only where every such cell lies in a row it gathers, in the last
    k-box's columns; as rows taken K apart (the pitch K, not stride_xm) where every read of x is one of
    its rows' first K cells at that pitch; else the cells are said, and where x's cells are, no cause."""
    esize, sm = x.element_size(), x.stride(0)
    first, end = x.data_ptr(), x.data_ptr() + x.shape[0] * sm * esize
    read = np.concatenate(
        [(a[(a >= first) & (a < end) & inside] - first) // esize for what, a, inside in accesses.log if what == "read"]
        + [np.zeros(0, dtype=np.int64)]
    )
    past = read[read % sm >= K]
    if not past.size:
        return
    rows = np.asarray(torch.as_tensor(rows).cpu().long())
    tail = bool(np.isin(past // sm, rows).all() and (past % sm < -(-K // block_k) * block_k).all())
    pitch_k = not tail and bool(np.isin(read // K, rows).all())
    fail(
        T6,
        f"{who} 读了 x 每行 K={K} 之后的 {past.size} 个单元（这里 x 是带填充的视图）"
        + (
            "：A 的块在 K 处要用掩码挡住"
            if tail
            else f"：它读的每个单元都是按行距 K 数出来的，x 的行距是 stride_xm = {sm}，不是 K"
            if pitch_k
            else "，并非都在它那些行最后一个 k 块不加掩码时会读到的地方："
            f"x 第 r 行第 k 列在 r * stride_xm + k * stride_xk（这里是 {sm} 和 1）"
        ),
        f"{who} read {cells(past.size)} of x past K={K} in its rows (the padding of a view here)"
        + (
            ": mask A's load at K"
            if tail
            else f": every cell it read is one of its rows' first K at a row pitch of K; x's rows are "
            f"stride_xm = {sm} apart, not K"
            if pitch_k
            else ", not all where its rows' last k-box, unmasked, would read: row r, column k of x is at "
            f"r * stride_xm + k * stride_xk ({sm} and 1 here)"
        ),
        section,
    )


def fail_if_undefined_used(live, function, section):
    """Fails naming the cause when the live rows of a product of NaN-free inputs hold NaN: under
    stray.undefined_lanes_as_nan the only NaN are the lanes a masked load of A left out without
    `other`, undefined on a GPU; past K they meet TMA's zeros, and NaN * 0 is NaN."""
    bad = int(torch.isnan(live).sum())
    if bad:
        fail(
            T6,
            f"{function}：输入里没有 NaN，live 行却有 {bad} 个 NaN：A 的加载用上了被掩掉、又没有给 other 的那些位置。"
            "在 GPU 上那些位置的值是未定义的（这里读成 NaN，只有解释器才给 0），过了 K 以后它们乘的是 TMA 填的 0，"
            "而 NaN * 0 还是 NaN：加载 A 时写上 other=0.0",
            f"{function}: the inputs hold no NaN, and the live rows hold {bad} NaN: A's load used lanes it masked off "
            "without an `other`.  On a GPU those lanes are undefined (read as NaN here; the interpreter alone gives "
            "0), past K they meet TMA's zeros, and NaN * 0 is NaN: load A with other=0.0",
            section,
        )
