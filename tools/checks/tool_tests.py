"""The tools tell the truth: every test under tools/tests passes (the drift detectors of
tools/core/docs.py, the study tools, the counts the explainers quote, the toolchain check).

Those tests live outside tests/, so the learner's suite never runs them; this check does,
one pytest run for all of them, each failing test reported as one problem."""

import os

from course import ROOT
from course.warm import run_python
from tools.checks.common import costly
from tools.core.cache import fingerprint, shared

# What the tools' tests read: the whole repo as committed or edited (test_docs reads content/ and
# README.md and README.zh.md, test_bench the CSVs under content/bench/), nothing of .git or .venv.
TOOL_TESTS_READ = (
    "course",
    "tests",
    "tools",
    "mine",
    "solutions",
    "given",
    "content",
    "README.md",
    "README.zh.md",
    "Makefile",
    "pytest.ini",
    "pyproject.toml",
    "requirements.txt",
    ".ci",
)


def run_tools_tests():
    # Their own subprocesses carry their own limits; pytest.ini's 60 s per test is for the learner's
    # suite, and a test that runs the grader three times can pass it on a busy machine.
    args = ["tools/tests", "-q", "--tb=line", "-rfE", "-p", "no:cacheprovider", "-o", "timeout=900"]
    return run_python(["-m", "pytest", *args], ROOT, dict(os.environ), 900)  # (exit status, stdout, stderr)


@costly(65)
def check_tools_tests_pass():
    """One run, kept (tools/core/cache.py, shared) under a hash of all the repo that it reads."""
    key = fingerprint("tools/tests", reads=TOOL_TESTS_READ)
    returncode, stdout, stderr = shared("tool-tests", key, run_tools_tests)
    if returncode == 0:
        return []
    failed = [line for line in stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    return failed or [f"tools/tests did not run (exit {returncode}):\n{(stdout + stderr)[-2000:]}"]
