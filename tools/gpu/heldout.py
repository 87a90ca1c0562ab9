"""`make bench ARGS=--heldout`: a lesson's reference that tunes its config per shape (the first such,
tools/gpu/references.py) against torch.matmul on shapes nothing was tuned on (issue 18).

Each shape is timed four ways: B row-major or given as W.t() (an nn.Linear weight), and
- graph-timed, as the bench grid is (tools/gpu/bench.py: launches replayed from a CUDA graph, the
  inputs cycled through twice the L2), which leaves the host's launch cost out;
- eager, with triton.testing.do_bench, the way a PyTorch model calls a kernel: one call after
  another, the L2 flushed between them; the median of its calls, as T6's bench takes it (until
  2026-12-02 the mean, do_bench's default, which a few slow calls move);
and the host's own cost per call is timed apart (host_cost), on a product too small to keep the GPU busy.

The held-out shapes (HELDOUT) and the shapes the configs were chosen on (TUNING, tools/gpu/tune.py)
are kept apart: no shape of one is in the other or in the bench grid; the test
tools/tests/test_bench.py::test_heldout_shapes_are_apart proves it.
"""

import statistics
import time

# (kind, M, N, K).  LLM layers at a 2048-4096 token prefill: M tokens, N outputs, K inputs.
HELDOUT = [
    *[("square", s, s, s) for s in (1536, 2304, 3072, 3584, 5120, 6144)],
    ("llm", 2048, 6144, 4096),  # Llama-3-8B q, k, v together
    ("llm", 3072, 4096, 4096),  # an attention output projection
    ("llm", 4096, 14336, 4096),  # Llama-3-8B MLP up
    ("llm", 2048, 4096, 14336),  # Llama-3-8B MLP down
    ("llm", 4096, 12288, 4096),  # Llama-2-7B q, k, v together
    ("llm", 2048, 4096, 11008),  # Llama-2-7B MLP down
    ("llm", 3072, 18944, 3584),  # Qwen2-7B MLP up
    ("llm", 4096, 3584, 18944),  # Qwen2-7B MLP down
    ("llm", 2048, 10240, 2560),  # phi-2 MLP up
    ("llm", 4096, 2560, 10240),  # phi-2 MLP down
    ("llm", 2560, 5120, 5120),  # a 13B model's output projection
    ("llm", 2048, 13824, 5120),  # Llama-2-13B MLP up
    *[
        ("decode", m, n, k)
        for m, n, k in (
            (1, 4096, 4096),
            (2, 12288, 4096),
            (4, 6144, 4096),
            (8, 14336, 4096),
            (16, 4096, 11008),
            (32, 4096, 14336),
            (48, 5120, 5120),
            (64, 4096, 4096),
            (96, 3584, 18944),
            (128, 11008, 4096),
            (200, 4096, 4096),
            (256, 4096, 4096),
        )
    ],
    ("small", 768, 768, 768),
    # sizes that are multiples of 8 but not of 64: 16-byte row pitches TMA may read, not 128-byte ones
    # (t5.perf §3; added 2026-12-02, chosen before any of them was timed)
    *[
        ("pitch", m, n, k)
        for m, n, k in (
            (1200, 1200, 1200),
            (2800, 2800, 2800),
            (3400, 3400, 3400),
            (4400, 4400, 4400),
            (5400, 5400, 5400),
            (1800, 7000, 2200),
            (7000, 1800, 2200),
            (2200, 2200, 7000),
            (500, 6000, 4000),
            (24, 4000, 6000),
        )
    ],
]
LAYOUTS = ("row-major", "W.t()")


def known_shapes():
    """(M, N, K) of every shape a figure was tuned or reported on: HELDOUT, the tuning set, the bench grid."""
    from tools.gpu import bench, tune

    grid = {bench.parse_shape(s) for s in [*map(str, bench.SQUARE), *bench.LLM]}
    return {s[1:] for s in HELDOUT + tune.TUNING} | grid


def drawn(seed):
    """A set of 19 shapes of HELDOUT's kinds drawn from `seed`, for a check on shapes nobody has seen:
    a fixed held-out set, once its figures are read, is tuned against in effect.  7 prefill-like
    (multiples of 128), 5 decode batches of 1-256 rows and 3 of 1-64 (N and K multiples of 256),
    3 with sizes that are multiples of 8 (a few may be of 64 too), and 896³.  A draw that hits a
    known shape is refused.  drawn(20261204) is the set timed on 2026-12-04 (content/t5.perf.md §3)."""
    import random

    rng = random.Random(seed)
    shapes = [
        ("llm", rng.randrange(1024, 6145, 256), rng.randrange(1024, 16385, 128), rng.randrange(1024, 16385, 128))
        for _ in range(7)
    ]
    shapes += [
        ("decode", rng.randint(1, 256), rng.randrange(2048, 16385, 256), rng.randrange(2048, 16385, 256))
        for _ in range(5)
    ]
    shapes += [("pitch", *(rng.randrange(800, 6001, 8) for _ in range(3))) for _ in range(3)]
    shapes += [
        ("decode", rng.randint(1, 64), rng.randrange(2048, 16385, 256), rng.randrange(2048, 16385, 256))
        for _ in range(3)
    ]
    shapes.append(("small", 896, 896, 896))
    hit = [s for s in shapes if s[1:] in known_shapes()]
    if hit:
        raise ValueError(f"seed {seed} draws shapes of HELDOUT, TUNING or the bench grid: {hit}; take another seed")
    return shapes


def host_cost(call, torch, calls=400, loops=7):
    """Host µs per call: the median of `loops` loops of `calls` launches, each loop timed while the
    GPU is held busy by a sleep queued ahead of it, so that the loop runs at the host's own pace.
    Without the sleep a GPU that takes longer per tiny product than the host takes to launch it sets
    the pace (on the H200 on 2026-12-02 a kernel that does nothing ran at 5.2 µs a launch so timed).
    400 launches stay well inside the launch queue; a loop that waited for the GPU would show the
    sleep's 50 µs a call."""
    for _ in range(50):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(loops):
        torch.cuda._sleep(calls * 100_000)  # about 50 µs a call at the H200's 1.98 GHz
        start = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def run(ref, label, dtypes, rounds, graph_timer, input_sets, torch, triton, shapes=HELDOUT):
    """Rows of (dtype, kind, M, N, K, layout, timing, kernel, ms, vs_torch): graph-timed and eager; the
    reference module ref's rows have kernel = label (its lesson's id)."""
    rows = []
    for dname, dtype in dtypes.items():
        for kind, M, N, K in shapes:
            for layout in LAYOUTS:
                makers = {"torch": lambda a, b: lambda: torch.matmul(a, b)}
                makers[label] = lambda a, b: lambda: ref.matmul(a, b)
                sets = input_sets(M, N, K, dtype, torch, layout)
                graph = {name: graph_timer(make, sets, torch) for name, make in makers.items()}
                a, b = sets[0]
                eager = {name: make(a, b) for name, make in makers.items()}
                times = {(t, n): [] for t in ("graph", "eager") for n in makers}
                for r in range(rounds):
                    for name in list(makers)[r % 2 :] + list(makers)[: r % 2]:
                        times["graph", name].append(graph[name]())
                        times["eager", name].append(
                            triton.testing.do_bench(eager[name], warmup=5, rep=20, return_mode="median")
                        )
                del graph, eager, sets
                for timing in ("graph", "eager"):
                    base = statistics.median(times[timing, "torch"])
                    for name in makers:
                        t = statistics.median(times[timing, name])
                        rows.append(
                            dict(
                                dtype=dname,
                                kind=kind,
                                M=M,
                                N=N,
                                K=K,
                                layout=layout,
                                timing=timing,
                                kernel=name,
                                ms=round(t, 5),
                                vs_torch=round(base / t, 3),
                            )
                        )
                line = "  ".join(f"{r['timing']} {r['vs_torch']:.2f}" for r in rows[-4:] if r["kernel"] == label)
                print(f"{dname} {kind:6} {M:>5}x{N:<5}x{K:<5} {layout:9} {label}/torch: {line}", flush=True)
        torch.cuda.empty_cache()
    return rows


def summary(rows, prefix="# "):
    """Geometric means of each kernel/torch per dtype and timing, the lowest, and the decode and 768³ rows."""
    for label in [k for k in dict.fromkeys(r["kernel"] for r in rows) if k != "torch"]:
        summary_of(rows, label, prefix)


def summary_of(rows, label, prefix):
    for dname in sorted({r["dtype"] for r in rows}):
        for timing in ("graph", "eager"):
            mine = [r for r in rows if r["dtype"] == dname and r["timing"] == timing and r["kernel"] == label]
            if not mine:
                continue
            ratios = [r["vs_torch"] for r in mine]
            low = min(mine, key=lambda r: r["vs_torch"])
            where = f"{low['M']}x{low['N']}x{low['K']} {low['layout']}"
            geo = statistics.geometric_mean(ratios)
            below = sum(ratio < 0.90 for ratio in ratios)  # issue 18: none below 0.90
            print(
                f"{prefix}{dname} held-out {timing}: {label}/torch geometric mean {geo:.3f} over {len(ratios)}, "
                f"lowest {low['vs_torch']:.2f} at {where}, {below} below 0.90"
            )
            for layout in LAYOUTS:
                sub = [r["vs_torch"] for r in mine if r["layout"] == layout]
                small = [r["vs_torch"] for r in mine if r["layout"] == layout and r["kind"] in ("decode", "small")]
                print(
                    f"{prefix}  {layout}: geometric mean {statistics.geometric_mean(sub):.3f}; decode and 768³: "
                    f"lowest {min(small):.2f}"
                )
