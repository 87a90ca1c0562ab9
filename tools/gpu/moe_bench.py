"""`make bench ARGS=--moe`: T6's grouped GEMM against torch._grouped_mm on mixture-of-experts layers (issue 20).

    python -m tools.gpu.bench --moe [--models olmoe ...] [--layer KEY=E,TOP_K,HIDDEN,FFN ...] [--tokens 512 4096]
                                    [--set issue|tuning] [--summary CSV]

The GEMM is each layer's expert up-projection: x [tokens, hidden] routed top-k, times w [E, FFN, hidden]
as nn.Linear stores it; 2 * tokens * top_k * FFN * hidden FLOP.  Per case and dtype it times
- "grouped_mm": torch._grouped_mm on the rows already sorted by expert (mat_b = w.transpose(-2, -1),
  offs the int32 cumulative row ends).  fp16 takes a much slower path in torch, so every ratio
  (vs_gmm) is to bf16 torch._grouped_mm on the same case, in both dtypes, as issue 20 says;
- "loop": torch.matmul per expert into slices of one output; "T5": solutions.t5_persistent.matmul
  per expert the same way;
- "T6": solutions.t6_moe.grouped_matmul (given/t6_host.py bound to the reference) from the unsorted
  tokens and its routing (the gather is its own work), when that module exists and agrees with
  torch._grouped_mm;
- T6's route and torch's (a stable sort, a histogram, a scan) apart, and "layer" = T6 route +
  grouped GEMM, for the routing's share of the layer.
Each is timed graph-replayed (tools/gpu/bench.py's graph_timer: no host cost) and eager
(triton.testing.do_bench, median, L2 flushed), in interleaved rounds; the medians go to moe.csv.
Every weight tensor is larger than twice the L2, so one copy of the inputs misses in L2 already.
"""

import argparse
import csv
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from course.hardware import H200_DRAM_BYTES_PER_S
from course.registry import lesson_writing
from tools.gpu.bench import write_csv

# The lessons timed here, found by what their steps write instead of named: the grouped GEMM's, and
# the persistent GEMM's (called once per expert).  Their ids label the kernels in the log, the CSV's
# kernel column and --kernels, as "loop", "T5", "T6", "route T6" and "layer" in the saved runs.
GROUPED = lesson_writing("grouped_tiles")
PER_EXPERT = lesson_writing("stream_k_split")
KERNELS = ("loop", PER_EXPERT.id, GROUPED.id)  # the GEMMs --kernels picks from
ROUTE = f"route {GROUPED.id}"  # the grouped lesson's routing kernels alone


@dataclass(frozen=True)
class Moe:
    name: str
    experts: int
    top_k: int
    hidden: int
    ffn: int


# The MoE layers of public models (issue 20), by their configs.
MODELS = {
    "mixtral": Moe("Mixtral-8x7B", 8, 2, 4096, 14336),
    "olmoe": Moe("OLMoE", 64, 8, 2048, 1024),
    "qwen3": Moe("Qwen3-30B-A3B", 128, 8, 2048, 768),
    "deepseek": Moe("DeepSeek-V3", 256, 8, 7168, 2048),
}
# More public layers, never tuned on (timed once on 2026-12-04, t6 §6.3): --models takes them by key, and
# --layer any other as KEY=EXPERTS,TOP_K,HIDDEN,FFN.
OTHER_MODELS = {
    "mixtral22": Moe("Mixtral-8x22B", 8, 2, 6144, 16384),
    "dbrx": Moe("DBRX", 16, 4, 6144, 10752),
    "qwen15": Moe("Qwen1.5-MoE-A2.7B", 60, 4, 2048, 1408),
    "qwen2": Moe("Qwen2-57B-A14B", 64, 8, 3584, 2560),
    "granite": Moe("Granite-3.0-3B-A800M", 40, 8, 1536, 512),
    "phi35": Moe("Phi-3.5-MoE", 16, 2, 4096, 6400),
}
ISSUE_TOKENS = (512, 4096, 16384)
DECODE_TOKENS = 64  # at most 16 tokens per expert in every model: the weight-bandwidth rows
ROUTINGS = ("balanced", "zipf")
ZIPF_S = 1.0  # expert popularity ~ 1 / rank**s

# T6's pick_config is tuned on these cases only (case, per routing): the 4096-token rows of two of
# the models, and layers of no model in the set.  Every other case of the issue's set is held out.
TUNED_MODEL_ROWS = (("mixtral", 4096), ("qwen3", 4096))
SYNTHETIC = {
    "syn16": Moe("synthetic-16", 16, 2, 3072, 8192),
    "syn32": Moe("synthetic-32", 32, 4, 4096, 2048),
    "syn96": Moe("synthetic-96", 96, 4, 2560, 1280),
    "syn160": Moe("synthetic-160", 160, 6, 5120, 1536),
    "syn64s": Moe("synthetic-64-small", 64, 8, 1536, 768),
    "syn128f": Moe("synthetic-128-few", 128, 8, 2560, 1024),
    "syn48m": Moe("synthetic-48-mid", 48, 4, 3072, 2048),
}
SYNTHETIC_TOKENS = {
    "syn16": 2048,
    "syn32": 8192,
    "syn96": 1024,
    "syn160": 4096,
    "syn64s": 96,
    "syn128f": 160,
    "syn48m": 1536,
}


@dataclass(frozen=True)
class Case:
    key: str  # the MODELS or SYNTHETIC key
    moe: Moe
    tokens: int
    routing: str

    @property
    def rows(self):
        return self.tokens * self.moe.top_k

    @property
    def flops(self):
        return 2 * self.rows * self.moe.ffn * self.moe.hidden

    @property
    def tokens_per_expert(self):
        return self.rows / self.moe.experts

    @property
    def tuned(self):
        return self.key in SYNTHETIC or (self.key, self.tokens) in TUNED_MODEL_ROWS


def issue_cases(models=tuple(MODELS), tokens=(*ISSUE_TOKENS, DECODE_TOKENS), routings=ROUTINGS, layers=None):
    """The cases of these models (keys of MODELS, OTHER_MODELS or `layers`, a dict of key -> Moe)."""
    known = {**MODELS, **OTHER_MODELS, **(layers or {})}
    return [Case(m, known[m], t, r) for m in models for t in tokens for r in routings]


def parse_layer(text):
    """'KEY=EXPERTS,TOP_K,HIDDEN,FFN' -> (KEY, Moe); argparse's type for --layer."""
    key, _, numbers = text.partition("=")
    try:
        experts, top_k, hidden, ffn = (int(n) for n in numbers.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: want KEY=EXPERTS,TOP_K,HIDDEN,FFN, e.g. mine=64,8,2048,1024"
        ) from None
    if not key or min(experts, top_k, hidden, ffn) < 1 or top_k > experts:
        raise argparse.ArgumentTypeError(f"{text!r}: a key, and 1 <= TOP_K <= EXPERTS, HIDDEN and FFN >= 1")
    return key, Moe(key, experts, top_k, hidden, ffn)


def tuning_cases(routings=ROUTINGS):
    own = [Case(m, MODELS[m], t, r) for m, t in TUNED_MODEL_ROWS for r in routings]
    return own + [Case(k, moe, SYNTHETIC_TOKENS[k], r) for k, moe in SYNTHETIC.items() for r in routings]


def heldout_cases(cases):
    return [c for c in cases if not c.tuned]


# --- routing: top-k expert ids per token, seeded, on the CPU (the GPU gets a copy) ---------------


def balanced_ids(tokens, experts, top_k, gen, torch):
    """Every expert gets tokens*top_k/E rows (within one), each token top_k distinct experts, in a
    seeded random order: slot s of the flat list takes expert s mod E, relabelled and shuffled by token."""
    if top_k > experts:
        raise ValueError(f"top_k={top_k} > experts={experts}")
    slots = torch.arange(tokens * top_k).reshape(tokens, top_k)
    relabel = torch.randperm(experts, generator=gen)
    ids = relabel[slots % experts]  # top_k consecutive slots: distinct experts, as top_k <= E
    return ids[torch.randperm(tokens, generator=gen)].to(torch.int32)


def zipf_ids(tokens, experts, top_k, gen, torch, s=ZIPF_S):
    """Each token draws top_k distinct experts, expert of popularity rank r with weight 1/r**s; the
    ranks are dealt to the experts at random."""
    rank = torch.randperm(experts, generator=gen).double() + 1
    p = rank.pow(-s)
    return torch.multinomial(p.expand(tokens, experts), top_k, replacement=False, generator=gen).to(torch.int32)


def routing_ids(case, seed, torch):
    gen = torch.Generator().manual_seed(seed)
    make = balanced_ids if case.routing == "balanced" else zipf_ids
    return make(case.tokens, case.moe.experts, case.moe.top_k, gen, torch)


def sort_by_expert(ids, experts, torch):
    """(counts, offs, token of each sorted row): the stable counting sort the baselines get for free."""
    flat = ids.reshape(-1).long()
    counts = torch.bincount(flat, minlength=experts)
    order = torch.sort(flat, stable=True).indices
    return counts, torch.cumsum(counts, 0).to(torch.int32), order // ids.shape[1]


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="make bench ARGS='--moe ...'", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--models", nargs="+", choices=[*MODELS, *OTHER_MODELS], help="default: MODELS, or none with --layer"
    )
    p.add_argument(
        "--layer", nargs="+", type=parse_layer, default=[], metavar="KEY=E,TOP_K,HIDDEN,FFN", help="time these too"
    )
    p.add_argument("--tokens", nargs="+", type=int, default=[*ISSUE_TOKENS, DECODE_TOKENS])
    p.add_argument("--routing", nargs="+", default=list(ROUTINGS), choices=ROUTINGS)
    p.add_argument("--set", choices=("issue", "tuning", "heldout"), default="issue", help="which cases (see TUNING)")
    p.add_argument("--dtype", nargs="+", default=["bf16", "fp16"], choices=["bf16", "fp16"])
    p.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=KERNELS)
    p.add_argument("--timing", nargs="+", default=["graph", "eager"], choices=["graph", "eager"])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="bench-results")
    p.add_argument("--summary", metavar="CSV", help="print a moe.csv's summary and exit (no GPU needed)")
    return p.parse_args(argv)


def cases_of(args):
    if args.set == "tuning":
        return tuning_cases(args.routing)
    layers = dict(args.layer)
    models = args.models if args.models is not None else ([] if layers else list(MODELS))
    cases = issue_cases([*models, *layers], args.tokens, args.routing, layers)
    return heldout_cases(cases) if args.set == "heldout" else cases


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.summary:
        return summary(read_rows(args.summary), prefix="- ")
    import torch

    if not torch.cuda.is_available():
        sys.exit("make bench --moe needs a CUDA GPU: on the CPU, read a saved run with --summary CSV")
    import triton

    from tools.gpu import moe_timing

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, median of {args.rounds} interleaved rounds, "
        f"seed {args.seed}",
        flush=True,
    )
    rows = []
    for case in cases_of(args):
        rows += moe_timing.time_case(case, args, torch, triton)
        write_csv(rows, out / "moe.csv", announce=False)  # after each case, so a cut run keeps its rows
    summary(rows)


NUMBERS = ("experts", "top_k", "hidden", "ffn", "tokens", "active", "ms", "tflops", "vs_gmm", "weight_tbs")


def read_rows(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.update({k: float(r[k]) for k in NUMBERS if r.get(k) not in (None, "")})
        r["tuned"] = r["tuned"] == "True"
    return rows


def _geo(rows, where):
    ratios = [r["vs_gmm"] for r in rows]
    low = min(rows, key=lambda r: r["vs_gmm"])
    at = f"{low['model']} {int(low['tokens'])} {low['routing']}"
    geo = statistics.geometric_mean(ratios)
    return f"{where}: geometric mean {geo:.3f} over {len(ratios)}, lowest {low['vs_gmm']:.2f} at {at}"


def summary(rows, prefix="# "):
    """Issue 20's targets, each on the rows it names: the ratio to bf16 grouped_mm over the issue's
    token counts (and on the held-out ones alone), T6 / loop at >= 64 experts, the weight
    bandwidth at <= 16 tokens per expert, and the routing's share of the layer at 4096 tokens."""
    gemm = [r for r in rows if r["kernel"] in ("grouped_mm", *KERNELS)]
    for dname in dict.fromkeys(r["dtype"] for r in gemm):
        for timing in dict.fromkeys(r["timing"] for r in gemm):
            mine = [r for r in gemm if r["dtype"] == dname and r["timing"] == timing and r["tokens"] != DECODE_TOKENS]
            for kernel in dict.fromkeys(r["kernel"] for r in mine):
                sel = [r for r in mine if r["kernel"] == kernel]
                line = _geo(sel, f"{dname} {timing} {kernel} / bf16 grouped_mm")
                held = [r for r in sel if not r["tuned"]]
                if kernel == GROUPED.id and held and len(held) < len(sel):
                    line += "; " + _geo(held, "held-out")
                print(prefix + line)
            by_case = {}
            for r in mine:
                if r["experts"] >= 64:
                    by_case.setdefault((r["model"], r["tokens"], r["routing"]), {})[r["kernel"]] = r["ms"]
            grouped = GROUPED.id
            speedups = [c["loop"] / c[grouped] for c in by_case.values() if "loop" in c and grouped in c]
            if speedups:
                print(
                    f"{prefix}{dname} {timing} {grouped} / loop at >= 64 experts: geometric mean "
                    f"{statistics.geometric_mean(speedups):.2f}x, lowest {min(speedups):.2f}x over {len(speedups)}"
                )
            few = [
                r
                for r in gemm
                if r["dtype"] == dname and r["timing"] == timing and r["tokens"] * r["top_k"] <= 16 * r["experts"]
            ]
            for kernel in dict.fromkeys(r["kernel"] for r in few):
                shares = [100 * r["weight_tbs"] * 1e12 / H200_DRAM_BYTES_PER_S for r in few if r["kernel"] == kernel]
                print(
                    f"{prefix}{dname} {timing} {kernel} at <= 16 tokens per expert: weight bytes at "
                    f"{min(shares):.0f}-{max(shares):.0f} % of 4.8 TB/s over {len(shares)}"
                )
    for r in rows:
        if r["kernel"].startswith("route") and r["tokens"] == 4096:
            layer = [x for x in rows if x["kernel"] == "layer" and _same(x, r)]
            share = f", {100 * r['ms'] / layer[0]['ms']:.1f} % of the layer" if layer else ""
            print(
                f"{prefix}{r['dtype']} {r['timing']} {r['kernel']} {r['model']} 4096 {r['routing']}: "
                f"{r['ms'] * 1e3:.1f} us{share}"
            )


def _same(x, r):
    return all(x[k] == r[k] for k in ("dtype", "timing", "model", "tokens", "routing"))


if __name__ == "__main__":
    main()
