"""Nsight Compute counters of every lesson's reference at the same shape, side by side (content/t5.perf.md §7).

    python -m tools.gpu.ncu_lessons --shapes 1024 8192 --dtype fp16     # runs ncu, prints a table
    python -m tools.gpu.ncu_lessons --launch 1024 --dtype fp16          # what ncu profiles (no table)

For each shape the child process lets each autotuner pick its config and compiles each kernel, then
launches each lesson's `matmul` once inside the profiled range.  ncu runs with `--clock-control none`
(the GPU keeps its own clocks, as in `make bench`) and its default cache control, which flushes the
caches before each profiled kernel: every launch starts with a cold L2, as in `make bench`, where the
inputs span twice the L2.  The table reports, per launch:
- DRAM read and written (dram__bytes_read.sum, dram__bytes_write.sum);
- L2 hit rate (lts__t_sector_hit_rate.pct);
- SM busy: the share of the kernel's time in which an SM had a block to run, averaged over the SMs
  (sm__cycles_active.avg.pct_of_peak_sustained_elapsed): a grid with fewer tiles than SMs shows it;
- tensor pipe: the share of time the tensor cores were busy, where this ncu knows the Hopper metric
  (sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed);
- the kernel's duration under the profiler (gpu__time_duration.sum).
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

from course.registry import LESSONS

METRICS = {  # column: ncu metric
    "DRAM read (MB)": "dram__bytes_read.sum",
    "DRAM written (MB)": "dram__bytes_write.sum",
    "L2 hit rate (%)": "lts__t_sector_hit_rate.pct",
    "SM busy (%)": "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "tensor pipe (%)": "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "time (us)": "gpu__time_duration.sum",
}
SCALE = {"dram__bytes_read.sum": 1e-6, "dram__bytes_write.sum": 1e-6, "gpu__time_duration.sum": 1e-3}  # B->MB, ns->us


def launch(shape, dname):
    """The profiled child: one launch of every lesson's reference matmul, in registry order."""
    import importlib

    import torch

    from tools.gpu.bench import parse_shape

    M, N, K = parse_shape(shape)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dname]
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    modules = [importlib.import_module(f"solutions.{lesson.module}") for lesson in LESSONS]
    for mod in modules:
        mod.matmul(a, b)  # autotune and compile outside the profiled range
    for lesson, mod in zip(LESSONS, modules, strict=True):
        print(f"config {lesson.id}: {config_of(mod, M, N, K, dtype)}", flush=True)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for mod in modules:
        mod.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def config_of(mod, M, N, K, dtype):
    """What the lesson's matmul ran at this shape: its picked Config, else its autotuner's winner."""
    if hasattr(mod, "pick_config"):
        return mod.pick_config(M, N, K, dtype)
    tuner = getattr(mod, "matmul_kernel_autotuned", None)
    return getattr(tuner, "best_config", "?")


def known_metrics(ncu):
    """The metrics of METRICS that this ncu knows for this GPU (the Hopper tensor-pipe one is not everywhere)."""
    listing = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True).stdout
    names = {line.split()[0] for line in listing.splitlines() if line.strip()}
    if not names:  # no listing: ask for the metrics every recent ncu knows
        return {col: m for col, m in METRICS.items() if "gmma" not in m}
    return {col: m for col, m in METRICS.items() if m.split(".")[0] in names}


def per_kernel(lines):
    """{launch id: {"kernel": name, metric: value}} from ncu's --csv log (other lines are the program's)."""
    kernels = {}
    for r in csv.DictReader(line for line in lines if line.startswith('"')):
        value = float(r["Metric Value"].replace(",", ""))
        kernels.setdefault(r["ID"], {"kernel": r["Kernel Name"]})[r["Metric Name"]] = value
    return kernels


def profile(ncu, shape, dname, metrics):
    """(rows, configs): a row per profiled kernel (the lesson, its metrics), and what each lesson ran."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "ncu.csv")
        cmd = [
            ncu,
            "--clock-control",
            "none",
            "--profile-from-start",
            "off",
            "--csv",
            "--print-units",
            "base",
            "--log-file",
            log,
            "--metrics",
            ",".join(metrics.values()),
            sys.executable,
            "-m",
            "tools.gpu.ncu_lessons",
            "--launch",
            shape,
            "--dtype",
            dname,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not os.path.exists(log):
            sys.exit(f"ncu failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        with open(log) as f:
            kernels = per_kernel(f)
    configs = [line for line in done.stdout.splitlines() if line.startswith("config ")]
    if len(kernels) != len(LESSONS):
        sys.exit(f"expected one profiled kernel per lesson ({len(LESSONS)}), got {len(kernels)}: {kernels}")
    rows = [(lesson.id, kernels[key]) for lesson, key in zip(LESSONS, sorted(kernels, key=int), strict=True)]
    return rows, configs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", nargs="+", default=["1024", "8192"], help="N for N x N x N, or MxNxK")
    p.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"])
    p.add_argument("--launch", metavar="SHAPE", help="(for ncu) launch the lessons' kernels at SHAPE, once each")
    p.add_argument("--ncu", default=shutil.which("ncu") or "ncu")
    args = p.parse_args(argv)
    if args.launch:
        return launch(args.launch, args.dtype)
    import torch

    if not torch.cuda.is_available() or shutil.which(args.ncu) is None:
        sys.exit("tools/gpu/ncu_lessons.py needs a CUDA GPU and Nsight Compute (ncu on PATH, or --ncu)")
    metrics = known_metrics(args.ncu)
    print(f"| {args.dtype} shape | lesson | " + " | ".join(metrics) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in metrics) + " |")
    ran = []
    for shape in args.shapes:
        rows, configs = profile(args.ncu, shape, args.dtype, metrics)
        for lesson_id, values in rows:
            cells = [f"{values[m] * SCALE.get(m, 1):,.1f}" for m in metrics.values()]
            print(f"| {shape} | {lesson_id} | " + " | ".join(cells) + " |", flush=True)
        ran += [f"- {shape}, {line[len('config ') :]}" for line in configs]
    print("\n" + "\n".join(ran))


if __name__ == "__main__":
    main()
