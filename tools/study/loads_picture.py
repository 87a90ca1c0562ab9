"""make loads --png: the chosen program's loads and stores as a picture (in English)."""

from tools.study import common as study
from tools.study.loads_text import marks
from tools.study.loads_verdict import merge, store_steps

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
