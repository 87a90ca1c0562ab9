"""Which program does which k-blocks of which tile: the stream-K split (explainer §4 of the lesson
whose step writes sk_run).

This runs YOUR sk_run and sk_program_of (in mine/, or the reference with --solution)
through a probe kernel of this file, on the GPU or, without one, through Triton's interpreter, and
YOUR stream_k_split and persistent_grid on the host: the table is what your code does, not what it
should do.  One row per tile, one column per k-block, each cell the program that sums that k-block;
the program holding a tile's last k-block owns the tile (runs its epilogue), the others publish
partials.  The data-parallel tiles (after the stream-K ones) are done whole by one program each.

    python -m tools.study.streamk                           # §4.1's example: 4 tiles x 5 k-blocks, 3 programs
    python -m tools.study.streamk 96 128 256 --programs 5   # M N K: 12 tiles of 8 k-blocks, 7 of them stream-K
    python -m tools.study.streamk --mode dp                 # no stream-K at all
    python -m tools.study.streamk --format markdown
    python -m tools.study.streamk --png /tmp/streamk.png
"""

import argparse
import shutil
import sys
from dataclasses import dataclass

from course.i18n import display_width, say, wrap
from course.registry import lesson_writing
from tools.core.tables import rjust, table
from tools.study import common as study

# The description in Chinese: --help speaks the learner's language (COURSE_LANG), as make loads' does.
DESCRIPTION_ZH = """哪个程序算哪个 tile 的哪些 k-block：stream-K 的切分（讲义 §4，写 sk_run 的那一课）。

跑的是你自己的 sk_run 和 sk_program_of（mine/ 里的；--solution：参考答案），经过本文件的一个探针
kernel，有 GPU 时在 GPU 上、没有时在 Triton 解释器上；主机端跑你的 stream_k_split 和 persistent_grid：
表里是你的代码做了什么，不是它该做什么。每个 tile 一行，每个 k-block 一列，格子里是累加这个 k-block
的程序；持有 tile 最后一个 k-block 的程序是 owner（跑 epilogue），其余的发布 partial。stream-K 之后的
数据并行 tile 各由一个程序整块算完。

    make streamk                                    # §4.1 的例子：4 个 tile x 5 个 k-block，3 个程序
    make streamk ARGS="96 128 256 --programs 5"     # M N K：12 个 tile、每个 8 个 k-block，7 个走 stream-K
    make streamk ARGS="--mode dp"                   # 完全不用 stream-K
    make streamk ARGS="--format markdown"
    make streamk ARGS="--png /tmp/streamk.png"
"""

STUDIED = "sk_run"  # with sk_program_of and stream_k_split; the step that writes it gives the lesson

PROGRAM_SHADES = ("#dbe9f6", "#fde3c3", "#d9f0d3", "#f2d7ee", "#fff2b3", "#e0e0e0", "#cfe8e6", "#f6d5d5")


def cdiv(a, b):
    return -(-a // b)


@dataclass
class Split:
    """What the graded functions say about one problem."""

    num_tiles: int
    k_blocks: int
    sk_tiles: int
    programs: int
    runs: list  # runs[p] = (begin, end) from sk_run, over the sk_tiles * k_blocks stream-K k-blocks
    program_of: list  # program_of[it] = sk_program_of(it), -1 where no run holds it

    @property
    def total(self):
        return self.sk_tiles * self.k_blocks

    def holders(self, it):
        """The programs whose run [begin, end) holds global k-block it."""
        return [p for p, (b, e) in enumerate(self.runs) if b <= it < e]

    def cell(self, tile, kb):
        """The program that sums k-block kb of tile: None if none does, -1 if several do."""
        if tile >= self.sk_tiles:
            return (tile - self.sk_tiles) % self.programs
        holders = self.holders(tile * self.k_blocks + kb)
        return holders[0] if len(holders) == 1 else None if not holders else -1

    def owner(self, tile):
        """The program that runs the tile's epilogue: the one holding its last k-block."""
        return self.cell(tile, self.k_blocks - 1)

    def publishers(self, tile):
        """The other programs that sum some of the tile's k-blocks and publish a partial, in order."""
        if tile >= self.sk_tiles:
            return []
        seen = []
        for kb in range(self.k_blocks):
            p = self.cell(tile, kb)
            if p is not None and p >= 0 and p != self.owner(tile) and p not in seen:
                seen.append(p)
        return seen

    def problems(self):
        """What is wrong with the split, one line each (empty when every rule of §4.1 holds)."""
        out = []
        for it in range(self.total):
            n = len(self.holders(it))
            if n != 1:
                out.append(
                    say(
                        zh=f"k-block {it}（tile {it // self.k_blocks}）被 {n} 个 program 的 run 覆盖，应当正好 1 个",
                        en=f"k-block {it} (tile {it // self.k_blocks}) is in {n} programs' runs, not exactly 1",
                    )
                )
        ends = [0] + [e for _, e in self.runs]
        if self.total and [b for b, _ in self.runs] != ends[:-1]:
            out.append(
                say(
                    zh="各 program 的 run 没有按 pid 顺序首尾相接",
                    en="the runs do not lie end to end in pid order",
                )
            )
        lengths = [e - b for b, e in self.runs]
        if self.total and lengths and max(lengths) - min(lengths) > 1:
            out.append(
                say(
                    zh=f"run 长度相差超过 1 个 k-block：{lengths}",
                    en=f"the runs differ by more than one k-block: {lengths}",
                )
            )
        for it in range(self.total):
            holders = self.holders(it)
            if len(holders) == 1 and self.program_of[it] != holders[0]:
                out.append(
                    say(
                        zh=f"sk_program_of({it}) = {self.program_of[it]}，但持有它的是 program {holders[0]}",
                        en=f"sk_program_of({it}) = {self.program_of[it]}, but program {holders[0]}'s run holds it",
                    )
                )
        return out


def _probe_kernel():
    """A kernel calling the graded sk_run and sk_program_of (module globals, set by compute)."""
    import triton
    import triton.language as tl

    @triton.jit
    def streamk_probe(runs_ptr, owners_ptr, total, NUM_PROGS):
        pid = tl.program_id(0)
        begin, end = sk_run(pid, total, NUM_PROGS)  # noqa: F821 (the graded function, set below)
        tl.store(runs_ptr + 2 * pid, begin)
        tl.store(runs_ptr + 2 * pid + 1, end)
        for it in range(begin, end):
            if (it >= 0) & (it < total):
                tl.store(owners_ptr + it, sk_program_of(it, total, NUM_PROGS))  # noqa: F821

    return streamk_probe


def compute(M, N, K, block_m, block_n, block_k, num_sms, mode, solution):
    """The Split of the graded file for this problem."""
    graded = study.load_graded(solution, lesson_writing(STUDIED))
    globals()["sk_run"] = graded.sk_run  # the probe kernel's globals are this module's
    globals()["sk_program_of"] = graded.sk_program_of
    num_tiles = cdiv(M, block_m) * cdiv(N, block_n)
    k_blocks = cdiv(K, block_k)
    try:
        sk_tiles, programs = graded.stream_k_split(num_tiles, k_blocks, num_sms, mode)
    except NotImplementedError as e:
        study.stop_if_stub(e)
        raise
    total = sk_tiles * k_blocks
    runs, program_of = [], []
    if total:
        import torch

        device = study.graded_device()
        runs_t = torch.full((programs, 2), -1, dtype=torch.int32, device=device)
        owners_t = torch.full((total,), -1, dtype=torch.int32, device=device)
        try:
            _probe_kernel()[(programs,)](runs_t, owners_t, total, programs)
        except Exception as e:
            study.stop_if_stub(e)
            raise
        runs = [tuple(r) for r in runs_t.cpu().tolist()]
        program_of = owners_t.cpu().tolist()
    return Split(num_tiles, k_blocks, sk_tiles, programs, runs, program_of)


def label(p):
    return "?" if p is None else "!" if p < 0 else str(p)


def headline(s):
    dp = s.num_tiles - s.sk_tiles
    return say(
        zh=f"{s.num_tiles} 个 tile × {s.k_blocks} 个 k-block，{s.programs} 个 program："
        f"stream_k_split 把 {s.sk_tiles} 个 tile 分给 stream-K（共 {s.total} 个 k-block），"
        f"{dp} 个 tile 走 data-parallel（整块算）",
        en=f"{s.num_tiles} tiles x {s.k_blocks} k-blocks, {s.programs} programs: stream_k_split gives "
        f"{s.sk_tiles} tiles to stream-K ({s.total} k-blocks) and {dp} to data-parallel (whole tiles)",
    )


def tile_rows(s):
    """[tile, cells..., owner, partials from] for each tile."""
    rows = []
    for t in range(s.num_tiles):
        cells = [label(s.cell(t, kb)) for kb in range(s.k_blocks)]
        if t >= s.sk_tiles:
            partials = say(zh="data-parallel（整块算）", en="data-parallel")
        else:
            partials = ", ".join(map(str, s.publishers(t))) or "-"
        rows.append([str(t), *cells, label(s.owner(t)), partials])
    return rows


def tile_headers(s):
    return (
        ["tile"]
        + [f"kb{kb}" for kb in range(s.k_blocks)]
        + [say(zh="owner（跑 epilogue）", en="owner (epilogue)"), say(zh="发布 partial 的", en="partials from")]
    )


def program_rows(s):
    """[program, run, k-blocks, what it does walking back from the run's end] for each program."""
    rows = []
    for p, (begin, end) in enumerate(s.runs):
        steps, it_end = [], end
        while it_end > begin and it_end > 0:
            tile = (it_end - 1) // s.k_blocks
            it_begin = max(tile * s.k_blocks, begin)
            first, last = it_begin - tile * s.k_blocks, it_end - 1 - tile * s.k_blocks
            blocks = str(first) if first == last else f"{first}-{last}"
            if it_end == (tile + 1) * s.k_blocks:
                others = ", ".join(map(str, [q for q in s.publishers(tile) if q != p]))
                steps.append(
                    say(zh=f"tile {tile} 的 kb {blocks}：owner", en=f"tile {tile} kb {blocks}: owner")
                    + (
                        say(zh=f"，加上 program {others} 的 partial", en=f", adds the partials of {others}")
                        if others
                        else ""
                    )
                )
            else:
                steps.append(
                    say(zh=f"tile {tile} 的 kb {blocks}：发布 partial", en=f"tile {tile} kb {blocks}: publish")
                )
            it_end = it_begin
        rows.append([str(p), f"[{begin}, {end})", str(end - begin), say(zh="；", en="; ").join(steps)])
    for p in range(s.programs):
        dp = list(range(s.sk_tiles + p, s.num_tiles, s.programs))
        if dp:
            if p < len(rows):
                rows[p][3] += (say(zh="；", en="; ") if rows[p][3] else "") + say(
                    zh=f"然后整块算 tile {dp}", en=f"then whole tiles {dp}"
                )
            else:
                rows.append([str(p), "-", "0", say(zh=f"整块算 tile {dp}", en=f"whole tiles {dp}")])
    return rows


def program_headers():
    return [
        "program",
        "run",
        say(zh="k-block 数", en="k-blocks"),
        say(zh="从 run 末尾往回走", en="walking back from the run's end"),
    ]


def terminal_width():
    return min(100, shutil.get_terminal_size((100, 24)).columns)


def program_table(s, markdown):
    """The table of programs.  On a terminal its last column, what each program does, is as long as
    five programs' work (past 130 columns, right-aligned): left-aligned there, and wrapped under
    itself so that a row fits the terminal's width (at most 100 columns)."""
    headers, rows = program_headers(), program_rows(s)
    if markdown:
        return table(headers, rows, markdown)
    cells = [headers, *rows]
    widths = [max(display_width(row[i]) for row in cells) for i in range(3)]
    lead = sum(widths) + 2 * 3
    room = max(30, terminal_width() - lead)
    lines = []
    for row in cells:
        head = "  ".join(rjust(c, w) for c, w in zip(row[:3], widths, strict=True)) + "  "
        lines += [(head if i == 0 else " " * lead) + part for i, part in enumerate(wrap(row[3], room))]
    return "\n".join(line.rstrip() for line in lines)


def report(s, markdown):
    head = headline(s) if markdown else "\n".join(wrap(headline(s), terminal_width()))
    parts = [head, table(tile_headers(s), tile_rows(s), markdown)]
    if s.runs or s.num_tiles > s.sk_tiles:
        parts.append(program_table(s, markdown))
    problems = s.problems()
    if problems:
        parts.append(study.problems_list(problems, STUDIED))
    if any(s.cell(t, kb) is None or s.cell(t, kb) < 0 for t in range(s.num_tiles) for kb in range(s.k_blocks)):
        parts.append(
            say(
                zh="?：没有 program 算这个 k-block；!：不止一个 program 算它",
                en="?: no program sums this k-block; !: more than one does",
            )
        )
    return "\n\n".join(parts)


def draw(s, path):
    fig, axes = study.figure(0.6 * s.k_blocks + 1.4, 0.6 * s.num_tiles + 1.4)
    ax = axes[0][0]
    cells = [[s.cell(t, kb) for kb in range(s.k_blocks)] for t in range(s.num_tiles)]
    labels = [[label(p) for p in row] for row in cells]
    fills = [
        [PROGRAM_SHADES[p % len(PROGRAM_SHADES)] if p is not None and p >= 0 else "white" for p in row] for row in cells
    ]
    bold = [[row[kb] is not None and row[kb] == s.owner(t) for kb in range(s.k_blocks)] for t, row in enumerate(cells)]
    study.draw_grid(ax, 0, 0, labels, fills, bold)
    if 0 < s.sk_tiles < s.num_tiles:
        ax.plot([-0.1, s.k_blocks + 0.1], [-s.sk_tiles, -s.sk_tiles], color="0.2", linewidth=1.5, linestyle="--")
    ax.set_title(f"stream-K: {s.sk_tiles} tiles, data-parallel: {s.num_tiles - s.sk_tiles}", fontsize=10)
    study.number_and_frame_grid(ax, s.num_tiles, s.k_blocks)
    note = "rows: tiles, columns: k-blocks, cells: program; thick edges: the owner's k-blocks"
    fig.text(0.5, 0.02, note, ha="center", va="bottom", fontsize=7, color="0.3")
    fig.subplots_adjust(left=0.02, right=0.98, top=0.88, bottom=0.12)
    study.save_png(fig, path)


def main(argv=None):
    parser = study.Parser(
        "make streamk",
        description=say(zh=DESCRIPTION_ZH, en=__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "M", type=int, nargs="?", default=64, help=say(zh="C 的行数（默认 64）", en="rows of C (default 64)")
    )
    parser.add_argument(
        "N", type=int, nargs="?", default=64, help=say(zh="C 的列数（默认 64）", en="columns of C (default 64)")
    )
    parser.add_argument(
        "K", type=int, nargs="?", default=160, help=say(zh="内维（默认 160）", en="the inner dimension (default 160)")
    )
    parser.add_argument(
        "--block",
        type=int,
        nargs=3,
        default=(32, 32, 32),
        metavar=("BLOCK_M", "BLOCK_N", "BLOCK_K"),
        help=say(
            zh="tile 和 k-block 的大小（默认 32 32 32：配上 64 64 160，就是 §4.1 的 2x2 个 tile、每个 5 个 k-block）",
            en="tile and k-block sizes (default 32 32 32: with 64 64 160, §4.1's 2x2 tiles of 5 k-blocks)",
        ),
    )
    parser.add_argument(
        "--programs",
        type=int,
        default=3,
        help=say(
            zh="交给 stream_k_split 的 SM 数：最多能同时跑几个常驻程序（默认 3）",
            en="the SM count given to stream_k_split: how many persistent programs can run (default 3)",
        ),
    )
    parser.add_argument(
        "--mode",
        choices=("auto", "sk", "dp"),
        default="auto",
        help=say(zh="stream_k_split 的 mode", en="stream_k_split's mode"),
    )
    png = say(
        zh="不打印，把 tile x k-block 的图画进 PATH", en="draw the tile x k-block map into PATH instead of printing"
    )
    study.add_report_flags(parser, STUDIED, png, lang=False)
    args = parser.parse_args(argv)
    if min(args.M, args.N, args.K, *args.block, args.programs) < 1:
        parser.error("M, N, K, the block sizes and --programs must be at least 1")
    s = compute(args.M, args.N, args.K, *args.block, args.programs, args.mode, args.solution)
    if args.png:
        draw(s, args.png)
        return
    print(report(s, args.format == "markdown"))
    if s.problems():
        sys.exit(1)


if __name__ == "__main__":
    main()
