"""Measure what the grouped order does to L2 and DRAM, with Nsight Compute, on a CUDA GPU.

    ncu --clock-control none --profile-from-start off \\
        --metrics lts__t_sector_hit_rate.pct,dram__bytes_read.sum,gpu__time_duration.sum \\
        python -m tools.gpu.ncu_group --shape 8192 --dtype fp16

It lets the autotuner pick a config for the shape, then launches that config twice inside the
profiled range: first with GROUP_M = 1 (row-major tile order), then with the tuned GROUP_M.
ncu prints one block of metrics per launch, in that order.  `--clock-control none` leaves the
GPU's clocks as they are (ncu would otherwise lock them to base clocks).
"""

import argparse
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="8192", help="N for N x N x N, or MxNxK")
    p.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"])
    args = p.parse_args()
    import torch
    import triton

    if not torch.cuda.is_available():
        sys.exit("tools/gpu/ncu_group.py needs a CUDA GPU; on the CPU, tools/study/l2sim.py models the same effect")
    from course.registry import lesson_writing
    from tools.gpu.bench import parse_shape, with_group
    from tools.gpu.references import reference

    ref = reference(lesson_writing("matmul_kernel_autotuned"))  # the lesson that autotunes GROUP_M

    M, N, K = parse_shape(args.shape)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    ref.matmul(a, b)  # autotune outside the profiled range
    best = ref.matmul_kernel_autotuned.best_config
    order = [("GROUP_M=1", with_group(best, 1, triton)), (f"GROUP_M={best.kwargs['GROUP_M']}", best)]
    for _, cfg in order:
        ref.matmul(a, b, config=cfg)  # compile outside the profiled range
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _, cfg in order:
        ref.matmul(a, b, config=cfg)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(
        f"{args.dtype} {M}x{N}x{K}, config {best}; profiled launches in order: "
        + ", ".join(label for label, _ in order)
    )


if __name__ == "__main__":
    main()
