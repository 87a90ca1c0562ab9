"""The one pytest plugin of the grader and the checks: it writes what a pytest run did, as it goes,
to the JSON file named by COURSE_REPORT.

    python -m pytest -p tools.core.plugin ...      (run_pytest() below does this)

The file is rewritten after every event, so when the process dies (a crash, an exit, a hang that
had to be killed) it still says what was collected and which test was running.  It holds:
    collected   [{test, step, suite_skip, skip_reason, ids, labels}]: every test selected, with its
                step, whether the suite itself skips it here and the mark's reason (a skip or skipif
                mark: "GPU only: ..." under the interpreter, bf16 on a GPU),
                its parametrize ids, one per parametrize mark (["32-32-64", "row-major",
                "torch.float16"]), and the same cases in words, one label per id (["M=32 N=32 K=64",
                "A row-major", "float16"]; case_labels below)
    results     {test: {outcome, reason, text, message, kind, cause}}: reason is the first line of the
                failure, text all of it, message the check's own words in full without pytest's
                assertion rewriting, kind the exception's type, cause the error your code raised
                and its line, when it raised one
    running     the test in progress;  timed_out / timed_out_at: the per-test timeout's report
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import pytest

from course import ROOT, seam
from course.i18n import lang, say
from course.registry import LESSONS
from course.skips import suite_skip_reason
from tools.core.bodies import MARK

REPORT = "COURSE_REPORT"
_MARKERS = {s.marker: s.id for lesson in LESSONS for s in lesson.steps}
_state = {"collected": [], "results": {}}


def _save():
    target = os.environ.get(REPORT)
    if target:  # whole or not at all: the grader reads it while the run goes on (its live line)
        part = Path(target + ".part")
        part.write_text(json.dumps(_state))
        os.replace(part, target)


def short(nodeid):
    """test_mainloop[32-32-64-...] -> test_mainloop: the reason names the case."""
    return nodeid.split("::")[-1].split("[")[0] if nodeid else "?"


def graded_frames(exc):
    """(file, line number, 'TypeName: message') of the innermost exception in the chain that passed
    through a graded file, at its deepest frame there; None if none did.  Under the interpreter
    your @triton.jit code runs as Python, so its frames are real."""
    found, seen = None, set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if seam.graded_file(f.filename)]
        if frames:
            found = seam.graded_file(frames[-1].filename), frames[-1].lineno, f"{type(exc).__name__}: {exc}"
        exc = exc.__cause__ if exc.__cause__ is not None else (None if exc.__suppress_context__ else exc.__context__)
    return found


def bodies(graded):
    """{line number: (step, its sections)} for every line inside a marked body of the graded file;
    the sections are those the body's begin mark names ("# ---- T5.2 begin (§3.1) ----")."""
    inside, found = None, {}
    try:
        lines = (ROOT / graded).read_text().splitlines()
    except OSError:
        return found
    for n, line in enumerate(lines, 1):
        m = MARK.match(line)
        if m:
            inside = (m[1], tuple(re.findall(r"§(\d+(?:\.\d+)*)", m[3] or ""))) if m[2] == "begin" else None
        elif inside:
            found[n] = inside
    return found


def where_for(step_id, sections=()):
    """Where to read for a step: the sections given (those of a body's mark), else the step's own."""
    from course.i18n import where_to_read
    from course.registry import BY_ID

    step = BY_ID[step_id]
    sections = [n for n in sections if n in step.lesson.sections] or list(step.sections)
    titled = [f"{n} {step.lesson.sections[n][0 if lang() == 'zh' else 1]}" for n in sections]
    return f"{step_id}: " + where_to_read(step.lesson.explainers, titled)


def shown_path(filename):
    """A file as the learner reads it: the repo's files from its root, a library's from its package."""
    path = Path(filename)
    try:
        return str(path.resolve().relative_to(ROOT.resolve()))
    except ValueError:
        parts = path.parts
        at = max((i for i, p in enumerate(parts) if p in ("site-packages", "dist-packages")), default=None)
        return "/".join(parts[at + 1 :]) if at is not None else path.name


OUTCOMES = (pytest.fail.Exception, pytest.skip.Exception, pytest.xfail.Exception, pytest.exit.Exception)


def _chain(exc):
    """exc and the exceptions it was raised from or while handling, outermost first."""
    found, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        found.append(exc)
        exc = exc.__cause__ if exc.__cause__ is not None else (None if exc.__suppress_context__ else exc.__context__)
    return found


def given_code(exc, step_id, found):
    """For an error raised in code the learner did not write (the graded file's scaffold, course/,
    Triton, torch), and not by the check itself, one line of what is known, in the learner's
    language: where it was raised, the learner's last line on the way there if any, and the step's
    sections; (that line, the place); None for any other error.  found: graded_frames(exc)."""
    if isinstance(exc, OUTCOMES + (NotImplementedError,)) or step_id is None:
        return None
    if any(type(e).__name__ == "CompilationError" for e in _chain(exc)):
        return None  # a kernel that does not compile names the learner's own line itself
    if found and found[1] in bodies(found[0]):
        return None  # raised in, or called from, a body the learner writes: graded_frames names that line
    frames = [f for e in _chain(exc) for f in traceback.extract_tb(e.__traceback__)]
    inner = traceback.extract_tb(_chain(exc)[-1].__traceback__)
    if not inner or shown_path(inner[-1].filename).startswith(("tests/", "tools/")):
        return None  # the check's own code: its message says what it checked
    raised = inner[-1]
    place = (
        f"{found[0]} line {found[1]}"
        if found
        else f"{shown_path(raised.filename)} line {raised.lineno} ({raised.name})"
    )
    yours = [
        f"{g} line {f.lineno}" for f in frames for g in [seam.graded_file(f.filename)] if g and f.lineno in bodies(g)
    ]
    return (
        say(
            zh=f"这个错误出自不是你写的代码（{place}），不在你的代码块里"
            + (f"；途中经过你写的 {yours[-1]}" if yours else "")
            + f"。{where_for(step_id)}",
            en=f"this error was raised in code you did not write ({place}), outside your marked bodies"
            + (f"; on the way there it went through your {yours[-1]}" if yours else "")
            + f". {where_for(step_id)}",
        ),
        place,
    )


def library_note(exc, found):
    """For an error a library raised (Triton, torch) when a line of the learner's body called it,
    one line naming where it was raised and the body's sections; "" when the learner's file raised
    it, or it says where to read already."""
    if not found or found[1] not in bodies(found[0]) or "§" in str(exc):
        return ""
    inner = traceback.extract_tb(_chain(exc)[-1].__traceback__)
    if not inner or seam.graded_file(inner[-1].filename):
        return ""
    step_id, sections = bodies(found[0])[found[1]]
    place = f"{shown_path(inner[-1].filename)} line {inner[-1].lineno} ({inner[-1].name})"
    return say(
        zh=f"这个错误出自 {place}，由你这一行调用；{where_for(step_id, sections)}",
        en=f"raised inside {place}, which your line called; {where_for(step_id, sections)}",
    )


def source_line(graded, lineno):
    try:
        text = (ROOT / graded).read_text().splitlines()[lineno - 1].strip()
    except (OSError, IndexError):
        return ""
    return f"{graded} line {lineno}: {text}"


def _reason(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    text = _plain(text.removeprefix("Failed: ")).removeprefix("AssertionError: ").strip()
    return text.splitlines()[0] if text else ""


def _plain(text):
    """A failure message without pytest's assertion rewriting: for `assert x, msg` pytest appends
    "\nassert <x>" and "+ where ..." lines (tensor reprs, <built-in method ...>) to msg."""
    return re.split(r"\n(?:assert |AssertionError$)", text, maxsplit=1)[0].rstrip()


def message_of(exc):
    """The check's own words for an exception that failed it: the message it was given, in full."""
    if isinstance(exc, AssertionError):
        said = _plain(str(exc))
        return said or "AssertionError (an assert without a message)"
    said = str(exc).strip()
    if isinstance(exc, pytest.fail.Exception):
        return said
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def pytest_collection_finish(session):
    _state["backend"] = "interpreter" if interpreting() else "gpu"  # conftest has chosen by now
    _state["collected"] = [
        dict(
            test=item.nodeid,
            suite_skip=suite_skip_reason(item) is not None,
            skip_reason=suite_skip_reason(item) or "",
            step=next((_MARKERS[m.name] for m in item.iter_markers() if m.name in _MARKERS), None),
            ids=_ids(item),
            labels=case_labels(item),
        )
        for item in session.items
    ]
    _save()


def _ids(item):
    """One id per parametrize mark: pytest joins them with "-" in the node id, and an id may hold a
    "-" itself (row-major), so they are read from the call spec, not split out of the node id."""
    spec = getattr(item, "callspec", None)
    ids = list(getattr(spec, "_idlist", ()) or ())
    if not ids and "[" in item.nodeid:  # a pytest without _idlist: the whole id as one part
        ids = [item.nodeid.split("[", 1)[1].rstrip("]")]
    return ids


def _groups(item):
    """The argument names of each parametrize mark of item, with the mark, in the order of its ids
    (pytest adds a mark's arguments to the call spec, and its id to the id list, mark by mark)."""
    spec = getattr(item, "callspec", None)
    if spec is None:
        return []
    order = list(spec.params)
    groups = []
    for mark in item.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", ())
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        names = [n for n in names if n in spec.params]
        if names:
            groups.append((names, mark))
    return sorted(groups, key=lambda g: order.index(g[0][0]))


# How an argument's value reads in a case's label, by its type; a test may say more for an argument
# with the case_words mark: @pytest.mark.case_words(layout=say(zh="A 为 {}", en="A {}")).
BLOCK = ("bm", "bn", "bk")  # the suite's names of BLOCK_M, BLOCK_N, BLOCK_K


def _value_words(name, value, words):
    """One argument of a case in words, or None for a value with no words (a function)."""
    if name in words:
        return words[name].format(_value_words(name, value, {}) if not isinstance(value, str) else value)
    if callable(value) and not isinstance(value, type):
        return None
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return str(value).removeprefix("torch.")
    if isinstance(value, str) and re.search(r"[^\w]", value):
        return value  # words already: "row-major", "b = W.t()", "fp16 with odd K = 33"
    return f"{name}={value}"


def _mark_words(names, values, given, words):
    """A label for one parametrize mark's values: the test's own ids when it gave some (ids=[...] or
    a function other than str, or pytest.param(id=...)), else its arguments in words, the block
    sizes as BLOCK 16x32x16: "M=45 N=37 K=83 BLOCK 16x32x16" for 45-37-83-16-32-16."""
    if given is not None:
        return given.removeprefix("torch.")
    parts, block = [], [n for n in BLOCK if n in names]
    for name, value in zip(names, values, strict=True):
        if name in block and name not in words:
            if name == block[0]:
                sizes = "x".join(str(values[names.index(n)]) for n in block)
                parts.append(f"BLOCK {sizes}" if len(block) > 1 else f"BLOCK_{name[1].upper()}={sizes}")
            continue
        said = _value_words(name, value, words)
        if said is not None:
            parts.append(said)
    return " ".join(parts)


def case_labels(item):
    """A test's parametrize ids in words, one label per id: for test_k_block_loop's id
    17-50-70-0-3-True-torch.float16, ["M=17 N=50 K=70 kb_begin=0 kb_end=3 kmajor=True", "float16"].
    The node ids stay as they are (seeds, and tools that name a case, are made from them)."""
    spec = getattr(item, "callspec", None)
    ids = _ids(item)
    groups = _groups(item)
    if spec is None or len(groups) != len(ids):
        return list(ids)
    words = {}
    for mark in item.iter_markers("case_words"):
        words = {**mark.kwargs, **words}  # the closest mark first
    try:
        return [
            _mark_words(names, values, given if _given_by_the_test(mark, values, given) else None, words)
            for (names, mark), given in zip(groups, ids, strict=True)
            for values in [[spec.params[n] for n in names]]
        ]
    except Exception:  # noqa: BLE001 - a label is for reading only: pytest's ids rather than no run
        return list(ids)


def _given_by_the_test(mark, values, id_):
    """Whether the test chose this id itself: ids=[...] or a function (not str, which only spells
    each value), or pytest.param(id=...) for values whose own id would read otherwise."""
    chosen = mark.kwargs.get("ids")
    if chosen is not None and chosen is not str:
        return True
    plain = all(isinstance(v, (str, int, float, bool, type(None))) for v in values)
    return plain and id_ != "-".join(map(str, values))


# The learner runs' per-check limit in CPU seconds (tools/learner/grade.py sets these, and says why):
# the check's own process's CPU time, which other programs on a busy machine do not use up, so a
# slow check on a loaded machine is not taken for a hang.  pytest-timeout (PYTEST_TIMEOUT) stays,
# with a long limit, for a hang that waits without computing.
CPU_LIMIT = "COURSE_CPU_LIMIT_S"  # under the interpreter
CPU_LIMIT_GPU = "COURSE_CPU_LIMIT_GPU_S"  # compiled for a GPU: compiling and autotuning take CPU time
CPU_TIMEOUT = "Timeout (>{:g}s of CPU time)"


def interpreting():
    return os.environ.get("TRITON_INTERPRET") == "1"


def cpu_limit():
    """This run's per-check CPU-time limit in seconds, or None (no limit: make check's own runs)."""
    said = os.environ.get(CPU_LIMIT if interpreting() else CPU_LIMIT_GPU) or os.environ.get(CPU_LIMIT)
    try:
        return float(said) if said and float(said) > 0 else None
    except ValueError:
        return None


def _over_the_limit(signum, frame):
    # pytest.fail, not an Exception: a check's own `except Exception` must not swallow it
    pytest.fail(CPU_TIMEOUT.format(cpu_limit() or 0), pytrace=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _cpu_clock():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with _cpu_clock():
        return (yield)


class _cpu_clock:  # noqa: N801 - used as `with _cpu_clock():`
    """SIGPROF after cpu_limit() seconds of this process's CPU time (ITIMER_PROF: every thread,
    user and system), its handler failing the check where it is; nothing without a limit."""

    def __enter__(self):
        self.limit = cpu_limit()
        if self.limit:
            self.before = signal.signal(signal.SIGPROF, _over_the_limit)
            signal.setitimer(signal.ITIMER_PROF, self.limit)

    def __exit__(self, *exc):
        if self.limit:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, self.before)
        return False


def pytest_runtest_logstart(nodeid):
    _state["running"] = nodeid  # if the process dies now, this names the test that killed it
    _save()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and call.excinfo is not None:
        if not isinstance(call.excinfo.value, pytest.skip.Exception):  # a skip's words: its longrepr
            report.course_message = message_of(call.excinfo.value)
            report.course_kind = type(call.excinfo.value).__name__
        found = graded_frames(call.excinfo.value)
        message = str(call.excinfo.value)
        if message.startswith("Timeout (>"):
            # our CPU clock or pytest-timeout failed this test; every later test would hang the same way
            item.session.shouldstop = "a test timed out"
            _state["timed_out"] = timed_out(short(item.nodeid), message, found)
            _state["timed_out_at"] = source_line(*found[:2]) if found else ""
        elif given := given_code(call.excinfo.value, _step_of(item), found):
            # raised in code the learner did not write: say so, and where to read, not "your line"
            exc = call.excinfo.value
            report.given_cause = f"{type(exc).__name__}: {_first_line(exc)} ({given[1]})"
            report.given_message = f"{type(exc).__name__}: {str(exc).strip()}\n  {given[0]}"
        elif (
            found
            and "NotImplementedError" not in found[2]
            and not isinstance(call.excinfo.value, pytest.fail.Exception)
        ):
            # an error raised inside your code; a check's own pytest.fail (raised while handling
            # one, say) says more than the error it caught, so it keeps its message
            report.graded_cause = f"{found[0]} line {found[1]}: {found[2]}"
            report.graded_line = source_line(*found[:2]).split(": ", 1)[-1]
            report.graded_note = library_note(call.excinfo.value, found)
    return report


def _step_of(item):
    return next((_MARKERS[m.name] for m in item.iter_markers() if m.name in _MARKERS), None)


def _first_line(exc):
    said = str(exc).strip()
    return said.splitlines()[0] if said else ""


def timed_out(test, message, found):
    """The one line for a check stopped by a timeout ("Timeout (>10s of CPU time)" from our clock,
    "Timeout (>300.0s)" from pytest-timeout), in the learner's language."""
    seconds = re.search(r">([\d.]+)s", message)
    n = f"{float(seconds[1]) if seconds else 0:g}"
    cpu = "CPU time" in message
    where = f"{found[0]} line {found[1]}" if found else ""
    return say(
        zh=f"{test} 超时：{'计算了' if cpu else '过了'} {n} s{'（CPU 时间）' if cpu else ''}还没结束"
        + (f"，停在 {where}" if where else "")
        + "（死循环？）；这一步后面的测试没有运行",
        en=f"{test} timed out after {n} s{' of CPU time' if cpu else ''}"
        + (f" at {where}" if where else "")
        + " (an endless loop?); the step's later tests did not run",
    )


def pytest_runtest_logreport(report):
    if report.when != "call" and report.passed:
        return  # setup and teardown count only when they go wrong (a skip, a broken fixture)
    if (
        report.when == "teardown"
        and report.nodeid in _state["results"]
        and _state["results"][report.nodeid]["outcome"] == "failed"
    ):
        return  # keep the first failure of a test
    chain = getattr(report.longrepr, "chain", None)  # the last exception, not the whole chain
    text = str(chain[-1][0]) if chain else (report.longreprtext if report.failed else "")
    cause = getattr(report, "graded_cause", "")
    if cause:  # the traceback from the test down through Triton's interpreter says no more
        text = f"{cause.split(': ', 1)[1]}\n  raised at {cause.split(': ', 1)[0]}: {report.graded_line}"
        if getattr(report, "graded_note", ""):
            text += f"\n  {report.graded_note}"
    message = getattr(report, "course_message", "") or (_reason(report) if report.failed else "")
    if cause:
        message = text
    if getattr(report, "given_cause", ""):
        cause, message = report.given_cause, report.given_message
    elif not report.passed and not message:  # a skip: its reason
        message = _reason(report)
    _state["results"][report.nodeid] = dict(
        outcome=report.outcome,
        reason=_reason(report) if not report.passed else "",
        text=text[-4000:],
        message=message[-4000:],
        kind=getattr(report, "course_kind", ""),
        cause=cause,
    )
    _save()


def run_pytest(args, cwd, env, timeout, progress=None):
    """Run `python -m pytest -p tools.core.plugin ARGS` in a fresh process in cwd.

    Returns (state, exit status, output): state is what this plugin wrote (None if the process
    could not even collect), exit status None if it ran past `timeout` seconds and was stopped.
    progress(state), if given, is called about twice a second with what the report says so far;
    when it returns True the process is stopped there (exit status None, as at the limit)."""
    with tempfile.TemporaryDirectory(prefix="course-report-") as tmp:
        report = Path(tmp) / "report.json"
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "tools.core.plugin", *args],
            cwd=cwd,
            env=dict(env, **{REPORT: str(report)}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                out, err = proc.communicate(timeout=min(0.5, max(0.01, deadline - time.monotonic())))
                rc, output = proc.returncode, out + err
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    proc.kill()
                    out, err = proc.communicate()
                    rc, output = None, _text(out) + _text(err)
                    break
                if progress is not None and progress(read_report(report)):
                    proc.kill()
                    out, err = proc.communicate()
                    rc, output = None, _text(out) + _text(err)
                    break
        return read_report(report), rc, output


def read_report(path):
    """The plugin's report at path, or None when there is none (yet)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _text(data):
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
