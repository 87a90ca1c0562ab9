"""mine/ and solutions/ stay line-aligned: outside the marked bodies they are the same file,
so `diff mine/t4_matmul.py solutions/t4_matmul.py` shows only what a learner writes."""
import re

from tools.checks.common import SOLUTION, pristine_stub
from tools.steps import STEPS

MARK = re.compile(r"^\s*# ---- (T4\.\d) (begin|end)\b")


def scaffold(text):
    """The file with every marked body removed, and the docstring's first line dropped."""
    kept, inside = [], None
    for line in text.splitlines()[1:]:
        m = MARK.match(line)
        if m:
            inside = m.group(1) if m.group(2) == "begin" else None
            kept.append(line)
        elif inside is None:
            kept.append(line)
    return kept


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
