"""Where the suite runs, and the rules every check of it keeps.

- On the GPU when there is one, else through Triton's interpreter on the CPU.
- One pytest marker per step and one per lesson, from course/registry.py.
- Seeds: every random input comes from SEED (random when unset, printed in the header). Each
  test seeds torch from SEED and its own name, so `SEED=n pytest ...` (or `make test SEED=n`)
  replays any failing check exactly, alone or in the whole run; a failure prints its seed.
- A body not written yet (the stub's NotImplementedError) fails as one line, "not written yet".
- The graded file cannot make a check disappear: a skip, an xfail or an exit raised while a check
  runs fails that check, naming the line.  Only the suite's own skip marks skip.
- On the interpreter a program that would wait for good fails its check at once, naming the line
  that waits (course/interpreter_spin.py), where the check would otherwise time out.
- A lesson's section that is a folder runs its files in the order its __init__.py lists (ORDER):
  the lesson's own order, which a step's first failure follows, not the files' alphabetical one.
"""

import os
import random
import sys
import traceback
import zlib

import pytest
import torch

from course import seam, skips, toolchain
from course.errors import error_chain
from course.i18n import say
from course.messages import (
    BLOCK_POINTERS_GONE,
    INT64_COORDINATE,
    block_pointer_words,
    broken_capture_words,
    int64_coordinate_words,
    stub_report,
)
from course.registry import BY_ID, LESSONS

toolchain.choose_backend()  # before triton is first imported
toolchain.require_working_toolchain()
# torch's erf, exp, tanh and the like (MKL's vector math in this build) set themselves up at their first call.
# Where that first call is split over threads (2880 elements were, on 2 threads), the other thread's part
# came out inaccurate in about 1 fresh process in 15 (2026-12-04, torch 2.13+cpu: erf off by up to 2.4e-4
# in rows 20-39 of a 40 x 72 tensor, in that first call only; with one thread, or after a first call on
# one thread, never), and a float32 reference built on it failed T5.2's GELU check at 1e-5 ("relative
# error 3.3e-05", the kernel's C the same bits). One call on a few elements, on this thread alone, does
# the setting up here.
torch.erf(torch.zeros(16))

SEED = int(os.environ.get("SEED") or random.randrange(10**6))


def pytest_configure(config):
    for lesson in LESSONS:
        config.addinivalue_line("markers", f"{lesson.marker}: lesson {lesson.id}, {lesson.title}")
        for s in lesson.steps:
            config.addinivalue_line("markers", f"{s.marker}: {s.id} {s.title}")
    config.addinivalue_line(
        "markers",
        "case_words(name=template): how a parametrize argument reads in the case's label, the value "
        "put in for {} (make test STEP=: which cases pass; tools/core/case_labels.py); id_zh={id: words}: the "
        "ids a test gave itself, in Chinese",
    )
    config.addinivalue_line(
        "markers",
        "hopper_compile: compiles the graded kernel for a Hopper GPU on the CPU (tests/gpu_compile.py); a line "
        "no GPU compiles fails it as well as the step's own checks",
    )


def pytest_collection_modifyitems(items):
    """The files of each folder in the order its package's ORDER gives (stable: the tests of a file
    keep theirs); a file it does not list comes after those it does, a folder without ORDER as is."""
    groups = {}  # folder: its items; a folder's tests are collected together, and the folders keep their order
    for item in items:
        groups.setdefault(item.path.parent, []).append(item)
    ordered = []
    for group in groups.values():
        module = getattr(group[0], "module", None)
        order = getattr(sys.modules.get(getattr(module, "__package__", None) or ""), "ORDER", ())
        rank = {name: i for i, name in enumerate(order)}
        ordered += sorted(group, key=lambda item, rank=rank: rank.get(item.path.name, len(rank)))
    items[:] = ordered
    from gpu_compile import COMPILE_TIMEOUT_S  # here: triton is imported once the backend is chosen

    for item in items:  # a compile for Hopper may wait for its child up to that child's limit, not pytest.ini's 60 s
        if item.get_closest_marker("hopper_compile") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(COMPILE_TIMEOUT_S + 30))


def pytest_report_header(config):
    return say(
        zh=f"SEED={SEED}（重放这组随机输入：SEED={SEED} pytest ...，或 make test SEED={SEED}）",
        en=f"SEED={SEED} (replay these random inputs: SEED={SEED} pytest ..., or make test SEED={SEED})",
    )


def seed_of(nodeid):
    """The seed of one test: SEED and the test's own id, so a test replays alone or in a run."""
    return (SEED * 1_000_003 + zlib.crc32(nodeid.encode())) % 2**31


@pytest.fixture(autouse=True)
def seeded(request):
    torch.manual_seed(seed_of(request.node.nodeid))  # CPU and every CUDA device


@pytest.fixture(autouse=True, scope="session")
def waits_named():
    """On the interpreter, a program that spins on a value nothing can change fails at once."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        yield
        return
    from course.interpreter_spin import spin_watch

    with spin_watch():
        yield


@pytest.fixture(scope="session")
def graded_module():
    """graded_module(lesson): the lesson's graded module, or a one-line failure if it does not import."""

    def load(lesson):
        try:
            return seam.load(lesson)
        except seam.GradedFileMissing as e:  # no line to fix: its words say how to get the file back
            pytest.fail(say(zh=f"{e}（所以没法导入）", en=str(e)), pytrace=False)
        except seam.LearnerImportError as e:
            pytest.fail(say(zh=f"{e}（文件没能导入：先修好这一行）", en=str(e)), pytrace=False)

    return load


# ------------------------------------------------------------------------------------------------
# What the graded file may not do to a check
# ------------------------------------------------------------------------------------------------
# Not KeyboardInterrupt: Ctrl-C must still stop a run, and an interrupted run ends with its checks not passed.
ESCAPES = (pytest.skip.Exception, pytest.xfail.Exception, pytest.exit.Exception, SystemExit)


def _escape_report(exc):
    """A failure message for a skip, xfail or exit that the graded file raised, else None."""
    if not isinstance(exc, ESCAPES):
        return None
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if seam.graded_file(f.filename)]
    if not frames:
        return None
    where = f"{seam.graded_file(frames[-1].filename)} line {frames[-1].lineno}"
    kind = {  # (English, Chinese)
        pytest.skip.Exception: ("a skip", " skip"),
        pytest.xfail.Exception: ("an xfail", " xfail"),
        pytest.exit.Exception: ("pytest.exit", " pytest.exit"),
        SystemExit: ("an exit", " exit"),
    }
    name = next(v for k, v in kind.items() if isinstance(exc, k))
    return say(
        zh=f"{where} 抛出了{name[1]}（{type(exc).__name__}: {exc}）：被评分的代码不许 skip、xfail 或中途结束检查，"
        f"所以这项检查算失败。删掉它，让检查真正通过",
        en=f"{where} raised {name[0]} ({type(exc).__name__}: {exc}): the graded code may not skip, xfail or "
        f"end a check, so the check fails. Remove it and make the check pass",
    )


def _step_of(item):
    """The step a test belongs to, from its step marker; None for an unmarked test."""
    return next((s for s in BY_ID.values() if item.get_closest_marker(s.marker)), None)


def _later_stub_report(item, message):
    """A failure for a check that ran into the stub of a step after its own, else None.  A check
    of T4.4 must not need T4.5: reaching its body means the code of this step let the call go
    further than it should, and "not written yet: T4.5" would send the learner the wrong way."""
    own = _step_of(item)
    stub = BY_ID.get(message.split(" ", 1)[0].upper())
    if own is None or stub is None or own.lesson is not stub.lesson:
        return None
    order = [s.id for s in own.lesson.steps]
    if order.index(stub.id) <= order.index(own.id):
        return None
    return say(
        zh=f"这是 {own.id} 的检查，却跑进了 {stub.id}（{', '.join(stub.writes)}）还没写的函数体：{own.id} 的代码"
        f"让这次调用走得太远了（{own.id} 只依赖它之前的步骤）。stub 原文：{message}",
        en=f"this {own.id} check ran into the body of {stub.id} ({', '.join(stub.writes)}), which is not "
        f"written: your {own.id} code let the call go that far ({own.id} needs only the steps before it). "
        f"The stub says: {message}",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    try:
        return (yield)
    except BaseException as e:  # noqa: BLE001 - a skip or an exit is what this looks for
        escaped = _escape_report(e)
        message = None if escaped else seam.stub_message(e) if isinstance(e, Exception) else None
        coordinate = None if escaped or message is not None else _int64_coordinate_report(item, e)
        if escaped is None and message is None and coordinate is None:
            raise
    # outside `except`: no chained traceback
    pytest.fail(escaped or coordinate or _later_stub_report(item, message) or stub_report(message), pytrace=False)


def _int64_coordinate_report(item, exc):
    """A failure message for Triton's refusal of an int64 descriptor coordinate, or of a block pointer (its words are
    English alone) in a test that did not name it itself, with the graded line that made the access; else None."""
    if isinstance(exc, pytest.fail.Exception):
        return None  # the check's own words, said while handling it
    chain = error_chain(exc, suppressed=True)
    said = " ".join(str(e) for e in chain)
    words = int64_coordinate_words(said)
    original = INT64_COORDINATE
    if not words:
        words, original = block_pointer_words(said), BLOCK_POINTERS_GONE
    frames = [f for e in chain for f in traceback.extract_tb(e.__traceback__) if seam.graded_file(f.filename)]
    if not words or not frames or _step_of(item) is None:
        return None  # raised elsewhere than the graded code: the plugin's words say where
    where = f"{seam.graded_file(frames[-1].filename)} line {frames[-1].lineno}"
    return say(
        zh=f"{where}：{words}（Triton 的英文原话：{original}...）",
        en=f"{where}: {words} (Triton's words: {original}...)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Seeds on failures; a skip that is not the suite's own mark is a failure."""
    report = yield
    if report.skipped and not _skipped_by_the_suite(item, report):
        report.outcome = "failed"
        report.longrepr = say(
            zh=f"{item.nodeid}：被跳过了（{_skip_text(report)}），但只有测试套件自己的标记才能跳过检查："
            f"被跳过的检查不算通过",
            en=f"{item.nodeid}: skipped ({_skip_text(report)}), but only the suite's own marks may "
            f"skip a check: a skipped check does not pass",
        )
    broken = broken_capture_words(str(call.excinfo.value)) if report.failed and call.excinfo else ""
    if broken:  # the test met torch's generator left broken by an earlier failed capture
        report.sections.append(("cause", broken))
    if report.failed:
        pytest_cmd = f"{_this_python(item.config.rootpath)} -m pytest"
        report.sections.append(
            (
                "seed",
                say(
                    zh=f"SEED={SEED}：SEED={SEED} {pytest_cmd} '{item.nodeid}' 重放这项检查；"
                    f"make test SEED={SEED} 重放整轮",
                    en=f"SEED={SEED}: SEED={SEED} {pytest_cmd} '{item.nodeid}' replays this check; "
                    f"make test SEED={SEED} replays the whole run",
                ),
            )
        )
    return report


def _this_python(root):
    """The interpreter running this suite, as typed from the repo's root: a bare `pytest` is whatever
    PATH finds first, often one without torch (make test's .venv is never activated)."""
    rel = os.path.relpath(sys.executable, root)
    return sys.executable if rel.startswith("..") else rel


def _skipped_by_the_suite(item, report):
    """A skip from a skip mark, or a skipif mark whose condition is plain True, raised at setup."""
    return report.when == "setup" and not hasattr(report, "wasxfail") and skips.suite_skip_reason(item) is not None


def _skip_text(report):
    if hasattr(report, "wasxfail"):
        return f"xfail: {report.wasxfail}"
    return str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
