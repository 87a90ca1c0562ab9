"""The reference stays a good lesson on every common GPU: tuned for Hopper, yet each GPU in
tools/smem.py's table keeps several configs that fit its shared memory, in fp16 and in fp32.

(The autotuner skips a config over the limit silently: a list with one config per GPU would
leave that GPU no choice at all, and a list with none would fail at the first launch.)"""
import importlib
import os

from tools.smem import BYTES_PER_ELEMENT, SMEM_LIMITS, smem_bytes

ENOUGH = {"fp16": 3, "fp32": 2}  # configs each GPU must keep, per input dtype


def reference_configs():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # only to import; nothing is launched
    return importlib.import_module("solutions.t4_matmul").AUTOTUNE_CONFIGS


def check_every_common_gpu_keeps_several_configs():
    configs = reference_configs()
    problems = []
    for dtype, need in ENOUGH.items():
        for gpu, limit in SMEM_LIMITS.items():
            fit = [c for c in configs if smem_bytes(c, BYTES_PER_ELEMENT[dtype]) <= limit]
            if len(fit) < need:
                problems.append(f"{gpu}: only {len(fit)} of the reference's configs fit {limit:,} B "
                                f"in {dtype}; keep at least {need}")
    return problems
