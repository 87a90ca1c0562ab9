"""A pytest plugin that writes each test's step, outcome and one-line reason to a JSON file.

`pytest -p tools.report` with T4_REPORT=path; run_pytest() below runs it so and reads the file back
for `make grade` and `make check`.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tools.steps import STEPS

_MARKERS = {s.marker: s.id for s in STEPS}
_results = []


def _reason(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    text = text.removeprefix("Failed: ")
    return text.strip().splitlines()[0] if text.strip() else ""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.t4_step = next((_MARKERS[m.name] for m in item.iter_markers() if m.name in _MARKERS), None)
    return report


def pytest_runtest_logreport(report):
    if report.when == "call" or not report.passed:  # a skip or a broken fixture shows in setup
        _results.append(dict(test=report.nodeid, step=getattr(report, "t4_step", None),
                             outcome=report.outcome, reason="" if report.passed else _reason(report)))


def pytest_sessionfinish(session):
    path = os.environ.get("T4_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(_results, f, indent=1)


def run_pytest(args, cwd, env, timeout):
    """Run `pytest -p tools.report ARGS` in a fresh process; return (records, exit status, output).

    records: what this plugin wrote, or None if the process wrote nothing (it could not start,
    died or hung); exit status: None if it ran past `timeout` seconds and was stopped."""
    with tempfile.TemporaryDirectory(prefix="t4report-") as tmp:
        report = Path(tmp) / "report.json"
        try:
            proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "tools.report", *args], cwd=cwd,
                                  env=dict(env, T4_REPORT=str(report)), capture_output=True, text=True,
                                  timeout=timeout)
            rc, output = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as e:
            rc, output = None, _text(e.stdout) + _text(e.stderr)
        return (json.loads(report.read_text()) if report.exists() else None), rc, output


def _text(data):
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
