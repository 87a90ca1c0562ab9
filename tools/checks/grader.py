"""The grader itself works (tools/learner/: grade, hint, reset), tried on every lesson in scratch
copies of the repo: all green on solutions/, all red on the stub, one more row green per step filled
in, and a short report, scorecard included, for code that does not import, hangs or crashes the
interpreter.  The mistakes are planted by rule (the first body, the first store), not by line."""

import json
import os
import re
import resource
import subprocess
import sys
import time

from course.registry import LESSONS
from course.warm import run_python
from tools.checks.common import costly, suite_run
from tools.core.bodies import STEP_ID, fill_in, plant, split_bodies
from tools.core.cache import fingerprint, reads_of, shared
from tools.core.repo import earlier_lessons_written, pristine_stub, scratch_repo, solution_file

ONE_SCREEN = 40  # lines
# A planted endless loop in the first step's body: the whole make test reports it within this
# (issue 10: 2 min 10 s before learner runs had their own per-test timeout).
LOOP_REPORT_S = 30
# What pytest's assertion rewriting adds to a message, and must not reach the learner.
NOISE = ("+  where", "<built-in method", "\nassert ", "E   assert")
ROW = re.compile(rf"^  \[([x ])\] ({STEP_ID}) ")


def grade(lesson, mine_text=None, solution=False, args=("--details",), **env):
    """Run the grader on a lesson in a scratch copy; return (exit status, output, {step: row is green}).

    The lessons before it are written (their solutions in mine/): a learner at T5 has done T4, and
    T5 imports the learner's own T4 pieces.  One run per input, shared by the checks that read it
    and kept (tools/core/cache.py, shared)."""
    return timed_grade(lesson, mine_text, solution, args, **env)[:3]


def timed_grade(lesson, mine_text=None, solution=False, args=("--details",), **env):
    """grade()'s answer and the seconds the run took, less the share of them that other work on the
    machine took (machine_busy; kept with it, so a kept run keeps its time)."""
    texts = earlier_lessons_written(lesson)
    if mine_text is not None:
        texts[lesson] = mine_text
    key = fingerprint(
        "grade", lesson.id, solution, list(args), sorted(env.items()), reads=reads_of(solution), mine_texts=texts
    )
    rc, output, rows, took = shared("graded", key, lambda: run_grader(lesson, texts, solution, args, env))
    return rc, output, rows, took


def machine_busy():
    """Seconds of CPU the whole machine has spent busy since boot, all cores summed (/proc/stat), or
    None where there is no /proc/stat."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle and iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_cpu():
    """CPU seconds of this process and of its children that have ended (their own children's included)."""
    runs = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return sum(used.ru_utime + used.ru_stime for used in runs)


def run_grader(lesson, texts, solution, args, env):
    """(exit status, output, rows, seconds): the seconds on the clock, less the other work's share of
    them, where the machine says (machine_busy): other processes' CPU seconds in that time spread over
    the cores.  On an idle machine, as CI's, that is the clock's time; under load, close to it."""
    began, busy, ours = time.monotonic(), machine_busy(), own_cpu()
    with scratch_repo(texts or None) as tmp:
        env = dict(os.environ, SOLUTION="1" if solution else "0", COLUMNS="100", **dict(dict(COURSE_LANG="en"), **env))
        env.pop("NO_COLOR", None)  # colour must stay off anyway: stdout is a pipe, as in CI
        rc, out, err = run_python(["-m", "tools.learner.grade", "--lesson", lesson.id, *args], tmp, env, 900)
    output = out + err
    rows = {m[2]: m[1] == "x" for line in output.splitlines() for m in [ROW.match(line)] if m}
    took = time.monotonic() - began
    if busy is not None:
        others = max(0.0, machine_busy() - busy - (own_cpu() - ours))
        took = max(0.0, took - others / (os.cpu_count() or 1))
    return rc, output, rows, took


def expect(name, lesson, got, rc_zero, green, must_say=(), once=(), screen=ONE_SCREEN):
    """Problems with one grader run: exit status, which rows are green, what it says, its length.
    green: the step ids whose rows must be green, or None to leave the rows unchecked."""
    rc, output, rows = got
    problems = []
    if (rc == 0) != rc_zero:
        problems.append(f"exits {rc}, expected {'0' if rc_zero else 'non-zero'}")
    want = {s.id: s.id in green for s in lesson.steps} if green is not None else None
    if want is not None and rows != want:
        problems.append(f"rows green {rows}, expected {want}")
    problems += [f"does not say {w!r}" for w in must_say if not re.search(w, output)]
    problems += [f"says {w!r} {output.count(w)} times, expected once" for w in once if output.count(w) != 1]
    if "\033[" in output:
        problems.append("prints colour codes into a pipe (a CI log)")
    if screen and len(output.splitlines()) > screen:
        problems.append(f"prints {len(output.splitlines())} lines, more than one screen ({screen})")
    problems += [f"prints pytest's assertion rewriting ({n!r})" for n in NOISE if n in output]
    name = f"{lesson.id} {name}"
    return [f"{name}: {p}\n{output[-3000:]}" for p in problems[:1]] + [f"{name}: {p}" for p in problems[1:]]


@costly(40)
def check_scorecard_is_green_on_solutions_and_red_on_the_stub():
    problems = []
    for lesson in LESSONS:
        problems += expect(
            "solutions/",
            lesson,
            grade(lesson, solution=True),
            True,
            {s.id for s in lesson.steps},
            ["Every step passes"],
        )
        stub = grade(lesson, pristine_stub(lesson))
        problems += expect("the untouched stub", lesson, stub, False, set(), [f"Next: {lesson.steps[0].id} "])
        reasons = re.findall(r"(?m)^ {10}test_\w+: not written yet", stub[1])
        if len(reasons) != len(lesson.steps):
            problems.append(
                f"{lesson.id} the untouched stub: {len(reasons)} rows say 'not written yet', "
                f"expected {len(lesson.steps)}:\n{stub[1]}"
            )
    return problems


def midway(lesson):
    """(the steps a learner midway has written, the step next): the first two, or all but the last
    of a shorter lesson; none of a one-step lesson, whose next step is its only one."""
    done = [s.id for s in lesson.steps[: min(2, len(lesson.steps) - 1)]]
    return done, lesson.steps[len(done)]


@costly(25)
def check_scorecard_turns_green_step_by_step():
    """Midway (the first steps written): exactly those rows green, and the next step is next."""
    problems = []
    for lesson in LESSONS:
        done, then = midway(lesson)
        written = fill_in(pristine_stub(lesson), solution_file(lesson).read_text(), set(done))
        problems += expect(
            f"{' and '.join(done) or 'nothing'} filled in",
            lesson,
            grade(lesson, written),
            False,
            set(done),
            [
                rf"Next: {re.escape(then.id)} ",
                rf"read {re.escape(lesson.explainers['en'])} "
                rf"§{re.escape(then.sections[0])}",
                f"make hint STEP={then.id}",
            ],
        )
    return problems


@costly(60)
def check_planted_failures_give_one_short_report():
    problems = []
    for lesson in LESSONS:
        solution, graded = solution_file(lesson).read_text(), re.escape(f"mine/{lesson.file}")
        first = lesson.steps[0].id
        syntax, syntax_at = plant(solution, first, ["    this is = = not python\n"])
        stored = next((step for step, body in split_bodies(solution) if step and "tl.store(" in "".join(body)), None)
        problems += expect(
            "planted syntax error",
            lesson,
            grade(lesson, syntax),
            False,
            set(),
            [rf"{graded} line {syntax_at}: SyntaxError", "does not import"],
            once=["SyntaxError"],
        )
        skipping, _ = plant(solution, first, ["    __import__('pytest').skip('later')\n"])
        full = grade(lesson, solution=True)[1]  # the scorecard's run on solutions/, the first step's row
        total = re.search(rf"(?m)^  \[x\] {re.escape(first)} .* (\d+)/\1$", full)
        problems += expect(
            "planted pytest.skip",
            lesson,
            grade(lesson, skipping),
            False,
            None,
            [
                # not green, and its checks counted from what was collected, skipped ones included
                rf"(?m)^  \[ \] {re.escape(first)} .* \d+/{total[1] if total else 'N'}$",
                r"raised a skip \(Skipped: later\)",
            ],
        )
        if stored:  # a store far outside any tensor: a real SIGSEGV under the interpreter, or stopped by a watch
            body = next("".join(b) for s, b in split_bodies(solution) if s == stored and "tl.store(" in "".join(b))
            far = solution.replace(body, body.replace("tl.store(", "tl.store((1 << 40) + ", 1), 1)
            problems += expect(
                "planted store far outside C",
                lesson,
                grade(lesson, far),
                False,
                None,
                [
                    rf"(?m)^  \[ \] {re.escape(stored)} ",
                    rf"crashed\s+\(SIG(SEGV|BUS)\)\s+in\s+test_\w+\s+at\s+{graded}\s+line\s+\d+"
                    rf"|wrote\s+\d+\s+cells?\s+outside\s+every\s+tensor[\s\S]*?first\s+at\s+{re.escape(lesson.file)}\s+line\s+\d+",
                ],
            )
    return problems


@costly(40, alone=True)  # its limit is a promise for an idle machine: nothing else runs beside it
def check_planted_endless_loop_is_reported_within_30_s():
    problems = []
    for lesson in LESSONS:
        solution, graded = solution_file(lesson).read_text(), re.escape(f"mine/{lesson.file}")
        first = lesson.steps[0].id
        loop, loop_at = plant(solution, first, ["    while True:\n", "        pass\n"])
        *looped, took = timed_grade(lesson, loop)  # the learner runs' own per-test timeout
        problems += expect(
            "planted endless loop",
            lesson,
            looped,
            False,
            None,
            [
                rf"(?m)^  \[ \] {re.escape(first)} ",
                # a row's reason wraps now (never cut): any run of whitespace between its words
                rf"test_\w+\s+timed\s+out\s+after\s+\d+\s+s\s+of\s+CPU\s+time\s+at\s+{graded}\s+line\s+"
                rf"({loop_at}|{loop_at + 1})",
            ],
        )
        if took > LOOP_REPORT_S:
            problems.append(
                f"{lesson.id} planted endless loop: reported after {took:.0f} s (the other work on the machine's "
                f"share taken out), more than {LOOP_REPORT_S} s"
            )
    return problems


def partial_failure(lesson, report):
    """(step, {failing node ids}, label) for a failure of some cases only, planted by rule: in the
    first test of the lesson (its steps in order, each step's tests as collected) whose cases share
    a parameter's value (two or more of them, not all), the cases with its first case's value fail.
    None if no test has such cases."""
    steps = [s.id for s in lesson.steps]
    passed = {t for t, r in report["results"].items() if r.get("outcome") == "passed"}
    by_function = {}  # in the order pytest collected them, the lesson's steps in order
    for c in report["collected"]:
        if c["step"] in steps and c["test"] in passed and c["ids"]:
            by_function.setdefault((c["step"], c["test"].split("[")[0]), []).append(c)
    for (step, _), cases in sorted(by_function.items(), key=lambda kv: steps.index(kv[0][0])):
        for at, first in enumerate(cases[0]["ids"]):
            failing = {c["test"] for c in cases if len(c["ids"]) > at and c["ids"][at] == first}
            if 2 <= len(failing) < len(cases):
                labels = cases[0]["labels"]
                return step, failing, labels[at] if len(labels) == len(cases[0]["ids"]) else first
    return None


def fail_in(text, step, failing):
    """text with a line put at the start of each of step's marked bodies (a test may run any one of
    them) that fails in the named tests' cases alone: pytest names the running test in
    PYTEST_CURRENT_TEST ("tests/test_x.py::test_y[ids] (call)")."""
    line = f"assert __import__('os').environ['PYTEST_CURRENT_TEST'].split(' ')[0] not in {sorted(failing)!r}\n"
    parts = split_bodies(text)
    for i, (s, body) in enumerate(parts):
        if s == step:  # indented as the body's begin marker, the last line before it
            indent = parts[i - 1][1][-1][: -len(parts[i - 1][1][-1].lstrip())]
            parts[i] = (s, [indent + line, *body])
    return "".join("".join(body) for _, body in parts)


@costly(8)
def check_one_step_shows_every_failure_in_full_and_which_cases_pass():
    """make test STEP= on a step whose body fails for the cases of one parameter's value only: every
    failing check's message whole, without pytest's rewriting, and which cases pass and fail."""
    problems = []
    report, _ = suite_run(solution=True)  # the run suite.check_solutions_pass_every_step reads
    for lesson in LESSONS:
        picked = partial_failure(lesson, report)
        if picked is None:
            continue  # a lesson whose tests have no parameters: nothing to split
        step, failing, label = picked
        planted = fail_in(solution_file(lesson).read_text(), step, failing)
        rc, output, rows = got = grade(lesson, planted, args=("--details", "--step", step))
        # the planted line is Python no GPU compiles: a check that compiles the kernel for a GPU fails too
        compiling = {c["test"] for c in report["collected"] if c["step"] == step and c.get("hopper_compile")}
        problems += expect(
            f"make test STEP={step}, {len(failing)} cases made to fail",
            lesson,
            got,
            False,
            None,
            [
                rf"(?m)^{re.escape(step)}: {len(failing) + len(compiling)} failing checks?$",
                r"which cases pass",
                r"\d+ of \d+ pass",
                rf"fail: every case with {re.escape(label)}",
            ],
            screen=0,
        )
        cut = re.findall(r"(?m)^ {6}\S.*\.\.\.$", output)  # a message's line (the rows' reasons are short)
        if cut:
            problems.append(f"{lesson.id} make test STEP={step}: a failing check's message is cut: {cut[0]!r}")
    return problems


def check_hints_come_one_at_a_time_and_reset_keeps_a_backup():
    """make hint on each lesson's first step with hints, once per hint and once more; make reset on
    every lesson's file, each edited."""
    problems = []
    with scratch_repo() as tmp:

        def run(*args):
            return subprocess.run(
                [sys.executable, "-m", *args],
                cwd=tmp,
                env=dict(os.environ, COURSE_LANG="en"),
                capture_output=True,
                text=True,
                timeout=120,
            ).stdout

        for lesson in LESSONS:
            s = next((s for s in lesson.steps if s.hints), None)
            if s is None:
                problems.append(f"{lesson.id} has no step with hints")
                continue
            shown = [run("tools.learner.hint", "--step", s.id) for _ in range(len(s.hints) + 1)]
            for n, out in enumerate(shown, 1):
                if f"hint {min(n, len(s.hints))} of {len(s.hints)}" not in out:
                    problems.append(f"make hint call {n} for {s.id} did not show hint {min(n, len(s.hints))}:\n{out}")
            every = run("tools.learner.hint", "--step", s.id, "--all")
            if len(re.findall(r"hint \d+ of", every)) != len(s.hints):
                problems.append(f"make hint ALL=1 for {s.id} did not show the {len(s.hints)} hints seen:\n{every}")
            if json.loads((tmp / ".hints.json").read_text()).get(s.id) != len(s.hints):
                problems.append(f".hints.json does not count the hints of {s.id} seen")

        # reset: a git repo holding the stubs, a learner's edit of each, then make reset
        def git(*args):
            subprocess.run(
                ["git", "-c", "user.name=check", "-c", "user.email=check@invalid", *args],
                cwd=tmp,
                capture_output=True,
                check=True,
            )

        git("init", "-q")
        git("add", "mine")
        git("commit", "-q", "-m", "stub")
        for lesson in LESSONS:
            mine = tmp / "mine" / lesson.file
            mine.write_text(mine.read_text() + "# the learner's work\n")
        said = run("tools.learner.reset")
        for lesson in LESSONS:
            mine = tmp / "mine" / lesson.file
            backups = list((tmp / "mine" / "backups").glob(f"{lesson.module}.*.py"))
            if len(backups) != 1 or not backups[0].read_text().endswith("# the learner's work\n"):
                problems.append(f"make reset kept no copy of {lesson.file} in mine/backups/: {said}")
            elif backups[0].name not in said:
                problems.append(f"make reset does not say where the copy of {lesson.file} is: {said}")
            if mine.read_text().endswith("# the learner's work\n"):
                problems.append(f"make reset did not restore the stub of {lesson.file}")
    return problems
