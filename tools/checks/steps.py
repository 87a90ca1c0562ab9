"""course/registry.py is complete: every step of every lesson has hints, names sections that
exist, and names only functions that exist in both of its lesson's files."""

from course.registry import LESSONS
from tools.checks.common import mine_file, solution_file


def check_every_step_has_hints_and_sections():
    problems = []
    for lesson in LESSONS:
        texts = {path: path.read_text() for path in (solution_file(lesson), mine_file(lesson))}
        for s in lesson.steps:
            if not 2 <= len(s.hints) <= 3:
                problems.append(f"{s.id} has {len(s.hints)} hints; give two or three, gentle to concrete")
            problems += [
                f"{s.id} names section §{sec}, which {lesson.id}'s sections lack"
                for sec in s.sections
                if sec not in lesson.sections
            ]
            if not s.id.startswith(lesson.id + "."):
                problems.append(f"{s.id} is listed under lesson {lesson.id}: its id must start with {lesson.id}.")
            for name in s.writes:
                for path, text in texts.items():
                    if f"def {name}(" not in text and f"{name} = " not in text:
                        problems.append(f"{s.id} writes {name}, which {path.parent.name}/{path.name} lacks")
    return problems
