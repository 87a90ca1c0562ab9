"""Right answers off the bench grid: each lesson's public calls on seeded random shapes, layouts and options.

    python -m tools.gpu.offgrid [--side solutions|mine] [--lessons T5 T6] [--seconds 70] [--seed 7] [--only N]

The suite checks small, chosen cases, and on a GPU the configs of the large shapes (128x256 tiles,
stream-K, split-K, the turned-around decode product, pitch copies, flattened tile loops, plans) run
only in the benches, which time them and do not look at the numbers.  This draws what a model would
call instead, and checks every result against float64:
- a lesson whose file defines `matmul` (T4, T5): M, N, K log-uniform from 1 to 8192 (some near a
  multiple of 64, a third under 300), fp16, bf16 or fp32; A contiguous, a view with a wider pitch,
  A.t() of a (K, M) tensor, or one row expanded to M rows (a row stride of 0); B row-major, `W.t()`
  as nn.Linear stores it, or a view with a wider pitch; a bias (a strided view, at times) and GELU
  at times; T5 also with out= at times;
- a lesson whose file defines `grouped_matmul` (T6): tokens, experts, top-k, K and N drawn, routing
  balanced, Zipf, all on one expert or with empty experts, topk_weights and the combine at times,
  SwiGLU at times, x as a view at times, ids int64 or int32, weights in x's dtype or float32; and
  moe_mlp;
each call twice, with fresh values of the same layout, so that the second launches from a plan.
A result is wrong when ||out - ref|| / ||ref|| passes the dtype's tolerance, or any cell is off by
more than the tolerance times (10 x the result's RMS + the cell's own size): a few wrong cells in a
large product.
Each lesson draws cases until --cases or --seconds runs out (T4's first call of a shape autotunes,
which takes seconds); a wrong case prints its seed, and `--only N` replays case N of a seed.  On the
CPU (TRITON_INTERPRET=1) shapes stay under 100 and bf16 is left out (the interpreter's bf16 tl.dot is wrong).
"""

import argparse
import importlib
import inspect
import math
import os
import random
import sys
import time

from course.registry import LESSONS

INTERPRETING = os.environ.get("TRITON_INTERPRET") == "1"
# ||out - ref|| / ||ref|| for a result rounded to its dtype (as the suite's OUT_RTOL, with room for
# SwiGLU's rounded hidden rows and tf32's 10-bit mantissa on a GPU)
RTOL = {"float16": 2e-3, "bfloat16": 1.5e-2, "float32": 4e-3}


def log_uniform(rng, low, high):
    return int(round(math.exp(rng.uniform(math.log(low), math.log(high)))))


def dim(rng, high):
    """A dimension as a model meets it: log-uniform, a fifth of them within 3 of a multiple of 64."""
    d = log_uniform(rng, 1, high)
    if rng.random() < 0.2:
        d = max(1, 64 * max(1, round(d / 64)) + rng.randint(-3, 3))
    return min(d, high)


def cap(dims, budget):
    """Shrink the largest of dims until their product is at most budget (a case takes milliseconds)."""
    dims = list(dims)
    while math.prod(dims) > budget:
        i = dims.index(max(dims))
        dims[i] = max(1, dims[i] * 2 // 3)
    return dims


# ----------------------------------------------------------------------------------------------
# Dense products: matmul(a, b, bias=, activation=[, out=])
# ----------------------------------------------------------------------------------------------
def draw_dense(rng, small, with_out):
    high = 96 if small else 8192
    if rng.random() < 0.3:
        high = min(high, 300)
    M, N, K = cap([dim(rng, high) for _ in range(3)], 2e5 if small else 2**33)
    dtypes = ["float16", "float32"] + ([] if small else ["bfloat16", "bfloat16"])
    return dict(
        M=M,
        N=N,
        K=K,
        dtype=rng.choice(dtypes),
        a=rng.choice(["contiguous", "pitched", "a.t()"] * 3 + ["expanded"]),
        b=rng.choice(["row-major", "W.t()", "W.t()", "pitched"]),
        bias=rng.choice([None, "contiguous", "strided"]),
        activation=rng.choice([None, None, "gelu"]),
        out=with_out and rng.random() < 0.3,
    )


def dense_operands(case, gen, torch, device):
    dtype = getattr(torch, case["dtype"])
    M, N, K = case["M"], case["N"], case["K"]

    def rand(*shape):
        return torch.randn(shape, generator=gen, device=device).to(dtype)

    a = {
        "contiguous": lambda: rand(M, K),
        "pitched": lambda: rand(M, K + 8)[:, :K],
        "a.t()": lambda: rand(K, M).t(),
        "expanded": lambda: rand(1, K).expand(M, K),  # one row seen M times: a row stride of 0
    }
    b = {"row-major": lambda: rand(K, N), "W.t()": lambda: rand(N, K).t(), "pitched": lambda: rand(K, N + 24)[:, :N]}
    bias = {None: lambda: None, "contiguous": lambda: rand(N), "strided": lambda: rand(2 * N)[::2]}
    return a[case["a"]](), b[case["b"]](), bias[case["bias"]]()


def dense_reference(a, b, bias, activation, torch):
    ref = a.double() @ b.double()
    if bias is not None:
        ref = ref + bias.double()
    return torch.nn.functional.gelu(ref) if activation == "gelu" else ref


def run_dense(module, case, gen, torch, device):
    """[(call, out, ref)] for two calls of module.matmul on fresh operands of the case's layout."""
    results = []
    for call in ("first", "second"):
        a, b, bias = dense_operands(case, gen, torch, device)
        kwargs = dict(bias=bias, activation=case["activation"])
        if case["out"]:
            kwargs["out"] = torch.empty((case["M"], case["N"]), device=device, dtype=a.dtype)
        out = module.matmul(a, b, **kwargs)
        if case["out"] and out.data_ptr() != kwargs["out"].data_ptr():
            raise AssertionError("matmul(..., out=t) returned another tensor than t")
        results.append((call, out, dense_reference(a, b, bias, case["activation"], torch)))
    return results


# ----------------------------------------------------------------------------------------------
# Grouped products: route, grouped_matmul, moe_mlp
# ----------------------------------------------------------------------------------------------
def draw_grouped(rng, small):
    experts = rng.choice([1, 2, 3, 5, 8, 16, 64, 128] if not small else [1, 2, 3, 5, 8])
    top_k = rng.randint(1, min(experts, 8))
    tokens, K, N = cap(
        [dim(rng, 64 if small else 8192), dim(rng, 64 if small else 4096), dim(rng, 64 if small else 4096)],
        3e4 if small else 2**31 / top_k,
    )
    K, N = cap([K, N], 2e4 if small else 2**28 / experts)  # the weights: at most 2**28 elements
    return dict(
        tokens=tokens,
        experts=experts,
        top_k=top_k,
        K=K,
        N=N,
        dtype=rng.choice(["float16", "float32"] + ([] if small else ["bfloat16", "bfloat16"])),
        routing=rng.choice(["balanced", "zipf", "one expert", "half empty"]),
        call=rng.choice(["sorted", "weighted", "combine", "swiglu", "moe_mlp"]),
        x=rng.choice(["contiguous", "pitched"]),
        ids=rng.choice(["int64", "int32"]),  # torch.topk gives int64; vLLM's routers give int32
        weights=rng.choice(["x's", "float32"]),  # a router's softmax is often kept in float32
    )


def grouped_ids(case, gen, torch, device):
    """[tokens, top_k] distinct expert ids per token, drawn as the case's routing says."""
    E, T, k = case["experts"], case["tokens"], case["top_k"]
    weight = {
        "balanced": torch.ones(E),
        "zipf": 1.0 / torch.arange(1, E + 1, dtype=torch.float64) ** 1.2,
        "one expert": torch.tensor([1.0] + [1e-6] * (E - 1)),
        "half empty": torch.tensor([float(e % 2 == 0) + 1e-9 for e in range(E)]),
    }[case["routing"]]
    if T == 0:
        return torch.zeros((0, k), dtype=torch.int64, device=device)
    return torch.multinomial(weight.float().to(device).expand(T, E), k, replacement=False, generator=gen)


def per_expert(xs, w, slot_ids, E):
    """float64 [slots, rows of w]: each slot's row of xs times its expert's w, one expert at a time."""
    out = xs.new_zeros((xs.shape[0], w.shape[1]))
    for e in range(E):
        rows = (slot_ids == e).nonzero().flatten()
        if rows.numel():
            out[rows] = xs[rows] @ w[e].double().t()
    return out


def run_grouped(module, case, gen, torch, device):
    """[(call, out, ref)] for two calls of the case's grouped call on fresh values."""
    dtype = getattr(torch, case["dtype"])
    E, T, k, K, N = (case[n] for n in ("experts", "tokens", "top_k", "K", "N"))

    def swiglu(gate_up):  # [gate; up] rows of each expert's w: silu(gate) * up
        return torch.nn.functional.silu(gate_up[:, :N]) * gate_up[:, N:]

    def rand(*shape, scale=1.0):
        return (torch.randn(shape, generator=gen, device=device) * scale).to(dtype)

    results = []
    for call in ("first", "second"):
        ids = grouped_ids(case, gen, torch, device)
        slot_ids = ids.flatten()
        ids = ids.to(getattr(torch, case["ids"]))
        weights = torch.rand((T, k), generator=gen, device=device)
        weights = weights if case["weights"] == "float32" else weights.to(dtype)
        slot_weights = weights.double().flatten()[:, None]
        x = rand(T, K) if case["x"] == "contiguous" else rand(T, K + 8)[:, :K]
        xs = x.double()[torch.arange(T * k, device=device) // k]  # slot s reads token s // top_k
        if case["call"] == "moe_mlp":
            w1, w2 = rand(E, 2 * N, K, scale=K**-0.5), rand(E, K, N, scale=N**-0.5)
            out = module.moe_mlp(x, w1, w2, ids, weights)
            hidden = swiglu(per_expert(xs, w1, slot_ids, E)).to(dtype).double()  # stored in dtype between launches
            ref = per_expert(hidden, w2, slot_ids, E) * slot_weights
            results.append((call, out, ref.view(T, k, K).sum(1)))
            continue
        w = rand(E, 2 * N if case["call"] == "swiglu" else N, K)
        routing = module.route(ids, E)
        order = check_routing(routing, slot_ids.cpu(), E, torch).to(device)
        weighted = case["call"] in ("weighted", "combine")
        out = module.grouped_matmul(
            x,
            w,
            routing,
            weights if weighted else None,
            combine=case["call"] == "combine",
            activation="swiglu" if case["call"] == "swiglu" else None,
        )
        ref = per_expert(xs, w, slot_ids, E)
        if case["call"] == "swiglu":
            ref = swiglu(ref)
        if weighted:
            ref = ref * slot_weights
        results.append((call, out, ref.view(T, k, N).sum(1) if case["call"] == "combine" else ref[order]))
    return results


def check_routing(routing, slot_ids, E, torch):
    """route's counts, offsets, sorted_slots and slot_pos against a stable sort on the host; the
    sorted order (position -> slot)."""
    counts = torch.bincount(slot_ids, minlength=E)
    order = torch.sort(slot_ids, stable=True).indices
    want = dict(
        counts=counts,
        offsets=counts.cumsum(0),
        sorted_slots=order,
        slot_pos=torch.empty_like(order).scatter_(0, order, torch.arange(order.numel())),
    )
    for name, value in want.items():
        got = getattr(routing, name).cpu().long()
        if not torch.equal(got, value):
            raise AssertionError(
                f"route: {name} is {got.tolist()[:12]}…, a stable counting sort gives {value.tolist()[:12]}…"
            )
    return order


# ----------------------------------------------------------------------------------------------
# Judging a result, and the loop over cases
# ----------------------------------------------------------------------------------------------
def judge(out, ref, dtype, torch):
    """'' when out matches ref within the dtype's tolerance, else what is wrong, in a line."""
    if tuple(out.shape) != tuple(ref.shape):
        return f"shape {tuple(out.shape)}, expected {tuple(ref.shape)}"
    if str(out.dtype) != f"torch.{dtype}":
        return f"dtype {out.dtype}, expected torch.{dtype}"
    if ref.numel() == 0:
        return ""
    got = out.double()
    if not torch.isfinite(got).all():
        return f"{int((~torch.isfinite(got)).sum())} cells are NaN or inf"
    norm = max(ref.norm().item(), 1e-30)
    rms = norm / ref.numel() ** 0.5
    err = (got - ref).norm().item() / norm
    # a cell may be off by its own rounding: a few cells far above the RMS (a K of 1, SwiGLU's tails) are
    # rounded at their own size
    bad = int(((got - ref).abs() > RTOL[dtype] * (10 * rms + ref.abs())).sum())
    if err > RTOL[dtype] or bad:
        return f"relative error {err:.2e} (tolerance {RTOL[dtype]:.0e}), {bad} of {ref.numel()} cells far off"
    return ""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--side", choices=("solutions", "mine"), default="solutions")
    p.add_argument("--lessons", nargs="+", type=str.upper, help="these lessons only (default: every one)")
    p.add_argument("--cases", type=int, default=200, help="at most this many cases per lesson")
    p.add_argument(
        "--seconds",
        type=float,
        default=70.0,
        help="per lesson: no new case after this long (a first call of a new shape compiles, or autotunes)",
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--only", type=int, help="replay this case number alone")
    p.add_argument("--verbose", action="store_true", help="a line for each right case too, with its seconds")
    args = p.parse_args(argv)
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    device = "cpu" if INTERPRETING else "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("tools/gpu/offgrid.py needs a CUDA GPU, or TRITON_INTERPRET=1 for small shapes on the CPU")
    failures = total = 0  # over every lesson
    for lesson in LESSONS:
        if args.lessons and lesson.id not in args.lessons:
            continue
        module = importlib.import_module(f"{args.side}.{lesson.module}")
        kind = "grouped" if hasattr(module, "grouped_matmul") else "dense" if hasattr(module, "matmul") else None
        if kind is None:
            continue
        began, wrong, ran = time.monotonic(), 0, 0
        for number in range(args.cases):
            if time.monotonic() - began > args.seconds and args.only is None:
                break
            rng = random.Random(f"{args.seed}-{lesson.id}-{number}")
            case = (
                draw_grouped(rng, INTERPRETING)
                if kind == "grouped"
                else draw_dense(rng, INTERPRETING, "out" in inspect.signature(module.matmul).parameters)
            )
            if args.only is not None and number != args.only:
                continue
            gen = torch.Generator(device=device).manual_seed(args.seed * 1000 + number)
            case_began = time.monotonic()
            try:
                run = run_grouped if kind == "grouped" else run_dense
                said = [
                    f"{call} call: {why}"
                    for call, out, ref in run(module, case, gen, torch, device)
                    if (why := judge(out, ref, case["dtype"], torch))
                ]
            except Exception as e:  # noqa: BLE001 - a crash is a result of the case, reported as one
                said = [f"raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]]
            ran += 1
            took = time.monotonic() - case_began
            if not said and args.verbose:
                print(f"ok {lesson.id} case {number} in {took:.1f} s: {case}", flush=True)
            if said:
                wrong += 1
                print(
                    f"WRONG {lesson.id} case {number} (--seed {args.seed} --only {number}): {case}\n    "
                    + "\n    ".join(said),
                    flush=True,
                )
        print(
            f"{lesson.id} ({kind}, {args.side}): {wrong} of {ran} cases wrong in {time.monotonic() - began:.0f} s",
            flush=True,
        )
        failures, total = failures + wrong, total + ran
    print("every case right" if not failures else f"{failures} of {total} cases wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
