"""The picture of tools/study/groups.py: each expert's m-blocks (rows) by n-blocks (columns), every
cell the global tile id done there, shaded by the program that did it; a ragged last m-block has
thick edges.  In English whatever the language, as the other study tools' pictures."""

from tools.study import common as study
from tools.study.groups_check import expected_tiles

PROGRAM_SHADES = ("#dbe9f6", "#fde3c3", "#d9f0d3", "#f2d7ee", "#fff2b3", "#e0e0e0", "#cfe8e6", "#f6d5d5")


def places(s):
    """{(expert, m-block, n-block): [(tile id, epilogues, program, row begin, row end)]} of what was
    done, and every place the counts give (an empty list where nothing was done)."""
    out = {key: [] for key in expected_tiles(s.counts, s.block_m, s.block_n, s.n)}
    for t, (epilogues, e, pm, pn, begin, end, prog) in s.done_tiles():
        out.setdefault((e, pm, pn), []).append((t, epilogues, prog, begin, end))
    return out


def draw(s, path):
    done = places(s)
    rows = sorted({(e, pm) for e, pm, _ in done})
    cols = max([s.num_pid_n] + [pn + 1 for _, _, pn in done])
    want = expected_tiles(s.counts, s.block_m, s.block_n, s.n)
    labels, fills, bold, sides = [], [], [], []
    for e, pm in rows:
        label_row, fill_row, bold_row = [], [], []
        for pn in range(cols):
            here = done.get((e, pm, pn), [])
            if not here:
                label_row.append("?")
                fill_row.append("white")
            elif len(here) > 1 or here[0][1] > 1 or here[0][3:] != want.get((e, pm, pn)):  # twice, or wrong rows
                label_row.append("+".join(str(t) for t, *_ in here) + "!")
                fill_row.append("white")
            else:
                label_row.append(str(here[0][0]))
                fill_row.append(PROGRAM_SHADES[here[0][2] % len(PROGRAM_SHADES)])
            begin, end = want.get((e, pm, pn), (0, s.block_m))
            bold_row.append(end - begin < s.block_m)
        labels.append(label_row)
        fills.append(fill_row)
        bold.append(bold_row)
        begin, end = want.get((e, pm, 0), (None, None))
        if begin is None:
            sides.append("not a tile")
        else:
            sides.append(f"row {begin}" if end - begin == 1 else f"rows {begin}..{end - 1}")
    fig, axes = study.figure(max(6.4, 0.8 * cols + 3.6), 0.5 * len(rows) + 2.0)  # room for the title and notes
    ax = axes[0][0]
    study.draw_grid(ax, 0, 0, labels, fills, bold)
    for r, ((e, pm), side) in enumerate(zip(rows, sides, strict=True)):
        ax.text(-0.15, -r - 0.5, f"expert {e}  m{pm}", ha="right", va="center", fontsize=9)
        ax.text(cols + 0.15, -r - 0.5, side, ha="left", va="center", fontsize=8, color="0.3")
        if r and rows[r - 1][0] != e:  # a line between experts
            ax.plot([-2.4, cols + 2.2], [-r, -r], color="0.2", linewidth=1.2, linestyle="--")
    for c in range(cols):
        ax.text(c + 0.5, 0.3, f"n{c}", ha="center", va="center", fontsize=9, color="0.4")
    empty = [str(e) for e, c in enumerate(s.counts) if c == 0]
    title = f"{len(want)} tiles over {len(s.counts)} experts, {s.programs} programs"
    ax.set_title(
        title + (f"; no rows: expert{'s' * (len(empty) > 1)} {', '.join(empty)}" if empty else ""), fontsize=10
    )
    ax.set_xlim(-2.5, cols + 2.3)
    ax.set_ylim(-max(1, len(rows)) - 0.1, 0.6)
    ax.set_aspect("equal")
    ax.axis("off")
    note = (
        "cells: global tile id, shaded by the program that did it; thick edges: a ragged last m-block\n"
        "?: no tile done here; a!: done more than once, or on the wrong rows; a+b!: two tiles at one place"
    )
    from matplotlib.patches import Patch

    shown = range(min(s.programs, len(PROGRAM_SHADES)))  # more programs than shades: the shades repeat
    handles = [
        Patch(facecolor=PROGRAM_SHADES[p], edgecolor="black", linewidth=0.5, label=f"program {p}") for p in shown
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    fig.text(0.5, 0.02, note, ha="center", va="bottom", fontsize=7, color="0.3")
    fig.subplots_adjust(left=0.02, right=0.82, top=0.9, bottom=0.14)
    study.save_png(fig, path)
