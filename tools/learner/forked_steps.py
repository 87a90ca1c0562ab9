"""make watch's way of running steps: one forked child per step, side by side, from a process
that has imported torch and triton once (course/warm.py), so a save's verdict does not wait for
those imports; each child runs pytest on its step's marker with the grader's plugin and imports the
learner's file afresh.  A child past the step limit is killed, so a hang costs its row, never the
loop.  Apart from watch.py, which decides what a save re-runs and shows, because this is process
handling (fork, wait, kill) with rules of its own."""

import os
import tempfile
import time
from pathlib import Path

from course import ROOT, warm
from tools.core.pytest_run import REPORT, read_report
from tools.learner.step_row import row_of
from tools.learner.time_limits import STEP_LIMIT_S, learner_env

POLL_S = 0.1  # how often the children (and, in watch.py, the file) are looked at


def fork_step(s, seed, folder, parallel):
    """Start step s in a forked child; its report and output go into folder.  Returns the pid."""
    env = dict(learner_env(seed, parallel), **{REPORT: str(folder / "report.json")})
    argv = ["-m", "pytest", "-q", "--tb=short", "-m", s.marker, "-p", "tools.core.plugin"]
    return warm.start(argv, ROOT, env, folder / "output.txt", folder / "output.txt")


def run_forked(steps, seed, live=None, limit=STEP_LIMIT_S):
    """{step id: Row} of steps, each in its own forked child, as many at once as there are cores
    (at least two: the step in progress beside an earlier one); a child past `limit` is killed."""
    width = max(2, os.cpu_count() or 1)
    waiting, running, rows = list(steps), {}, {}
    with tempfile.TemporaryDirectory(prefix="course-watch-") as tmp:
        try:
            while waiting or running:
                while waiting and len(running) < width:
                    s = waiting.pop(0)
                    folder = Path(tmp) / s.id
                    folder.mkdir()
                    if live:
                        live.start(s)
                    running[fork_step(s, seed, folder, len(steps) > 1)] = (s, folder, time.monotonic() + limit)
                for pid, (s, folder, deadline) in list(running.items()):
                    done, status = os.waitpid(pid, os.WNOHANG)
                    rc = os.waitstatus_to_exitcode(status) if done else None
                    if not done and time.monotonic() > deadline:
                        warm.kill(pid)
                        done = True
                    report = read_report(folder / "report.json")
                    if not done:
                        if live:
                            live.update(s, report)
                        continue
                    log = folder / "output.txt"
                    output = log.read_text(errors="replace") if log.exists() else ""
                    rows[s.id] = row_of(s, report, rc, output)
                    if live:
                        live.finish(s, rows[s.id])
                    del running[pid]
                time.sleep(POLL_S)
        finally:  # stopped (Ctrl-C, kill): no child outlives the loop
            for pid in running:
                warm.kill(pid)
    return rows
