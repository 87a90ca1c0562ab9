"""The explainers stay true: citations quote the code they cite, tool output and pictures are what
the tools produce now, and every section that a step or a failure message names exists, under
the title course/registry.py gives it."""

import re

from course import ROOT
from course.registry import BY_ID, LESSONS
from tools.explainers import docs

HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)*)\.? (.*?)\s*$", re.M)
SECTION_REF = re.compile(r"§(\d+(?:\.\d+)*)")


def check_citations_quote_the_code():
    return [p for d in docs.DOCS for p in docs.citation_problems(d)]


def check_generated_blocks_and_pictures_are_current():
    ran = {}  # a command both pages embed runs once
    return [p for d in docs.DOCS for p in docs.generated_problems(d, cache=ran) + docs.image_problems(d)]


def headings(text):
    """{number: title} of every numbered heading."""
    return {m[1]: m[2] for m in HEADING.finditer(text)}


def check_every_section_exists_in_both_explainers():
    problems = []
    for lesson in LESSONS:
        for column, rel in enumerate(lesson.explainers.values()):
            path = ROOT / rel
            if not path.exists():
                problems.append(f"{rel} does not exist")
                continue
            found = headings(path.read_text())
            for number, titles in lesson.sections.items():
                if number not in found:
                    problems.append(f"{rel} lacks a heading for §{number} ({titles[column]})")
                elif found[number] != titles[column]:
                    problems.append(
                        f"{rel}: §{number} is titled {found[number]!r}, course/registry.py says "
                        f"{titles[column]!r}; change one of them"
                    )
    return problems


def check_both_explainers_have_the_same_sections():
    """The English file is a companion: the same numbered sections, added ones included."""
    problems = []
    for lesson in LESSONS:
        zh, en = (
            set(headings((ROOT / rel).read_text())) if (ROOT / rel).exists() else set()
            for rel in lesson.explainers.values()
        )
        problems += [
            f"§{n} is only in {lesson.explainers['zh'] if n in zh else lesson.explainers['en']}"
            for n in sorted(zh ^ en)
        ]
    return problems


def check_every_section_a_message_names_exists():
    """Every § that a lesson's stub, reference, suite, probes or hints name is a section of it."""
    problems = []
    for lesson in LESSONS:
        texts = {rel: (ROOT / rel).read_text() for rel in lesson.files()}
        texts["course/registry.py"] = " ".join(  # a hint is a (zh, en) pair or one string
            t for s in lesson.steps for h in s.hints for t in (h if isinstance(h, tuple) else (h,))
        )
        for rel, text in texts.items():
            for number in sorted(set(SECTION_REF.findall(text))):
                if number not in lesson.sections:
                    problems.append(f"{rel} sends the learner to §{number}, which {lesson.id}'s sections lack")
    return problems


def check_every_section_the_mistakes_table_names_exists():
    """The §8 table sends each mistake to a subsection: it must be a heading of both explainers."""
    from tools.explainers.mistakes import MISTAKES

    problems = []
    for m in MISTAKES:
        lesson = BY_ID[m.step].lesson
        for rel in lesson.explainers.values():
            if m.section not in headings((ROOT / rel).read_text()):
                problems.append(f"mistake {m.key!r} sends the learner to §{m.section}, which {rel} lacks")
    return problems
