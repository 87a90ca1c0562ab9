"""The explainers stay true: citations quote the code they cite, tool output and pictures are what
the tools produce now, and every section that a step or a failure message names exists, under
the title course/registry.py gives it."""

import os
import re
from concurrent.futures import ThreadPoolExecutor

from course import ROOT
from course.registry import BY_ID, LESSONS
from tools.checks.common import costly
from tools.core import docs

HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)*)\.? (.*?)\s*$", re.M)
SECTION_REF = re.compile(r"§(\d+(?:\.\d+)*)")


def check_citations_quote_the_code():
    return [p for d in docs.DOCS for p in docs.citation_problems(d)]


@costly(45)
def check_generated_blocks_and_pictures_are_current():
    """Every command runs once (a command both pages embed too), as many at once as there are cores,
    before the pages are compared with what they printed."""
    ran = {}
    commands = dict.fromkeys(m["cmd"] for d in docs.DOCS for m in docs.GENERATED.finditer(d.read_text()))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(lambda cmd: docs.fresh(cmd, ROOT, ran), commands))
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
        texts["course/registry.py"] = " ".join(text for s in lesson.steps for hint in s.hints for text in hint)
        for rel, text in texts.items():
            for number in sorted(set(SECTION_REF.findall(text))):
                if number not in lesson.sections:
                    problems.append(f"{rel} sends the learner to §{number}, which {lesson.id}'s sections lack")
    return problems


def check_every_section_the_mistakes_table_names_exists():
    """The §8 table sends each mistake to a subsection: it must be a heading of both explainers, and
    the mistake's step a step of the lesson whose file holds it."""
    from course.lesson_data import mistakes_file, mistakes_of
    from tools.core.mistakes import lessons_with_mistakes

    named = {mistakes_file(lesson) for lesson in LESSONS}
    problems = [
        f"{rel} looks like a lesson's mistakes, but no lesson's id makes that name ({', '.join(sorted(named))})"
        for rel in sorted(str(f.relative_to(ROOT)) for f in (ROOT / "course" / "lessons").glob("*_mistakes.py"))
        if rel not in named
    ]
    for lesson in lessons_with_mistakes():
        for m in mistakes_of(lesson):
            if m.step not in BY_ID or BY_ID[m.step].lesson is not lesson:
                problems.append(
                    f"{lesson.id} mistake {m.key!r} names step {m.step}, which is not a step of {lesson.id}"
                )
            for rel in lesson.explainers.values():
                if m.section not in headings((ROOT / rel).read_text()):
                    problems.append(
                        f"{lesson.id} mistake {m.key!r} sends the learner to §{m.section}, which {rel} lacks"
                    )
    return problems


def check_every_lesson_with_mistakes_shows_their_table():
    """A lesson with classic mistakes (course/lessons/<id>_mistakes.py) shows their generated
    table in each explainer, in that explainer's language; the generated-blocks check keeps it current."""
    import shlex

    from tools.core.docs import GENERATED
    from tools.core.mistakes import lessons_with_mistakes
    from tools.core.mistakes import table_parser as parser

    problems = []
    for lesson in lessons_with_mistakes():
        for lang, rel in lesson.explainers.items():
            shown = []
            for m in GENERATED.finditer((ROOT / rel).read_text()):
                argv = shlex.split(m["cmd"])
                if argv[:3] == ["python", "-m", "tools.explainers.mistakes"]:
                    args = parser().parse_args(argv[3:])
                    shown.append((args.lesson, args.lang, args.only))
            if (lesson.id, lang, None) not in shown:
                problems.append(
                    f"{rel} lacks the table of {lesson.id}'s mistakes: a block generated by "
                    f"`python -m tools.explainers.mistakes --lesson {lesson.id} --lang {lang}`"
                )
            problems += [
                f"{rel} shows mistakes of {got}, in {got_lang}: not its own lesson or language"
                for got, got_lang, _ in shown
                if (got, got_lang) != (lesson.id, lang)
            ]
    return problems


STEPS_TABLE = ["python", "-m", "tools.explainers.counts", "steps"]


def steps_tables_shown(text):
    """{(lesson id, language)} of the steps tables that a page's generated blocks hold, their options
    read as tools/explainers/counts.py reads them (--lesson: the first lesson, --lang: zh, unless given)."""
    import argparse
    import shlex

    from course.registry import lesson as lesson_by_id

    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--lesson")
    options.add_argument("--lang", default="zh")
    shown = set()
    for m in docs.GENERATED.finditer(text):
        argv = shlex.split(m["cmd"])
        if argv[:4] == STEPS_TABLE:
            args, _ = options.parse_known_args(argv[4:])
            shown.add((lesson_by_id(args.lesson).id, args.lang))
    return shown


def check_both_readmes_list_every_lesson_in_their_language():
    """README.md shows each lesson's table of steps in English, README.zh.md in Chinese, each a
    generated block (the generated-blocks check keeps it current): a lesson added shows in both."""
    problems = []
    for lang, rel in docs.READMES.items():
        if not (ROOT / rel).exists():
            problems.append(f"{rel} does not exist: the {lang} README, with every lesson's table of steps")
            continue
        shown = steps_tables_shown((ROOT / rel).read_text())
        problems += [
            f"{rel} lacks {lesson.id}'s table of steps: a block generated by "
            f"`{' '.join(STEPS_TABLE)} --lang {lang} --lesson {lesson.id}`"
            for lesson in LESSONS
            if (lesson.id, lang) not in shown
        ]
        problems += [
            f"{rel} shows {got}'s table of steps in {got_lang}: a {lang} page shows {lang} tables"
            for got, got_lang in sorted(shown)
            if got_lang != lang
        ]
    return problems


# A body line's code, without its trailing comment.  The reference's bodies have no "#" inside a
# string; a line whose code is empty is a comment line and quotes nothing.
TRAILING_COMMENT = re.compile(r"\s+#.*$|^\s*#.*$")
IDENT = r"[\w.]"


LONE_KEYWORD = re.compile(r"(pass|break|continue|return|else:|try:|finally:)")


def body_lines(text):
    """{code: line number} of every line of code inside a marked body, whitespace collapsed.

    A line of punctuation alone (a closing `]`) or a keyword alone (`pass`, `else:`) says nothing and
    is left out: the word "pass" in a sentence is no answer given away."""
    from tools.core.bodies import split_bodies

    found, number = {}, 0
    for step, lines in split_bodies(text):
        for line in lines:
            number += 1
            code = " ".join(TRAILING_COMMENT.sub("", line).split())
            if step is not None and re.search(r"\w", code) and not LONE_KEYWORD.fullmatch(code):
                found.setdefault(code, number)
    return found


def quoted_body_lines(explainer_text, bodies):
    """The body lines that stand in an explainer, generated blocks included (the §8 table quotes
    failure messages, which must not spell a body line either): each must occur there, whitespace
    collapsed, and not as part of a longer name on either side."""
    flat = " ".join(explainer_text.split())
    return [
        (code, number)
        for code, number in bodies.items()
        if re.search(rf"(?<!{IDENT}){re.escape(code)}(?!{IDENT})", flat)
    ]


def check_no_reference_body_stands_in_an_explainer():
    """The explainers teach without giving the answers away: no line of code from a marked body of
    a lesson's solutions file stands in either of its explainers.  The answers files
    (content/<lesson>.answers.md and .answers.en.md) quote them instead, citation-checked."""
    problems = []
    for lesson in LESSONS:
        bodies = body_lines((ROOT / "solutions" / lesson.file).read_text())
        for rel in lesson.explainers.values():
            path = ROOT / rel
            if path.exists():
                problems += [
                    f"{rel} quotes line {number} of solutions/{lesson.file}, which the learner writes: "
                    f"`{code}`; quote it in the answers file and say it in words here"
                    for code, number in quoted_body_lines(path.read_text(), bodies)
                ]
    return problems
