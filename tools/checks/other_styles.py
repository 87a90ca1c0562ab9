"""The suite grades what the code does, not how the reference writes it: for each lesson, a correct
solution in another style (solutions/other_style/<file>, course/lesson_data.py: other formulas,
pointers rebuilt instead of advanced, the kernel launched by keyword, other error wording, shapes
printed as torch.Size) passes every check."""

from course import ROOT
from course.lesson_data import other_style_file
from course.registry import LESSONS
from tools.checks.common import costly, suite_run
from tools.checks.suite import outcomes


@costly(30)
def check_a_solution_in_another_style_passes_every_check():
    """One suite run with every lesson's variant in mine/ (a later lesson imports the earlier ones),
    its outcomes read per lesson."""
    missing = [lesson for lesson in LESSONS if not (ROOT / other_style_file(lesson)).exists()]
    problems = [f"{lesson.id} has no solution in another style at {other_style_file(lesson)}" for lesson in missing]
    texts = {lesson: (ROOT / other_style_file(lesson)).read_text() for lesson in LESSONS if lesson not in missing}
    report, output = suite_run(texts)
    for lesson in texts:
        seen = [o for o in outcomes(report) if o[1] and o[1].startswith(lesson.id + ".")]
        if not seen:
            problems.append(f"{lesson.id}: the suite collected nothing on the variant:\n{output[-2000:]}")
        problems += [
            f"{other_style_file(lesson)}: {test}: {outcome}: {reason}"
            for test, _, outcome, reason in seen
            if outcome != "passed"
        ]
    return problems
