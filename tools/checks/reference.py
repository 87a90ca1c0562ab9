"""Each reference stays a good lesson on every common GPU: tuned for Hopper, yet each GPU in
course/hardware.py's table keeps several of its autotune configs within its shared memory, in
fp16 and in fp32.  (The autotuner skips a config over the limit silently: a list with one config
per GPU would leave that GPU no choice at all, and a list with none would fail at the first launch.)

The configs are read in a child process, so that importing triton (and choosing the interpreter
for it) leaves this process, and the checks after this one, as they were."""

import json
import os
import subprocess
import sys

from course import ROOT
from course.hardware import BYTES_PER_ELEMENT, SMEM_LIMITS, shared_memory
from course.registry import LESSONS
from tools.checks.common import costly

ENOUGH = {"fp16": 3, "fp32": 2}  # configs each GPU must keep, per input dtype
READ = (
    "import json, importlib\nfrom course.hardware import blocks_of\n"
    "m = importlib.import_module('solutions.{module}')\n"
    "print(json.dumps([blocks_of(c) for c in getattr(m, 'AUTOTUNE_CONFIGS', [])]))\n"
)


def reference_blocks(lesson):
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_stages) of each of the reference's AUTOTUNE_CONFIGS."""
    env = dict(os.environ)
    env.setdefault("TRITON_INTERPRET", "1")  # in the child only: import without a GPU; nothing is launched
    out = subprocess.run(
        [sys.executable, "-c", READ.format(module=lesson.module)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if out.returncode:
        raise RuntimeError(f"could not read solutions/{lesson.file}'s configs:\n{out.stderr[-1500:]}")
    return [tuple(b) for b in json.loads(out.stdout.strip().splitlines()[-1])]


@costly(4)
def check_every_common_gpu_keeps_several_configs():
    problems = []
    for lesson in LESSONS:
        try:
            blocks = reference_blocks(lesson)
        except RuntimeError as e:
            problems.append(str(e))
            continue
        if not blocks:
            continue  # a lesson without autotune configs
        for dtype, need in ENOUGH.items():
            for gpu, limit in SMEM_LIMITS.items():
                fit = [b for b in blocks if shared_memory(*b, BYTES_PER_ELEMENT[dtype]) <= limit]
                if len(fit) < need:
                    problems.append(
                        f"{lesson.id} {gpu}: only {len(fit)} of the reference's configs fit "
                        f"{limit:,} B in {dtype}; keep at least {need}"
                    )
    return problems
