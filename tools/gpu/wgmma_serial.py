"""Which compiled kernels of the lessons does ptxas serialize (its warning C7515)? (content/t5.perf.md §5)

    python -m tools.gpu.wgmma_serial [--side solutions|mine] [--lessons T4 T5] [--seconds 40] [--ptxas PATH]

A Hopper kernel keeps several `wgmma.mma_async` in flight: it issues a k-step's multiplies and waits
for the one before (Triton writes that wait, `warp_group_dot_wait {pendings = 1}`). ptxas may still
refuse to overlap them and wait after each multiply instead; it says so only as an info line,
"(C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to ...", which
Triton does not show. Nothing else tells: the results are right, and Triton's IR looks the same.

This runs each lesson's public calls the way tools/gpu/offgrid.py draws them (shapes, layouts such
as `W.t()`, options; its checks against float64 too) for --seconds per lesson, then, for a lesson
with `matmul`, four bench-grid shapes (GRID) in both layouts and dtypes; then it hands the PTX of
every kernel that the calls compiled and that uses wgmma to ptxas (Triton's own, or --ptxas) with
-v, and prints one line per kernel: serialized (and why) or pipelined, with its warps, stages,
registers, stack and spill bytes, and constexprs. triton.autotune compiles every
config it tries, so a lesson that autotunes lists the configs that lost too. Exit status 1 when any
is serialized.
"""

import argparse
import os
import subprocess
import sys
import tempfile

from course.registry import LESSONS
from tools.gpu import offgrid

GRID = ((2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 1024), (4096, 11008, 4096))  # a few bench shapes


def ptxas_verdict(ptx, ptxas):
    """(serialized, why, its registers and spills) from ptxas -v on one kernel's PTX, compiled for sm_90a."""
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "k.ptx")
        with open(source, "w") as f:
            f.write(ptx)
        out = subprocess.run(
            [ptxas, "-v", "--gpu-name", "sm_90a", source, "-o", os.path.join(tmp, "k.cubin")],
            capture_output=True,
            text=True,
        )
    lines = (out.stdout + out.stderr).splitlines()
    why = [
        line.split("serialized due to", 1)[1].split(" in the function")[0].strip() for line in lines if "C7515" in line
    ]
    used = next((line.split(":", 1)[1].strip() for line in lines if "Used" in line), "")
    spills = next((line.strip() for line in lines if "spill stores" in line), "")  # "N bytes stack frame, ..."
    return bool(why), "; ".join(why), f"{used}; {spills}" if spills else used


def compiled_wgmma_kernels(side):
    """(module.name, compiled kernel) for every kernel of side's modules that ran and uses wgmma, once each
    (a kernel imported by a later lesson, or wrapped by triton.autotune, is seen under several names)."""
    from triton.runtime.jit import JITFunction

    seen = set()
    for module_name, module in sorted(sys.modules.items()):
        if not module_name.startswith(f"{side}.") or module is None:
            continue
        for name, value in sorted(vars(module).items()):
            fn = value if isinstance(value, JITFunction) else getattr(value, "fn", None)  # autotuned: .fn
            if not isinstance(fn, JITFunction) or getattr(fn, "__module__", module_name) != module_name:
                continue
            for cache in fn.device_caches.values():
                for kernel in cache[0].values():
                    if id(kernel) not in seen and "wgmma" in kernel.asm.get("ptx", ""):
                        seen.add(id(kernel))
                        yield f"{module_name}.{name}", kernel


def exercise(args, torch):
    """Run the lessons' calls so that their kernels compile: offgrid's draws, then the grid shapes."""
    import importlib

    offgrid.main(
        ["--side", args.side, "--seconds", str(args.seconds), *(["--lessons", *args.lessons] if args.lessons else [])]
    )
    for lesson in LESSONS:
        module = importlib.import_module(f"{args.side}.{lesson.module}")
        if (args.lessons and lesson.id not in args.lessons) or not hasattr(module, "matmul"):
            continue
        for dtype in (torch.float16, torch.bfloat16):
            for M, N, K in GRID:
                a = torch.randn(M, K, device="cuda", dtype=dtype)
                module.matmul(a, torch.randn(K, N, device="cuda", dtype=dtype))
                module.matmul(a, torch.randn(N, K, device="cuda", dtype=dtype).t())  # nn.Linear's W.t()
    torch.cuda.synchronize()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--side", choices=("solutions", "mine"), default="solutions")
    p.add_argument("--lessons", nargs="+", type=str.upper, help="these lessons only (default: every one)")
    p.add_argument("--seconds", type=float, default=40.0, help="offgrid's drawn calls per lesson, before the grid")
    p.add_argument("--ptxas", help="this ptxas (default: the one Triton uses, or TRITON_PTXAS_PATH)")
    args = p.parse_args(argv)
    import torch
    import triton

    if not torch.cuda.is_available():
        sys.exit("tools/gpu/wgmma_serial.py needs a CUDA GPU (it reads the kernels the GPU's calls compiled)")
    ptxas = (
        args.ptxas
        or os.environ.get("TRITON_PTXAS_PATH")
        or os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    )
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    print(
        f"# triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}, "
        f"ptxas {version[-1] if version else '?'}",
        flush=True,
    )
    exercise(args, torch)
    serialized = total = 0
    for where, kernel in compiled_wgmma_kernels(args.side):
        bad, why, used = ptxas_verdict(kernel.asm["ptx"], ptxas)
        constants = getattr(getattr(kernel, "src", None), "constants", {}) or {}
        shown = {key[0] if isinstance(key, tuple) else key: value for key, value in constants.items()}
        meta = kernel.metadata
        print(
            f"{'SERIALIZED' if bad else 'pipelined '} {where}, {meta.num_warps} warps, {meta.num_stages} stages, "
            f"{used}{': ' + why if bad else ''} :: constexprs {shown}",
            flush=True,
        )
        serialized, total = serialized + bad, total + 1
    print(f"{serialized} of {total} compiled kernels with wgmma serialized by ptxas")
    return 1 if serialized else 0


if __name__ == "__main__":
    sys.exit(main())
