"""What a session with a GPU checks first, in one command, each stage's log kept under one folder:

    python -m tools.gpu.session_check --out DIR [--stages suite make_test watch offgrid] [--lessons T6]

- suite: `SOLUTION=1 python -m pytest tests -q` on CUDA, every lesson's checks (or --lessons' markers);
- make_test: what a learner's first `make test` does on a fresh GPU: the references in mine/ of a
  scratch copy, an empty Triton cache, `python -m tools.learner.grade --lesson X` for each lesson
  in order (compiling and autotuning must not count as a hang: issue 17);
- watch: `python -m tools.learner.watch --bench` (its own scratch copies): make watch forks a child per
  step from a process that has asked torch about CUDA (through NVML, course/warm.py), and each
  child must still start CUDA;
- offgrid: `python -m tools.gpu.offgrid`, each reference's public calls (matmul, route,
  grouped_matmul, moe_mlp) on seeded shapes, layouts and options drawn off the bench grid, every
  result checked against float64.

Asked for by name only (--stages), the benches of the open performance issues, each with its own
folder under DIR for the CSV:
- heldout: `make bench ARGS=--heldout` for the first lesson that tunes per shape (T5), both dtypes;
- host: `python -m tools.gpu.host_cost --quick`, the host's µs per eager call beside torch.matmul's;
- moe: `make bench ARGS=--moe`, T6 on the MoE layers.

DIR gets one log per stage and summary.json: each stage's exit status, seconds and last lines.  A
stage past its limit is stopped and says so; the next one still runs.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course import ROOT
from course.registry import LESSONS
from tools.core.repo import scratch_repo, solution_file

LIMITS = {"suite": 300, "make_test": 420, "watch": 150, "offgrid": 300}  # seconds on the clock, each stage
BENCHES = {"heldout": 240, "host": 120, "moe": 540}  # run only when named in --stages


def stage(name, argv, cwd, env, out, limit):
    began = time.monotonic()
    log = out / f"{name}.log"
    with open(log, "w") as f:
        try:
            rc = subprocess.run(argv, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=limit).returncode
        except subprocess.TimeoutExpired:
            rc = None
    took = time.monotonic() - began
    tail = log.read_text(errors="replace").splitlines()[-15:]
    said = f"stopped after {limit} s" if rc is None else f"exit {rc}"
    print(f"{name}: {said} in {took:.0f} s ({log})", flush=True)
    return {"argv": argv, "exit": rc, "seconds": round(took, 1), "tail": tail}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="folder for the logs and summary.json")
    p.add_argument("--stages", nargs="+", choices=[*LIMITS, *BENCHES], default=list(LIMITS))
    p.add_argument("--lessons", nargs="+", type=str.upper, help="these lessons only (default: all)")
    args = p.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        sys.exit("tools/gpu/session_check.py needs a CUDA GPU: on the CPU, make check runs the suite")
    lessons = [each for each in LESSONS if not args.lessons or each.id in args.lessons]
    args.out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    summary = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__}
    import triton

    summary["triton"] = triton.__version__
    py = sys.executable
    if "suite" in args.stages:
        marks = ["-m", " or ".join(each.marker for each in lessons)] if args.lessons else []
        argv = [py, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", *marks]
        summary["suite"] = stage("suite", argv, ROOT, dict(env, SOLUTION="1"), args.out, LIMITS["suite"])
    references = {each: solution_file(each).read_text() for each in LESSONS}
    if "make_test" in args.stages:
        with scratch_repo(references) as tmp, tempfile.TemporaryDirectory(prefix="triton-cache-") as cache:
            fresh = dict(env, SOLUTION="0", TRITON_CACHE_DIR=cache, COURSE_LANG="en")
            for each in lessons:
                argv = [py, "-m", "tools.learner.grade", "--lesson", each.id]
                summary[f"make_test {each.id}"] = stage(
                    f"make_test_{each.id}", argv, tmp, fresh, args.out, LIMITS["make_test"]
                )
    if "watch" in args.stages:  # the bench makes its own scratch copies
        argv = [py, "-m", "tools.learner.watch", "--bench"]
        summary["watch"] = stage("watch", argv, ROOT, dict(env, COURSE_LANG="en"), args.out, LIMITS["watch"])
    if "offgrid" in args.stages:  # the references' public calls on drawn shapes, results checked
        argv = [py, "-m", "tools.gpu.offgrid", *(["--lessons", *args.lessons] if args.lessons else [])]
        summary["offgrid"] = stage("offgrid", argv, ROOT, env, args.out, LIMITS["offgrid"])
    benches = {
        "heldout": ["-m", "tools.gpu.bench", "--heldout", "--rounds", "3", "--out", str(args.out / "heldout")],
        "host": ["-m", "tools.gpu.host_cost", "--quick", "--json", str(args.out / "host.json")],
        "moe": ["-m", "tools.gpu.bench", "--moe", "--rounds", "3", "--out", str(args.out / "moe")],
    }
    for name, limit in BENCHES.items():
        if name in args.stages:
            summary[name] = stage(name, [py, *benches[name]], ROOT, env, args.out, limit)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    failed = [k for k, v in summary.items() if isinstance(v, dict) and v["exit"] != 0]
    print("every stage passed" if not failed else f"did not pass: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
