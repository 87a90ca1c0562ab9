"""The §8 mistakes are each lesson's own data (tools/explainers/mistakes_<lesson>.py), found by the
machinery without naming a lesson, and each still fits the code it is made in.  Quick: nothing is
run here; `make check` (docs, messages) runs the mistakes themselves."""

import ast

import pytest

from course import ROOT
from course.registry import BY_ID, lesson
from tools.core.repo import solution_file
from tools.explainers import mistakes

T4 = lesson("T4")
T5 = lesson("T5")


def test_each_lesson_s_file_is_found_and_a_lesson_without_one_has_none():
    assert [lesson.id for lesson in mistakes.lessons_with_mistakes()][:2] == ["T4", "T5"]
    assert mistakes.mistakes_of(T4) and mistakes.mistakes_of(T5)

    class Later:  # a lesson with no mistakes file
        id = "T99"

    assert mistakes.mistakes_of(Later) == ()


def test_the_default_lesson_keeps_t4_s_generated_commands_working():
    args = mistakes.parser().parse_args(["--lang", "en"])
    assert (args.lesson, args.lang) == ("T4", "en")
    assert mistakes.parser().parse_args(["--lesson", "t5"]).lesson == "T5"


@pytest.mark.parametrize("lesson", mistakes.lessons_with_mistakes(), ids=lambda lesson: lesson.id)
def test_each_mistake_fits_its_reference_and_names_a_test_of_its_suite(lesson):
    reference = solution_file(lesson).read_text()
    tests = {f.name for f in ast.walk(ast.parse((ROOT / lesson.suite).read_text())) if isinstance(f, ast.FunctionDef)}
    found = mistakes.mistakes_of(lesson)
    assert len({m.key for m in found}) == len(found), "keys repeat"
    for m in found:
        assert mistakes.mistaken_source(lesson, m, reference) != reference, m.key
        assert m.test.split("[")[0] in tests, f"{m.key}: {m.test} is not a test of {lesson.suite}"
        assert BY_ID[m.step].lesson is lesson, f"{m.key}: {m.step} is not a step of {lesson.id}"


def test_a_stale_substitution_is_refused():
    m = mistakes.mistakes_of(T5)[0]
    stale = type(m)(**{**m.__dict__, "old": "text the reference does not hold"})
    with pytest.raises(SystemExit, match="mistakes_t5.py"):
        mistakes.mistaken_source(T5, stale, solution_file(T5).read_text())
