"""A pytest plugin that writes each test's step, outcome and one-line reason to a JSON file.

`pytest -p tools.report` with T4_REPORT=path; `make grade` and `make check` read the file.
"""
import json
import os

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
