"""mine/ and solutions/ stay line-aligned: outside the marked bodies each lesson's two files are
the same, so `diff mine/X.py solutions/X.py` shows only what a learner writes."""

import re

from course.registry import LESSONS
from tools.checks.common import pristine_stub, solution_file

MARK = re.compile(r"^\s*# ---- (T\d+\.\d+) (begin|end)\b")


def split_bodies(text):
    """[(step, lines)]: the scaffold (step None, marker lines included) and each marked body."""
    parts, lines, inside = [], [], None
    for line in text.splitlines(keepends=True):
        m = MARK.match(line)
        if m and m.group(2) == "begin":
            parts.append((None, lines + [line]))
            lines, inside = [], m.group(1)
        elif m:
            parts.append((inside, lines))
            lines, inside = [line], None
        else:
            lines.append(line)
    return parts + [(None, lines)]


def scaffold(text):
    """The file with every marked body removed, and the docstring's first line dropped."""
    return [line.rstrip("\n") for step, lines in split_bodies(text) if step is None for line in lines][1:]


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
