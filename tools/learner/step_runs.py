"""Running steps for make test and make hint: each step in its own pytest process with the
grader's plugin, as many at once as there are cores, so a file that does not import, a hang or a
crash costs that step's row only; a step that calls a hung step's functions is stopped early
(Hangs); and a line says what is running while it runs (Live).  Under Triton's interpreter each
step's process is forked from one that has imported torch and triton (course/warm.py);
compiled for a GPU each is a fresh process."""

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from course import ROOT
from course.i18n import say
from course.warm import warm_up
from tools.core.cpu_clock import CPU_LIMIT_GPU
from tools.core.pytest_run import run_pytest
from tools.learner import terminal
from tools.learner.step_row import row_of
from tools.learner.time_limits import STEP_LIMIT_S, learner_env


class Hangs:
    """Steps whose checks hung, shared by the steps running side by side.  A step whose checks call
    a hung step's function (registry Step.needs) would hang the same way, one timeout per step: it is
    stopped as soon as it has collected its checks, so a planted endless loop costs one timeout, not
    three, and its row says which step to fix first."""

    def __init__(self):
        self.lock = threading.Lock()
        self.found = {}  # step id: what its timeout report said

    def note(self, s, report):
        if report and report.get("timed_out"):
            with self.lock:
                self.found.setdefault(s.id, report["timed_out"])

    def blocking(self, s):
        """The first step s needs that hung, or None."""
        with self.lock:
            return next((need for need in s.needs if need in self.found), None)


def run_step(s, seed, parallel=False, live=None, hangs=None):
    if live:
        live.start(s)
    blocked, first_try = [], [True]

    def progress(report):
        if live:
            live.update(s, report)
        if hangs is None or (first_try[0] and (report or {}).get("backend") == "gpu"):
            return False  # a first timeout on a GPU may be compiling: it is not a hang yet
        hangs.note(s, report)
        need = hangs.blocking(s)
        if need and report and report.get("collected"):  # its checks are counted: stop it
            blocked.append(need)
            return True
        return False

    env = learner_env(seed, parallel)
    # -s: what the checks print goes to the output at once (pytest would hold it, and lose it in a
    # crash), so the last lines printed before a crash can be shown (printed_before)
    args = ["-q", "-s", "--tb=short", "-m", s.marker]
    report, rc, output = run_pytest(args, ROOT, env, STEP_LIMIT_S, progress)
    if report and report.get("timed_out") and report.get("backend") == "gpu" and not blocked:
        # compiled for a GPU: once more, with Triton's cache now holding what the first run compiled
        env = dict(env, **{k: str(2 * float(env[k])) for k in (CPU_LIMIT_GPU, "PYTEST_TIMEOUT")})
        first_try[0] = False
        report, rc, output = run_pytest(args, ROOT, env, STEP_LIMIT_S, progress)
    row = row_of(s, report, rc, output)
    if hangs is not None:
        hangs.note(s, report)
    if blocked:
        row.broke, row.detail = True, ""
        row.reason = say(
            zh=f"没有跑完：{blocked[0]} 的检查卡住了，而这一步的检查也会调用它的函数；先修好 {blocked[0]}",
            en=f"stopped: {blocked[0]}'s checks hang, and this step's checks call its functions too; "
            f"fix {blocked[0]} first",
        )
    if live:
        live.finish(s, row)
    return row


class Live:
    """What is running, while it runs.  On a terminal one line, rewritten in place twice a second
    ("T4.2 running, 12 s, 30 of 37 checks done"); into a pipe or a file, a plain line as each step
    ends, so a CI log shows progress without a line per tick."""

    def __init__(self, tty=None):
        self.tty = sys.stdout.isatty() if tty is None else tty
        self.lock = threading.Lock()
        self.running = {}  # step id: [start time, checks done, checks collected]
        self.stopped = threading.Event()
        self.shown = 0
        if self.tty:
            threading.Thread(target=self._tick, daemon=True).start()

    def start(self, s):
        with self.lock:
            self.running[s.id] = [time.monotonic(), 0, 0]

    def update(self, s, report):
        if report is None:
            return
        counted = [c["test"] for c in report.get("collected", []) if c["step"] == s.id and not c["suite_skip"]]
        with self.lock:
            if s.id in self.running:
                self.running[s.id][1:] = [sum(t in report.get("results", {}) for t in counted), len(counted)]

    def finish(self, s, row):
        with self.lock:
            began = self.running.pop(s.id, [time.monotonic()])[0]
            if not self.tty:
                took = time.monotonic() - began
                print(
                    say(
                        zh=f"{s.id} 跑完，用时 {took:.0f} s，通过 {row.passed}/{row.total}",
                        en=f"{s.id} finished in {took:.0f} s: {row.passed} of {row.total} checks pass",
                    ),
                    flush=True,
                )

    def line(self):
        now = time.monotonic()
        parts = []
        for sid, (began, done, total) in sorted(self.running.items()):
            checks = say(zh=f"，已完成 {done}/{total} 个检查", en=f", {done} of {total} checks done") if total else ""
            parts.append(
                say(zh=f"{sid} 运行中，{now - began:.0f} s{checks}", en=f"{sid} running, {now - began:.0f} s{checks}")
            )
        return say(zh="；", en="; ").join(parts)

    def _tick(self):
        while not self.stopped.wait(0.5):
            with self.lock:
                text = self.line()[: max(20, terminal.WIDTH - 1)]
                sys.stdout.write("\r\033[K" + text)
                sys.stdout.flush()
                self.shown = bool(text)

    def close(self):
        self.stopped.set()
        with self.lock:
            if self.tty and self.shown:
                sys.stdout.write("\r\033[K")
                sys.stdout.flush()


def run_steps(steps, seed, live=None):
    """Every step in its own process, as many at once as there are cores: when one ends, by passing,
    failing or timing out, the next step starts at once.  Interpreted, the processes are forked
    from this one once it has imported torch and triton (warm_up)."""
    workers = max(1, min(len(steps), os.cpu_count() or 1))
    warm_up()
    pool = ThreadPoolExecutor(workers)
    hangs = Hangs()
    try:
        futures = [pool.submit(run_step, s, seed, workers > 1, live, hangs) for s in steps]
        return [f.result() for f in futures]
    finally:  # on Ctrl-C: start no more steps (the running ones got the Ctrl-C too)
        pool.shutdown(cancel_futures=True)
        if live:
            live.close()
