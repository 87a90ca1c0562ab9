"""mine/ and solutions/ stay line-aligned: outside the marked bodies each lesson's two files are
the same, so `diff mine/X.py solutions/X.py` shows only what a learner writes."""

from course.registry import LESSONS
from tools.core.bodies import MARK, scaffold
from tools.core.repo import pristine_stub, solution_file


def check_stub_and_solution_differ_only_inside_marked_bodies():
    problems = []
    for lesson in LESSONS:
        stub, solution = scaffold(pristine_stub(lesson)), scaffold(solution_file(lesson).read_text())
        if stub == solution:
            continue
        differ = [(i, x, y) for i, (x, y) in enumerate(zip(stub, solution, strict=False)) if x != y][:1]
        problems += [
            f"{lesson.file}: outside the marked bodies, line {i + 1} of the scaffold differs:\n"
            f"  mine:      {x}\n  solutions: {y}"
            for i, x, y in differ
        ]
        if not differ:
            problems.append(f"{lesson.file}: one file has {abs(len(stub) - len(solution))} more scaffold lines")
    return problems


def check_every_step_has_marked_bodies():
    problems = []
    for lesson in LESSONS:
        marked = {
            m.group(1) for line in solution_file(lesson).read_text().splitlines() for m in [MARK.match(line)] if m
        }
        problems += [
            f"{s.id} has no '# ---- {s.id} begin' block in solutions/{lesson.file}"
            for s in lesson.steps
            if s.id not in marked
        ]
    return problems
