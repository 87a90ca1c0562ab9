"""The one pytest plugin of the grader and the checks: it writes what a pytest run did, as it goes,
to the JSON file named by COURSE_REPORT.

    python -m pytest -p tools.core.plugin ...      (pytest_run.run_pytest() does this)

The file is rewritten after every event, so when the process dies (a crash, an exit, a hang that
had to be killed) it still says what was collected and which test was running.  It holds:
    collected   [{test, step, suite_skip, skip_reason, ids, labels}]: every test selected, with its
                step, whether the suite itself skips it here and the mark's reason (a skip or skipif
                mark: "GPU only: ..." under the interpreter, bf16 on a GPU),
                its parametrize ids, one per parametrize mark (["32-32-64", "row-major",
                "torch.float16"]), and the same cases in words, one label per id (["M=32 N=32 K=64",
                "A row-major", "float16"]; case_labels.py)
    results     {test: {outcome, reason, text, message, kind, cause}}: reason is the first line of the
                failure, text all of it, message the check's own words in full without pytest's
                assertion rewriting, kind the exception's type, cause the error your code raised
                and its line, when it raised one
    running     the test in progress;  timed_out / timed_out_at: the per-test timeout's report

The parts it uses: failure_words.py (what a failure says), case_labels.py (cases in words),
cpu_clock.py (the per-check CPU-time limit); pytest_run.py starts pytest with this plugin.
"""

import json
import os
from pathlib import Path

import pytest

from course import seam
from course.i18n import say
from course.messages import broken_capture_words, triton_said
from course.registry import LESSONS
from course.skips import suite_skip_reason
from tools.core.case_labels import case_ids, case_labels
from tools.core.cpu_clock import cpu_clock, interpreting
from tools.core.failure_words import (
    first_line,
    given_code,
    graded_calls,
    graded_frames,
    interpreter_int_note,
    libdevice_note,
    library_note,
    message_of,
    pointer_cast_note,
    reason_of,
    reduction_pair_note,
    short,
    source_line,
    timed_out,
    triton_lead,
)
from tools.core.pytest_run import REPORT

_MARKERS = {s.marker: s.id for lesson in LESSONS for s in lesson.steps}
_state = {"collected": [], "results": {}}
# _state's two large parts as JSON, each written once as it changes: the file is rewritten twice a
# test, and dumping all of it each time took 2-4 ms a save near the end of a run of 455 tests
_json = {"collected": "[]", "results": {}}


def _text():
    """json.dumps(_state), from the parts already dumped."""
    results = ", ".join(f"{json.dumps(test)}: {text}" for test, text in _json["results"].items())
    rest = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in _state.items() if k not in _json]
    return "{" + ", ".join([f'"collected": {_json["collected"]}', f'"results": {{{results}}}', *rest]) + "}"


def _save():
    target = os.environ.get(REPORT)
    if target:  # whole or not at all: the grader reads it while the run goes on (its live line)
        part = Path(target + ".part")
        part.write_text(_text())
        os.replace(part, target)


def pytest_collection_finish(session):
    _state["backend"] = "interpreter" if interpreting() else "gpu"  # conftest has chosen by now
    _state["collected"] = [
        dict(
            test=item.nodeid,
            suite_skip=suite_skip_reason(item) is not None,
            skip_reason=suite_skip_reason(item) or "",
            step=next((_MARKERS[m.name] for m in item.iter_markers() if m.name in _MARKERS), None),
            ids=case_ids(item),
            labels=case_labels(item),
            hopper_compile=item.get_closest_marker("hopper_compile") is not None,
        )
        for item in session.items
    ]
    _json["collected"] = json.dumps(_state["collected"])
    _save()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with cpu_clock():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with cpu_clock():
        return (yield)


def pytest_runtest_logstart(nodeid):
    _state["running"] = nodeid  # if the process dies now, this names the test that killed it
    _save()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and call.excinfo is not None:
        if not isinstance(call.excinfo.value, pytest.skip.Exception):  # a skip's words: its longrepr
            report.course_message = message_of(call.excinfo.value)
            if broken := broken_capture_words(str(call.excinfo.value)):  # not this check's fault: say whose
                report.course_message += "\n  " + broken
            report.course_kind = type(call.excinfo.value).__name__
        found = graded_frames(call.excinfo.value)
        message = str(call.excinfo.value)
        if message.startswith("Timeout (>"):
            # our CPU clock or pytest-timeout failed this test; every later test would hang the same way
            item.session.shouldstop = "a test timed out"
            _state["timed_out"] = timed_out(short(item.nodeid), message, found)
            _state["timed_out_at"] = graded_calls(call.excinfo.value) or (source_line(*found[:2]) if found else "")
        elif given := given_code(call.excinfo.value, _step_of(item), found):
            # raised in code the learner did not write: say so, and where to read, not "your line"
            exc, kind = call.excinfo.value, type(call.excinfo.value).__name__
            # Python's own words stay as they are, quoted inside the learner's language
            report.given_cause = say(
                zh=f"出错了（不是你写的代码抛出的，在 {given[1]}）：{kind}: {first_line(exc)}",
                en=f"{kind}: {first_line(exc)} ({given[1]})",
            )
            report.given_message = say(zh="出错了：", en="") + f"{kind}: {str(exc).strip()}\n  {given[0]}"
        elif (
            found
            and seam.stub_message(call.excinfo.value) is None
            and not isinstance(call.excinfo.value, pytest.fail.Exception)
        ):
            # an error raised inside your code; a check's own pytest.fail (raised while handling
            # one, say) says more than the error it caught, so it keeps its message
            lead, quote = triton_lead(call.excinfo.value)  # what raised it, said before Triton's own English
            report.graded_cause = say(
                zh=f"{lead}（{found[0]} 第 {found[1]} 行）{quote}{found[2]}",
                en=f"{found[0]} line {found[1]}: " + (f"{lead}{quote}" if lead else "") + found[2],
            )
            report.graded_line = source_line(*found[:2]).split(": ", 1)[-1]
            report.graded_text = say(
                zh=f"{lead}{quote}{found[2]}\n  出错的是 {found[0]} 第 {found[1]} 行：{report.graded_line}",
                en=(f"{lead}{quote}" if lead else "") + f"{found[2]}\n  raised at {found[0]} line {found[1]}: "
                f"{report.graded_line}",
            )
            # the interpreter's int first: it names the section where that is taught
            report.graded_note = "\n  ".join(
                note
                for note in (
                    libdevice_note(call.excinfo.value, found),
                    interpreter_int_note(call.excinfo.value) or library_note(call.excinfo.value, found, _step_of(item)),
                    pointer_cast_note(call.excinfo.value),
                    reduction_pair_note(call.excinfo.value, found),
                )
                if note
            )
            said = triton_said(found[2], call.excinfo.value)  # Triton's English, in the learner's language where known
            if said:
                report.graded_note = f"{said}" + (f"\n  {report.graded_note}" if report.graded_note else "")
    return report


def _step_of(item):
    return next((_MARKERS[m.name] for m in item.iter_markers() if m.name in _MARKERS), None)


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
        text = report.graded_text
        if getattr(report, "graded_note", ""):
            text += f"\n  {report.graded_note}"
    message = getattr(report, "course_message", "") or (reason_of(report) if report.failed else "")
    if cause:
        message = text
    if getattr(report, "given_cause", ""):
        cause, message = report.given_cause, report.given_message
    elif not report.passed and not message:  # a skip: its reason
        message = reason_of(report)
    _state["results"][report.nodeid] = dict(
        outcome=report.outcome,
        reason=reason_of(report) if not report.passed else "",
        text=text[-4000:],
        message=message[-4000:],
        kind=getattr(report, "course_kind", ""),
        cause=cause,
    )
    _json["results"][report.nodeid] = json.dumps(_state["results"][report.nodeid])
    _save()
