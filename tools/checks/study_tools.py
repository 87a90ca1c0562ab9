"""The study tools (tile_order, smem, l2sim) tell the truth: their tests pass, each failing test
reported as one problem.  Those tests live outside tests/, so the learner's suite never runs them."""
import subprocess
import sys

from tools.checks.common import ROOT

TESTS = "tools/tests/test_study_tools.py"


def check_study_tools_tests_pass():
    out = subprocess.run([sys.executable, "-m", "pytest", TESTS, "-q", "--tb=line", "-rfE", "-p", "no:cacheprovider"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    if out.returncode == 0:
        return []
    failed = [line for line in out.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    return failed or [f"{TESTS} did not run (exit {out.returncode}):\n{(out.stdout + out.stderr)[-2000:]}"]
