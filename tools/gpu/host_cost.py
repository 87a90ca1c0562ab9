"""A persistent kernel's host cost per eager call, beside torch.matmul's, and where it goes
(content/t5.perf.md §2).

    python -m tools.gpu.host_cost [--module solutions.<module>] [--shape 64x64x64]

The module is by default the reference of the first lesson that has the parts below (NEEDS).

Each figure is host µs per call in a tight loop of launches timed while the GPU is held busy by a
sleep queued ahead of them (tools/gpu/heldout.py's host_cost), so the host sets the pace.  The
parts are matmul's steps called one at a time as the first call of a kind makes them (the checks,
the config choice, tma_ready, make_descriptors, the workspace, the launch through the module's
*_kernel[grid]); "matmul" is the whole call as a model makes it, again and again with one kind of
operands.
"""

import argparse
import importlib
import json
import sys

from tools.gpu.bench import parse_shape
from tools.gpu.heldout import host_cost
from tools.gpu.references import first_with, kernel_of

# What parts() calls of the module besides its kernel and matmul.
NEEDS = ("num_sms", "pick_config", "tma_ready", "make_descriptors", "stream_k_plan", "launches_early", "workspace")


def parts(ref, a, b, torch, triton):
    """{part: callable} for matmul's steps, with the arguments the first call would give them."""
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device="cuda", dtype=a.dtype)
    sms = ref.num_sms(a.device)
    cfg = ref.pick_config(M, N, K, a.dtype, sms)
    a2, b2, kmajor = ref.tma_ready(a, b)
    BM, BN, BK, sub = cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, cfg.EPILOGUE_SUBTILE
    descs = ref.make_descriptors(a2, b2, c, kmajor, BM, BN, BK, sub)
    tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
    sk, programs = ref.stream_k_plan(tiles, triton.cdiv(K, BK), sms, cfg.mode)
    early = cfg.pdl and ref.launches_early(a.device)

    kernel_name, kernel = kernel_of(ref)

    def launch():
        kernel[(programs,)](
            *descs,
            c,
            c,
            c,
            c,
            M,
            N,
            K,
            0,
            sk,
            programs,
            BLOCK_M=BM,
            BLOCK_N=BN,
            BLOCK_K=BK,
            GROUP_M=cfg.GROUP_M,
            EPILOGUE_SUBTILE=sub,
            B_KMAJOR=kmajor,
            HAS_BIAS=False,
            ACTIVATION="none",
            FLATTEN=cfg.FLATTEN,
            USE_SK=sk > 0,
            SWAP_AB=cfg.mode == "swap",
            TRACE=0,
            PDL=early,
            num_warps=cfg.num_warps,
            num_stages=cfg.num_stages,
            **({"launch_pdl": True} if early else {}),
        )

    cut = {}
    if hasattr(ref, "plan_key"):  # the cached path: the key, then the plan's launch
        ref.matmul(a, b)
        key = ref.plan_key(a, b, None, None, None, None, None, None, True)
        plan = ref._plans[key]
        cut = {
            "plan_key": lambda: ref.plan_key(a, b, None, None, None, None, None, None, True),
            "Plan.launch": lambda: plan.launch(a, b, None, None),
        }
    return cut | {
        "checks (check_inputs)": lambda: ref.check_inputs(a, b, None, None),
        "config (num_sms + pick_config)": lambda: ref.pick_config(M, N, K, a.dtype, ref.num_sms(a.device)),
        "tma_ready": lambda: ref.tma_ready(a, b),
        "descriptors (make_descriptors)": lambda: ref.make_descriptors(a2, b2, c, kmajor, BM, BN, BK, sub),
        "output (torch.empty)": lambda: torch.empty((M, N), device=a.device, dtype=a.dtype),
        "workspace": lambda: ref.workspace(a.device, programs, BM, BN),
        f"launch ({kernel_name}[grid])": launch,
        "matmul": lambda: ref.matmul(a, b),
        "torch.matmul": lambda: torch.matmul(a, b),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--module", help="default: the first lesson's reference that has NEEDS")
    p.add_argument("--shape", nargs="+", default=["64x64x64", "768"])
    p.add_argument("--json", help="write the figures there too")
    p.add_argument("--quick", action="store_true", help="only the whole calls and the cached path's parts")
    args = p.parse_args(argv)
    import torch
    import triton

    if not torch.cuda.is_available():
        sys.exit("host_cost needs a CUDA GPU")
    ref = importlib.import_module(args.module) if args.module else first_with(NEEDS)[1]
    name = ref.__name__
    result = {}
    for text in args.shape:
        M, N, K = parse_shape(text)
        for layout in ("row-major", "W.t()"):
            a = torch.randn(M, K, device="cuda", dtype=torch.float16)
            b = (
                torch.randn(N, K, device="cuda", dtype=torch.float16).t()
                if layout == "W.t()"
                else torch.randn(K, N, device="cuda", dtype=torch.float16)
            )
            calls = parts(ref, a, b, torch, triton)
            if args.quick:
                calls = {k: v for k, v in calls.items() if k in ("plan_key", "Plan.launch", "matmul", "torch.matmul")}
            figures = {name: round(host_cost(call, torch), 2) for name, call in calls.items()}
            result[f"{M}x{N}x{K} {layout}"] = figures
            print(f"# {name} {M}x{N}x{K} fp16 {layout}: host µs per call")
            for part, us in figures.items():
                print(f"  {part:32} {us:7.2f}")
            print(f"  matmul / torch.matmul            {figures['matmul'] / figures['torch.matmul']:7.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
