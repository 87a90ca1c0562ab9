"""The sweep T5's config rules were fitted to (content/t5.perf.md §3): candidate configs, graph-timed
(tools/gpu/bench.py's timer) on the TUNING shapes, never on the held-out ones (tools/gpu/heldout.py).

    python -m tools.gpu.sweep [--dtype fp16] [--out sweep-results]

Writes sweep.csv: one row per (shape, candidate) with its time and its ratio to torch.matmul.
"""

import argparse
import csv
import statistics
import sys
from pathlib import Path

# (kind, M, N, K): the same kinds as HELDOUT, other shapes.
TUNING = [
    *[("square", s, s, s) for s in (1280, 1792, 2560, 3328, 4608, 6656)],
    ("llm", 2048, 5120, 5120),
    ("llm", 4096, 6144, 4096),
    ("llm", 3072, 14336, 4096),
    ("llm", 4096, 4096, 14336),
    ("llm", 2048, 3584, 18944),
    ("llm", 3072, 2560, 10240),
    ("llm", 2048, 28672, 4096),
    ("llm", 4096, 5120, 13824),
    *[
        ("decode", m, n, k)
        for m, n, k in (
            (1, 5120, 5120),
            (3, 4096, 14336),
            (12, 11008, 4096),
            (24, 4096, 4096),
            (40, 14336, 4096),
            (80, 4096, 4096),
            (112, 5120, 5120),
            (160, 4096, 11008),
            (192, 14336, 4096),
            (240, 3584, 3584),
        )
    ],
    ("small", 640, 640, 640),
    ("small", 1024, 768, 768),
]


def candidates(t5, M):
    """The configs tried at a shape: few, and only those that can fit it (the pruning)."""
    C = t5.Config
    if M <= 64:
        bm = max(16, 1 << (M - 1).bit_length())
        return {
            "swap": C(bm, 64, 256, 1, 4, 4, 1, False, "swap"),
            "swap-s3": C(bm, 64, 256, 1, 4, 3, 1, False, "swap"),
            "swap-k128": C(bm, 64, 128, 1, 4, 6, 1, False, "swap"),
            "sk16": C(16, 64, 256, 1, 4, 4, 1, False, "auto"),
            "dp64": C(64, 64, 128, 8, 4, 4, 1, False, "dp"),
        }
    big = {
        "dp128x128-o2": C(128, 128, 64, 8, 4, 3, 2, True, "dp", 2),
        "auto128x128-o2": C(128, 128, 64, 8, 4, 3, 2, True, "auto", 2),
        "dp128x128-s5": C(128, 128, 64, 8, 4, 5, 1, True, "dp"),
        "auto128x128-s5": C(128, 128, 64, 8, 4, 5, 1, True, "auto"),
        "tail128x256": C(128, 256, 64, 8, 8, 4, 2, True, "tail"),
        "dp128x256": C(128, 256, 64, 8, 8, 4, 2, True, "dp"),
    }
    mid = {
        "dp64x128": C(64, 128, 128, 8, 4, 4, 1, True, "dp"),
        "auto64x128": C(64, 128, 128, 8, 4, 4, 1, True, "auto"),
        "dp64x64": C(64, 64, 128, 8, 4, 4, 1, True, "dp"),
        "auto64x64": C(64, 64, 128, 8, 4, 4, 1, True, "auto"),
        "swap128": C(128, 64, 128, 1, 4, 4, 1, False, "swap"),
    }
    if M <= 256:
        return mid
    if M <= 1024:
        return {**mid, "dp128x128-o2": big["dp128x128-o2"], "auto128x128-s5": big["auto128x128-s5"]}
    return big


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default="sweep-results")
    args = p.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        sys.exit("the sweep needs a CUDA GPU")
    from solutions import t5_persistent as t5
    from tools.gpu.bench import graph_timer, input_sets

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    rows = []
    for kind, M, N, K in TUNING:
        sets = input_sets(M, N, K, dtype, torch)
        makers = {"torch": lambda a, b: lambda: torch.matmul(a, b), "rules": lambda a, b: lambda: t5.matmul(a, b)}
        for name, cfg in candidates(t5, M).items():
            makers[name] = (lambda c: lambda a, b: lambda: t5.matmul(a, b, config=c))(cfg)
        timers = {}
        for name, make in makers.items():
            try:
                timers[name] = graph_timer(make, sets, torch, target_ms=10.0)
            except Exception as e:  # noqa: BLE001 - a config that does not fit is a result, not a stop
                print(f"# {M}x{N}x{K} {name}: {type(e).__name__}", flush=True)
        times = {name: [] for name in timers}
        for _ in range(args.rounds):
            for name, timer in timers.items():
                times[name].append(timer())
        base = statistics.median(times["torch"])
        for name, ts in times.items():
            t = statistics.median(ts)
            rows.append(
                dict(
                    dtype=args.dtype, kind=kind, M=M, N=N, K=K, config=name, ms=round(t, 5), vs_torch=round(base / t, 3)
                )
            )
        best = max((r for r in rows[-len(times) :] if r["config"] != "torch"), key=lambda r: r["vs_torch"])
        line = " ".join(f"{r['config']}={r['vs_torch']:.2f}" for r in rows[-len(times) :] if r["config"] != "torch")
        print(f"{M}x{N}x{K}: best {best['config']} {best['vs_torch']:.2f} | {line}", flush=True)
        del timers, sets
        torch.cuda.empty_cache()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "sweep.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
