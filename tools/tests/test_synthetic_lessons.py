"""The machinery knows no lesson by name and no step count: on two made-up lessons alone, X1 (one
step) and X5 (five, the last advanced), make test, make hint, the scorecard, make watch's choice of
step and make check's list of a lesson's files all work (tools/tests/synthetic.py)."""

import textwrap

import pytest

from tools.core.bodies import fill_in
from tools.learner import grade, scorecard
from tools.learner import watch as watcher_module
from tools.learner.step_row import Row
from tools.tests.synthetic import SOLUTIONS, registered, stub_of, synthetic_repo

# make test, make hint and make check in fresh processes, each importing torch: minutes on a busy machine
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return synthetic_repo(tmp_path_factory.mktemp("synthetic"))


@pytest.fixture(scope="module")
def cli(repo, run_cli):
    """Every command line of these tests, run at once in the synthetic repo (each imports torch)."""
    learner = dict(COLUMNS="100", COURSE_CHECK_CACHE=str(repo / ".checks"))
    return run_cli(
        {
            "x1 solved": (["-m", "tools.learner.grade", "--details"], repo, dict(learner, SOLUTION="1")),
            "x5 stub": (["-m", "tools.learner.grade", "--details", "--lesson", "X5"], repo, dict(learner, SEED="7")),
            "hint": (["-m", "tools.learner.hint", "--step", "X1.1"], repo, learner),
            "files": (["-m", "tools.checks", "lesson_files", "layout", "steps"], repo, learner),
        }
    )


def test_a_one_step_lesson_done_says_every_step_passes_and_shows_the_next_lesson(cli):
    out = cli["x1 solved"].stdout
    assert cli["x1 solved"].returncode == 0, out + cli["x1 solved"].stderr
    assert "  [x] X1.1 " in out and "Every step passes. Well done." in out, out
    assert "advanced" not in out, out  # X1 has no advanced step to speak of
    assert "Next lesson: X5, five small steps" in out and "content/x5.en.md §1" in out, out


def test_a_five_step_stub_is_red_row_by_row_with_its_first_step_next(cli):
    out = cli["x5 stub"].stdout
    assert cli["x5 stub"].returncode == 1, out + cli["x5 stub"].stderr
    assert [f"  [ ] X5.{n} " in out for n in range(1, 6)] == [True] * 5, out
    assert out.count("not written yet: X5.") == 5, out
    assert "0 of 4 required steps done" in out and "Next: X5.1 step 1, scale: scale in mine/x5_steps.py" in out, out
    assert "make hint STEP=X5.1" in out and "every failing check in full: make test STEP=X5.1" in out, out


def test_hint_shows_the_first_hint_of_a_lessons_only_step(cli):
    out = cli["hint"].stdout
    assert cli["hint"].returncode == 0, out + cli["hint"].stderr
    assert "hint 1 of 2" in out and "Work out this program's offsets first." in out, out


def test_make_check_finds_every_file_of_the_synthetic_lessons(cli):
    out = cli["files"].stdout
    assert cli["files"].returncode == 0, out + cli["files"].stderr
    assert "ok   lesson_files.every_lesson_has_all_its_files" in out, out


def test_make_check_names_the_file_a_lesson_lacks(tmp_path, run_cli):
    lacking = synthetic_repo(
        tmp_path, keys=("x1", "x5"), leave_out=("content/x5.answers.en.md", "tests/x5", "tests/test_x1.py")
    )
    ran = run_cli({"files": (["-m", "tools.checks", "lesson_files"], lacking, {})})["files"]
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "X5 lacks content/x5.answers.en.md: its answers" in ran.stdout, ran.stdout
    assert "X5 lacks tests/x5: its section of the suite" in ran.stdout, ran.stdout  # a folder
    assert "X1 lacks tests/test_x1.py: its section of the suite" in ran.stdout, ran.stdout  # one file


# ------------------------------------------------------------------------------------------------
# In this process: the registry lists the synthetic lessons alone
# ------------------------------------------------------------------------------------------------
def rows_of(lesson, done):
    return [
        Row(s, passed=2, total=2)
        if s.id in done
        else Row(s, passed=0, total=2, reason="test_x: wrong", failures=(("test_x", "wrong"),))
        for s in lesson.steps
    ]


def test_the_scorecard_of_a_one_step_lesson_whole_or_as_one_step(monkeypatch, english, capsys):
    x1, x5 = registered(monkeypatch)
    rows = rows_of(x1, {"X1.1"})
    scorecard.show(x1, rows, seed=1, details=True, whole=True)
    whole = capsys.readouterr().out
    assert "Every step passes. Well done." in whole and "Next lesson: X5" in whole, whole
    scorecard.show(x1, rows, seed=1, details=True, listing=True)
    alone = capsys.readouterr().out
    assert "X1.1 passes." in alone and "Next lesson" not in alone and "required steps" not in alone, alone


def test_the_scorecard_of_a_five_step_lesson_names_the_next_step(monkeypatch, english, capsys):
    x1, x5 = registered(monkeypatch)
    scorecard.show(x5, rows_of(x5, {"X5.1", "X5.2"}), seed=1, details=False, whole=True)
    out = capsys.readouterr().out
    assert "2 of 4 required steps done, 4 of 10 checks pass (advanced steps are optional)" in out, out
    assert "Next: X5.3 step 3, clip" in out and "every failing check in full: make test STEP=X5.3" in out, out
    scorecard.show(x5, rows_of(x5, {s.id for s in x5.steps if not s.advanced}), seed=1, details=False, whole=True)
    out = capsys.readouterr().out
    assert "Every required step passes: the lesson is done." in out and "Optional next: X5.5" in out, out
    assert "Next lesson" not in out, out  # X5 is the last lesson


def test_one_step_picked_out_is_no_whole_lesson(monkeypatch, english, capsys):
    x1, x5 = registered(monkeypatch)
    scorecard.show(x5, rows_of(x5, set())[1:2], seed=7, details=True, listing=True)
    out = capsys.readouterr().out
    assert "  [ ] X5.2 " in out and "  [ ] X5.1 " not in out and "required steps done" not in out, out
    assert "these random inputs again: make test SEED=7 STEP=X5.2" in out, out
    scorecard.show(x5, rows_of(x5, {s.id for s in x5.steps}), seed=7, details=True, whole=True)
    out = capsys.readouterr().out
    assert "Every step passes, the advanced one included." in out and "Next lesson" not in out, out


class Runner:
    """Grades a step green when its marked bodies are the reference's (no pytest)."""

    def __init__(self, path, reference):
        self.path, self.reference, self.calls = path, watcher_module.regions(reference), []

    def __call__(self, steps, seed):
        self.calls.append([s.id for s in steps])
        now = watcher_module.regions(self.path.read_text())
        done = {s.id: all(now.get(i) == self.reference.get(i) for i in (s.id, *s.needs)) for s in steps}
        return {s.id: rows_of(s.lesson, {s.id} if done[s.id] else set())[s.lesson.steps.index(s)] for s in steps}


def watcher(monkeypatch, tmp_path, key, written):
    """A Watcher on the synthetic lesson `key`'s stub with the steps `written` filled in."""
    lesson = dict(zip(("x1", "x5"), registered(monkeypatch), strict=True))[key]
    reference = textwrap.dedent(SOLUTIONS[lesson.module]).lstrip()
    path = tmp_path / lesson.file
    path.write_text(fill_in(stub_of(reference, lesson), reference, set(written)))
    said, runner = [], Runner(path, reference)
    out = lambda *a, **k: said.append(" ".join(map(str, a)))  # noqa: E731
    w = watcher_module.Watcher(lesson, seed=1, out=out, path=path, runner=runner, keep=False)
    return w, runner, said


def test_watch_moves_through_five_steps_and_stays_on_the_first_not_written(monkeypatch, tmp_path, english):
    w, runner, said = watcher(monkeypatch, tmp_path, "x5", {"X5.1", "X5.2", "X5.3"})
    w.run()
    assert runner.calls == [["X5.1"], ["X5.2"], ["X5.3"], ["X5.4"]] and w.step.id == "X5.4", runner.calls


def test_watch_on_a_one_step_lesson_grades_its_step_and_stays(monkeypatch, tmp_path, english):
    w, runner, said = watcher(monkeypatch, tmp_path, "x1", {"X1.1"})
    w.run()
    assert runner.calls == [["X1.1"]] and w.step.id == "X1.1", runner.calls
    assert any("X1.1 passes." in line for line in said), said


def test_grade_picks_steps_of_a_synthetic_lesson_by_number(monkeypatch):
    x1, x5 = registered(monkeypatch)

    class Args:
        lesson, step = "x5", "3"

    lesson, steps = grade.choose(Args)
    assert lesson is x5 and [s.id for s in steps] == ["X5.3"]
