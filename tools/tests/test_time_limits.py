"""The time limits of a learner's run (tools/learner/time_limits.py, tools/core/cpu_clock.py): a
check's own CPU time stops an endless loop and not a wait, the limits a run gets, and a calibration
that counts its own thread.  The only real pytest run here is a tiny one of the plugin's CPU clock."""

import json
import os
import subprocess
import sys

from course import ROOT
from tools.core.cpu_clock import CPU_LIMIT, CPU_LIMIT_GPU
from tools.learner import time_limits

CLOCKED = '''
import time

def test_sleeps():  # waits without computing: a loaded machine looks like this to the clock
    time.sleep(2.5)

def test_loops():
    while True:
        pass
'''


def test_the_cpu_clock_stops_an_endless_loop_and_not_a_wait(tmp_path):
    (tmp_path / "test_clocked.py").write_text(CLOCKED)
    report = tmp_path / "report.json"
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        COURSE_REPORT=str(report),
        COURSE_LANG="en",
        TRITON_INTERPRET="1",
        **{CPU_LIMIT: "1", CPU_LIMIT_GPU: "30", "PYTEST_TIMEOUT": "60"},
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tools.core.plugin",
            "-p",
            "no:cacheprovider",
            "test_clocked.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = json.loads(report.read_text())
    results = said["results"]
    assert results["test_clocked.py::test_sleeps"]["outcome"] == "passed", out.stdout  # 2.5 s on the clock
    assert results["test_clocked.py::test_loops"]["outcome"] == "failed", out.stdout
    assert said["timed_out"].startswith("test_loops timed out after 1 s of CPU time"), said
    assert said["backend"] == "interpreter"


def test_the_limits_a_learner_run_gets(monkeypatch):
    for var in (CPU_LIMIT, CPU_LIMIT_GPU, "PYTEST_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    env = time_limits.learner_env(1)
    assert 1.0 <= time_limits.machine_factor() <= time_limits.MAX_FACTOR
    assert (
        time_limits.LEARNER_TIMEOUT_S <= float(env[CPU_LIMIT]) <= time_limits.LEARNER_TIMEOUT_S * time_limits.MAX_FACTOR
    )
    assert float(env[CPU_LIMIT_GPU]) >= 60  # pytest.ini's limit, under which the whole GPU suite ran
    assert float(env["PYTEST_TIMEOUT"]) > float(env[CPU_LIMIT_GPU])  # the clock is only a backstop
    monkeypatch.setenv(CPU_LIMIT, "3")
    assert time_limits.learner_env(1)[CPU_LIMIT] == "3"  # the learner's own choice stays


def test_the_calibration_counts_its_own_thread_only():
    """Steps start side by side in threads: the process's CPU time would count them all, and
    double the limit of a busy grader (a planted loop then took 19 s of CPU time to report)."""
    import threading

    solo = min(time_limits.calibration_work() for _ in range(3))
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            sum(range(1000))

    other = threading.Thread(target=busy)
    other.start()
    try:
        beside = min(time_limits.calibration_work() for _ in range(3))
    finally:
        stop.set()
        other.join()
    assert beside < 1.5 * solo, (solo, beside)
