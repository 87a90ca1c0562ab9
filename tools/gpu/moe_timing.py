"""The GPU half of tools/gpu/moe_bench.py: the inputs of one case, the calls to time, the rounds."""

import importlib
import statistics
from functools import partial

from tools.gpu.bench import graph_timer
from tools.gpu.moe_bench import GROUPED, KERNELS, PER_EXPERT, ROUTE, routing_ids, sort_by_expert

DTYPES = ("bf16", "fp16")


def relative_error(got, want):
    got, want = got.float(), want.float()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


def load(lesson):
    """The lesson's reference, solutions.<module>, or None with the reason."""
    try:
        return importlib.import_module(f"solutions.{lesson.module}"), ""
    except Exception as e:  # noqa: BLE001 - a missing or broken module skips its kernel, not the run
        return None, f"{type(e).__name__}: {e}"[:160]


def grouped_calls(mod, x, w, ids, case, torch, gen):
    """The grouped lesson's GEMM (sorted order, from the unsorted x and its routing), its route (the three
    routing kernels; check_ids=False leaves out route's host-side look at the ids), and at 4096
    tokens the whole layer, moe_mlp (gate and up with SwiGLU, down, the combine; 3x the FLOP)."""
    moe = case.moe
    routing = mod.route(ids, moe.experts)
    calls = {
        GROUPED.id: partial(mod.grouped_matmul, x, w, routing),
        ROUTE: partial(mod.route, ids, moe.experts, check_ids=False),
    }
    if case.tokens == 4096:
        dt = x.dtype
        w_gate_up = torch.randn(moe.experts, 2 * moe.ffn, moe.hidden, device="cuda", dtype=dt, generator=gen)
        w_down = torch.randn(moe.experts, moe.hidden, moe.ffn, device="cuda", dtype=dt, generator=gen)
        weights = torch.softmax(torch.randn(ids.shape, device="cuda", generator=gen), -1)
        calls["layer"] = partial(mod.moe_mlp, x, w_gate_up * moe.hidden**-0.5, w_down * moe.ffn**-0.5, ids, weights)
    return calls


def torch_route(ids, experts, torch):
    """The counting sort done with torch ops: a stable sort, a histogram, a scan."""
    flat = ids.reshape(-1)
    order = torch.sort(flat, stable=True).indices
    counts = torch.zeros(experts, dtype=torch.int32, device=ids.device).index_add_(
        0, flat.long(), torch.ones_like(flat)
    )
    return order, torch.cumsum(counts, 0, dtype=torch.int32)


def per_expert_loop(mm, xs, w, out, bounds):
    for g, s, e in bounds:
        mm(xs[s:e], w[g].t(), out[s:e])


def build_calls(case, args, torch):
    """{(dtype, kernel): call} for the case, checked against torch._grouped_mm; and skip notes."""
    moe = case.moe
    ids_cpu = routing_ids(case, args.seed, torch)
    counts, offs_cpu, token_cpu = sort_by_expert(ids_cpu, moe.experts, torch)
    bounds = [
        (e, int(s - n), int(s)) for e, (n, s) in enumerate(zip(counts.tolist(), offs_cpu.tolist(), strict=True)) if n
    ]
    ids, offs, token_of = ids_cpu.cuda(), offs_cpu.cuda(), token_cpu.cuda()
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    calls, notes, want = {}, [], {}
    refs = {}  # kernel label: the reference module that runs it
    for lesson in (PER_EXPERT, GROUPED):
        if lesson.id in args.kernels:
            refs[lesson.id], why = load(lesson)
            if why:
                notes.append(f"{lesson.id} skipped: {why}")
    per_expert_ref, grouped_ref = refs.get(PER_EXPERT.id), refs.get(GROUPED.id)
    for dname in dict.fromkeys(("bf16", *args.dtype)):  # bf16 grouped_mm is every ratio's base
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[dname]
        x = torch.randn(case.tokens, moe.hidden, device="cuda", dtype=dt, generator=gen)
        w = torch.randn(moe.experts, moe.ffn, moe.hidden, device="cuda", dtype=dt, generator=gen) * moe.hidden**-0.5
        xs = x[token_of]  # the baselines get the rows sorted by expert for free
        calls[dname, "grouped_mm"] = partial(torch._grouped_mm, xs, w.transpose(-2, -1), offs=offs)
        want[dname] = calls[dname, "grouped_mm"]()
        if dname not in args.dtype:
            continue
        out = torch.empty(case.rows, moe.ffn, device="cuda", dtype=dt)
        per_expert = {"loop": lambda a, b, c: torch.matmul(a, b, out=c)}
        if per_expert_ref is not None:
            per_expert[PER_EXPERT.id] = lambda a, b, c, ref=per_expert_ref: ref.matmul(a, b, out=c)
        for kernel, mm in per_expert.items():
            if kernel in args.kernels:
                calls[dname, kernel] = partial(per_expert_loop, mm, xs, w, out, bounds)
        if grouped_ref is not None:
            try:
                for kernel, call in grouped_calls(grouped_ref, x, w, ids, case, torch, gen).items():
                    calls[dname, kernel] = call
            except Exception as e:  # noqa: BLE001
                notes.append(f"{GROUPED.id} {dname} skipped: {type(e).__name__}: {e}"[:200])
        for kernel in KERNELS:
            if (dname, kernel) in calls:
                result = calls[dname, kernel]()
                got = result if kernel == GROUPED.id else out  # the per-expert loops write into out
                err = relative_error(got, want[dname])
                if not err < 1e-2:
                    notes.append(f"{kernel} {dname} dropped: relative error {err:.1e} against torch._grouped_mm")
                    for k in [k for k in calls if k[0] == dname and k[1] in (kernel, "layer", ROUTE)]:
                        del calls[k]
    calls["-", "route torch"] = lambda: torch_route(ids, moe.experts, torch)
    return calls, notes, len(bounds)


def time_case(case, args, torch, triton):
    calls, notes, active = build_calls(case, args, torch)
    for note in notes:
        print(f"# {case.moe.name} {case.tokens} {case.routing}: {note}", flush=True)
    timers = {}
    for name, call in calls.items():
        if "graph" in args.timing:
            try:
                timers[name, "graph"] = graph_timer(lambda a, b, call=call: call, [(None, None)], torch, target_ms=20)
            except Exception as e:  # noqa: BLE001 - a call that cannot be captured is timed eagerly only
                print(f"# {name} not graph-timed: {type(e).__name__}: {str(e)[:120]}", flush=True)
        if "eager" in args.timing:
            timers[name, "eager"] = partial(triton.testing.do_bench, call, warmup=5, rep=20, return_mode="median")
    times = {k: [] for k in timers}
    order = list(timers)
    for r in range(args.rounds):
        for k in order[r % len(order) :] + order[: r % len(order)]:
            times[k].append(timers[k]())
    del timers, calls
    torch.cuda.empty_cache()
    return rows_of(case, times, active)


def rows_of(case, times, active):
    moe, rows = case.moe, []
    weight_bytes = active * moe.ffn * moe.hidden * 2
    for (dname, kernel), timing in times:
        ts = times[(dname, kernel), timing]
        t = statistics.median(ts)
        base = times.get((("bf16", "grouped_mm"), timing))
        gemm = kernel in ("grouped_mm", *KERNELS, "layer")
        times3 = 3 if kernel == "layer" else 1  # gate, up and down
        rows.append(
            dict(
                dtype=dname,
                model=moe.name,
                key=case.key,
                experts=moe.experts,
                top_k=moe.top_k,
                hidden=moe.hidden,
                ffn=moe.ffn,
                tokens=case.tokens,
                routing=case.routing,
                tuned=case.tuned,
                active=active,
                timing=timing,
                kernel=kernel,
                ms=round(t, 5),
                tflops=round(times3 * case.flops / t * 1e-9, 1) if gemm else "",
                vs_gmm=round(statistics.median(base) / t, 3) if gemm and base and times3 == 1 else "",
                weight_tbs=round(times3 * weight_bytes / t * 1e-9, 3) if gemm else "",
                spread=round((max(ts) - min(ts)) / t, 3),
            )
        )
    for timing in dict.fromkeys(r["timing"] for r in rows):
        cells = []
        for r in (r for r in rows if r["timing"] == timing):
            ratio = f" ({r['vs_gmm']:.2f})" if r["vs_gmm"] != "" else ""
            value = f"{r['tflops']:.1f}{ratio}" if r["tflops"] != "" else f"{r['ms'] * 1e3:.1f}us"
            cells.append(f"{r['dtype']} {r['kernel']} {value}")
        print(f"{moe.name:14} {case.tokens:>5} {case.routing:8} {timing}: TFLOP/s (x bf16 gmm): {'  '.join(cells)}")
    return rows
