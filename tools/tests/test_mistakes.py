"""The §8 mistakes are each lesson's own data (course/lessons/<id>_mistakes.py, found by
course/lesson_data.py), found by the machinery without naming a lesson, and each still fits the code
it is made in; each mistake's run is kept under what that run reads, not under every file.  Quick:
nothing is run here; `make check` (docs, messages) runs the mistakes themselves."""

import os

import pytest

from course import ROOT, lesson_data
from course.registry import BY_ID, LESSONS, lesson
from tools.core import mistakes as runs
from tools.core.repo import scratch_repo, solution_file

T4 = lesson("T4")
T5 = lesson("T5")


def test_each_lesson_s_file_is_found_and_a_lesson_without_one_has_none():
    assert [lesson.id for lesson in runs.lessons_with_mistakes()][:2] == ["T4", "T5"]
    assert lesson_data.mistakes_of(T4) and lesson_data.mistakes_of(T5)
    assert lesson_data.mistakes_file(T5) == "course/lessons/t5_mistakes.py"
    assert (ROOT / lesson_data.mistakes_file(T4)).is_file()

    class Later:  # a lesson with no mistakes file
        id = "T99"
        file = "t99_later.py"

    assert lesson_data.mistakes_of(Later) == () and lesson_data.causes_of(Later) == {}
    assert lesson_data.data_files(Later) == ["course/lessons/t99_mistakes.py", "solutions/other_style/t99_later.py"]


def test_the_default_lesson_keeps_t4_s_generated_commands_working():
    args = runs.table_parser().parse_args(["--lang", "en"])
    assert (args.lesson, args.lang) == ("T4", "en")
    assert runs.table_parser().parse_args(["--lesson", "t5"]).lesson == "T5"


@pytest.mark.parametrize("lesson", runs.lessons_with_mistakes(), ids=lambda lesson: lesson.id)
def test_each_mistake_fits_its_reference_and_names_a_test_of_its_suite(lesson):
    found = lesson_data.mistakes_of(lesson)
    assert len({m.key for m in found}) == len(found), "keys repeat"
    for m in found:  # made in the reference, or in the file it names (the lesson's given host)
        assert runs.planted_in(lesson, m) in (f"solutions/{lesson.file}", *lesson.given), m.key
        made_in = runs.without_speed_only((ROOT / runs.planted_in(lesson, m)).read_text())
        assert runs.mistaken_source(lesson, m) != made_in, m.key
        try:  # the one file of the suite that defines it: the node id the run and the replay line name
            assert lesson.node_of(m.test).endswith(f".py::{m.test}")
        except KeyError as e:
            pytest.fail(f"{m.key}: {e}")
        assert BY_ID[m.step].lesson is lesson, f"{m.key}: {m.step} is not a step of {lesson.id}"


def test_a_mistake_is_made_with_the_reference_s_speed_only_lines_cut():
    text = (
        "    acc = 0\n"
        "    # ---- speed only begin (why) ----\n"
        "    if fast:\n"
        "        acc = quick()\n"
        "    # ---- speed only end ----\n"
        "    acc = slow(acc)\n"
    )
    assert runs.without_speed_only(text) == "    acc = 0\n    acc = slow(acc)\n"
    assert runs.without_speed_only(text + text) == "    acc = 0\n    acc = slow(acc)\n" * 2  # each block alone
    m = lesson_data.mistakes_of(T4)[0]
    inside = type(m)(**{**m.__dict__, "old": "acc = quick()"})
    with pytest.raises(SystemExit, match="occurs 0 times"):  # a mistake in lines a learner never has
        runs.mistaken_source(T4, inside, text)
    with pytest.raises(SystemExit, match="speed only"):  # a block left open would cut or keep the wrong lines
        runs.without_speed_only(text.replace("    # ---- speed only end ----\n", ""))


def test_t4_s_reference_without_its_speed_only_lines_still_passes_the_mainloop_checks_of_a_k_major_b(run_python):
    """The mistakes are made in this text, so both of B's layouts run the learner's kind of loop: it must be right."""
    stripped = runs.without_speed_only(solution_file(T4).read_text())
    assert "speed only" not in stripped and stripped != solution_file(T4).read_text()
    with scratch_repo({T4: stripped}) as tmp:
        argv = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/t4/test_mainloop.py", "-k", "column-major"]
        env = dict(os.environ, TRITON_INTERPRET="1", SOLUTION="0", COURSE_LANG="en")
        done = run_python(argv, tmp, env, 600)  # forked warm where safe, as the other tools tests run
    assert done.returncode == 0 and " passed" in done.stdout and "deselected" in done.stdout, done.stdout[-2000:]


def test_a_stale_substitution_is_refused():
    m = lesson_data.mistakes_of(T5)[0]
    stale = type(m)(**{**m.__dict__, "old": "text the reference does not hold"})
    with pytest.raises(SystemExit, match="course/lessons/t5_mistakes.py"):
        runs.mistaken_source(T5, stale, solution_file(T5).read_text())


def test_a_lesson_s_runs_read_the_code_given_to_its_sides_and_the_earlier_ones():
    """mine/ imports given/ (a lesson's host side): a change there is a change in what its runs read."""
    for each in LESSONS:
        reads = set(runs.run_reads(each))
        for earlier in LESSONS[: LESSONS.index(each) + 1]:
            assert set(earlier.given) <= set(reads), (each.id, earlier.given)


def test_a_run_is_keyed_on_what_it_reads_and_nothing_else():
    """T4's runs read T4's suite, the suite's support, the plugin, the runner and the course/ modules
    these import; not T5's suite or probes, not the mistakes modules, not the tools that do not run."""
    t4, t5 = set(runs.run_reads(T4)), set(runs.run_reads(T5))
    for must in (*T4.suite_files(), "tests/conftest.py", "tools/core/plugin.py", "tools/core/mistakes.py"):
        assert must in t4
    assert {"course/registry.py", "course/seam.py", "course/lessons/t4_probes.py", "pytest.ini"} <= t4
    assert {f"course/lessons/{each.id.lower()}.py" for each in (T4, T5)} <= t4  # the registry imports each LESSON
    assert not set(T5.suite_files()) & t4 and "course/lessons/t5_probes.py" not in t4
    assert set(T5.suite_files()) <= t5 and not set(T4.suite_files()) & t5
    for other in (t4 | t5) - {"pytest.ini", "pyproject.toml"}:
        assert not other.endswith("_mistakes.py") and not other.startswith(("tools/explainers", "tools/checks"))
        assert (ROOT / other).is_file()


def test_a_mistake_s_key_moves_with_what_its_run_reads(tmp_path):
    """A change in a file the run reads gives a new key; the same inputs give the same key."""
    m = lesson_data.mistakes_of(T4)[0]
    reads = runs.run_reads(T4)
    assert runs.saw_before(T4, m, "en", reads) == runs.saw_before(T4, m, "en", reads)
    assert runs.saw_before(T4, m, "en", reads) != runs.saw_before(T4, m, "zh", reads)
    other = lesson_data.mistakes_of(T4)[1]
    assert runs.saw_before(T4, m, "en", reads) != runs.saw_before(T4, other, "en", reads)
    assert runs.saw_before(T4, m, "en", reads) != runs.saw_before(T4, m, "en", reads[1:])
