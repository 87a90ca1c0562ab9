"""`make test` and `make grade`: where you stand, one row per step of a lesson.

    python -m tools.learner.grade                the scorecard of your lesson (mine/; SOLUTION=1: solutions/)
    python -m tools.learner.grade --details      also the first failure of the step to work on (make test)
    python -m tools.learner.grade --step T4.2    that step alone, every failing check listed (make test STEP=T4.2)
    python -m tools.learner.grade --seed 1234    replay a run's random inputs exactly (make test SEED=1234)

Each step runs in its own pytest process (`pytest -m t4_2 -p tools.core.plugin`), so a file that
does not import, a test that hangs (LEARNER_TIMEOUT_S below) or a kernel that crashes the
interpreter costs that step only, and the scorecard is always printed.  The rows are read from the
plugin's report (tools/core/plugin.py); scorecard.py draws them, state.py remembers them.
Exit status 0 once every required step passes (or, with --step, that step).
"""

import argparse
import functools
import os
import random
import re
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from course import ROOT, registry, seam
from course.i18n import say
from tools.core.plugin import CPU_LIMIT, CPU_LIMIT_GPU, run_pytest, short, source_line
from tools.learner import scorecard, state

STEP_LIMIT_S = 900  # a whole step; pytest-timeout stops a single test long before this

# The per-check limit of learner runs (make test, make grade, make watch; make check's own suite
# runs keep pytest.ini's 60 s).  It counts the check's CPU time, not the clock's (plugin.cpu_limit):
# a loaded machine stretches the clock, not the work.  Measured with a probe of process_time per
# check, SOLUTION=1, both suites, on the 2-core machine at load average 9.5 (2026-12-01): the
# slowest check, test_every_autotune_config_runs, took 2.3 s of CPU time and 9.6 s on the clock,
# a hair under the 10 s wall-clock limit used before; T5's slowest 0.6 s (3.2 s on the clock).
# An endless loop under the interpreter computes all the time, so it still meets the limit.
LEARNER_TIMEOUT_S = 10  # CPU seconds on a machine as fast as that one: four times the slowest check
# A slower machine gets more: the limit is scaled by how much longer a fixed piece of pure-Python
# work (calibration_work) takes here than there, where it took CALIBRATION_S of CPU time (the same
# at load average 9.6 as alone: one thread per core), at least 1, at most MAX_FACTOR so that a
# planted `while True: pass` is still reported within half a minute.
CALIBRATION_S = 0.034
MAX_FACTOR = 2.0
# Compiled for a GPU, the first call of an autotuned kernel compiles and times every config, which
# is CPU time too: on a fresh H200, make test with a 10 s limit stopped test_empty_dimensions there
# (issue 17), while plain pytest ran all 313 checks of both suites in 87 s under pytest.ini's 60 s
# per check.  Twice that 60 s, and a step that still times out on a GPU is run once more (its
# kernels are in Triton's cache by then) before the hang is reported.
GPU_TIMEOUT_S = 120
# The clock's limit (pytest-timeout), for a hang that waits without computing (a sleep, a lock):
# far above both, so that load alone never meets it.
WALL_TIMEOUT_S = 300


@dataclass
class Row:
    step: object
    passed: int = 0
    total: int = 0
    reason: str = ""  # the first failing check, one line
    detail: str = ""  # the same failure in full, when it says more than the line
    failures: tuple = ()  # (test, one-line reason) for every failing check
    messages: dict = field(default_factory=dict)  # {test: its failure message in full, pytest's noise stripped}
    kinds: dict = field(default_factory=dict)  # {test: the type of the exception that failed it}
    cases: tuple = ()  # (test, parametrize ids, passed) for every check counted, for the pass/fail pattern
    labels: dict = field(default_factory=dict)  # {test: its parametrize ids in words, one label per id}
    skipped: tuple = ()  # (test, the suite's reason) for every check the suite's own marks skip here
    broke: bool = False  # crashed or timed out
    blocker: str = ""  # why no test could run at all (no import, no pytest), in a few lines

    @property
    def done(self):
        return self.total > 0 and self.passed == self.total


def calibration_work(n=500_000):
    """CPU seconds of this thread for a fixed piece of pure-Python work, the kind the interpreter
    runs (the thread's, not the process's: steps start side by side, in threads)."""
    began, x = time.thread_time(), 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return time.thread_time() - began


_calibrating = threading.Lock()


@functools.cache
def _factor():
    took = min(calibration_work() for _ in range(3))
    return min(MAX_FACTOR, max(1.0, took / CALIBRATION_S))


def machine_factor():
    """How many times slower this machine computes than the one the limits were measured on:
    measured once per process, by one thread while the others wait."""
    with _calibrating:
        return _factor()


def cpu_limit_s():
    """The per-check CPU-time limit under the interpreter on this machine, whole seconds."""
    return round(LEARNER_TIMEOUT_S * machine_factor())


def learner_env(seed, parallel=False):
    env = dict(os.environ, SEED=str(seed))
    env.setdefault(CPU_LIMIT, str(cpu_limit_s()))
    env.setdefault(CPU_LIMIT_GPU, str(GPU_TIMEOUT_S))
    env.setdefault("PYTEST_TIMEOUT", str(WALL_TIMEOUT_S))
    if parallel:  # one thread each: processes side by side oversubscribe the cores otherwise
        env.setdefault("OMP_NUM_THREADS", "1")
    return env


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
        return "; ".join(parts)

    def _tick(self):
        while not self.stopped.wait(0.5):
            with self.lock:
                text = self.line()[: max(20, scorecard.WIDTH - 1)]
                sys.stdout.write("\r\033[K" + text)
                sys.stdout.flush()
                self.shown = bool(text)

    def close(self):
        self.stopped.set()
        with self.lock:
            if self.tty and self.shown:
                sys.stdout.write("\r\033[K")
                sys.stdout.flush()


def row_of(s, report, rc, output):
    """The scorecard row of step s from the plugin's report: its checks counted from what was
    collected (a check that never reported, or skipped on its own, is a check not passed)."""
    row = Row(s)
    if report is None:  # not even collected: the suite could not start
        said = [line for line in output.splitlines() if line.strip()][-6:]
        row.reason = say(zh=f"pytest 没能启动（退出状态 {rc}）", en=f"pytest could not start (exit status {rc})")
        row.blocker = "\n".join(
            [
                say(zh=f"{row.reason}，所以哪一步都跑不了：", en=f"{row.reason}, so no step can run:"),
                *("    " + x for x in said),
            ]
        )
        return row
    mine = [c for c in report["collected"] if c["step"] == s.id and not c["suite_skip"]]
    counted = [c["test"] for c in mine]
    results = report["results"]
    row.total = len(counted)
    row.passed = sum(results.get(t, {}).get("outcome") == "passed" for t in counted)
    failed = [t for t in counted if t in results and results[t]["outcome"] != "passed"]
    row.failures = tuple((t, results[t]["cause"] or results[t]["reason"] or results[t]["outcome"]) for t in failed)
    row.messages = {t: results[t].get("message") or results[t]["text"] for t in failed}
    row.kinds = {t: results[t].get("kind", "") for t in failed}
    row.cases = tuple(
        (c["test"], c.get("ids", []), results.get(c["test"], {}).get("outcome") == "passed")
        for c in mine
        if c["test"] in results  # a test that never ran (after a timeout or a crash) shows no pattern
    )
    skipped = [c for c in report["collected"] if c["step"] == s.id and c["suite_skip"]]
    row.skipped = tuple((c["test"], c.get("skip_reason", "")) for c in skipped)
    row.labels = {c["test"]: c["labels"] for c in mine + skipped if len(c.get("labels", ())) == len(c.get("ids", ()))}
    unfinished = [t for t in counted if t not in results]
    if report.get("timed_out"):  # the tests after it were never run: they count as not passed
        row.broke, row.reason, row.detail = True, report["timed_out"], report.get("timed_out_at", "")
    elif unfinished:  # the process died, or was stopped, before these tests reported
        row.broke = True
        row.reason, code = died(rc, report.get("running"), output)
        if failed:
            n = len(failed)
            row.reason += say(zh=f"；在它之前已有 {n} 个检查失败", en=f"; {n} check{'s' * (n != 1)} failed before it")
        printed = printed_before(output) if rc is not None else []
        row.detail = crash_detail(row, report.get("running"), code, printed, failed, results)
    elif failed:
        first = results[failed[0]]
        row.reason = f"{short(failed[0])}: {row.failures[0][1]}"
        if "not written yet" not in first["reason"]:  # the stub's message says it all
            row.detail = (first.get("message") or first["text"]).strip() or first["reason"]
        graded = seam.path(s.lesson)
        if (
            not row.passed
            and not first["cause"]
            and {results[t]["reason"] for t in failed} == {first["reason"]}
            and first["reason"].startswith(graded)
        ):  # course/seam.py's report: no import
            row.blocker = "\n".join(
                [
                    say(
                        zh=f"{graded} 没能导入，所以哪一步都跑不了：",
                        en=f"{graded} does not import, so no step can run:",
                    ),
                    "    " + first["reason"],
                    *first["text"].strip().splitlines()[1:2],
                ]
            )
    elif rc not in (0, 5):
        row.reason = say(zh=f"pytest 以状态 {rc} 结束", en=f"pytest stopped with exit status {rc}")
    if row.total == 0 and row.skipped and not row.reason:  # not a pass: nothing was checked
        row.reason = scorecard.not_run_line(row) + say(
            zh="：这一步在这里一个检查都没有", en=": no check of this step runs here"
        )
    if row.total == 0 and not row.reason:
        row.reason = say(zh="这一步没有一个检查运行", en="no test of this step ran")
    return row


FAULT = re.compile(r"(?s)Fatal Python error:.*?(?:Extension modules:[^\n]*|\Z)")  # faulthandler's report
PROGRESS = re.compile(r"^[.FEsxX]+(?:\s+\[\s*\d+%\])?$")  # pytest -q's progress line
DOTS_FIRST = re.compile(r"^(?=[FEsxX]*\.)[.FEsxX]{2,}(?=[a-z(\[<'\"/*])")  # progress, then a C library's words


def printed_before(output, limit=6):
    """The last lines a crashed process printed before faulthandler's report (a C library's
    complaint, your own print), pytest's progress dots left out."""
    text = FAULT.sub("", output)
    lines = (DOTS_FIRST.sub("", line.rstrip()) for line in text.splitlines())
    said = [line for line in lines if line.strip() and not PROGRESS.match(line.strip())]
    return said[-limit:]


def died(rc, running, output):
    """One line for a process that never finished its report (crashed, exited, hung), and the code line."""
    graded = seam.graded_paths()
    # faulthandler (on in pytest) prints the stack of a crash, innermost frame first
    yours = re.search(r'File "[^"]*(' + "|".join(map(re.escape, graded)) + r')", line (\d+) in (\w+)', output)
    at = f"{yours[1]} line {yours[2]} ({yours[3]})" if yours else ""
    where_en = (f" in {short(running)}" if running else "") + (f" at {at}" if at else "")
    where_zh = (f"，在 {short(running)}" if running else "") + (f"，{at}" if at else "")
    code = source_line(yours[1], int(yours[2])) if yours else ""
    if rc is None:
        return (
            say(
                zh=f"运行 {STEP_LIMIT_S} s 后仍未结束{where_zh}：已停止（每个测试自己的超时没能打断它）",
                en=f"still running after {STEP_LIMIT_S} s{where_en}: stopped (a hang the per-test timeout "
                "could not interrupt)",
            ),
            code,
        )
    if rc < 0:
        signame = signal.Signals(-rc).name
        out_of_bounds = say(
            zh="是不是有一次 load 或 store 远远超出了张量？检查掩码和偏移",
            en="a load or store far outside a tensor? check the masks and offsets",
        )
        why = {
            "SIGSEGV": out_of_bounds,
            "SIGBUS": out_of_bounds,
            "SIGABRT": say(
                zh="进程中止了（os.abort，或某个 C 库内部的检查失败，比如写坏了内存）",
                en="aborted (os.abort, or a failed check inside a C library, such as memory written out of bounds)",
            ),
        }.get(signame, say(zh="进程被杀掉了", en="killed"))
        return (
            say(
                zh=f"崩溃了（{signame}）{where_zh}：{why}；后面的测试没有运行",
                en=f"crashed ({signame}){where_en}: {why}; later tests did not run",
            ),
            code,
        )
    return (
        say(
            zh=f"测试进程以状态 {rc} 退出{where_zh}，检查还没跑完：你的代码调用了 exit 吗？",
            en=f"the test process exited with status {rc}{where_en} before its checks ran: does your code call exit?",
        ),
        code,
    )


def crash_detail(row, running, code, printed, failed, results):
    """What a learner can act on after a crash: the check and its case, the line it died at, what
    was printed just before, and the first check that failed before it, in full (a shape message)."""
    parts = []
    if running:
        case = scorecard.case_name(row, running)
        parts.append(say(zh=f"崩溃时正在运行：{case}", en=f"running when it crashed: {case}"))
    parts += [code] if code else []
    if printed:
        parts.append(say(zh="崩溃之前打印的最后几行：", en="the last lines printed before the crash:"))
        parts += ["    " + line for line in printed]
    if failed:
        first = failed[0]
        n = len(failed)
        parts.append(
            say(
                zh=f"崩溃之前已有 {n} 个检查失败，第一个是 {scorecard.case_name(row, first)}：",
                en=f"before the crash, {n} check{'s' * (n != 1)} failed; the first, {scorecard.case_name(row, first)}:",
            )
        )
        said = results[first].get("message") or results[first]["text"] or results[first]["reason"]
        parts += ["    " + line for line in said.strip().splitlines()]
    return "\n".join(parts)


def run_steps(steps, seed, live=None):
    """Every step in its own process, as many at once as there are cores: when one ends, by passing,
    failing or timing out, the next step starts at once."""
    workers = max(1, min(len(steps), os.cpu_count() or 1))
    pool = ThreadPoolExecutor(workers)
    hangs = Hangs()
    try:
        futures = [pool.submit(run_step, s, seed, workers > 1, live, hangs) for s in steps]
        return [f.result() for f in futures]
    finally:  # on Ctrl-C: start no more steps (the running ones got the Ctrl-C too)
        pool.shutdown(cancel_futures=True)
        if live:
            live.close()


def lesson_flags(parser, step_help):
    """--lesson and --step, as make test, make watch and make hint take them (LESSON=, STEP=)."""
    parser.add_argument(
        "--lesson",
        default=os.environ.get("LESSON") or None,
        help="a lesson's id (default: the first lesson whose required steps have not all passed)",
    )
    parser.add_argument("--step", help=f"{step_help}: a step's id, in any case, or its number in the lesson")


def choose(args):
    """(lesson, steps to run) from --step and --lesson."""
    lesson = state.current_lesson(args.lesson)
    if args.step:
        s = registry.step(args.step, within=lesson.id)
        return s.lesson, [s]
    return lesson, list(lesson.steps)


def not_found(error, args):
    """The registry's KeyError for a --lesson or --step that names nothing, in the learner's language."""
    lessons = ", ".join(lesson.id for lesson in registry.LESSONS)
    steps = ", ".join(registry.BY_ID)
    if str(error.args[0]).startswith("no lesson"):
        return say(
            zh=f"没有 {args.lesson!r} 这一课；可选的课：{lessons}",
            en=f"no lesson {args.lesson!r}; lessons are {lessons}",
        )
    return say(zh=f"没有 {args.step!r} 这一步；可选的步骤：{steps}", en=f"no step {args.step!r}; steps are {steps}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lesson_flags(parser, "grade this step alone")
    parser.add_argument("--details", action="store_true", help="show the next step's first failure in full")
    parser.add_argument(
        "--seed", type=int, default=None, help="the seed of every random input (default: SEED, else random)"
    )
    args = parser.parse_args(argv)
    try:
        lesson, steps = choose(args)
    except KeyError as e:
        print(not_found(e, args), file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int(os.environ.get("SEED") or random.randrange(10**6))
    if len(steps) > 1 and sys.stdout.isatty():
        print(
            say(
                zh=f"正在评分 {seam.path(lesson)}：{len(steps)} 个步骤，各跑在自己的进程里……",
                en=f"grading {seam.path(lesson)}: {len(steps)} steps, each in its own process ...",
            ),
            flush=True,
        )
    try:
        rows = run_steps(steps, seed, Live())
    except KeyboardInterrupt:
        print(say(zh="\n已中断：这次没有成绩单", en="\ninterrupted: no scorecard this time"), file=sys.stderr)
        return 130
    finished = [] if args.lesson or args.step else state.finished_before(lesson)
    scorecard.show(
        lesson,
        rows,
        seed,
        details=args.details or bool(args.step),
        listing=bool(args.step),
        finished=finished,
        whole=not args.step,
    )
    state.remember(lesson, {r.step.id: r.done for r in rows})
    return 0 if all(r.done for r in rows if not r.step.advanced or args.step) else 1


if __name__ == "__main__":
    sys.exit(main())
