"""The grader itself works (tools/grade.py, hint.py, reset.py), tried in scratch copies of the repo:
all green on solutions/, all red on the stub, one more row green per step filled in, and a short
report, scorecard included, for code that does not import, hangs or crashes the interpreter."""
import json
import os
import re
import subprocess
import sys

from tools.checks.common import SOLUTION, pristine_stub, scratch_repo
from tools.checks.layout import split_bodies
from tools.steps import STEPS

ONE_SCREEN = 40  # lines
ROW = re.compile(r"^  \[([x ])\] (T4\.\d) ")


def fill_in(stub, solution, step_ids):
    """The stub with the marked bodies of `step_ids` taken from the solution: a learner midway."""
    return "".join("".join(sol if step in step_ids else mine)
                   for (step, mine), (_, sol) in zip(split_bodies(stub), split_bodies(solution)))


def grade(mine_text=None, solution=False, args=("--details",), **env):
    """Run tools/grade.py in a scratch copy; return (exit status, output, {step: row is green})."""
    with scratch_repo(mine_text) as tmp:
        env = dict(os.environ, SOLUTION="1" if solution else "0", COLUMNS="100", **env)
        env.pop("NO_COLOR", None)  # colour must stay off anyway: stdout is a pipe, as in CI
        proc = subprocess.run([sys.executable, "tools/grade.py", *args], cwd=tmp, env=env,
                              capture_output=True, text=True, timeout=900)
    output = proc.stdout + proc.stderr
    rows = {m[2]: m[1] == "x" for line in output.splitlines() for m in [ROW.match(line)] if m}
    return proc.returncode, output, rows


def expect(name, got, rc_zero, green, must_say=(), once=()):
    """Problems with one grader run: exit status, which rows are green, what it says, its length."""
    rc, output, rows = got
    problems = []
    if (rc == 0) != rc_zero:
        problems.append(f"exits {rc}, expected {'0' if rc_zero else 'non-zero'}")
    want = {s.id: s.id in green for s in STEPS}
    if rows != want:
        problems.append(f"rows green {rows}, expected {want}")
    problems += [f"does not say {w!r}" for w in must_say if not re.search(w, output)]
    problems += [f"says {w!r} {output.count(w)} times, expected once" for w in once if output.count(w) != 1]
    if "\033[" in output:
        problems.append("prints colour codes into a pipe (a CI log)")
    if len(output.splitlines()) > ONE_SCREEN:
        problems.append(f"prints {len(output.splitlines())} lines, more than one screen ({ONE_SCREEN})")
    return [f"{name}: {p}\n{output[-3000:]}" for p in problems[:1]] + [f"{name}: {p}" for p in problems[1:]]


def check_scorecard_is_green_on_solutions_and_red_on_the_stub():
    problems = expect("solutions/", grade(solution=True), True, {s.id for s in STEPS}, ["Every step passes"])
    stub = grade(pristine_stub())
    problems += expect("the untouched stub", stub, False, set(), ["Next: T4.1 "])
    reasons = re.findall(r"(?m)^ {10}test_\w+: not written yet", stub[1])
    if len(reasons) != len(STEPS):
        problems.append(f"the untouched stub: {len(reasons)} rows say 'not written yet', expected "
                        f"{len(STEPS)}:\n{stub[1]}")
    return problems


def check_scorecard_turns_green_step_by_step():
    """Midway, T4.1 and T4.2 written: exactly those rows green, and T4.3 is what to do next."""
    midway = fill_in(pristine_stub(), SOLUTION.read_text(), {"T4.1", "T4.2"})
    return expect("T4.1 and T4.2 filled in", grade(midway), False, {"T4.1", "T4.2"},
                  [r"Next: T4\.3 ", r"read content/t4\.md §5\.1", "make hint STEP=T4.3"])


def check_planted_failures_give_one_short_report():
    solution = SOLUTION.read_text()
    body_line = "    offs_k = tl.arange(0, BLOCK_K)\n"
    loop_at = "    num_pid_in_group = GROUP_M * num_pid_n\n"
    store = "tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)"
    if not all(s in solution for s in (body_line, loop_at, store)):
        return ["the lines the planted mistakes replace are no longer in solutions/t4_matmul.py"]
    line_of = lambda s: solution[:solution.index(s)].count("\n") + 1  # noqa: E731
    syntax = solution.replace(body_line, body_line.replace("=", "= =", 1))
    loop = solution.replace(loop_at, loop_at + "    while num_pid_in_group > 0:\n        num_pid_in_group += 1\n")
    out_of_bounds = solution.replace(store, "tl.store(c_ptrs + (1 << 40), acc.to(c_ptr.dtype.element_ty))")
    looping = f"({line_of(loop_at) + 1}|{line_of(loop_at) + 2})"  # the while, or the line inside it
    return (expect("planted syntax error", grade(syntax), False, set(),
                   [rf"mine/t4_matmul\.py line {line_of(body_line)}: SyntaxError", "does not import"],
                   once=["SyntaxError"])
            + expect("planted endless loop in tile_coords", grade(loop, PYTEST_TIMEOUT="5"), False,
                     {"T4.2", "T4.3"}, [rf"test_tile_coords_\w+ timed out after 5 s at mine/t4_matmul\.py line {looping}"])
            + expect("planted store far outside C", grade(out_of_bounds), False, {"T4.1", "T4.2"},
                     [r"crashed \(SIG(SEGV|BUS)\) in test_epilogue at mine/t4_matmul\.py line \d+ \(epilogue\)"]))


def check_hints_come_one_at_a_time_and_reset_keeps_a_backup():
    problems = []
    with scratch_repo() as tmp:
        run = lambda *args: subprocess.run([sys.executable, *args], cwd=tmp, capture_output=True,  # noqa: E731
                                           text=True, timeout=120).stdout
        s = STEPS[0]
        shown = [run("tools/hint.py", "--step", s.id) for _ in range(len(s.hints) + 1)]
        for n, out in enumerate(shown, 1):
            if f"hint {min(n, len(s.hints))} of {len(s.hints)}" not in out:
                problems.append(f"make hint call {n} for {s.id} did not show hint {min(n, len(s.hints))}:\n{out}")
        every = run("tools/hint.py", "--step", s.id, "--all")
        if len(re.findall(r"hint \d of", every)) != len(s.hints):
            problems.append(f"make hint ALL=1 did not show the {len(s.hints)} hints seen:\n{every}")
        if json.loads((tmp / ".hints.json").read_text()).get(s.id) != len(s.hints):
            problems.append(".hints.json does not count the hints seen")

        # reset: a git repo holding the stub, a learner's edit, then make reset
        git = lambda *args: subprocess.run(["git", "-c", "user.name=check", "-c", "user.email=check@invalid",  # noqa: E731
                                            *args], cwd=tmp, capture_output=True, check=True)
        git("init", "-q")
        git("add", "mine/t4_matmul.py")
        git("commit", "-q", "-m", "stub")
        mine = tmp / "mine" / "t4_matmul.py"
        mine.write_text(mine.read_text() + "# the learner's work\n")
        said = run("tools/reset.py")
        backups = list((tmp / "mine" / "backups").glob("t4_matmul.*.py"))
        if len(backups) != 1 or not backups[0].read_text().endswith("# the learner's work\n"):
            problems.append(f"make reset kept no copy of the learner's file in mine/backups/: {said}")
        elif backups[0].name not in said:
            problems.append(f"make reset does not say where the copy is: {said}")
        if mine.read_text().endswith("# the learner's work\n"):
            problems.append("make reset did not restore the stub")
    return problems
