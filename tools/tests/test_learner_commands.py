"""The learner's commands used wrongly, as README's "Grading yourself" promises them: a SEED that is
no number, a step or lesson that is not there, a graded file deleted, `make watch` stopped by a
kill.  Each says what happened and what to do, in the learner's language, without a traceback;
none of them runs a step."""

import signal

import pytest

from course import ROOT, i18n, seam
from course.registry import BY_ID, lesson
from tools.learner import grade, hint, reset, terminal, watch
from tools.learner import help as learner_help
from tools.learner.step_row import Row

T4 = lesson("T4")


@pytest.mark.parametrize("command", [grade.main, watch.main])
def test_a_seed_that_is_no_number_is_refused_in_words(command, lang, monkeypatch, capsys):
    assert command(["--seed", "abc"]) == 2
    said = capsys.readouterr().err
    assert "SEED=abc" in said and "SEED=123456" in said and "usage:" not in said, said
    assert i18n.has_cjk(said) == (lang == "zh"), said
    monkeypatch.setenv("SEED", "12x")  # SEED=12x python -m tools.learner.grade: the same words
    assert command([]) == 2 and "SEED=12x" in capsys.readouterr().err


def test_make_hint_takes_the_seed_make_passes_and_needs_none(capsys):
    assert hint.main(["--seed", "abc", "--step", "T9.9"]) == 2  # refused for the step, not the seed
    assert "T9.9" in capsys.readouterr().err


def test_watch_refuses_an_unknown_step_in_the_learners_language(lang, capsys):
    assert watch.main(["--step", "T9.9"]) == 2
    said = capsys.readouterr().err
    assert "T9.9" in said and "T4.1" in said and i18n.has_cjk(said) == (lang == "zh"), said


def test_a_graded_file_not_there_is_named_with_the_way_back(tmp_path, monkeypatch, lang):
    """Not imported from elsewhere on the path (another checkout's mine/, which an editable install
    of that checkout puts there) and graded in its place."""
    monkeypatch.setattr(seam, "ROOT", tmp_path)
    monkeypatch.delenv("SOLUTION", raising=False)
    with pytest.raises(seam.GradedFileMissing) as e:
        seam.load(T4)
    said = str(e.value)
    assert said.startswith(f"mine/{T4.file}") and "make reset" in said and "git checkout" in said, said
    assert i18n.has_cjk(said) == (lang == "zh"), said


def test_watch_stopped_by_a_kill_ignores_a_second_one():
    before = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as e:
            watch.stopped()
        assert e.value.code == 143 and signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, before)


def test_make_grade_with_a_step_is_the_card_alone(english, monkeypatch, capsys):
    """make grade STEP=T4.2 is the scorecard alone, as make help says; make test STEP=T4.2 (--details)
    lists every failing check.  The card says where the full list is."""
    row = Row(BY_ID["T4.2"], total=2)
    row.failures = (("tests/t4/test_mainloop.py::test_mainloop[a]", "the accumulator holds NaN"),) * 2
    monkeypatch.setattr(grade, "run_steps", lambda steps, seed, live=None: [row])
    monkeypatch.setattr(grade.state, "remember", lambda lesson, done: None)
    assert grade.main(["--step", "T4.2", "--seed", "1"]) == 1
    card = capsys.readouterr().out
    assert "2 failing checks" not in card and "every failing check in full: make test STEP=T4.2" in card, card
    assert grade.main(["--step", "T4.2", "--seed", "1", "--details"]) == 1
    assert "T4.2: 2 failing checks" in capsys.readouterr().out


def test_make_reset_wraps_to_the_terminal(tmp_path, monkeypatch, capsys, lang):
    (tmp_path / "mine").mkdir()
    monkeypatch.setattr(reset, "ROOT", tmp_path)
    monkeypatch.setattr(reset, "committed", lambda rel: "stub\n")
    monkeypatch.setattr(terminal, "WIDTH", 60)
    (tmp_path / "mine" / T4.file).write_text("stub\n")
    assert reset.reset(T4) == 0  # as committed: the longest of its messages
    said = capsys.readouterr().out
    assert "git checkout" in " ".join(said.split()) and all(i18n.display_width(x) <= 60 for x in said.splitlines()), (
        said
    )


def test_an_earlier_lessons_file_is_named_where_its_import_fails(monkeypatch, english):
    """T5 imports the learner's T4: a syntax error there is named in mine/t4_matmul.py, not at T5's
    line of the same number, and a T4 file not there is named with its own make reset."""
    t4, t5 = seam.path(T4), seam.path(lesson("T5"))
    monkeypatch.delenv("SOLUTION", raising=False)

    def broken(name):
        raise SyntaxError("unmatched ')'", (str(seam.ROOT / t4), 44, 1, "    return pid_m pid_n )\n"))

    monkeypatch.setattr(seam.importlib, "import_module", broken)
    with pytest.raises(seam.LearnerImportError) as e:
        seam.load(lesson("T5"))
    assert str(e.value).startswith(f"{t5} -> {t4} line 44: SyntaxError"), e.value

    def gone(name):
        raise ModuleNotFoundError(f"No module named '{T4.module}'", name=f"mine.{T4.module}")

    monkeypatch.setattr(seam.importlib, "import_module", gone)
    with pytest.raises(seam.GradedFileMissing) as e:
        seam.load(lesson("T5"))
    assert str(e.value).startswith(f"{t5}: {t4} is not there") and "make reset LESSON=T4" in str(e.value), e.value


def test_make_help_lists_every_command_in_the_learners_language(lang, monkeypatch, capsys):
    monkeypatch.setattr(terminal, "WIDTH", 80)
    phony = " ".join(
        line.split(":", 1)[1] for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith(".PHONY:")
    )
    assert learner_help.main([]) == 0
    said = capsys.readouterr().out
    listed = {line.split()[1] for line in said.splitlines() if line.startswith("make ")}
    assert listed == set(phony.split()) - {"help", "clean", "lint", "format"}, said
    assert all(i18n.display_width(line) <= 80 for line in said.splitlines()), said
    assert i18n.has_cjk(said) == (lang == "zh"), said


@pytest.mark.parametrize("command", [grade.main, hint.main, watch.main])
def test_a_command_line_argparse_cannot_read_is_refused_in_words(command, lang, capsys):
    with pytest.raises(SystemExit) as stopped:
        command(["--step", "T4.2", "T4.3"])  # make test STEP="T4.2 T4.3"
    said = capsys.readouterr().err
    assert stopped.value.code == 2 and "T4.3" in said and "make help" in said and "usage:" not in said, said
    assert i18n.has_cjk(said) == (lang == "zh"), said
