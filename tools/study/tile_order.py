"""Which program computes which tile of C: row-major order beside grouped order (explainer §2).

This runs YOUR tile_coords (in mine/, or the reference with --solution: the file of the lesson whose
step writes it) through the suite's own probe kernel, that lesson's tile_coords_probe
(course/lessons/<id>_probes.py), on the GPU or, without one, through
Triton's interpreter: the maps are what your code does, not what it should do.  Row-major is your
tile_coords with GROUP_M = 1.

    python -m tools.study.tile_order 4 4 2 --wave 4                 # two maps side by side
    python -m tools.study.tile_order 4 4 2 --format markdown        # the same as markdown tables
    python -m tools.study.tile_order 4 4 2 --wave 4 --png content/img/tile_order_4x4_g2.png

In the picture each group of GROUP_M rows has its own shade, grey arrows lead from
pid to pid, and the first --wave programs (the ones a GPU runs at the same time) have thick edges.
The text follows the course's language (COURSE_LANG=zh or en, else the locale; --lang pins it);
the picture is in English.
"""

import argparse

from course.i18n import count, display_width, say, use_lang
from course.registry import lesson_writing, step_writing
from tools.core.tables import ljust, table
from tools.study import common as study

STUDIED = "tile_coords"  # the function this tool runs; its step's lesson is the one studied
GROUP_SHADES = ("#dbe9f6", "#fde3c3")  # alternate groups: blue, orange


def run_tile_coords(num_pid_m, num_pid_n, group_m, solution):
    """[(pid_m, pid_n) for pid in 0 .. num_pid_m * num_pid_n - 1], from the graded tile_coords."""
    lesson = lesson_writing(STUDIED)
    study.load_graded(solution, lesson)
    import torch

    probes = study.probes(lesson)  # its kernel calls the graded module's tile_coords

    device = study.graded_device()
    out = torch.full((num_pid_m * num_pid_n, 2), -1, dtype=torch.int32, device=device)
    try:
        probes.tile_coords_probe[(num_pid_m * num_pid_n,)](out, num_pid_m, num_pid_n, group_m)
    except Exception as e:
        study.stop_if_stub(e)
        raise
    return [tuple(p) for p in out.cpu().tolist()]


def pid_grid(coords, num_pid_m, num_pid_n):
    """grid[m][n] = the pid that computed tile (m, n): None if no pid did, -1 if several did."""
    grid = [[None] * num_pid_n for _ in range(num_pid_m)]
    for pid, (m, n) in enumerate(coords):
        if 0 <= m < num_pid_m and 0 <= n < num_pid_n:
            grid[m][n] = pid if grid[m][n] is None else -1
    return grid


def off_grid(coords, num_pid_m, num_pid_n):
    """[(pid, (pid_m, pid_n))] of the pids whose tile lies outside the grid: no map can show them."""
    return [
        (pid, tuple(mn)) for pid, mn in enumerate(coords) if not (0 <= mn[0] < num_pid_m and 0 <= mn[1] < num_pid_n)
    ]


def label(pid):
    return "?" if pid is None else "!" if pid < 0 else str(pid)


def in_wave(pid, wave):
    return wave is not None and pid is not None and 0 <= pid < wave


def title(group_m):
    if group_m == 1:
        return say(zh="GROUP_M = 1（行优先）", en="GROUP_M = 1 (row-major)")
    return say(zh=f"GROUP_M = {group_m}（分组）", en=f"GROUP_M = {group_m} (grouped)")


def english_title(group_m):
    """The picture's title: the picture is in English whatever the language."""
    return "GROUP_M = 1 (row-major)" if group_m == 1 else f"GROUP_M = {group_m} (grouped)"


def as_text(maps, wave):
    """The maps side by side; the first-wave pids in [brackets]."""
    blocks = []
    for group_m, grid in maps:
        width = max(len(label(p)) for row in grid for p in row) + 2
        rows = [
            "".join((f"[{label(p)}]" if in_wave(p, wave) else label(p)).rjust(width + 1) for p in row) for row in grid
        ]
        blocks.append([title(group_m)] + rows)
    width = max(display_width(line) for line in blocks[0]) + 6
    lines = [ljust(blocks[0][i], width) + blocks[1][i] for i in range(len(blocks[0]))]
    if wave:
        lines.append(
            say(
                zh=f"\n[pid]：第一波，同时运行的 {wave} 个程序。它们要读",
                en=f"\n[pid]: the first wave, {wave} programs running at the same time. They read",
            )
        )
        pad = max(display_width(title(g)) for g, _ in maps) + 2
        lines += [
            "  "
            + ljust(title(g) + say(zh="：", en=":"), pad)
            + say(
                zh=f"A 的 {rows} 个行块和 B 的 {cols} 个列块",
                en=f"{count(rows, 'row-panel')} of A and {count(cols, 'column-panel')} of B",
            )
            for g, rows, cols in wave_footprints(maps, wave)
        ]
    return "\n".join(lines)


def wave_footprints(maps, wave):
    """(GROUP_M, rows of C, columns of C) that the first `wave` pids touch, for each map."""
    for group_m, grid in maps:
        tiles = [(m, n) for m, row in enumerate(grid) for n, p in enumerate(row) if in_wave(p, wave)]
        yield group_m, len({m for m, _ in tiles}), len({n for _, n in tiles})


def as_markdown(maps, wave):
    """One table per map, the first-wave pids in bold."""
    tables = []
    for group_m, grid in maps:
        headers = [title(group_m)] + [f"pid_n = {n}" for n in range(len(grid[0]))]
        rows = [
            [f"pid_m = {m}"] + [f"**{label(p)}**" if in_wave(p, wave) else label(p) for p in row]
            for m, row in enumerate(grid)
        ]
        tables.append(table(headers, rows, markdown=True))
    return "\n\n".join(tables)


def draw(maps, wave, path):
    num_pid_m, num_pid_n = len(maps[0][1]), len(maps[0][1][0])
    fig, axes = study.figure(2 * (0.6 * num_pid_n + 1.0), 0.6 * num_pid_m + 1.6, ncols=2)
    for ax, (group_m, grid) in zip(axes[0], maps, strict=False):
        fills = [[GROUP_SHADES[(m // group_m) % 2]] * num_pid_n for m in range(num_pid_m)]
        bold = [[in_wave(p, wave) for p in row] for row in grid]
        study.draw_grid(ax, 0, 0, [[label(p) for p in row] for row in grid], fills, bold)
        order = sorted((p, m, n) for m, row in enumerate(grid) for n, p in enumerate(row) if p is not None and p >= 0)
        for (_, m0, n0), (_, m1, n1) in zip(order, order[1:], strict=False):  # arrows stop short of the numbers
            ax.annotate(
                "",
                xy=(n1 + 0.5, -m1 - 0.5),
                xytext=(n0 + 0.5, -m0 - 0.5),
                zorder=3.5,
                arrowprops=dict(arrowstyle="->", color="0.55", linewidth=1, shrinkA=9, shrinkB=9),
            )
        ax.set_title(english_title(group_m), fontsize=11)
        study.number_and_frame_grid(ax, num_pid_m, num_pid_n)
    note = "row labels: pid_m, column labels: pid_n; shades: groups of GROUP_M rows; grey arrows: pid order"
    if wave:
        note += f"\nthick edges: the first wave, pids 0 to {wave - 1}, running at the same time"
    fig.text(0.5, 0.02, note, ha="center", va="bottom", fontsize=8, color="0.3")
    fig.subplots_adjust(left=0.02, right=0.98, top=0.88, bottom=0.16 if wave else 0.1, wspace=0.1)
    study.save_png(fig, path)


def main(argv=None):
    parser = study.Parser("make tiles", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("num_pid_m", type=int, nargs="?", default=4, help="rows of tiles (default 4)")
    parser.add_argument("num_pid_n", type=int, nargs="?", default=4, help="columns of tiles (default 4)")
    parser.add_argument("group_m", type=int, nargs="?", default=2, help="GROUP_M of the grouped map (default 2)")
    parser.add_argument("--wave", type=int, help="highlight pids 0 .. WAVE-1, the programs that run at once")
    study.add_report_flags(parser, STUDIED, "draw the two maps into PATH instead of printing them")
    args = parser.parse_args(argv)
    use_lang(args)
    if min(args.num_pid_m, args.num_pid_n, args.group_m) < 1 or (args.wave is not None and args.wave < 0):
        parser.error("num_pid_m, num_pid_n and group_m must be at least 1, --wave at least 0")
    coords = {g: run_tile_coords(args.num_pid_m, args.num_pid_n, g, args.solution) for g in (1, args.group_m)}
    maps = [(g, pid_grid(coords[g], args.num_pid_m, args.num_pid_n)) for g in coords]
    if args.png:
        draw(maps, args.wave, args.png)
        return
    print(as_markdown(maps, args.wave) if args.format == "markdown" else as_text(maps, args.wave))
    if any(p is None or p < 0 for _, grid in maps for row in grid for p in row):
        step = step_writing(STUDIED).id
        print(
            say(
                zh=f"\n?：没有程序算这个 tile；!：不止一个程序算它（`make test STEP={step}` 会说得更多）",
                en=f"\n?: no program computes this tile; !: more than one does (`make test STEP={step}` says more)",
            )
        )
    for g, at in coords.items():  # the pids the maps cannot show: their tile lies outside the grid
        off = off_grid(at, args.num_pid_m, args.num_pid_n)
        if off:
            shown = ", ".join(f"{pid} -> {tuple(mn)}" for pid, mn in off[:8]) + (", ..." if len(off) > 8 else "")
            print(
                say(
                    zh=f"GROUP_M={g}：{len(off)} 个 pid 的 tile 落在 {args.num_pid_m} x {args.num_pid_n} 的网格之外"
                    f"（pid -> (pid_m, pid_n)）：{shown}",
                    en=f"GROUP_M={g}: {count(len(off), 'pid')} got a tile outside the {args.num_pid_m} x "
                    f"{args.num_pid_n} grid (pid -> (pid_m, pid_n)): {shown}",
                )
            )


if __name__ == "__main__":
    main()
