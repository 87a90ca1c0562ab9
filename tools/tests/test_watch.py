"""make watch: one grading per save, in a forked child, and a hang or a crash costs one row, not the loop.
Run in scratch copies; the save-to-verdict times are a benchmark (`python -m tools.learner.watch
--bench`, figures in README), not timed here."""

import os
import subprocess
import sys

from course.registry import T4
from tools.checks.common import pristine_stub, scratch_repo, solution_file
from tools.checks.grader import fill_in, plant


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
