"""tools/steps.py is complete: every step has hints, names sections that exist, and names only
functions that exist in both files."""
from tools.checks.common import MINE, SOLUTION
from tools.steps import SECTIONS, STEPS


def check_every_step_has_hints_and_sections():
    problems = []
    texts = {path: path.read_text() for path in (SOLUTION, MINE)}
    for s in STEPS:
        if not 2 <= len(s.hints) <= 3:
            problems.append(f"{s.id} has {len(s.hints)} hints; give two or three, gentle to nearly the answer")
        problems += [f"{s.id} names section §{sec}, which SECTIONS lacks" for sec in s.sections if sec not in SECTIONS]
        for name in s.writes:
            for path, text in texts.items():
                if f"def {name}(" not in text and f"{name} = " not in text:
                    problems.append(f"{s.id} writes {name}, which {path.parent.name}/{path.name} lacks")
    return problems
