"""The explainers stay true: citations quote the code they cite, tool output and pictures are what
the tools produce now, and every section that a step or a failure message names exists, under
the title tools/steps.py gives it."""
import re

from tools import docs
from tools.steps import EXPLAINERS, SECTIONS
from tools.checks.common import ROOT

HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)*)\.? (.*?)\s*$", re.M)
SECTION_REF = re.compile(r"§(\d+(?:\.\d+)*)")
# Files whose messages send a learner to a section: the stub, the reference, the suite.
POINTING = ("mine/t4_matmul.py", "solutions/t4_matmul.py", "tests/test_t4.py", "tests/probes.py",
            "tests/conftest.py", "tools/steps.py")


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
    for column, (lang, rel) in enumerate(EXPLAINERS.items()):
        path = ROOT / rel
        if not path.exists():
            problems.append(f"{rel} does not exist")
            continue
        found = headings(path.read_text())
        for number, titles in SECTIONS.items():
            if number not in found:
                problems.append(f"{rel} lacks a heading for §{number} ({titles[column]})")
            elif found[number] != titles[column]:
                problems.append(f"{rel}: §{number} is titled {found[number]!r}, tools/steps.py says "
                                f"{titles[column]!r}; change one of them")
    return problems


def check_both_explainers_have_the_same_sections():
    """The English file is a companion: the same numbered sections, added ones included."""
    zh, en = (set(headings((ROOT / rel).read_text())) if (ROOT / rel).exists() else set()
              for rel in EXPLAINERS.values())
    return [f"§{n} is only in {EXPLAINERS['zh'] if n in zh else EXPLAINERS['en']}" for n in sorted(zh ^ en)]


def check_every_section_a_message_names_exists():
    problems = []
    for rel in POINTING:
        for number in sorted(set(SECTION_REF.findall((ROOT / rel).read_text()))):
            if number not in SECTIONS:
                problems.append(f"{rel} sends the learner to §{number}, which tools/steps.py's SECTIONS lacks")
    return problems
