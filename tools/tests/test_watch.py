"""make watch: one grading per save, in a forked child, and a hang or a crash costs one row, not the loop
(real watch processes in scratch copies); what a save re-runs and shows first (a Watcher with a fake
runner: no pytest).  The save-to-verdict times are a benchmark (`python -m tools.learner.watch
--bench`, figures in README), not timed here."""

import os
import subprocess
import sys
import time

from course.registry import lesson
from tools.core.bodies import fill_in, plant
from tools.core.repo import pristine_stub, scratch_repo, solution_file
from tools.learner import watch as watcher_module
from tools.learner.step_row import Row

T4 = lesson("T4")


def watch(repo, *args, **env):
    return subprocess.Popen(
        [sys.executable, "-m", "tools.learner.watch", *args],
        cwd=repo,
        env=dict(os.environ, SOLUTION="0", COURSE_LANG="en", COLUMNS="100", PYTHONUNBUFFERED="1", **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def until_row(proc, step_id):
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith((f"  [x] {step_id} ", f"  [ ] {step_id} ")):
            seen.append(proc.stdout.readline())  # the row's reason, or the advice
            return line, "".join(seen)
    raise AssertionError("watch ended before its row:\n" + "".join(seen))


def test_a_hang_costs_one_row_and_the_next_save_is_graded():
    first = T4.steps[0].id
    hung, _ = plant(solution_file(T4).read_text(), first, ["    while True:\n", "        pass\n"])
    with scratch_repo({T4: hung}) as repo:
        proc = watch(
            repo, "--step", first, "--runs", "2", PYTEST_TIMEOUT="8"
        )  # the hang costs 8 s; a slow check here takes 4
        try:
            row, said = until_row(proc, first)
            assert row.startswith(f"  [ ] {first} ") and "timed out after 8 s" in said, said
            (repo / "mine" / T4.file).write_text(fill_in(pristine_stub(T4), solution_file(T4).read_text(), {first}))
            row, said = until_row(proc, first)
            assert row.startswith(f"  [x] {first} "), said
            assert proc.wait(timeout=60) == 0
        finally:
            proc.kill()


def test_without_a_step_it_moves_on_while_steps_pass():
    """The step in progress: the first one not done; once it passes, the next runs at once."""
    done = {T4.steps[0].id}
    with scratch_repo({T4: fill_in(pristine_stub(T4), solution_file(T4).read_text(), done)}) as repo:
        proc = watch(repo, "--runs", "1")
        try:
            out = proc.communicate(timeout=300)[0]
        finally:
            proc.kill()
        assert f"  [x] {T4.steps[0].id} " in out and f"  [ ] {T4.steps[1].id} " in out, out
        assert "not written yet" in out, out


# ------------------------------------------------------------------------------------------------
# What a save re-runs and shows: the Watcher with a fake runner (no pytest), on a file in tmp_path
# ------------------------------------------------------------------------------------------------
class FakeRunner:
    """Grades like the suite would, without running it: a step passes when its marked bodies, and
    those of the steps it needs, are the reference's.  Keeps the steps of every call."""

    def __init__(self, path):
        self.path, self.calls = path, []
        self.reference = watcher_module.regions(solution_file(T4).read_text())

    def __call__(self, steps, seed):
        self.calls.append([s.id for s in steps])
        now = watcher_module.regions(self.path.read_text())
        rows = {}
        for s in steps:
            if all(now.get(i) == self.reference.get(i) for i in (s.id, *s.needs)):
                rows[s.id] = Row(s, passed=3, total=3)
            else:
                rows[s.id] = Row(
                    s,
                    passed=1,
                    total=3,
                    reason="test_fake: wrong",
                    failures=(("test_fake", "wrong"),),
                    detail=f"AssertionError: {s.id} computes the wrong thing",
                )
        return rows


def watcher(tmp_path, written, step=None):
    """A Watcher on a copy of the stub with the steps `written` filled in from the reference."""
    path = tmp_path / T4.file
    path.write_text(fill_in(pristine_stub(T4), solution_file(T4).read_text(), set(written)))
    said, runner = [], FakeRunner(path)
    w = watcher_module.Watcher(
        T4, step, seed=1, out=lambda *a, **k: said.append(" ".join(map(str, a))), path=path, runner=runner, keep=False
    )
    return w, path, runner, said


def save(path, text, when=None):
    """Write the file as a learner's editor does; `when` (seconds since the epoch) sets its mtime."""
    path.write_text(text)
    if when is not None:
        os.utime(path, (when, when))


def broken(step_id):
    """The reference with a planted line at the start of step_id's first body."""
    return plant(solution_file(T4).read_text(), step_id, ["    pass  # planted\n"])[0]


def test_a_regression_in_an_earlier_step_is_reported_first(tmp_path, english):
    w, path, runner, said = watcher(tmp_path, {"T4.1", "T4.2", "T4.3"})
    w.run()  # T4.1 to T4.3 pass one after the other; T4.4 is not written
    assert runner.calls == [["T4.1"], ["T4.2"], ["T4.3"], ["T4.4"]] and w.step.id == "T4.4"
    said.clear()
    written = fill_in(pristine_stub(T4), broken("T4.3"), {"T4.1", "T4.2", "T4.3"})
    save(path, written)
    w.run()
    assert runner.calls[-1] == ["T4.3", "T4.4"]  # the changed earlier step beside the one in progress
    out = "\n".join(said)
    assert "!! Regression: T4.3 passed before your save of" in out, out
    assert out.index("Regression: T4.3") < out.index("-- T4.4, your save of"), out
    assert "T4.3 computes the wrong thing" in out.split("-- T4.4")[0]
    assert w.step.id == "T4.4"  # the step in progress stays where the learner works
    said.clear()  # the next save leaves T4.3 as it is: still shown first, from memory, not re-run
    save(
        path, written.replace("raise NotImplementedError(\"T4.4 check_inputs", "raise NotImplementedError(\"T4.4 check")
    )
    w.run()
    assert runner.calls[-1] == ["T4.4"]
    out = "\n".join(said)
    assert out.index("!! T4.3 still fails (unchanged since your save of") < out.index("-- T4.4"), out


def test_an_unchanged_passing_step_is_not_run_again(tmp_path, english):
    every = {s.id for s in T4.steps}
    w, path, runner, said = watcher(tmp_path, every - {"T4.5"})
    w.run()
    assert runner.calls == [["T4.1"], ["T4.2"], ["T4.3"], ["T4.4"], ["T4.5"]]
    save(path, fill_in(pristine_stub(T4), solution_file(T4).read_text(), every))  # T4.5 written: it alone runs
    w.run()
    assert runner.calls[-1] == ["T4.5"] and "T4.5 passes." in said[-2], said
    all_written = fill_in(pristine_stub(T4), solution_file(T4).read_text(), every)
    save(path, all_written.replace("# ----", "#  ----", 1))  # a comment outside the bodies: nothing re-run
    w.run()
    assert runner.calls[-1] == ["T4.5"]
    save(
        path, fill_in(pristine_stub(T4), broken("T4.2"), every)
    )  # T4.2 changed: re-run, and T4.4, whose checks call mainloop
    w.run()
    assert runner.calls[-1] == ["T4.2", "T4.4", "T4.5"], runner.calls


def test_each_verdict_carries_the_time_of_its_save(tmp_path, english):
    w, path, runner, said = watcher(tmp_path, {"T4.1"}, step=T4.steps[1])
    when = time.mktime((2026, 12, 1, 13, 37, 42, 0, 0, -1))  # local time, as the learner's clock shows
    save(path, fill_in(pristine_stub(T4), broken("T4.1"), {"T4.1"}), when)
    w.run()
    out = "\n".join(said)
    assert "!! T4.1: changed, and your save of 13:37:42 fails it" in out, out
    assert "-- T4.2, your save of 13:37:42 --" in out and "(your save of 13:37:42, graded in" in out, out


def test_a_time_that_moves_after_the_save_is_not_a_second_save(tmp_path, english):
    """Some filesystems set a file's time again after the write (a flush on close: FUSE, WSL's /mnt,
    the lent GPU machine's copy). Graded once; a real save after it is graded again."""
    w, path, runner, said = watcher(tmp_path, {"T4.1"}, step=T4.steps[1])
    grade = runner.__call__

    def flushed_late(steps, seed):
        rows = grade(steps, seed)
        later = path.stat().st_mtime + 3
        os.utime(path, (later, later))  # the same text, a new time
        return rows

    w.runner = flushed_late
    assert w.changed()
    w.run()
    assert not w.changed(), "the moved time was taken for a save, so the same text would be graded again"
    save(path, fill_in(pristine_stub(T4), broken("T4.1"), {"T4.1"}))
    assert w.changed()
