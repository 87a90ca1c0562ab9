"""make check's other_styles.check_the_other_style_keeps_the_given_code, on the real files and on
edits of them: a given line changed, dropped or added outside a marked block, or a mark unpaired."""

import pytest

from course import ROOT
from course.lesson_data import other_style_file
from course.registry import LESSONS
from tools.checks.other_styles import given_code_problems
from tools.core.repo import solution_file

T5 = next(lesson for lesson in LESSONS if lesson.id == "T5")
# A given line of the kernel glue (swap_ab_tiles), and the last one, which binds the host side (given/t5_host.py)
SWAPPED = "acc_t = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)"
BIND = "host = t5_host.bind(sys.modules[__name__])\n"


def texts(lesson=T5):
    return solution_file(lesson).read_text(), (ROOT / other_style_file(lesson)).read_text()


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_every_other_style_keeps_the_given_code(lesson):
    assert given_code_problems("variant", *texts(lesson)) == []


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda v: v.replace(SWAPPED, SWAPPED.replace("float32", "float16"), 1), "tl.float16"),  # left behind
        (lambda v: v.replace(BIND, "", 1), "t5_host.bind"),  # a given line dropped
        (lambda v: v.replace("def aligned_copy(t):", "SPARE = 1\n\n\ndef aligned_copy(t):", 1), "SPARE = 1"),
        (lambda v: v.replace("def aligned_copy(t):", "# ---- other style end\ndef aligned_copy(t):", 1), "unpaired"),
    ],
    ids=["changed", "dropped", "added", "unpaired"],
)
def test_a_given_line_left_behind_is_named(edit, words):
    reference, variant = texts()
    edited = edit(variant)
    assert edited != variant
    problems = given_code_problems("variant", reference, edited)
    assert len(problems) == 1 and words in problems[0], problems
