"""How many bytes of A and B a matmul reads from DRAM, in row-major and in grouped program order:
a small model of a GPU's L2 cache (explainer §2).  Pure Python; no GPU, no Triton.

The model, and why each choice:

1. Waves.  The GPU has --sms streaming multiprocessors (SMs), each running --per-sm programs at
   a time (one, for a block that needs most of the SM's shared memory), so the programs run in
   waves of S = sms * per_sm consecutive pids: wave w is pids w*S .. (w+1)*S - 1.  On a real GPU
   a program starts as soon as another ends, so later waves blur; consecutive pids still run
   together, which is what the order changes.
2. K-tiles, not whole panels.  The program for C tile (m, n) needs A's row-panel m (BLOCK_M x K)
   and B's column-panel n (K x BLOCK_N), but reads them one k-tile at a time: A[m, k] is
   BLOCK_M x BLOCK_K, B[k, n] is BLOCK_K x BLOCK_N.  The cache holds k-tiles, so a panel never
   has to fit in L2 whole; only the k-tiles in flight do.
3. Lock step over K.  The programs of a wave start together and run the same loop at the same
   speed, so they are taken to be at the same k at the same moment: step k of a wave reads the A
   k-tiles of the wave's rows and the B k-tiles of its columns, each once (several programs
   asking for one tile at the same moment get one DRAM read).  Real programs drift apart a few
   steps; that does not change the sharing inside a wave while the k-tiles the wave reads over
   those steps fit in L2, and the text output prints that per-step footprint (about 1 MiB at
   8192^3 against 60 MiB of L2).
4. L2 is one fully associative LRU cache of --l2-mib MiB (60 MiB: the H200's, as measured) holding
   k-tiles.  A k-tile not in it is read from DRAM, counted, and put in, evicting the least
   recently used ones.  Real L2 is set associative, split in two halves on H100/H200, and not
   strictly LRU; this is the simplest cache that still shows what the order does.
5. A consequence to keep in mind: when a wave's panels add up to more than L2 (5 A + 32 B
   panels = 138 MiB at 8192^3, row-major), LRU keeps nothing of one wave for the next, because
   the next wave starts again at k = 0.  Measured against Nsight Compute on an H200
   (content/benchmarks.md), the model gets the grouped order's DRAM bytes within 10% but
   UNDERSTATES row-major's, at 0.6-0.7 of the measured bytes: real programs drift apart over K,
   and the real L2, set associative and split in two, keeps less of a wave's shared panels than
   one LRU cache does.  Compare with ncu (--measured-dram-gb) before trusting a number.

Counted: bytes of A and B read from DRAM (C is written once in any order, so it is left out).
"x minimum": those bytes over the size of A plus B (each element read once).  "reuse": the bytes
the programs ask for (every program its two whole panels) over the bytes read from DRAM, that is
how many programs each byte read from DRAM serves.

    python -m tools.study.l2sim --example                            # 5 panels against 4 (§2)
    python -m tools.study.l2sim --example --png content/img/panels_4x4.png
    python -m tools.study.l2sim 8192 8192 8192 --format markdown     # GROUP_M 1, 2, 4, 8, 16
    python -m tools.study.l2sim 8192 8192 8192 --group-m 1 8 --measured-dram-gb X Y

--measured-dram-gb takes what Nsight Compute measured for the same shape, blocks and GROUP_M
(dram__bytes_read.sum of one launch, in GB = 10^9 bytes), one number per --group-m, and prints
it beside the model's figure.

The text and the tables follow the course's language (COURSE_LANG=zh or en, else the locale;
--lang pins it, as the explainers' generated blocks do); the picture is in English.
"""

import argparse
from collections import OrderedDict
from dataclasses import dataclass

from course.hardware import BYTES_PER_ELEMENT, H200_L2_BYTES, H200_SMS
from course.i18n import add_lang_flag, display_width, say, use_lang
from tools.core import tables
from tools.core.tiles import MIB, cdiv, coords
from tools.study import common as study

EXAMPLE = dict(tiles=(4, 4), wave=4, group_m=2)  # the explainer's small example, §2


def tile_of(pid, num_pid_m, num_pid_n, group_m):
    """(pid_m, pid_n) for pid in grouped order (GROUP_M = 1: row-major), by §2's arithmetic in
    tools/explainers/counts.py: the model needs thousands of pids, too many for the interpreter."""
    v = coords(pid, num_pid_m, num_pid_n, group_m)
    return v["pid_m"], v["pid_n"]


@dataclass
class Traffic:
    a_tiles: int = 0  # A k-tiles read from DRAM
    b_tiles: int = 0
    a_bytes: int = 0
    b_bytes: int = 0
    requested_bytes: int = 0  # what the programs ask for: every program its two whole panels
    footprint_bytes: int = 0  # the largest set of k-tiles one wave reads in one step of K

    @property
    def dram_bytes(self):
        return self.a_bytes + self.b_bytes


def simulate(
    M, N, K, blocks, bytes_per_element, group_m, sms=H200_SMS, per_sm=1, l2_bytes=H200_L2_BYTES, max_waves=None
):
    """Traffic of A and B from DRAM under the model in this file's docstring."""
    bm, bn, bk = blocks
    num_pid_m, num_pid_n, k_steps = cdiv(M, bm), cdiv(N, bn), cdiv(K, bk)
    rows = lambda m: min(bm, M - m * bm)  # noqa: E731  (edge tiles are smaller)
    cols = lambda n: min(bn, N - n * bn)  # noqa: E731
    depth = lambda k: min(bk, K - k * bk)  # noqa: E731
    programs, wave = num_pid_m * num_pid_n, sms * per_sm
    lru, held, t = OrderedDict(), 0, Traffic()
    for w, start in enumerate(range(0, programs, wave)):
        if max_waves is not None and w >= max_waves:
            break
        tiles = [tile_of(pid, num_pid_m, num_pid_n, group_m) for pid in range(start, min(start + wave, programs))]
        t.requested_bytes += sum((rows(m) + cols(n)) * K for m, n in tiles) * bytes_per_element
        wave_rows = list(dict.fromkeys(m for m, _ in tiles))  # in pid order, each once
        wave_cols = list(dict.fromkeys(n for _, n in tiles))
        for k in range(k_steps):
            wanted = [("A", m, k, rows(m) * depth(k)) for m in wave_rows] + [
                ("B", n, k, depth(k) * cols(n)) for n in wave_cols
            ]
            t.footprint_bytes = max(t.footprint_bytes, sum(e for *_, e in wanted) * bytes_per_element)
            for operand, i, k_, elements in wanted:
                key = (operand, i, k_)
                if key in lru:
                    lru.move_to_end(key)
                    continue
                size = elements * bytes_per_element
                if operand == "A":
                    t.a_tiles, t.a_bytes = t.a_tiles + 1, t.a_bytes + size
                else:
                    t.b_tiles, t.b_bytes = t.b_tiles + 1, t.b_bytes + size
                lru[key], held = size, held + size
                while held > l2_bytes:
                    held -= lru.popitem(last=False)[1]
    return t


# ------------------------------------------------------------------------------------------------
# The small example of §2: panels, counted by the same simulation
# ------------------------------------------------------------------------------------------------
def example_panels(group_m):
    """(A row-panels, B column-panels) the first wave of the example reads from DRAM."""
    tm, tn = EXAMPLE["tiles"]
    k_steps, block = 4, 16  # any sizes do: a panel is k_steps k-tiles
    t = simulate(
        tm * block, tn * block, k_steps * block, (block, block, block), 2, group_m, sms=EXAMPLE["wave"], max_waves=1
    )
    return t.a_tiles // k_steps, t.b_tiles // k_steps


def example_text():
    tm, tn = EXAMPLE["tiles"]
    lines = [
        say(
            zh=f"{tm} x {tn} 的 tile 网格上同时运行 {EXAMPLE['wave']} 个程序，第一波从显存读的块：",
            en=f"The first wave, {EXAMPLE['wave']} programs at once on a {tm} x {tn} grid of tiles, reads from DRAM:",
        )
    ]
    names = {1: say(zh="行优先", en="row-major"), EXAMPLE["group_m"]: say(zh="分组", en="grouped")}
    labels = {g: say(zh=f"{name}（GROUP_M = {g}）：", en=f"{name} (GROUP_M = {g}):") for g, name in names.items()}
    pad = max(display_width(label) for label in labels.values()) + 2
    for g, label in labels.items():
        a, b = example_panels(g)
        lines.append(
            "  "
            + tables.ljust(label, pad)
            + say(
                zh=f"A 的 {a} 个行块 + B 的 {b} 个列块 = {a + b} 个块",
                en=f"{a} row-panel{'s' * (a != 1)} of A + {b} column-panel{'s' * (b != 1)} of B = {a + b}",
            )
        )
    return "\n".join(lines)


def draw_example(path):
    """For each order: C's tiles with the first wave's pids bold, A's row-panels on the left and
    B's column-panels on top, the ones the first wave reads shaded."""
    tm, tn = EXAMPLE["tiles"]
    fig, axes = study.figure(8.4, 4.6, ncols=2)
    for ax, g in zip(axes[0], (1, EXAMPLE["group_m"]), strict=False):
        pid_at = {tile_of(p, tm, tn, g): p for p in range(tm * tn)}
        wave = {tile_of(p, tm, tn, g) for p in range(EXAMPLE["wave"])}
        read_rows, read_cols = {m for m, _ in wave}, {n for _, n in wave}
        study.draw_grid(
            ax,
            0,
            0,
            [[str(pid_at[m, n]) for n in range(tn)] for m in range(tm)],
            [["#d9d9d9" if (m, n) in wave else "white" for n in range(tn)] for m in range(tm)],
            [[(m, n) in wave for n in range(tn)] for m in range(tm)],
        )
        study.draw_grid(
            ax,
            -1.9,
            0,
            [[f"A{m}"] for m in range(tm)],
            [["#f4a582" if m in read_rows else "white"] for m in range(tm)],
            cell=(1.6, 1.0),
        )
        study.draw_grid(
            ax,
            0,
            1.9,
            [[f"B{n}" for n in range(tn)]],
            [["#92c5de" if n in read_cols else "white" for n in range(tn)]],
            cell=(1.0, 1.6),
        )
        a, b = example_panels(g)
        ax.set_title(
            f"{'row-major' if g == 1 else 'grouped'}, GROUP_M = {g}:\n{a} A + {b} B = {a + b} panels", fontsize=11
        )
        ax.set_xlim(-2.1, tn + 0.2)
        ax.set_ylim(-tm - 0.2, 2.1)
        ax.set_aspect("equal")
        ax.axis("off")
    fig.text(
        0.5,
        0.02,
        f"the tiles of C show the pid that computes each; bold: the first {EXAMPLE['wave']} programs, "
        f"running at the same time;\nshaded: the row-panels of A and the column-panels of B they read",
        ha="center",
        va="bottom",
        fontsize=8,
        color="0.3",
    )
    fig.subplots_adjust(left=0.02, right=0.98, top=0.86, bottom=0.1, wspace=0.15)
    study.save_png(fig, path)


# ------------------------------------------------------------------------------------------------
# Realistic shapes: a table over GROUP_M
# ------------------------------------------------------------------------------------------------
def gb(nbytes):
    return f"{nbytes / 1e9:.2f}"


def table(args, results, markdown):
    minimum = (args.M * args.K + args.K * args.N) * BYTES_PER_ELEMENT[args.dtype]
    headers = say(
        zh=["GROUP_M", "A 的 DRAM 读取量（GB）", "B 的 DRAM 读取量（GB）", "A + B（GB）", "是下限的几倍", "复用倍数"],
        en=["GROUP_M", "A from DRAM (GB)", "B from DRAM (GB)", "A + B (GB)", "x minimum", "reuse"],
    )
    rows = [
        [
            g,
            gb(t.a_bytes),
            gb(t.b_bytes),
            gb(t.dram_bytes),
            f"{t.dram_bytes / minimum:.2f}",
            f"{t.requested_bytes / t.dram_bytes:.1f}",
        ]
        for g, t in results
    ]
    if args.measured_dram_gb:
        headers += say(zh=["实测（GB）", "模型 / 实测"], en=["measured (GB)", "model / measured"])
        for row, (_, t), measured in zip(rows, results, args.measured_dram_gb, strict=False):
            row += [f"{measured:.2f}", f"{t.dram_bytes / 1e9 / measured:.2f}"]
    return tables.table(headers, rows, markdown)


def preamble(args, results):
    bm, bn, bk = args.blocks
    b = BYTES_PER_ELEMENT[args.dtype]
    programs = cdiv(args.M, bm) * cdiv(args.N, bn)
    wave = args.sms * args.per_sm
    minimum = (args.M * args.K + args.K * args.N) * b
    footprint = max(t.footprint_bytes for _, t in results)
    shape, grid = f"{args.M} x {args.N} x {args.K}", f"{cdiv(args.M, bm)} x {cdiv(args.N, bn)} = {programs}"
    ka, kb = bm * bk * b // 1024, bk * bn * b // 1024
    return say(
        zh=f"{shape}，{args.dtype}，分块 {bm} x {bn} x {bk}：{grid} 个程序，"
        f"分 {programs / wave:.1f} 个 wave，每个 wave {wave} 个（{args.sms} 个 SM x {args.per_sm}）\n"
        f"L2：{args.l2_mib:g} MiB，以 k-tile 为单位的 LRU（A 的 k-tile {ka} KiB，B 的 {kb} KiB）；"
        f"一个 wave 每个 K 步最多读 {footprint / MIB:.1f} MiB\n"
        f"下限（A、B 各读一次）：{gb(minimum)} GB；复用倍数 = 程序请求的字节数 / 从显存读的字节数\n",
        en=f"{shape} {args.dtype}, blocks {bm} x {bn} x {bk}: {grid} programs in {programs / wave:.1f} waves of "
        f"{wave} ({args.sms} SMs x {args.per_sm})\n"
        f"L2: {args.l2_mib:g} MiB, LRU of k-tiles (A {ka} KiB, B {kb} KiB); "
        f"a wave reads at most {footprint / MIB:.1f} MiB per step of K\n"
        f"minimum (A and B each read once): {gb(minimum)} GB; reuse = bytes the programs ask for / "
        f"bytes from DRAM\n",
    )


def main(argv=None):
    parser = study.Parser("make l2sim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("M", type=int, nargs="?", default=8192)
    parser.add_argument("N", type=int, nargs="?", default=8192)
    parser.add_argument("K", type=int, nargs="?", default=8192)
    parser.add_argument("--blocks", type=int, nargs=3, default=(128, 256, 64), metavar=("BM", "BN", "BK"))
    parser.add_argument("--dtype", choices=sorted(BYTES_PER_ELEMENT), default="fp16")
    parser.add_argument("--group-m", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument(
        "--sms", type=int, default=H200_SMS, help=f"streaming multiprocessors ({H200_SMS}: H100/H200 SXM)"
    )
    parser.add_argument("--per-sm", type=int, default=1, help="programs one SM runs at a time")
    parser.add_argument("--l2-mib", type=float, default=H200_L2_BYTES / MIB, help="L2 size in MiB (60: the H200)")
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument(
        "--measured-dram-gb",
        type=float,
        nargs="+",
        metavar="GB",
        help="Nsight Compute's dram__bytes_read.sum in GB, one per --group-m",
    )
    parser.add_argument("--example", action="store_true", help="the 4 x 4 example of §2: panels per order")
    parser.add_argument("--png", metavar="PATH", help="with --example: draw the panels each order reads")
    add_lang_flag(parser)
    args = parser.parse_args(argv)
    use_lang(args)
    if args.png and not args.example:
        parser.error("--png draws the small example: use it with --example")
    if args.measured_dram_gb and len(args.measured_dram_gb) != len(args.group_m):
        parser.error(f"--measured-dram-gb needs one number per --group-m ({len(args.group_m)})")
    if min(args.M, args.N, args.K, *args.blocks, *args.group_m, args.sms, args.per_sm) < 1 or args.l2_mib <= 0:
        parser.error("sizes, blocks, GROUP_M, --sms, --per-sm and --l2-mib must be positive")
    if args.example:
        if args.png:
            draw_example(args.png)
        else:
            print(example_text())
        return
    results = [
        (
            g,
            simulate(
                args.M,
                args.N,
                args.K,
                args.blocks,
                BYTES_PER_ELEMENT[args.dtype],
                g,
                args.sms,
                args.per_sm,
                args.l2_mib * MIB,
            ),
        )
        for g in args.group_m
    ]
    markdown = args.format == "markdown"
    if not markdown:
        print(preamble(args, results))
    print(table(args, results, markdown))


if __name__ == "__main__":
    main()
