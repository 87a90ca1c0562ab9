"""course/registry.py is complete: every step of every lesson has hints in both languages, names
sections that exist, and names only functions that exist in both of its lesson's files."""

import re

from course.registry import LESSONS
from tools.core.repo import mine_file, solution_file


def check_every_step_has_hints_and_sections():
    problems = []
    for lesson in LESSONS:
        texts = {path: path.read_text() for path in (solution_file(lesson), mine_file(lesson))}
        for s in lesson.steps:
            if not 2 <= len(s.hints) <= 3:
                problems.append(f"{s.id} has {len(s.hints)} hints; give two or three, gentle to concrete")
            problems += [f"{s.id} hint {n}: {p}" for n, hint in enumerate(s.hints, 1) for p in hint_problems(hint)]
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


CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def hint_problems(hint):
    """A hint is a pair (Chinese, English): make hint prints the one in the learner's language."""
    if not (isinstance(hint, tuple) and len(hint) == 2 and all(isinstance(h, str) and h.strip() for h in hint)):
        return [f"must be a pair of texts (Chinese, English), got {hint!r:.80}"]
    zh, en = hint
    problems = []
    if not CJK.search(zh):
        problems.append(f"its Chinese text has no Chinese in it: {zh!r:.80}")
    if CJK.search(en):
        problems.append(f"its English text holds Chinese characters or full-width punctuation: {en!r:.80}")
    return problems
