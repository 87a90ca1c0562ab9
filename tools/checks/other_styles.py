"""The suite grades what the code does, not how the reference writes it: for each lesson, a correct
solution in another style (solutions/other_style/<file>, course/lesson_data.py: other formulas,
pointers rebuilt instead of advanced, the kernel launched by keyword, other error wording, shapes
printed as torch.Size) passes every check; and its given code is the reference's, but for the
blocks it marks `# ---- other style begin` ... `# ---- other style end`.  A second such solution per
lesson (solutions/other_style/more/<file>, optional) is graded the same way, in a run of its own."""

import difflib
import re

from course import ROOT
from course.lesson_data import more_style_file, other_style_file
from course.registry import LESSONS
from tools.checks.common import costly, suite_run
from tools.checks.suite import outcomes
from tools.core.bodies import scaffold
from tools.core.repo import solution_file

STYLE_MARK = re.compile(r"^\s*# ---- other style (begin|end)\b")


def variants_pass(files):
    """One suite run with each lesson's variant (files: {lesson: its path}) in mine/ (a later lesson
    imports the earlier ones), its outcomes read per lesson: the problems found."""
    texts = {lesson: (ROOT / path).read_text() for lesson, path in files.items()}
    report, output = suite_run(texts)
    problems = []
    for lesson in texts:
        seen = [o for o in outcomes(report) if o[1] and o[1].startswith(lesson.id + ".")]
        if not seen:
            problems.append(f"{lesson.id}: the suite collected nothing on the variant:\n{output[-2000:]}")
        problems += [
            f"{files[lesson]}: {test}: {outcome}: {reason}" for test, _, outcome, reason in seen if outcome != "passed"
        ]
    return problems


@costly(30)
def check_a_solution_in_another_style_passes_every_check():
    """Every lesson's variant in solutions/other_style/, graded together."""
    missing = [lesson for lesson in LESSONS if not (ROOT / other_style_file(lesson)).exists()]
    problems = [f"{lesson.id} has no solution in another style at {other_style_file(lesson)}" for lesson in missing]
    return problems + variants_pass({lesson: other_style_file(lesson) for lesson in LESSONS if lesson not in missing})


@costly(30)
def check_one_more_solution_in_another_style_passes_every_check():
    """The second variants (solutions/other_style/more/, optional), graded together in a run of their
    own; a lesson without one is graded on its first variant there (a later lesson imports it)."""
    files = {lesson: more_style_file(lesson) for lesson in LESSONS if (ROOT / more_style_file(lesson)).exists()}
    if not files:
        return []
    firsts = {lesson: other_style_file(lesson) for lesson in LESSONS if (ROOT / other_style_file(lesson)).exists()}
    return variants_pass(firsts | files)


def given_code(text):
    """The file's code outside the learner's bodies and the module docstring, blank lines left out:
    what the lesson gives."""
    lines = scaffold(text)  # the docstring's first line is dropped there
    end = next((i for i, line in enumerate(lines) if line.rstrip().endswith('"""')), -1)
    return [line for line in lines[end + 1 :] if line.strip()]  # blank lines align either way: not code


def style_lines(lines):
    """(the indices of lines inside an other-style block, its marks included; a problem or None)."""
    inside, opened = set(), None
    for i, line in enumerate(lines):
        m = STYLE_MARK.match(line)
        if m and (m[1] == "begin") == (opened is not None):
            return inside, f"an unpaired '# ---- other style {m[1]}' mark: {line.strip()!r}"
        if m and m[1] == "begin":
            opened = i
        elif m:
            inside.update(range(opened, i + 1))
            opened = None
    return inside, None if opened is None else "an '# ---- other style begin' mark without its end"


def given_code_problems(name, reference, variant):
    """Where the variant's given code leaves the reference's outside its other-style blocks."""
    ref, var = given_code(reference), given_code(variant)
    marked, problem = style_lines(var)
    if problem:
        return [f"{name}: {problem}"]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ref, var, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        loose = [j for j in range(j1, j2) if j not in marked]  # lines of the variant's own outside a block
        if loose or (j1 == j2 and not {j1 - 1, j1} & marked):  # or lines of the reference's it left out
            theirs = var[loose[0]].strip() if loose else "(nothing)"
            ours = (
                ref[i1 + (loose[0] - j1 if loose and i1 + loose[0] - j1 < i2 else 0)].strip()
                if i2 > i1
                else "(nothing)"
            )
            return [
                f"{name}: the given code leaves the reference's outside an '# ---- other style' block: it has "
                f"{theirs!r} where the reference has {ours!r}; copy the reference's given code, or mark the "
                "difference as deliberate"
            ]
    return []


def check_the_other_style_keeps_the_given_code():
    """A change to a lesson's given code (rules, host wrapper, kernel glue) reaches its other style too."""
    problems = []
    for lesson in LESSONS:
        for name in (other_style_file(lesson), more_style_file(lesson)):
            if (ROOT / name).exists():
                problems += given_code_problems(name, solution_file(lesson).read_text(), (ROOT / name).read_text())
    return problems
