"""make loads, as text: a grid per K step for A and B, one for C, and the sentences around them.

By default it fits a terminal WIDTH columns wide: a grid too wide or taller than TALL rows is drawn
compact (a run of rows or columns marked alike becomes one, labelled with its range), A's grid goes
above B's when the two do not fit side by side, the programs with nothing to report share one
line, and sentences wrap.  --wide draws every cell, A beside B, without wrapping."""

import re

from course.i18n import display_width, say, wrap
from tools.study.loads_verdict import element, listing, merge, store_steps, summary

WIDTH = 100  # columns of the default view
TALL = 20  # rows of a grid drawn cell by cell; a taller one is drawn compact
MAX_RUNS = 40  # rows (runs of rows) of a compact grid before the rest is left to --wide


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


def runs(keys):
    """[(first, last)] of the runs of equal consecutive keys, by index."""
    out = []
    for i, key in enumerate(keys):
        if out and keys[out[-1][0]] == key:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def span(a, b):
    return str(a) if a == b else f"{a}-{b}"


def compact_grid_lines(t, cells, width):
    """The grid with each run of rows (and of columns) marked alike drawn once, labelled with its
    range ("0-31"), at most `width` columns wide: every cell of a run has the mark shown."""
    rows, cols = t.shape
    r0, r1 = min([0] + [r for r, _ in cells]), max([rows - 1] + [r for r, _ in cells])
    c0, c1 = min([0] + [c for _, c in cells]), max([cols - 1] + [c for _, c in cells])

    def mark(r, c):
        return cells.get((r, c), "-" if t.inside((r, c)) else " ")

    row_runs = [
        (r0 + a, r0 + b) for a, b in runs([tuple(mark(r, c) for c in range(c0, c1 + 1)) for r in range(r0, r1 + 1)])
    ]
    col_runs = [
        (c0 + a, c0 + b) for a, b in runs([tuple(mark(r, c) for r in range(r0, r1 + 1)) for c in range(c0, c1 + 1)])
    ]
    label = max(len(span(a, b)) for a, b in row_runs)
    shown, used = [], label
    for a, b in col_runs:
        cell = max(len(span(a, b)), 1) + 1
        if used + cell > width - 4:  # room for " ..."
            break
        shown.append((a, b, cell))
        used += cell
    cut = len(shown) < len(col_runs)
    lines = [" " * label + "".join(span(a, b).rjust(w) for a, b, w in shown) + (" ..." if cut else "")]
    for a, b in row_runs[:MAX_RUNS]:
        lines.append(
            span(a, b).rjust(label) + "".join(mark(a, c).rjust(w) for c, _, w in shown) + (" ..." if cut else "")
        )
    if len(row_runs) > MAX_RUNS or cut:
        lines.append(
            say(
                zh=f"（还有 {len(row_runs) - min(MAX_RUNS, len(row_runs))} 组行、{len(col_runs) - len(shown)} 组列"
                "没有画出来：--wide 画出每一格）",
                en=f"({len(row_runs) - min(MAX_RUNS, len(row_runs))} more runs of rows and "
                f"{len(col_runs) - len(shown)} of columns not drawn: --wide draws every cell)",
            )
        )
    return [line.rstrip() for line in lines]


class View:
    """How the text is laid out: width None draws every cell, side by side, unwrapped (--wide);
    a number fits the text into that many columns."""

    def __init__(self, width=WIDTH):
        self.width, self.compacted = width, False

    def grid(self, t, cells, indent=2):
        full = grid_lines(t, cells)
        fits = len(full) - 1 <= TALL and max(map(display_width, full)) + indent <= (self.width or 0)
        if self.width is None or fits:
            return full
        self.compacted = True
        return compact_grid_lines(t, cells, self.width - indent)

    def pair(self, left, right, indent=2):
        """Two blocks of lines side by side, or the first above the second when they do not fit."""
        together = side_by_side(left, right)
        if self.width is None or max(map(display_width, together)) + indent <= self.width:
            return together
        return left + [""] + right

    def fit(self, lines):
        """Each line longer than the width wrapped, its continuation indented under its text."""
        if self.width is None:
            return lines
        out = []
        for line in lines:
            if display_width(line) <= self.width:
                out.append(line)
                continue
            lead = re.match(r"\s*(?:!! )?", line)[0]
            out += wrap(line[len(lead) :], self.width, first=lead, rest=" " * (len(lead) + 2))
        return out


def side_by_side(left, right, gap=6):
    width = max(display_width(line) for line in left) + gap
    height = max(len(left), len(right))
    left, right = left + [""] * (height - len(left)), right + [""] * (height - len(right))
    return [(a + " " * (width - display_width(a)) + b).rstrip() for a, b in zip(left, right, strict=True)]


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
            zh=f"A、B、C 都放在填满 NaN 的更大缓冲区里，每一边 {args.pad} 个元素（--pad），所以 stride 里也算上了"
            "填充区；漏掉的掩码会读到 NaN，标成 !",
            en=f"A, B and C sit inside larger buffers full of NaN, {args.pad} elements on each side (--pad), so the "
            "strides count the padding too; a load a mask should have stopped reads the NaN there, and shows as !",
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


def loads_text(prog, t_a, t_b, view):
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
                blocks.append([title] + view.grid(t, marks(t, s)))
            else:
                blocks.append([say(zh=f"{t.name}：这一步没有加载", en=f"{t.name}: no load in this step")])
        lines.append(say(zh=f"K 第 {k} 步", en=f"K step {k}"))
        lines += ["  " + line for line in view.pair(*blocks)]
        for t, steps in ((t_a, prog.a), (t_b, prog.b)):
            if k < len(steps):
                lines += ["  " + line for line in step_problems(t, steps[k], k, say(zh="加载", en="loads"))]
        lines.append("")
    return lines


def legend(view):
    """The marks, as many to a line as fit; and how to read a compact grid, if one was drawn."""
    items = say(
        zh=[
            "# 加载（C：写入）",
            ". 被掩码关掉的 lane",
            "! 张量之外",
            "2-9 同一元素的次数",
            "- 这一步没碰的元素",
            "x 写入的值不对",
        ],
        en=[
            "# loaded (C: written)",
            ". lane masked off",
            "! outside the tensor",
            "2-9 that many times",
            "- element not touched this step",
            "x written with a wrong value",
        ],
    )
    lines = [items[0]]
    for item in items[1:]:
        if view.width is not None and display_width(lines[-1] + "   " + item) > view.width:
            lines.append(item)
        else:
            lines[-1] += "   " + item
    if view.compacted:
        lines.append(
            say(
                zh="行号或列号写成 a-b 的格子代表第 a 到 b 行（列）的每一格，它们的标记都一样",
                en="a row or column labelled a-b stands for each of rows (columns) a to b, all marked alike",
            )
        )
    return lines


# ------------------------------------------------------------------------------------------------
# Running it
# ------------------------------------------------------------------------------------------------


def report(seen, args, path, width=WIDTH):
    """The text of make loads, `width` columns wide at most (None: --wide)."""
    view = View(width)
    t_a, t_b, t_c = seen.tensors
    pid = (args.pid_m, args.pid_n)
    grid_shape = (max(m for m, _ in seen.grid) + 1, max(n for _, n in seen.grid) + 1)
    prog = seen.loads[pid]
    lines = loads_text(prog, t_a, t_b, view)
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
        lines += ["  " + line for line in view.grid(t_c, cells)]
        for s in steps:
            lines += ["  " + line for line in step_problems(t_c, s, None, say(zh="写入", en="writes"))]
        lines.append("")
    lines.append(say(zh=f"程序 {pid} 合计：", en=f"Program {pid} over all its steps:"))
    lines += [("   " if ok else "!! ") + text for ok, text in summary(seen, args, pid)]
    if seen.acc_note:
        lines.append("   " + seen.acc_note)
    lines += other_programs(seen, args, pid, view)
    head = header(args, t_a, t_b, grid_shape, path) + [""] + legend(view) + [""]
    return "\n".join(view.fit(head + lines))


def other_programs(seen, args, pid, view):
    """A line for each other program; in the default view those with nothing to report share one."""
    others = [p for p in seen.grid if p != pid]
    lines = ["", say(zh="其他程序：", en="The other programs:")] if others else []
    everything = say(zh="加载和写入都在张量之内，各恰好一次", en="every load and store inside, each exactly once")
    fine = []
    for p in others:
        bad = [text for ok, text in summary(seen, args, p) if not ok]
        if not bad:
            fine.append(p)
            if view.width is None:
                lines.append("   " + f"{p}" + say(zh="：", en=": ") + everything)
            continue
        lines.append("!! " + f"{p}" + say(zh="：", en=": ") + say(zh="；", en="; ").join(bad))
        lines.append(
            "   "
            + say(
                zh=f'看这一个：make loads ARGS="... --pid-m {p[0]} --pid-n {p[1]}"',
                en=f'to see it: make loads ARGS="... --pid-m {p[0]} --pid-n {p[1]}"',
            )
        )
    if fine and view.width is not None:
        named = ", ".join(map(str, fine[:4]))
        if len(fine) > 4:
            named += say(zh=f" 等 {len(fine)} 个程序", en=f" and {len(fine) - 4} more programs")
        lines.append("   " + named + say(zh="：", en=": ") + everything)
    return lines
