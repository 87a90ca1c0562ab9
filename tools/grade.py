"""`make grade` and `make test`: where you stand, one row per step of tools/steps.py.

    python tools/grade.py                the scorecard for mine/ (SOLUTION=1: solutions/)
    python tools/grade.py --details      also the first failure of the step to work on (make test)
    python tools/grade.py --step T4.2    that step alone, every failing check listed (make test STEP=T4.2)

Each step runs in its own pytest process (`pytest -m t4_2 -p tools.report -p tools.grade`), so a
file that does not import, a test that hangs (pytest-timeout, set in pytest.ini) or a kernel that
crashes the interpreter costs that step only, and the scorecard is always printed.  The rows are
read from tools/report.py's JSON records; this module is also a small pytest plugin (the second
half of the file) that leaves a note the grader can read when the process dies before writing them.
Exit status 0 once every required step passes (or, with --step, that step).
"""
import argparse
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import textwrap
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT / "tests", ROOT):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import seam  # noqa: E402  (tests/seam.py: which file is graded)
from tools.report import run_pytest  # noqa: E402
from tools.steps import STEPS, step as find_step  # noqa: E402

LAST_GRADE = ROOT / ".grade.json"  # the last scorecard, so that `make hint` knows the next step
STEP_LIMIT_S = 900  # a whole step; pytest-timeout stops a single test long before this
NOTES = "T4_GRADE_NOTES"
ANTI_CHEAT = ("T4.4 makes torch.matmul and its relatives raise and counts matmul_kernel's launches "
              "(test_wrapper_launches_the_kernel): a wrapper that hands the product to torch fails, "
              "because the point is your kernel.")


# ================================================================================================
# Running one step
# ================================================================================================
@dataclass
class Row:
    step: object
    passed: int = 0
    total: int = 0
    reason: str = ""      # the first failing check, one line
    detail: str = ""      # the same failure in full, when it says more than the line
    failures: tuple = ()  # (test, one-line reason) for every failing check
    broke: bool = False   # crashed or timed out
    blocker: str = ""     # why no test could run at all (no import, no pytest), in a few lines

    @property
    def done(self):
        return self.total > 0 and self.passed == self.total


def run_step(s, parallel=False):
    with tempfile.TemporaryDirectory(prefix="t4grade-") as tmp:
        notes = Path(tmp) / "notes.json"
        env = dict(os.environ, **{NOTES: str(notes)})
        if parallel:  # one thread each: processes side by side oversubscribe the cores otherwise
            env.setdefault("OMP_NUM_THREADS", "1")
        records, rc, output = run_pytest(["-p", "tools.grade", "-q", "--tb=short", "-m", s.marker],
                                         ROOT, env, STEP_LIMIT_S)
        note = json.loads(notes.read_text()) if notes.exists() else {}
    row = Row(s)
    if records is None and not note.get("running"):  # not even one test started
        said = [line for line in output.splitlines() if line.strip()][-6:]
        row.reason = f"pytest could not start (exit status {rc})"
        row.blocker = "\n".join([f"{row.reason}, so no step can run:", *("    " + x for x in said)])
        return row
    if records is None:  # the process died before pytest could finish
        row.passed, row.total, row.broke = note.get("passed", 0), note.get("total", 0), True
        row.reason, row.detail = died(rc, note.get("running"), output)
        return row
    outcomes = {}
    for r in records:  # one test may leave a setup and a teardown record: keep the worst
        if outcomes.get(r["test"], {}).get("outcome") != "failed":
            outcomes[r["test"]] = r
    counted = [r for r in outcomes.values() if r["outcome"] != "skipped"]
    row.total, row.passed = len(counted), sum(r["outcome"] == "passed" for r in counted)
    failed = [r for r in counted if r["outcome"] == "failed"]
    causes = note.get("causes", {})  # the error your code raised, where the plugin saw one
    row.failures = tuple((r["test"], causes.get(r["test"], r["reason"])) for r in failed)
    first = note.get("first_failure") or {}
    if note.get("timed_out"):  # the tests after it were never run: count them as not passed
        row.broke, row.total = True, note["total"] - (len(outcomes) - len(counted))
        row.reason, row.detail = note["timed_out"], note.get("timed_out_at", "")
    elif failed:
        row.reason = f"{short(failed[0]['test'])}: {row.failures[0][1]}"
        text = first.get("text", "").strip()
        if "not written yet" not in failed[0]["reason"]:  # the stub's message says it all
            row.detail = text if first.get("test") == failed[0]["test"] and "\n" in text else failed[0]["reason"]
        if not row.passed and not causes and {r["reason"] for r in failed} == {failed[0]["reason"]} \
                and failed[0]["reason"].startswith(seam.PATH):  # tests/seam.py's report: no import
            row.blocker = "\n".join([f"{seam.PATH} does not import, so no step can run:",
                                     "    " + failed[0]["reason"], *text.splitlines()[1:2]])
    elif rc not in (0, 5):
        row.reason = f"pytest stopped with exit status {rc}"
    if row.total == 0 and not row.reason:
        row.reason = "no test of this step ran"
    return row


def died(rc, running, output):
    """One line for a process that never wrote its report (crashed, exited, hung), and the code line."""
    where = f" in {short(running)}" if running else ""
    # faulthandler (on in pytest) prints the stack of a crash, innermost frame first
    yours = re.search(r'File "[^"]*' + re.escape(seam.PATH) + r'", line (\d+) in (\w+)', output)
    if yours:
        where += f" at {seam.PATH} line {yours[1]} ({yours[2]})"
    code = source_line(int(yours[1])) if yours else ""
    if rc is None:
        return f"still running after {STEP_LIMIT_S} s{where}: stopped (a hang the per-test timeout could not interrupt)", code
    if rc < 0:
        name = signal.Signals(-rc).name
        out_of_bounds = "a load or store far outside a tensor? check the masks and offsets"
        why = {"SIGSEGV": out_of_bounds, "SIGBUS": out_of_bounds,
               "SIGABRT": "aborted (os.abort, or a failed check inside a C library)"}.get(name, "killed")
        return f"crashed ({name}){where}: {why}; later tests did not run", code
    return f"the test process exited with status {rc}{where}: does your code call exit?", code


def source_line(lineno):
    try:
        text = (ROOT / seam.PATH).read_text().splitlines()[lineno - 1].strip()
    except (OSError, IndexError):
        return ""
    return f"{seam.PATH} line {lineno}: {text}"


def short(nodeid):
    """test_mainloop[32-32-64-...] -> test_mainloop: the reason names the case."""
    return nodeid.split("::")[-1].split("[")[0] if nodeid else "?"


def run_steps(steps):
    workers = max(1, min(len(steps), os.cpu_count() or 1))
    pool = ThreadPoolExecutor(workers)
    try:
        futures = [pool.submit(run_step, s, parallel=workers > 1) for s in steps]
        return [f.result() for f in futures]
    finally:  # on Ctrl-C: start no more steps (the running ones got the Ctrl-C too)
        pool.shutdown(cancel_futures=True)


def blocker(rows):
    """What stopped every step alike (the file does not import, pytest cannot start), else ''."""
    found = {r.blocker for r in rows}
    return found.pop() if len(found) == 1 else ""


def first_not_done(done, steps=STEPS):
    """The first required step not done, else the first advanced one, else None; done: {id: bool}."""
    return next((s for s in steps if not done.get(s.id) and not s.advanced),
                next((s for s in steps if not done.get(s.id)), None))


def next_step(rows):
    return first_not_done({r.step.id: r.done for r in rows}, [r.step for r in rows])


def _stamp():
    graded = ROOT / seam.PATH
    return dict(path=seam.PATH, mtime=graded.stat().st_mtime if graded.exists() else None)


def remembered():
    """{step id: done} from the last scorecards, if the graded file has not changed since; else None."""
    try:
        last = json.loads(LAST_GRADE.read_text())
    except (OSError, ValueError):
        return None
    return last.get("done") if {k: last.get(k) for k in _stamp()} == _stamp() else None


def remember(rows):
    """Keep which steps passed, and for which version of the graded file, for `make hint`."""
    done = dict(remembered() or {}, **{r.step.id: r.done for r in rows})
    try:
        LAST_GRADE.write_text(json.dumps(dict(_stamp(), done=done)))
    except OSError:
        pass  # a read-only checkout still gets its scorecard


# ================================================================================================
# The scorecard
# ================================================================================================
COLOR = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
WIDTH = min(120, shutil.get_terminal_size((100, 24)).columns)


def paint(text, code):
    return f"\033[{code}m{text}\033[0m" if COLOR else text


def fit(text, indent):
    text = " ".join(text.split())
    room = WIDTH - indent
    return " " * indent + (text if len(text) <= room else text[:room - 3] + "...")


def bar(row, width=10):
    filled = round(width * row.passed / row.total) if row.total else 0
    if row.total and row.passed < row.total:
        filled = min(filled, width - 1)  # a full bar means done
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def scorecard(rows, blocked=""):
    titles = [r.step.title + (" (advanced)" if r.step.advanced else "") for r in rows]
    title_width = max(map(len, titles))
    lines = [paint(f"Lesson T4 scorecard: {seam.PATH}", "1")]
    for r, title in zip(rows, titles):
        colour = "32" if r.done else ("33" if r.step.advanced else "31")
        mark = "[x]" if r.done else "[ ]"
        lines.append(paint(f"  {mark} {r.step.id}  {title:<{title_width}}  {bar(r)} "
                           f"{r.passed:>3}/{r.total}", colour))
        if not r.done and not blocked:  # that one reason is printed once, above
            lines.append(fit(r.reason, 10))
    if len(rows) > 1:
        required = [r for r in rows if not r.step.advanced]
        lines.append(f"  {sum(r.done for r in required)} of {len(required)} required steps done, "
                     f"{sum(r.passed for r in rows)} of {sum(r.total for r in rows)} checks pass "
                     f"(advanced steps are optional)")
    return lines


def advice(rows, blocked):
    s = next_step(rows)
    if blocked:
        return [paint("  Next: fix what is named above, then make test again.", "1")]
    if s is None:
        return [paint("  Every step passes, the advanced one included. Well done." if len(rows) > 1
                      else f"  {rows[0].step.id} passes.", "1;32")]
    lines = []
    if s.advanced and len(rows) > 1:
        lines.append(paint("  Every required step passes: the lesson is done.", "1;32"))
    label = "Optional next" if s.advanced and len(rows) > 1 else "Next"
    lines += [paint(line, "1") for line in textwrap.wrap(
        f"{label}: {s.id} {s.title}: {', '.join(s.writes)} in {seam.PATH}", WIDTH,
        initial_indent="  ", subsequent_indent=" " * 8)]
    lines += [f"        {s.where_to_read()}",
              f"        stuck? make hint STEP={s.id}" + (f"    this step alone: make test STEP={s.id}" if len(rows) > 1 else "")]
    if s.id == "T4.4" or any("the wrapper called" in r.reason for r in rows):
        lines += textwrap.wrap("Note: " + ANTI_CHEAT, WIDTH, initial_indent=" " * 8, subsequent_indent=" " * 8)
    return lines


def first_failure(row, limit=20):
    text = [w for line in row.detail.splitlines() for w in textwrap.wrap(line, WIDTH - 4) or [""]]
    more = [f"    ... {len(text) - limit} more lines"] if len(text) > limit else []
    title = "stopped here" if row.broke else "the first failing check"
    return [paint(f"{row.step.id}, {title}:", "1"), *("    " + t for t in text[:limit]), *more, ""]


def failure_list(row, limit=12):
    """Every failing check of one step, a line each; checks failing for the same reason share one."""
    groups = {}
    for test, reason in row.failures:
        groups.setdefault(reason, []).append(short(test))
    lines = [f"{names[0]}{f' and {len(names) - 1} more' if len(names) > 1 else ''}: {reason}"
             for reason, names in groups.items()]
    more = [f"    ... {len(lines) - limit} more"] if len(lines) > limit else []
    n = len(row.failures)
    return [paint(f"{row.step.id}: {n} failing check{'s' if n != 1 else ''}", "1"),
            *(fit(x, 4) for x in lines[:limit]), *more, ""] if lines else []


def show(rows, details, listing=False):
    blocked = blocker(rows)
    out = []
    if blocked:
        title, *rest = blocked.splitlines()
        out += [paint(title, "1;31"), *rest, ""]
    elif details:
        row = next((r for r in rows if r.step is next_step(rows)), None)
        out += first_failure(row) if row is not None and row.detail else []
        out += failure_list(row) if row is not None and listing else []
    out += scorecard(rows, blocked) + advice(rows, blocked)
    print("\n".join(out))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", help="one step: T4.2, t4.2 or 2")
    parser.add_argument("--details", action="store_true", help="show the next step's first failure in full")
    args = parser.parse_args(argv)
    if args.step:
        try:
            steps = [find_step(args.step)]
        except KeyError as e:
            print(e.args[0], file=sys.stderr)
            return 2
    else:
        steps = STEPS
        if sys.stdout.isatty():
            print(f"grading {seam.PATH}: {len(STEPS)} steps, each in its own process ...", flush=True)
    try:
        rows = run_steps(steps)
    except KeyboardInterrupt:
        print("\ninterrupted: no scorecard this time", file=sys.stderr)
        return 130
    show(rows, args.details or args.step, listing=bool(args.step))
    remember(rows)
    return 0 if all(r.done for r in rows if not r.step.advanced or args.step) else 1


# ================================================================================================
# The plugin: loaded into each step's pytest process with `-p tools.grade`
# ================================================================================================
_note = {"passed": 0}


def _save():
    path = os.environ.get(NOTES)
    if path:
        Path(path).write_text(json.dumps(_note))


def _yours(exc):
    """(line number, 'TypeName: message') of the innermost exception in the chain that passed
    through the graded file, at its deepest frame there; (None, '') if none did.  Under the
    interpreter your @triton.jit code runs as Python, so its frames are real."""
    found, seen = (None, ""), set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(seam.PATH)]
        if lines:
            found = lines[-1], f"{type(exc).__name__}: {exc}"
        exc = exc.__cause__ if exc.__cause__ is not None else (
            None if exc.__suppress_context__ else exc.__context__)
    return found


def pytest_collection_finish(session):
    _note["total"] = len(session.items)
    _save()


def pytest_runtest_logstart(nodeid):
    _note["running"] = nodeid  # if the process dies now, this names the test that killed it
    _save()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if not report.failed or call.excinfo is None:
        return report
    lineno, cause = _yours(call.excinfo.value)
    at = f" at {seam.PATH} line {lineno}" if lineno else ""
    if str(call.excinfo.value).startswith("Timeout (>"):
        # pytest-timeout's signal method failed this test; every later test would hang the same way.
        item.session.shouldstop = "a test timed out"
        seconds = re.search(r">([\d.]+)s", str(call.excinfo.value))
        seconds = f"{float(seconds[1]):g}" if seconds else "?"
        _note["timed_out"] = (f"{short(item.nodeid)} timed out after {seconds} s{at} (an endless loop?); "
                              f"the step's later tests did not run")
        _note["timed_out_at"] = source_line(lineno) if lineno else ""
        _save()
        return report
    yours = lineno and "NotImplementedError" not in cause  # an error raised inside your code
    if yours:
        _note.setdefault("causes", {})[report.nodeid] = f"{seam.PATH} line {lineno}: {cause}"
    if "first_failure" not in _note:
        chain = getattr(report.longrepr, "chain", None)  # the last exception, not the whole chain
        text = str(chain[-1][0]) if chain else report.longreprtext
        if yours:  # the traceback from the test down through Triton's interpreter says no more
            text = f"{cause}\n  raised{at}: {source_line(lineno).split(': ', 1)[-1]}"
        _note["first_failure"] = dict(test=report.nodeid, text=text[-4000:])
    _save()
    return report


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        _note["passed"] += 1
        _save()


if __name__ == "__main__":
    sys.exit(main())
