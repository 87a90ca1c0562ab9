"""The counts the explainers quote, computed here so that `make check` keeps them true.

    python -m tools.explainers.counts steps --lang zh          # the table of steps, from course/registry.py
    python -m tools.explainers.counts coords 4 4 2 --pids 5    # tile_coords by hand, every intermediate
    python -m tools.explainers.counts coords 5 3 2 --pids 12 13 14 --modulo-group-m   # the classic slip
    python -m tools.explainers.counts tiles 8192 8192 8192 128 256 64
    python -m tools.explainers.counts reuse 128 256 64         # FLOPs per byte a tile moves per K step
    python -m tools.explainers.counts wave 8192 8192 8192 128 256 --wave 132 --group-m 1 8   # panels per wave
    python -m tools.explainers.counts flops 8192 8192 8192 --tflops 637
    python -m tools.explainers.counts fusion 8192 8192 1024    # bytes through DRAM, fused or not

Each prints a markdown table (or a few lines) that the explainers in content/ embed in generated
blocks (tools/core/docs.py).
"""

import argparse

from course import registry
from course.hardware import BYTES_PER_ELEMENT
from course.i18n import LANGS
from tools.core.tables import table
from tools.core.tiles import MIB, cdiv, coords


def steps(lang, lesson):
    """The table of a lesson's steps, from the registry."""
    col = 0 if lang == "zh" else 1
    heads = {
        "zh": ("步骤", f"你要写的（mine/{lesson.file}）", "先读", "单独运行这一步的测试"),
        "en": ("step", f"you write (mine/{lesson.file})", "read", "run this step's tests alone"),
    }[lang]
    rows = []
    for s in lesson.steps:
        name = s.id + (" (进阶)" if lang == "zh" and s.advanced else " (advanced)" if s.advanced else "")
        read = "; ".join(f"§{n} {lesson.sections[n][col]}" for n in s.sections)
        rows.append((name, ", ".join(f"`{w}`" for w in s.writes), read, f"`make test STEP={s.id}`"))
    return table(heads, rows, markdown=True)


COORDS_NOTE = {
    "zh": (
        "{m} x {n} 的 tile 网格，GROUP_M = {g}",
        "（错误写法：用 GROUP_M 代替 group_size_m）",
        "越界：网格只有 {m} 行、{n} 列",
    ),
    "en": (
        "a {m} x {n} grid of tiles, GROUP_M = {g}",
        " (the mistake: GROUP_M where group_size_m belongs)",
        "outside: the grid has {m} rows and {n} columns",
    ),
}


def first_wave_panels(num_pid_m, num_pid_n, group_m, wave):
    """(rows of A, columns of B) that pids 0 .. wave-1 read: the panels of §2."""
    tiles = [coords(p, num_pid_m, num_pid_n, group_m) for p in range(min(wave, num_pid_m * num_pid_n))]
    return len({v["pid_m"] for v in tiles}), len({v["pid_n"] for v in tiles})


def wave_table(M, N, K, bm, bn, wave, groups, dtype, lang):
    pm, pn = cdiv(M, bm), cdiv(N, bn)
    e = BYTES_PER_ELEMENT[dtype]
    a_panel, b_panel = bm * K * e, K * bn * e
    rows = []
    for g in groups:
        ra, cb = first_wave_panels(pm, pn, g, wave)
        rows.append(
            (
                g,
                ra,
                cb,
                ra + cb,
                f"{ra} x {a_panel / MIB:g} + {cb} x {b_panel / MIB:g} = {(ra * a_panel + cb * b_panel) / MIB:g}",
            )
        )
    title = {
        "zh": f"{M} x {N} x {K}，{dtype}，tile {bm} x {bn}：{pm} x {pn} 个 tile，第一波 {wave} 个程序；"
        f"A 的行块 {bm} x {K} = {a_panel / MIB:g} MiB，B 的列块 {K} x {bn} = {b_panel / MIB:g} MiB",
        "en": f"{M} x {N} x {K}, {dtype}, {bm} x {bn} tiles: a {pm} x {pn} grid, first wave of {wave} programs; "
        f"an A row-panel {bm} x {K} = {a_panel / MIB:g} MiB, a B column-panel {K} x {bn} = {b_panel / MIB:g} MiB",
    }
    heads = {
        "zh": ("GROUP_M", "A 的行块", "B 的列块", "行块列块合计", "这一波要读的 MiB"),
        "en": ("GROUP_M", "A row-panels", "B column-panels", "panels", "MiB this wave reads"),
    }
    return title[lang] + "\n\n" + table(heads[lang], rows, markdown=True)


def coords_table(num_pid_m, num_pid_n, group_m, pids, modulo_group_m, lang):
    title, wrong, outside = COORDS_NOTE[lang]
    rows, heads = [], None
    for pid in pids:
        v = coords(pid, num_pid_m, num_pid_n, group_m, modulo_group_m)
        heads = list(v) + ["(pid_m, pid_n)"]
        tile = f"({v['pid_m']}, {v['pid_n']})"
        if v["pid_m"] >= num_pid_m or v["pid_n"] >= num_pid_n:
            tile += " " + outside.format(m=num_pid_m, n=num_pid_n)
        rows.append(list(v.values()) + [tile])
    return (
        title.format(m=num_pid_m, n=num_pid_n, g=group_m)
        + (wrong if modulo_group_m else "")
        + "\n\n"
        + table(heads, rows, markdown=True)
    )


# Column headers in each explainer's language; the numbers and formulas are the same in both.
HEADS = {
    "tiles": {
        "zh": ("M x N x K", "BLOCK_M x BLOCK_N x BLOCK_K", "num_pid_m x num_pid_n", "程序数", "每个程序的 K 步数"),
        "en": ("M x N x K", "BLOCK_M x BLOCK_N x BLOCK_K", "num_pid_m x num_pid_n", "programs", "K steps per program"),
    },
    "reuse": {
        "zh": ("tile BLOCK_M x BLOCK_N x BLOCK_K", "每个 K 步读入的字节（{dtype}）", "每个 K 步的 FLOP", "每字节 FLOP"),
        "en": (
            "tile BLOCK_M x BLOCK_N x BLOCK_K",
            "bytes loaded per K step ({dtype})",
            "FLOPs per K step",
            "FLOPs per byte",
        ),
    },
    "flops": {
        "zh": ("M x N x K", "2*M*N*K（FLOP）", "TFLOP/s", "t = 2*M*N*K / TFLOP/s"),
        "en": ("M x N x K", "2*M*N*K (FLOPs)", "TFLOP/s", "t = 2*M*N*K / TFLOP/s"),
    },
    "fusion": {
        "zh": ("{shape}, {dtype}", "经过显存（DRAM）的数据（MiB）", "合计 MiB"),
        "en": ("{shape}, {dtype}", "what crosses DRAM (MiB)", "total MiB"),
    },
}
FUSION_ROWS = {
    "zh": (
        ("融合：一个内核", "A {a} + B {b} + bias + C 写一次 {c}"),
        ("先 matmul，再一个 bias+GELU 内核", "同上 + 读 C {c} + 再写 C {c}"),
    ),
    "en": (
        ("fused: one kernel", "A {a} + B {b} + bias + C written once {c}"),
        ("matmul, then a bias+GELU kernel", "the same + C read {c} + C written again {c}"),
    ),
}


def tiles(M, N, K, bm, bn, bk, lang):
    pm, pn = cdiv(M, bm), cdiv(N, bn)
    row = (f"{M} x {N} x {K}", f"{bm} x {bn} x {bk}", f"{pm} x {pn}", f"{pm * pn:,}", cdiv(K, bk))
    return table(HEADS["tiles"][lang], [row], markdown=True)


def reuse(bm, bn, bk, dtype, lang):
    moved = (bm * bk + bk * bn) * BYTES_PER_ELEMENT[dtype]
    flops = 2 * bm * bn * bk
    row = (
        f"{bm} x {bn} x {bk}",
        f"({bm}*{bk} + {bk}*{bn}) * {BYTES_PER_ELEMENT[dtype]} = {moved:,}",
        f"2*{bm}*{bn}*{bk} = {flops:,}",
        f"{flops / moved:.1f}",
    )
    return table([h.format(dtype=dtype) for h in HEADS["reuse"][lang]], [row], markdown=True)


def flops(M, N, K, tflops, lang):
    total = 2 * M * N * K
    row = (f"{M} x {N} x {K}", f"{total:,}", tflops, f"{total / (tflops * 1e12) * 1e3:.3f} ms")
    return table(HEADS["flops"][lang], [row], markdown=True)


def fusion(M, N, K, dtype, lang):
    e = BYTES_PER_ELEMENT[dtype]
    a, b, c, bias = M * K * e, K * N * e, M * N * e, N * e
    fused = a + b + bias + c
    separate = a + b + c + (c + bias + c)  # then a second kernel reads C and bias, writes C
    sizes = dict(a=f"{a / MIB:g}", b=f"{b / MIB:g}", c=f"{c / MIB:g}")
    rows = [
        (name, what.format(**sizes), f"{total / MIB:,.2f}")
        for (name, what), total in zip(FUSION_ROWS[lang], (fused, separate), strict=False)
    ]
    heads = [h.format(shape=f"{M} x {N} x {K}", dtype=dtype) for h in HEADS["fusion"][lang]]
    return (
        table(heads, rows, markdown=True) + f"\n\n{separate / MIB:,.2f} / {fused / MIB:,.2f} = {separate / fused:.2f}"
    )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    sub.add_parser("steps").add_argument("--lesson", help="whose steps (default: the first lesson)")
    c = sub.add_parser("coords")
    for name in ("num_pid_m", "num_pid_n", "GROUP_M"):
        c.add_argument(name, type=int)
    c.add_argument("--pids", type=int, nargs="+", required=True)
    c.add_argument("--modulo-group-m", action="store_true")
    w = sub.add_parser("wave")
    for name in ("M", "N", "K", "BLOCK_M", "BLOCK_N"):
        w.add_argument(name, type=int)
    w.add_argument("--wave", type=int, required=True, help="programs running at once")
    w.add_argument("--group-m", type=int, nargs="+", default=[1, 8])
    w.add_argument("--dtype", choices=BYTES_PER_ELEMENT, default="fp16")
    t = sub.add_parser("tiles")
    for name in ("M", "N", "K", "BLOCK_M", "BLOCK_N", "BLOCK_K"):
        t.add_argument(name, type=int)
    r = sub.add_parser("reuse")
    for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
        r.add_argument(name, type=int)
    r.add_argument("--dtype", choices=BYTES_PER_ELEMENT, default="fp16")
    f = sub.add_parser("flops")
    for name in ("M", "N", "K"):
        f.add_argument(name, type=int)
    f.add_argument("--tflops", type=float, required=True)
    u = sub.add_parser("fusion")
    for name in ("M", "N", "K"):
        u.add_argument(name, type=int)
    u.add_argument("--dtype", choices=BYTES_PER_ELEMENT, default="fp16")
    for parser in sub.choices.values():
        parser.add_argument("--lang", choices=LANGS, default="zh")
    a = p.parse_args()
    if a.what == "steps":
        print(steps(a.lang, registry.lesson(a.lesson)))
    elif a.what == "coords":
        print(coords_table(a.num_pid_m, a.num_pid_n, a.GROUP_M, a.pids, a.modulo_group_m, a.lang))
    elif a.what == "wave":
        print(wave_table(a.M, a.N, a.K, a.BLOCK_M, a.BLOCK_N, a.wave, a.group_m, a.dtype, a.lang))
    elif a.what == "tiles":
        print(tiles(a.M, a.N, a.K, a.BLOCK_M, a.BLOCK_N, a.BLOCK_K, a.lang))
    elif a.what == "reuse":
        print(reuse(a.BLOCK_M, a.BLOCK_N, a.BLOCK_K, a.dtype, a.lang))
    elif a.what == "flops":
        print(flops(a.M, a.N, a.K, a.tflops, a.lang))
    else:
        print(fusion(a.M, a.N, a.K, a.dtype, a.lang))


if __name__ == "__main__":
    main()
