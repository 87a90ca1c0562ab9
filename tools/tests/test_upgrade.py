"""make upgrade and make test's notice of a file begun before a course update (tools/learner/upgrade.py):
a learner's file whose lines outside the bodies are not the course's is named, with its first such line;
upgrade moves the learner's bodies, written or not, into the current file and keeps the old one; a file
whose bodies do not line up with the current file's is left alone.  The "old" files here are the
course's own with a given line taken out, as the files begun before session 21's given lines are."""

import re

import pytest

from course import i18n
from course.registry import LESSONS, lesson
from tools.core.bodies import fill_in
from tools.core.repo import pristine_stub, solution_file
from tools.learner import grade, reset, step_row, terminal, upgrade

T4 = lesson("T4")
GIVEN_LINE = "within_int32_reach"  # the given decorator and its import, added to T4's scaffold later


def learner_file(steps, old=False):
    """T4's stub with the reference's bodies of `steps`; old: without the lines naming GIVEN_LINE."""
    text = fill_in(pristine_stub(T4), solution_file(T4).read_text(), steps)
    return "".join(line for line in text.splitlines(keepends=True) if not (old and GIVEN_LINE in line))


@pytest.fixture
def mine(tmp_path, monkeypatch):
    """A mine/ folder of this test's own: {lesson: path}, each file the stub until a test writes it."""
    folder = tmp_path / "mine"
    folder.mkdir()
    paths = {lz: folder / lz.file for lz in LESSONS}
    for lz, path in paths.items():
        path.write_text(pristine_stub(lz))
    monkeypatch.setattr(upgrade, "mine_file", lambda lz: paths[lz])
    monkeypatch.setattr(reset, "ROOT", tmp_path)
    monkeypatch.setattr(reset, "BACKUPS", folder / "backups")
    monkeypatch.delenv("SOLUTION", raising=False)
    return paths


def test_a_file_with_the_current_scaffold_gets_no_notice(mine):
    mine[T4].write_text(learner_file(["T4.1", "T4.3"]))
    assert upgrade.scaffold_notice(LESSONS[-1]) == ""


def test_the_notice_names_the_first_line_that_is_not_the_courses(mine, lang):
    mine[T4].write_text(learner_file(["T4.1"], old=True))
    later = LESSONS[LESSONS.index(T4) + 1]
    notice = upgrade.scaffold_notice(later)  # a later lesson imports T4's file: said there too
    lineno = next(i for i, line in enumerate(pristine_stub(T4).splitlines(), 1) if GIVEN_LINE in line)
    at = f"第 {lineno} 行" if lang == "zh" else f"line {lineno}:"
    assert f"mine/{T4.file}" in notice and at in notice and "make upgrade" in notice, notice
    assert "from given.t4_limits import within_int32_reach" in notice, notice
    assert notice.count("mine/") == 2, notice  # the file, and where the copy goes: no other lesson named
    said = "2 行" if lang == "zh" else "2 line(s)"
    assert said in notice, notice


def test_no_notice_when_the_solutions_are_graded(mine, monkeypatch):
    mine[T4].write_text(learner_file(["T4.1"], old=True))
    monkeypatch.setenv("SOLUTION", "1")
    assert upgrade.scaffold_notice(T4) == ""


@pytest.mark.parametrize("steps", [[], ["T4.1"], [s.id for s in T4.steps]], ids=["none", "T4.1", "all"])
def test_upgrade_moves_the_bodies_into_the_current_file(mine, steps, capsys):
    old = learner_file(steps, old=True)
    mine[T4].write_text(old)
    assert upgrade.upgrade(T4) == 0
    assert mine[T4].read_text() == learner_file(steps)  # the written bodies, and the stub's for the rest
    (kept,) = (mine[T4].parent / "backups").iterdir()
    assert kept.read_text() == old
    assert upgrade.upgrade(T4) == 0 and "already" in capsys.readouterr().out  # nothing left to do


def test_upgrade_from_a_stub_that_is_itself_old(monkeypatch):
    """A learner who committed an old file has it as HEAD's stub: the bodies go into the solution's
    scaffold then, under the learner's own first line."""
    old = learner_file(["T4.1", "T4.2"], old=True)
    text, why = upgrade.upgraded(old, old, solution_file(T4).read_text())
    assert why is None and text == learner_file(["T4.1", "T4.2"])


def test_bodies_that_do_not_line_up_are_left_alone(mine, capsys):
    old = learner_file(["T4.1"], old=True).replace("# ---- T4.2 end ----", "# T4.2's end mark, deleted", 1)
    mine[T4].write_text(old)
    assert upgrade.upgrade(T4) == 1
    assert mine[T4].read_text() == old and not (mine[T4].parent / "backups").exists()
    assert "do not line up" in capsys.readouterr().err


def test_make_test_ends_with_the_notice(mine, monkeypatch, capsys):
    mine[T4].write_text(learner_file(["T4.1"], old=True))
    failing = dict(collected=[], results={})
    monkeypatch.setattr(
        grade, "run_steps", lambda steps, seed, live=None: [step_row.row_of(s, failing, 1, "") for s in steps]
    )
    monkeypatch.setattr(grade.state, "remember", lambda lesson, done: None)
    grade.main(["--seed", "1", "--lesson", "T4"])
    out = capsys.readouterr().out.rstrip()
    assert "make upgrade" in out.split("\n\n")[-1], out[-600:]  # the card's last words


def test_a_line_put_above_the_docstring_is_the_line_named(mine, monkeypatch, lang):
    """The docstring's first line differs between stub and reference and is not compared; a line above
    it (an import the learner added at the top) is named as line 1, not the docstring pushed to line 2.
    The notice wraps to the terminal."""
    monkeypatch.setattr(terminal, "WIDTH", 60)
    mine[T4].write_text("import math\n" + learner_file(["T4.1"]))
    notice = upgrade.scaffold_notice(T4)
    assert re.search(r"第\s*1\s*行" if lang == "zh" else r"line\s+1:", notice) and "import math" in notice, notice
    assert "Lesson T4" not in notice, notice
    assert all(i18n.display_width(line) <= 60 for line in notice.splitlines()), notice


def test_lines_the_learner_added_are_not_blamed_on_an_update(mine, lang):
    """A helper of the learner's own between two functions is said to be theirs (fine for the tests, not carried by
    make upgrade), not a sign of a file begun before a course update; a given line taken out still is."""
    text = learner_file(["T4.1"])
    at = text.index("\n@triton.jit\n") + 1  # before the first kernel, at the start of its line
    helper = "@triton.jit\ndef my_helper(x):\n    return x + 1\n\n\n"
    mine[T4].write_text(text[:at] + helper + text[at:])
    notice = " ".join(upgrade.scaffold_notice(T4).split())  # the terminal's wrapping taken out
    added = "你加了 5 行" if lang == "zh" else "you added 5 line(s)"
    assert added in notice and "make upgrade" in notice and "@triton.jit" in notice, notice
    assert ("课程更新之前" if lang == "zh" else "begun before an update") not in notice, notice
    old = learner_file(["T4.1"], old=True)
    at = old.index("\n@triton.jit\n") + 1
    mine[T4].write_text(old[:at] + helper + old[at:])
    mixed = " ".join(upgrade.scaffold_notice(T4).split())  # lines added and given lines gone: the update's words
    assert ("课程更新之前" if lang == "zh" else "begun before an update") in mixed, mixed
