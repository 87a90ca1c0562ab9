"""make check's runner gives every check the same environment: what one check sets is gone for the
next, one after another or side by side; it runs checks at once, one marked alone by itself; the
runs checks share are made once, kept under a hash of what they read, and forgotten on a failure."""

import os
import subprocess
import sys
import time

from course import ROOT
from course.registry import lesson
from tools.checks.__main__ import main
from tools.checks.common import costly
from tools.core import cache

T4 = lesson("T4")


def test_a_check_cannot_change_the_environment_of_the_next(capsys):
    before = os.environ.get("TRITON_INTERPRET")
    seen = {}

    def first():
        os.environ["TRITON_INTERPRET"] = "0" if before == "1" else "1"
        os.environ["COURSE_LEAKED"] = "yes"
        return []

    def second():
        seen.update(interpret=os.environ.get("TRITON_INTERPRET"), leaked=os.environ.get("COURSE_LEAKED"))
        return []

    assert main([], checks=[("a.first", first), ("b.second", second)]) == 0
    assert seen == {"interpret": before, "leaked": None}
    assert "check: 2 passed, 0 failed" in capsys.readouterr().out


def test_the_reference_check_leaves_its_process_as_it_found_it():
    """It used to set TRITON_INTERPRET=1 and import triton in make check's own process, so every
    later check graded on the interpreter, even on a GPU host."""
    code = (
        "import os, sys\nfrom tools.checks import reference\n"
        "assert reference.check_every_common_gpu_keeps_several_configs() == []\n"
        "print('triton' in sys.modules, os.environ.get('TRITON_INTERPRET'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "None"]


def test_side_by_side_each_check_still_starts_from_the_same_environment(capsys):
    """-j 2: each check in its own forked process; what one sets never reaches another."""
    before = os.environ.get("TRITON_INTERPRET")

    def first():
        os.environ["TRITON_INTERPRET"] = "0" if before == "1" else "1"
        os.environ["COURSE_LEAKED"] = "yes"
        return []

    def second():
        seen = (os.environ.get("TRITON_INTERPRET"), os.environ.get("COURSE_LEAKED"))
        return [] if seen == (before, None) else [f"saw {seen}"]

    checks = [("a.first", first), ("b.second", second), ("c.second", second), ("d.first", first)]
    assert main([], checks=checks, jobs=2) == 0
    assert "check: 4 passed, 0 failed" in capsys.readouterr().out
    assert os.environ.get("TRITON_INTERPRET") == before and "COURSE_LEAKED" not in os.environ


def test_a_check_that_raises_or_dies_fails_and_the_others_still_run(capsys):
    def raises():
        raise ValueError("a bug in the check")

    def dies():
        os._exit(3)

    def holds():
        return []

    for jobs in (1, 2):
        checks = [("a.raises", raises), ("b.holds", holds)] + ([("c.dies", dies)] if jobs > 1 else [])
        assert main([], checks=checks, jobs=jobs) == 1
        out = capsys.readouterr().out
        assert "FAIL a.raises" in out and "ValueError: a bug in the check" in out and "ok   b.holds" in out
        if jobs > 1:
            assert "FAIL c.dies" in out and "exit status 3" in out
        assert f"check: 1 passed, {len(checks) - 1} failed" in out


def test_a_check_that_reads_past_a_short_lesson_or_a_module_that_does_not_import_is_a_failure(monkeypatch, capsys):
    def past_the_steps():
        return [s.id for s in T4.steps[len(T4.steps)]]  # the IndexError a step count assumed gives

    assert main([], checks=[("a.past", past_the_steps)], jobs=1) == 1
    out = capsys.readouterr().out
    assert "FAIL a.past" in out and "IndexError" in out and "check: 0 passed, 1 failed" in out

    import tools.checks.__main__ as runner

    real = runner.importlib.import_module

    def broken(name):
        if name == "tools.checks.layering":
            raise ImportError("a planted import error")
        return real(name)

    monkeypatch.setattr(runner.importlib, "import_module", broken)
    found = dict(runner.all_checks())
    assert "layering.imports" in found and "a planted import error" in found["layering.imports"]()[0]
    assert "layout.every_step_has_marked_bodies" in found  # the other modules' checks are still there


def test_checks_run_side_by_side_and_one_marked_alone_runs_with_nothing_beside_it(tmp_path, capsys):
    def timed(name, alone=False, cost=0):
        def check():
            start = time.time()
            time.sleep(0.6)
            (tmp_path / name).write_text(f"{start} {time.time()}")
            return []

        return (name, costly(cost, alone)(check))

    checks = [timed("a"), timed("b"), timed("lone", alone=True, cost=1), timed("c"), timed("d")]
    assert main([], checks=checks, jobs=2) == 0
    spans = {n: tuple(map(float, (tmp_path / n).read_text().split())) for n, _ in checks}
    lone = spans.pop("lone")
    assert all(end <= lone[0] or start >= lone[1] for start, end in spans.values()), (lone, spans)
    overlapping = [
        (x, y) for x in spans for y in spans if x < y and spans[x][0] < spans[y][1] and spans[y][0] < spans[x][1]
    ]
    assert overlapping, spans  # two at once
    assert "check: 5 passed, 0 failed" in capsys.readouterr().out


def make_once(count_file):
    def compute():
        with open(count_file, "a") as f:
            f.write("ran\n")
        time.sleep(0.5)
        return {"answer": 42}

    return compute


def test_a_shared_run_is_made_once_for_checks_side_by_side_and_forgotten_when_a_check_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "CACHE", tmp_path / "kept")
    count = tmp_path / "count"

    def reads():
        return [] if cache.shared("test", "k1", make_once(count)) == {"answer": 42} else ["wrong value"]

    def fails():
        cache.shared("test", "k2", make_once(count))
        return ["this check failed"]

    assert main([], checks=[("a.reads", reads), ("b.reads", reads), ("c.reads", reads)], jobs=3) == 0
    assert count.read_text() == "ran\n"  # three checks at once, one run
    assert (tmp_path / "kept" / "test-k1.json").exists()
    assert main([], checks=[("d.reads", reads)], jobs=1) == 0 and count.read_text() == "ran\n"  # kept
    assert main([], checks=[("e.fails", fails)], jobs=1) == 1
    assert not (tmp_path / "kept" / "test-k2.json").exists()  # the next make check runs it again
    assert (tmp_path / "kept" / "test-k1.json").exists()  # not the runs only earlier checks read


def test_a_kept_run_is_keyed_on_what_it_reads():
    base = cache.fingerprint("suite")
    assert cache.fingerprint("suite") == base
    assert cache.fingerprint("suite", True) != base  # its own arguments
    assert cache.fingerprint("suite", mine_texts={T4: "changed"}) != base  # a graded file
    assert cache.fingerprint("suite", reads=("tests",)) != base
    saved = os.environ.get("COURSE_LANG")
    try:
        os.environ["COURSE_LANG"] = "zh" if saved != "zh" else "en"
        assert cache.fingerprint("suite") != base  # the environment it reads
    finally:
        os.environ.pop("COURSE_LANG")
        if saved is not None:
            os.environ["COURSE_LANG"] = saved
    assert cache.fingerprint("suite", reads=cache.RUN_READS + ("content",)) != base
