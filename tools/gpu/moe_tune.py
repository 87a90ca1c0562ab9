"""Candidate block sizes for T6's grouped_matmul, timed on the TUNING cases only (tools/gpu/moe_bench.py).

    python -m tools.gpu.moe_tune [--dtype bf16] [--rounds 3] [--out DIR]

Each case's candidates are those of its bucket (rows per expert: few <= 16 < some <= 128 < many) and
of the bucket's neighbours, graph-timed in interleaved rounds against bf16 torch._grouped_mm; the
CSV and the log say which wins where.  pick_config in given/t6_host.py is then written by hand
from these figures, and the held-out cases (make bench ARGS="--moe --set heldout") are timed with it.
"""

import argparse
import csv
import statistics
from functools import partial
from pathlib import Path

from tools.gpu.bench import graph_timer
from tools.gpu.moe_bench import GROUPED, routing_ids, sort_by_expert, tuning_cases
from tools.gpu.references import reference

# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
CANDIDATES = [
    (16, 64, 128, 8, 4, 4),
    (16, 128, 128, 8, 4, 4),
    (16, 128, 64, 8, 4, 6),
    (16, 256, 64, 8, 4, 4),
    (32, 128, 128, 8, 4, 4),
    (32, 128, 64, 8, 4, 4),
    (64, 128, 64, 8, 4, 3),
    (64, 128, 64, 8, 4, 4),
    (64, 128, 128, 8, 4, 3),
    (64, 256, 64, 8, 8, 3),
    (128, 128, 64, 8, 8, 3),
    (128, 128, 64, 8, 4, 4),
    (128, 256, 64, 8, 8, 3),
    (128, 128, 128, 8, 8, 3),
]
# The second round, around the first round's winners (16/256/64, 64/256/64 and 128/256/64).
CANDIDATES_2 = [
    (16, 256, 64, 8, 4, 4),
    (16, 256, 64, 8, 4, 5),
    (16, 256, 128, 8, 4, 3),
    (16, 256, 64, 8, 8, 4),
    (32, 256, 64, 8, 4, 4),
    (32, 256, 64, 8, 8, 4),
    (64, 256, 64, 8, 8, 3),
    (64, 256, 64, 8, 8, 4),
    (64, 256, 64, 8, 4, 4),
    (128, 256, 64, 8, 8, 3),
    (128, 256, 64, 8, 8, 4),
    (128, 256, 64, 4, 8, 3),
    (128, 256, 64, 16, 8, 3),
    (256, 128, 64, 8, 8, 3),
]


def bucket_blocks(per_expert):
    """The BLOCK_M values worth trying for this many rows per expert (mean)."""
    if per_expert <= 16:
        return (16, 32)
    if per_expert <= 128:
        return (32, 64, 128)
    return (64, 128, 256)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--round", type=int, default=1, choices=[1, 2], help="CANDIDATES or CANDIDATES_2")
    p.add_argument("--out", default="bench-results")
    args = p.parse_args(argv)
    import torch

    grouped = reference(GROUPED)  # solutions/<module>.py of the lesson that writes grouped_tiles

    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    rows = []
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for case in tuning_cases():
        moe = case.moe
        ids_cpu = routing_ids(case, args.seed, torch)
        _, offs, token_of = sort_by_expert(ids_cpu, moe.experts, torch)
        gen = torch.Generator(device="cuda").manual_seed(args.seed)
        x = torch.randn(case.tokens, moe.hidden, device="cuda", dtype=dt, generator=gen)
        w = torch.randn(moe.experts, moe.ffn, moe.hidden, device="cuda", dtype=dt, generator=gen) * moe.hidden**-0.5
        xb, wb = x.bfloat16(), w.bfloat16()
        base = partial(torch._grouped_mm, xb[token_of.cuda()], wb.transpose(-2, -1), offs=offs.cuda())
        want = base().float()
        routing = grouped.route(ids_cpu.cuda(), moe.experts)
        calls = {"grouped_mm": base}
        for c in CANDIDATES if args.round == 1 else CANDIDATES_2:
            if c[0] in bucket_blocks(case.tokens_per_expert):
                cfg = grouped.Config(*c)
                got = grouped.grouped_matmul(x, w, routing, config=cfg).float()
                err = ((got - want).norm() / want.norm()).item()
                if err < 1e-2:
                    calls[c] = partial(grouped.grouped_matmul, x, w, routing, config=cfg)
                else:
                    print(f"# {c} wrong on {moe.name}: relative error {err:.1e}")
        timers = {
            k: graph_timer(lambda a, b, call=call: call, [(None, None)], torch, target_ms=15)
            for k, call in calls.items()
        }
        times = {k: [] for k in timers}
        keys = list(timers)
        for r in range(args.rounds):
            for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
                times[k].append(timers[k]())
        gmm = statistics.median(times["grouped_mm"])
        ranked = sorted((statistics.median(ts), k) for k, ts in times.items() if k != "grouped_mm")
        for t, k in ranked:
            rows.append(
                dict(
                    model=moe.name,
                    key=case.key,
                    tokens=case.tokens,
                    routing=case.routing,
                    per_expert=round(case.tokens_per_expert, 1),
                    config=" ".join(map(str, k)),
                    ms=round(t, 5),
                    vs_gmm=round(gmm / t, 3),
                )
            )
        best = ", ".join(f"{'/'.join(map(str, k))} {gmm / t:.2f}" for t, k in ranked[:4])
        print(f"{moe.name:18} {case.tokens:>5} {case.routing:8} {case.tokens_per_expert:7.1f}/exp: {best}", flush=True)
        del timers, calls, x, w, xb, wb, want
        torch.cuda.empty_cache()
        with open(out / "moe_tune.csv", "w", newline="") as f:  # after every case: a cut run keeps its rows
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)


if __name__ == "__main__":
    main()
