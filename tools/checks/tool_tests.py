"""The tools tell the truth: every test under tools/tests passes (the drift detectors of
tools/explainers/docs.py, the study tools, the counts the explainers quote, the toolchain check).

Those tests live outside tests/, so the learner's suite never runs them; this check does,
one pytest run for all of them, each failing test reported as one problem."""

import subprocess
import sys

from tools.checks.common import ROOT, costly


@costly(65)
def check_tools_tests_pass():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tools/tests",
            "-q",
            "--tb=line",
            "-rfE",
            "-p",
            "no:cacheprovider",
            # Their own subprocesses carry their own limits; pytest.ini's 60 s per test is for the
            # learner's suite, and a test that runs the grader three times can pass it on a busy machine.
            "-o",
            "timeout=900",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if out.returncode == 0:
        return []
    failed = [line for line in out.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    return failed or [f"tools/tests did not run (exit {out.returncode}):\n{(out.stdout + out.stderr)[-2000:]}"]
