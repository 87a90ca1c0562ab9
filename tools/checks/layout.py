"""mine/ and solutions/ stay line-aligned: outside the marked bodies they are the same file,
so `diff mine/t4_matmul.py solutions/t4_matmul.py` shows only what a learner writes."""
import re

from tools.checks.common import SOLUTION, pristine_stub
from tools.steps import STEPS

MARK = re.compile(r"^\s*# ---- (T4\.\d) (begin|end)\b")


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
    stub, solution = scaffold(pristine_stub()), scaffold(SOLUTION.read_text())
    if stub == solution:
        return []
    for i, (x, y) in enumerate(zip(stub, solution)):
        if x != y:
            return [f"outside the marked bodies, line {i + 1} of the scaffold differs:\n"
                    f"  mine:      {x}\n  solutions: {y}"]
    return [f"one file has {abs(len(stub) - len(solution))} more scaffold lines than the other"]


def check_every_step_has_marked_bodies():
    text = SOLUTION.read_text()
    steps = {m.group(1) for line in text.splitlines() for m in [MARK.match(line)] if m}
    return [f"{s.id} has no '# ---- {s.id} begin' block in solutions/" for s in STEPS if s.id not in steps]
