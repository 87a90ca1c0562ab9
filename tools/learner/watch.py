"""`make watch`: re-run the step you are on each time you save your file, and show its row.

    python -m tools.learner.watch                 the step in progress (the first one not done)
    python -m tools.learner.watch --step T4.2     that step, every save
    python -m tools.learner.watch --bench         save-to-verdict times, in a scratch copy

One process stays warm: it has imported torch and triton once, and for each run it forks a child
that runs pytest on the step's marker with the grader's plugin, and imports your file afresh (the
warm parent never imports it).  A crash or a hang costs that child, and so one row, never the loop:
the per-test timeout of learner runs (grade.LEARNER_TIMEOUT_S) stops a hung check, and a child
still running after grade.STEP_LIMIT_S is killed.  The file is polled (its mtime), no dependency.
When the step passes, the next one runs at once, until one fails or the lesson is done.
"""

import argparse
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from course import ROOT, registry, seam, toolchain
from course.i18n import say
from tools.learner import grade, scorecard, state
from tools.learner.plugin import REPORT, read_report

POLL_S = 0.1


def warm_up():
    """Import what every run needs, once: the backend first (TRITON_INTERPRET), then torch, triton
    and pytest.  Never the learner's file: each child imports it fresh."""
    toolchain.choose_backend()
    import pytest  # noqa: F401
    import torch  # noqa: F401
    import triton  # noqa: F401


def run_forked(s, seed, limit=grade.STEP_LIMIT_S, live=None):
    """Step s in a forked child: (report, exit status or None if killed at the limit, output)."""
    with tempfile.TemporaryDirectory(prefix="course-watch-") as tmp:
        report, log = Path(tmp) / "report.json", Path(tmp) / "output.txt"
        env = grade.learner_env(seed)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: pytest on the step's marker, its output into the log
            code = 3
            try:
                fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.chdir(ROOT)
                os.environ.clear()
                os.environ.update(env, **{REPORT: str(report)})
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                import pytest

                code = int(pytest.main(["-q", "--tb=short", "-m", s.marker, "-p", "tools.learner.plugin"]))
            except BaseException:  # noqa: BLE001 - whatever happens, the child must not return into the loop
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        deadline = time.monotonic() + limit
        rc = None
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            if live is not None:
                live.update(s, read_report(report))
            time.sleep(POLL_S)
        output = log.read_text(errors="replace") if log.exists() else ""
        return read_report(report), rc, output


def verdict(lesson, row, seed):
    """What a run shows: the first failure in full, which cases pass, the row and what to do."""
    out = []
    if row.detail and not row.done:
        out += scorecard.first_failure(row)
    if row.cases and row.failures and not row.broke:
        out += scorecard.which_pass(row)
    out += scorecard.rows_table(lesson, [row]) + scorecard.advice(lesson, [row], "", seed)
    if row.failures and len(row.failures) > 1:
        out.append(
            say(
                zh=f"        每个失败检查的完整信息：make test STEP={row.step.id}",
                en=f"        every failing check in full: make test STEP={row.step.id}",
            )
        )
    return out


def step_in_progress(lesson):
    done = state.remembered(lesson) or {}
    return lesson.next_step(done) or lesson.steps[0]


class Watcher:
    """The loop's state: which step, which version of the file was last graded."""

    def __init__(self, lesson, step=None, seed=None, out=print):
        self.lesson, self.pinned, self.out = lesson, step is not None, out
        self.step = step or step_in_progress(lesson)
        self.seed = seed if seed is not None else random.randrange(10**6)
        self.path = ROOT / seam.path(lesson)
        self.seen = None

    def stamp(self):
        try:
            st = self.path.stat()
            return st.st_mtime_ns, st.st_size
        except OSError:
            return None

    def changed(self):
        now = self.stamp()
        if now == self.seen:
            return False
        self.seen = now
        return True

    def run(self):
        """Grade the file as it is now: the step, and the ones after it while each passes."""
        while True:
            started = time.monotonic()
            live = grade.Live(tty=sys.stdout.isatty()) if sys.stdout.isatty() else None
            if live:
                live.start(self.step)
            try:
                report, rc, output = run_forked(self.step, self.seed, live=live)
            finally:
                if live:
                    live.running.clear()
                    live.close()
            row = grade.row_of(self.step, report, rc, output)
            state.remember(self.lesson, {self.step.id: row.done})
            took, graded = time.monotonic() - started, seam.path(self.lesson)
            if sys.stdout.isatty():
                self.out("\033[2J\033[H", end="")
            self.out("\n".join(verdict(self.lesson, row, self.seed)))
            self.out(
                say(
                    zh=f"（{took:.1f} s；保存 {graded} 就会重跑，Ctrl-C 退出）",
                    en=f"({took:.1f} s; save {graded} to run again, Ctrl-C to stop)",
                ),
                flush=True,
            )
            following = (
                None if self.pinned or not row.done else self.lesson.next_step(state.remembered(self.lesson) or {})
            )
            if following is None or following is self.step:
                return row
            self.step = following

    def loop(self, runs=0):
        """Poll the file; grade it on every save.  runs > 0: stop after that many gradings."""
        graded = 0
        while True:
            if self.changed():
                self.run()
                graded += 1
                if runs and graded >= runs:
                    return
            time.sleep(POLL_S)


def bench(repeats=3):
    """Save-to-verdict times for the first two steps: a watch process in a scratch copy, each save
    the reference's body written (passing) or the stub's (failing), timed until the row prints."""
    import subprocess

    from tools.checks.common import pristine_stub, scratch_repo, solution_file
    from tools.checks.grader import fill_in

    lesson = registry.lesson()
    stub, solution = pristine_stub(lesson), solution_file(lesson).read_text()
    results = {}
    for s in lesson.steps[:2]:
        before = {x.id for x in lesson.steps[: lesson.steps.index(s)]}
        texts = [fill_in(stub, solution, before | {s.id}), fill_in(stub, solution, before)]
        with scratch_repo({lesson: texts[1]}) as tmp:
            env = dict(os.environ, SOLUTION="0", COURSE_LANG="en", PYTHONUNBUFFERED="1")
            proc = subprocess.Popen(
                [sys.executable, "-m", "tools.learner.watch", "--step", s.id, "--runs", str(2 * repeats + 1)],
                cwd=tmp,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            mine = tmp / "mine" / lesson.file
            wait_for_row(proc, s)  # the first run, at start: not timed (the warm-up is in it)
            times = []
            for i in range(2 * repeats):
                time.sleep(0.3)
                began = time.monotonic()
                mine.write_text(texts[i % 2])
                wait_for_row(proc, s)
                times.append(time.monotonic() - began)
            proc.wait(timeout=60)
        results[s.id] = times
        median = sorted(times)[len(times) // 2]
        print(f"{s.id}: save to verdict {', '.join(f'{t:.1f}' for t in times)} s (median {median:.1f} s)")
    return results


def wait_for_row(proc, s):
    for line in proc.stdout:
        if line.startswith((f"  [x] {s.id} ", f"  [ ] {s.id} ")):
            return line
    raise RuntimeError("the watch process ended before its row")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default=os.environ.get("LESSON") or None, help="T4 (default: the first lesson)")
    parser.add_argument("--step", help="watch this step only: T4.2, t4.2 or 2 (default: the step in progress)")
    parser.add_argument("--seed", type=int, default=None, help="the seed of every random input (default: random)")
    parser.add_argument("--runs", type=int, default=0, help=argparse.SUPPRESS)  # tests: stop after N gradings
    parser.add_argument("--bench", action="store_true", help="time save-to-verdict for the first two steps")
    args = parser.parse_args(argv)
    if args.bench:
        bench()
        return 0
    try:
        lesson = state.current_lesson(args.lesson)
        s = registry.step(args.step, within=lesson.id) if args.step else None
        lesson = s.lesson if s else lesson  # STEP=T4.3 watches T4's file, whichever lesson is current
    except KeyError as e:
        print(e.args[0], file=sys.stderr)
        return 2
    print(say(zh="预热中（导入 torch 和 triton）……", en="warming up (importing torch and triton) ..."), flush=True)
    warm_up()
    try:
        Watcher(lesson, s, args.seed).loop(args.runs)
    except KeyboardInterrupt:
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
