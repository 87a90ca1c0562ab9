"""`make bench`: TFLOP/s of torch.matmul (cuBLAS), the reference and your kernel on a CUDA GPU.

    python -m tools.gpu.bench [--dtype fp16 bf16] [--shapes 4096 8192x8192x1024 ...] [--side both]

TFLOP/s = 2*M*N*K / t: a multiply and an add for each of the M*N*K terms.  t is GPU time per
product, measured the same way for every kernel:
- launches are captured in a CUDA graph and the graph is replayed between CUDA events, so the
  Python launch overhead (tens of microseconds for a Triton launch, which would swamp a 2048^3
  product) is left out for torch and Triton alike;
- the captured launches cycle through enough copies of the inputs to span twice the L2 cache,
  so every product reads its inputs from DRAM, as it would in a real model;
- inputs are fresh random numbers, never zeros (zeros run faster);
- a GPU's speed drifts from minute to minute, so the variants are timed in interleaved rounds
  and each reports the median of its rounds.
Beside the autotuned kernel it times the autotuner's winning config as is and with GROUP_M = 1.
Prints a table, and writes bench.csv and bench.png to --out.
"""

import argparse
import csv
import importlib
import statistics
import sys
import time
from pathlib import Path

from course import registry
from course.hardware import H200_DRAM_BYTES_PER_S, H200_L2_BYTES
from course.i18n import add_lang_flag, say, use_lang
from course.registry import LESSONS

SQUARE = [512, 1024, 2048, 4096, 8192]
LLM = ["8192x8192x1024", "4096x11008x4096", "16x8192x8192"]  # MxNxK; the last is one decode step
LAYOUTS = ("row-major", "W.t()")  # B as a (K, N) row-major tensor, or as nn.Linear's weight W (N, K) seen as W.t()


def parse_shape(text):
    parts = [int(p) for p in str(text).lower().split("x")]
    return tuple(parts * 3) if len(parts) == 1 else tuple(parts)


def load_side(side, torch, dtype, lesson):
    """The lesson's module on that side, or None with a reason if it does not compute a right product yet."""
    try:
        mod = importlib.import_module(f"{side}.{lesson.module}")
        a = torch.randn(300, 200, device="cuda", dtype=dtype)
        b = torch.randn(200, 260, device="cuda", dtype=dtype)
        ref = a.double() @ b.double()
        err = ((mod.matmul(a, b).double() - ref).norm() / ref.norm()).item()
    except Exception as e:  # noqa: BLE001 - a half-written file must not stop the benchmark of the others
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:120]
    return (mod, "") if err < 2e-2 else (None, f"wrong result (relative error {err:.1e})")


def with_group(cfg, group_m, triton):
    return triton.Config({**cfg.kwargs, "GROUP_M": group_m}, num_warps=cfg.num_warps, num_stages=cfg.num_stages)


L2_BYTES = H200_L2_BYTES  # the largest L2 the course measures on (course/hardware.py)


def input_sets(M, N, K, dtype, torch, layout="row-major"):
    """Enough (a, b) pairs to span twice the L2, so that cycling through them misses in L2."""
    pair = (M * K + K * N) * torch.finfo(dtype).bits // 8
    count = max(1, min(64, -(-2 * L2_BYTES // pair)))
    if layout == "W.t()":
        return [
            (torch.randn(M, K, device="cuda", dtype=dtype), torch.randn(N, K, device="cuda", dtype=dtype).t())
            for _ in range(count)
        ]
    return [
        (torch.randn(M, K, device="cuda", dtype=dtype), torch.randn(K, N, device="cuda", dtype=dtype))
        for _ in range(count)
    ]


def graph_timer(make_call, sets, torch, target_ms=30.0):
    """A function timing one product in ms: replay a graph of launches cycling through sets."""
    calls = [make_call(a, b) for a, b in sets]
    for call in calls:
        call()  # compile, autotune, and fill the caches outside the capture
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for call in calls:
        call()
    end.record()
    end.synchronize()
    per_call = start.elapsed_time(end) / len(calls)
    reps = len(calls) * max(1, round(target_ms / per_call / len(calls)))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(reps):
            calls[i % len(calls)]()
    graph.replay()  # warm-up

    def timed():
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / reps

    return timed


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--moe" in argv:  # T6: grouped GEMM on mixture-of-experts layers, its own options
        from tools.gpu import moe_bench

        return moe_bench.main([a for a in argv if a != "--moe"])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", nargs="+", default=["fp16", "bf16"], choices=["fp16", "bf16"])
    p.add_argument("--shapes", nargs="+", default=[str(s) for s in SQUARE] + LLM, help="N for N x N x N, or MxNxK")
    p.add_argument("--side", choices=["solutions", "mine", "both"], default="both")
    p.add_argument("--lessons", nargs="+", default=[lesson.id for lesson in LESSONS], help="whose matmul to time")
    p.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=LAYOUTS, help="how B lies in memory")
    p.add_argument(
        "--heldout",
        action="store_true",
        help="the first lesson whose reference tunes per shape, on the held-out shapes, graph-timed and eager",
    )
    p.add_argument("--heldout-only", nargs="+", default=[], metavar="MxNxK", help="with --heldout: only these")
    p.add_argument("--drawn", type=int, metavar="SEED", help="--heldout on 19 shapes drawn from SEED")
    p.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds per shape")
    p.add_argument("--no-group-ab", action="store_true", help="skip the GROUP_M = 1 comparison")
    p.add_argument("--out", default="bench-results")
    p.add_argument("--moe", action="store_true", help="grouped GEMM on MoE layers (see --moe --help)")
    p.add_argument("--table", metavar="CSV", help="print a bench.csv as a markdown table and exit (no GPU needed)")
    p.add_argument("--summary", metavar="CSV", help="print a bench.csv's geometric means as a list and exit (no GPU)")
    add_lang_flag(p)
    args = p.parse_args(argv)
    use_lang(args)
    if args.table:
        return print_table(args.table)
    if args.summary:
        return summary(read_rows(args.summary), prefix="- ")

    import torch

    if not torch.cuda.is_available():
        sys.exit(
            "make bench needs a CUDA GPU: timing under TRITON_INTERPRET measures numpy, not a "
            "kernel. On the CPU, study the order and the traffic with tools/study/l2sim.py instead."
        )
    import triton

    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    sides = ["solutions", "mine"] if args.side == "both" else [args.side]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    gpu = torch.cuda.get_device_name()
    print(
        f"# {gpu}, torch {torch.__version__}, triton {triton.__version__}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, median of {args.rounds} interleaved rounds"
    )
    if args.heldout or args.drawn is not None:  # --drawn SEED: the held-out timing on a drawn set
        return bench_heldout(args, {d: dtypes[d] for d in args.dtype}, out_dir, torch, triton)
    rows = []
    for dname in args.dtype:
        dtype = dtypes[dname]
        modules = {}  # kernel label: module; the first lesson's keep the plain side names of older CSVs
        for each in [registry.lesson(x) for x in args.lessons]:
            for side in sides:
                label = side if each is LESSONS[0] else f"{each.id} {side}"
                mod, why = load_side(side, torch, dtype, each)
                if mod is None:
                    print(f"# {label} skipped for {dname}: {why}")
                else:
                    modules[label] = mod
        for text, layout in [(t, lay) for t in args.shapes for lay in args.layouts]:
            M, N, K = parse_shape(text)
            sets = input_sets(M, N, K, dtype, torch, layout)
            makers = {"torch": lambda a, b: lambda: torch.matmul(a, b)}
            for side, mod in modules.items():
                makers[side] = (lambda m: lambda a, b: lambda: m.matmul(a, b))(mod)
            ref = modules.get("solutions")
            if ref is not None and not args.no_group_ab and hasattr(ref, "matmul_kernel_autotuned"):
                ref.matmul(*sets[0])  # let the autotuner pick, then time its winner with both orders
                best = ref.matmul_kernel_autotuned.best_config
                for label, g in (("best-config", best.kwargs["GROUP_M"]), ("GROUP_M=1", 1)):
                    cfg = with_group(best, g, triton)
                    makers[label] = (lambda c, m: lambda a, b: lambda: m.matmul(a, b, config=c))(cfg, ref)
            timers = {name: graph_timer(make, sets, torch) for name, make in makers.items()}
            times = {name: [] for name in timers}
            for r in range(args.rounds):
                names = list(timers)
                for name in names[r % len(names) :] + names[: r % len(names)]:  # rotate the order
                    times[name].append(timers[name]())
            del timers, sets
            torch.cuda.empty_cache()
            flops = 2 * M * N * K
            base = statistics.median(times["torch"])
            for name, ts in times.items():
                t = statistics.median(ts)
                rows.append(
                    dict(
                        dtype=dname,
                        M=M,
                        N=N,
                        K=K,
                        layout=layout,
                        kernel=name,
                        ms=round(t, 5),
                        tflops=round(flops / t * 1e-9, 1),
                        vs_torch=round(base / t, 3),
                        spread=round((max(ts) - min(ts)) / t, 3),
                        config=str(ref.matmul_kernel_autotuned.best_config) if name == "solutions" and ref else "",
                    )
                )
            line = "  ".join(
                f"{r['kernel']} {r['tflops']:6.1f} ({r['vs_torch']:.2f})"
                for r in rows
                if (r["dtype"], r["M"], r["N"], r["K"], r["layout"]) == (dname, M, N, K, layout)
            )
            print(f"{dname} {M:>5}x{N:<5}x{K:<5} {layout:9} TFLOP/s (x torch): {line}", flush=True)
    write_csv(rows, out_dir / "bench.csv")
    plot(rows, out_dir / "bench.png", gpu)
    summary(rows)


def bench_heldout(args, dtypes, out_dir, torch, triton):
    """--heldout: the reference that tunes per shape against torch.matmul on tools/gpu/heldout.py's
    shapes, both timings."""
    from tools.gpu import heldout
    from tools.gpu.references import TUNES_PER_SHAPE, first_with

    tuned, ref = first_with(TUNES_PER_SHAPE)
    only = {parse_shape(s) for s in args.heldout_only}
    pool = heldout.HELDOUT if args.drawn is None else heldout.drawn(args.drawn)
    shapes = [s for s in pool if not only or s[1:] in only]
    rows = heldout.run(ref, tuned.id, dtypes, args.rounds, graph_timer, input_sets, torch, triton, shapes)
    write_csv(rows, out_dir / "heldout.csv")
    heldout.summary(rows)


def write_csv(rows, path, announce=True):
    """rows (dicts with the same keys, the first's order) as a CSV at path; announce: say so."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if announce:
        print(f"# wrote {path}")


def read_rows(path):
    """A bench.csv's rows with the shape as ints and the ratio as a float, as main() makes them."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.update(M=int(r["M"]), N=int(r["N"]), K=int(r["K"]), ms=float(r["ms"]), vs_torch=float(r["vs_torch"]))
        r.update(tflops=float(r["tflops"]))
    return rows


def print_table(path):
    """One row per dtype and shape: each kernel's TFLOP/s and its ratio to torch.matmul."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    print(say(zh="| 数据类型 | M x N x K | ", en="| dtype | M x N x K | ") + " | ".join(kernels) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in kernels) + " |")
    for key in dict.fromkeys(shape_key(r) for r in rows):
        cells = {r["kernel"]: r for r in rows if shape_key(r) == key}
        line = [f"{cells[k]['tflops']} ({float(cells[k]['vs_torch']):.2f})" if k in cells else "" for k in kernels]
        where = "" if key[4] == "row-major" else f", B = {key[4]}"
        print(f"| {key[0]} | {key[1]} x {key[2]} x {key[3]}{where} | " + " | ".join(line) + " |")


def shape_key(r):
    """(dtype, M, N, K, layout); CSVs from before the layout column are row-major."""
    return r["dtype"], r["M"], r["N"], r["K"], r.get("layout") or "row-major"


def summary(rows, prefix="# "):
    """The headline figures of content/benchmarks.md: the geometric mean over the shapes with
    M, N, K >= 2048, and the minimum."""
    references = [k for k in dict.fromkeys(r["kernel"] for r in rows) if k.endswith("solutions")]
    layouts = list(dict.fromkeys(shape_key(r)[4] for r in rows))
    for layout in layouts:
        if len(layouts) > 1:
            print(f"{prefix}B {layout}:")
        summary_of([r for r in rows if shape_key(r)[4] == layout], references, prefix)


def summary_of(rows, references, prefix):
    for dname in sorted({r["dtype"] for r in rows}):
        for kernel in references:
            big = [
                r["vs_torch"]
                for r in rows
                if r["dtype"] == dname and r["kernel"] == kernel and min(r["M"], r["N"], r["K"]) >= 2048
            ]
            if big:
                geo = statistics.geometric_mean(big)
                print(
                    prefix
                    + say(
                        zh=f"{dname}：{kernel} / torch，M、N、K ≥ 2048 的 {len(big)} 个形状："
                        f"几何平均 {geo:.3f}，最低 {min(big):.3f}",
                        en=f"{dname}: {kernel} / torch over {len(big)} shapes with M, N, K >= 2048: "
                        f"geometric mean {geo:.3f}, lowest {min(big):.3f}",
                    )
                )
            for r in rows:
                if r["dtype"] == dname and r["kernel"] == kernel and r["M"] <= 64:  # decode: bound by reading B
                    nbytes = (r["M"] * r["K"] + r["K"] * r["N"] + r["M"] * r["N"]) * 2  # fp16 and bf16
                    rate = nbytes / (r["ms"] * 1e-3)
                    shape, us, tbs = f"{r['M']}x{r['N']}x{r['K']}", r["ms"] * 1e3, rate / 1e12
                    share = 100 * rate / H200_DRAM_BYTES_PER_S
                    print(
                        prefix
                        + say(
                            zh=f"{dname}：{kernel} 在 {shape}：A、B、C 共 {nbytes:,} B，{us:.1f} us，"
                            f"即 {tbs:.2f} TB/s，是 H200 标称 4.8 TB/s 的 {share:.1f}%",
                            en=f"{dname}: {kernel} at {shape}: {nbytes:,} B of A, B and C in {us:.1f} us = "
                            f"{tbs:.2f} TB/s, {share:.1f} % of the H200's 4.8 TB/s",
                        )
                    )
        ab = {
            (r["M"], r["N"], r["K"]): r["tflops"] for r in rows if r["dtype"] == dname and r["kernel"] == "best-config"
        }
        g1 = {(r["M"], r["N"], r["K"]): r["tflops"] for r in rows if r["dtype"] == dname and r["kernel"] == "GROUP_M=1"}
        for shape in ab:
            if shape in g1:
                gain = (ab[shape] / g1[shape] - 1) * 100
                print(
                    f"{prefix}{dname} {'x'.join(map(str, shape))}: "
                    f"grouped {ab[shape]} vs GROUP_M=1 {g1[shape]} TFLOP/s ({gain:+.1f}%)"
                )


def plot(rows, path, gpu):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dnames = sorted({r["dtype"] for r in rows})
    fig, axes = plt.subplots(1, len(dnames), figsize=(6.5 * len(dnames), 4.5), squeeze=False)
    for ax, dname in zip(axes[0], dnames, strict=False):
        mine = [r for r in rows if r["dtype"] == dname]
        shapes = list(dict.fromkeys(shape_key(r)[1:] for r in mine))
        labels = [
            (f"{m}x{n}x{k}" if not m == n == k else str(m)) + ("" if lay == "row-major" else " W.t()")
            for m, n, k, lay in shapes
        ]
        for kernel in dict.fromkeys(r["kernel"] for r in mine):
            ys = [
                next((r["tflops"] for r in mine if r["kernel"] == kernel and shape_key(r)[1:] == s), None)
                for s in shapes
            ]
            ax.plot(range(len(shapes)), ys, marker="o", label=kernel)
        ax.set_xticks(range(len(shapes)), labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"matmul, {dname}, {gpu}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"# wrote {path}")


if __name__ == "__main__":
    main()
