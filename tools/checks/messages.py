"""Every message the suite can show a learner exists in Chinese and in English, and points at a
section that exists.

Proved twice.  By reading the code of every file of tests/ and of every lesson's probes: each
`pytest.fail(...)`, each `assert ..., message` and each `tl.static_assert` message goes through the
message API (course.messages: read, fail, stub_report; course.i18n.say), directly, through a name
assigned from it, or through a function of those files whose every message it returns does; the
text of each `say` (and of each call that hands zh and en on, such as `fail`) is Chinese where it
says zh and free of Chinese where it says en; and each section a `read`, `fail` or `stub_report`
call names, followed back through the parameters it arrives by, is a heading of both explainers of
its lesson.  By behaviour: the classic mistakes of §8 of every lesson that has them
(tools/explainers/mistakes.py, whose runs are cached and shared with the §8 tables) and the
untouched stub run under COURSE_LANG=zh and COURSE_LANG=en, and each failure the learner sees is
Chinese in zh and has no Chinese in en.
"""

import ast
import re

from course import ROOT, i18n
from course.registry import LESSON_BY_ID, LESSONS
from tools.checks.common import costly, suite_run
from tools.checks.message_code import (
    Source,
    explainers_named_by_hand,
    say_problems,
    section_references,
    speakers,
    unspoken_messages,
)
from tools.core.repo import earlier_lessons_written, pristine_stubs


def sources():
    """{file: its lesson or None}: every file of tests/ (the rules every check keeps, the shared
    helpers, each lesson's section of the suite, in its folder or one file) and each lesson's probes."""
    found = {p.relative_to(ROOT).as_posix(): None for p in sorted((ROOT / "tests").rglob("*.py"))}
    return found | {rel: lesson for lesson in LESSONS for rel in [*lesson.suite_files(), lesson.probes] if rel}


def check_every_message_of_the_suite_is_written_in_both_languages():
    trees = {rel: ast.parse((ROOT / rel).read_text()) for rel in sources()}
    speaking = speakers(trees.values())  # a helper of tests/support.py speaks in the tests that import it
    return [p for rel, tree in trees.items() for p in say_problems(tree, rel) + unspoken_messages(tree, rel, speaking)]


def section_problems(rel, source, own, headings_of):
    """What is wrong with the sections the calls of the message API in one file name: each must be
    a heading of both explainers of the lesson the call names (else of `own`, the file's lesson)."""
    problems = []
    for line, at, sections in section_references(source):
        if sections is None:
            problems.append(
                f"{rel} line {line}: cannot tell which sections this message names: give them as literals, "
                f"at the call or at the calls of the function they are passed down from"
            )
            continue
        ids = at if at is not None else [(own.id, line)] if own is not None else None
        if ids is None:
            problems.append(f"{rel} line {line}: cannot tell which lesson this message sends the learner to")
            continue
        for lesson_or_step, at_line in ids:
            lesson = LESSON_BY_ID.get(lesson_or_step.upper().replace("_", ".").split(".")[0])
            if lesson is None:
                problems.append(f"{rel} line {at_line}: {lesson_or_step!r} is no lesson and no step of one")
                continue
            if not sections and "." not in lesson_or_step:
                problems.append(f"{rel} line {line}: read() of a lesson ({lesson.id}) must name its sections")
            for number, number_line in sections:
                through = f" (through line {number_line})" if number_line != line else ""
                problems += [
                    f"{rel} line {line}{through} sends the learner to §{number}, which {explainer} lacks"
                    for explainer, numbers in headings_of(lesson).items()
                    if number not in numbers
                ]
    return problems


def check_every_section_a_message_names_exists():
    """Each section a read(), fail() or stub_report() of the suite names, followed back through the
    parameters it arrives by, is a heading of both explainers of the lesson it names, for every
    lesson's tests: a "4.1" changed to "4.9" shows.  A file that names an explainer in a text of its
    own (a helper that says where to read by itself) is a problem too: its sections go unchecked."""
    from tools.checks.docs import headings

    def headings_of(lesson):
        return {rel: set(headings((ROOT / rel).read_text())) for rel in lesson.explainers.values()}

    problems = []
    for rel, own in sources().items():
        tree = ast.parse((ROOT / rel).read_text())
        problems += section_problems(rel, source_of(rel, tree, own), own, headings_of)
        problems += explainers_named_by_hand(tree, rel)
    return problems


def source_of(rel, tree, own, given=None):
    """The Source of the file at rel (tree: its code), with the other files of its lesson's suite
    beside it: a helper of a suite that is a folder may be called, with its sections, from another
    file.  given: {file: tree} to read in place of those files on disk."""
    given = given or {}
    beside = [
        given[f] if f in given else ast.parse((ROOT / f).read_text())
        for f in (own.suite_files() if own else ())
        if f != rel
    ]
    return Source(tree, beside)


def language_problems(lang, source, reason):
    """What is wrong with a failure line shown to a learner of lang."""
    if lang == "zh" and not i18n.has_cjk(reason):
        return [f"COURSE_LANG=zh, {source}: no Chinese in {reason!r}"]
    if lang == "en" and i18n.has_cjk(reason):
        return [f"COURSE_LANG=en, {source}: Chinese in {reason!r}"]
    return []


@costly(50)  # its runs are the §8 tables' too (docs): whichever asks first makes them
def check_the_mistakes_speak_the_learners_language():
    """Each classic mistake of §8 of every lesson that has them (course/lessons/<id>_mistakes.py),
    made in a copy of the reference, under each language."""
    from course.lesson_data import mistakes_of
    from tools.core.mistakes import lessons_with_mistakes, seen_by_learner

    problems = []
    for lesson in lessons_with_mistakes():
        mistakes = mistakes_of(lesson)
        for lang in i18n.LANGS:
            found = seen_by_learner(lesson, mistakes, lang)
            for m in mistakes:
                outcome, _, reason, _ = found[m.key]
                if outcome != "failed":
                    problems.append(
                        f"COURSE_LANG={lang}: {lesson.id} mistake {m.key!r} is no longer caught by {m.test}"
                    )
                problems += language_problems(lang, f"{lesson.id} mistake {m.key!r} ({m.test})", reason)
    return problems


def stub_runs(lesson, lang):
    """(report, output) of the untouched stub of `lesson` under lang, the lessons before it written:
    for the first lesson that is every stub untouched, the whole suite's run that suite.py's check
    reads too (its own tests picked out of it); for a later one, a run of its tests alone."""
    from tools.checks.suite import stub_run

    earlier = earlier_lessons_written(lesson)
    if not earlier:
        report, output = stub_run(lang)
        its = lesson.owns  # the lesson marker is its suite's
        report = {
            "collected": [c for c in report.get("collected", []) if its(c["test"])],
            "results": {t: r for t, r in report.get("results", {}).items() if its(t)},
        }
        return report, output
    return suite_run({**pristine_stubs(), **earlier}, args=("-m", lesson.marker), COURSE_LANG=lang)


@costly(25)
def check_the_untouched_stub_speaks_the_learners_language():
    """The untouched stub, every check of every lesson, under each language: "not written yet" in
    that language, the learner's explainer named first.  The lessons before it are written: T5
    calls the learner's T4, whose stub would otherwise speak first."""
    problems = []
    for lesson in LESSONS:
        for lang in i18n.LANGS:
            report, output = stub_runs(lesson, lang)
            collected = [c for c in (report or {}).get("collected", []) if not c["suite_skip"]]
            results = {t: r for t, r in (report or {}).get("results", {}).items() if r["outcome"] != "skipped"}
            if not collected or len(results) != len(collected):
                problems.append(
                    f"COURSE_LANG={lang}: {lesson.id}: ran {len(results)} of {len(collected)} stub checks:\n"
                    f"{output[-1500:]}"
                )
            explainer = lesson.explainers[lang]
            for test, result in results.items():
                reason = result.get("reason", "")
                problems += language_problems(lang, f"the stub, {test}", reason)
                if not reason.startswith(i18n.NOT_WRITTEN[lang]):
                    problems.append(
                        f"COURSE_LANG={lang}, the stub, {test}: does not start with "
                        f"{i18n.NOT_WRITTEN[lang]!r}: {reason!r}"
                    )
                elif explainer not in reason or reason.index(explainer) != min(
                    reason.find(e) for e in lesson.explainers.values() if e in reason
                ):
                    problems.append(
                        f"COURSE_LANG={lang}, the stub, {test}: does not name {explainer} first: {reason!r}"
                    )
    return problems


def cause_problems(lesson, mistakes, causes, lang, found):
    """Each mistake's message names its own cause (CAUSES) and no other: a cause is named only where
    the check detected it."""
    problems = []
    for m in mistakes:
        text = found[m.key][3] or found[m.key][2]
        own = set(m.cause.split("+")) if m.cause else set()  # "a+b": a message that detected both
        for cause in sorted(own - set(causes)):
            problems.append(f"{lesson.id} mistake {m.key!r}: its cause {cause!r} is not in CAUSES")
        for key, words in causes.items():
            said = words[lang] in text
            if key in own and not said:
                problems.append(
                    f"COURSE_LANG={lang}: {lesson.id} mistake {m.key!r} does not name its cause "
                    f"({words[lang]!r}): {text[:300]!r}"
                )
            elif key not in own and said:
                problems.append(
                    f"COURSE_LANG={lang}: {lesson.id} mistake {m.key!r} names another cause, {key!r} "
                    f"({words[lang]!r}): {text[:300]!r}"
                )
    return problems


def check_every_mistake_has_a_key_of_its_own():
    """Two mistakes of one lesson under one key: the runs are kept and reported by key, so one of the
    two would never be seen (a mutant added again under a key a file already used, say)."""
    from collections import Counter

    from course.lesson_data import mistakes_of
    from tools.core.mistakes import lessons_with_mistakes

    return [
        f"{lesson.id}: {n} mistakes have the key {key!r}; give each its own"
        for lesson in lessons_with_mistakes()
        for key, n in Counter(m.key for m in mistakes_of(lesson)).items()
        if n > 1
    ]


@costly(1)  # reads the runs of the check above
def check_each_mistake_names_its_own_cause_and_no_other():
    """Every mistake and mutant of every lesson (course/lessons/<id>_mistakes.py), in each language."""
    from course.lesson_data import causes_of, mistakes_of
    from tools.core.mistakes import lessons_with_mistakes, seen_by_learner

    problems = []
    for lesson in lessons_with_mistakes():
        causes = {k: dict(zip(i18n.LANGS, v, strict=True)) for k, v in causes_of(lesson).items()}
        for lang in i18n.LANGS:
            found = seen_by_learner(lesson, mistakes_of(lesson), lang)
            problems += cause_problems(lesson, mistakes_of(lesson), causes, lang, found)
    return problems


# "read content/t4.en.md §6.2, §6.3 (Chinese: ...)", its sections titled or not ("§3 2-D pointer blocks, §4 The main
# loop: masks, tl.dot and pipelining (Chinese: ..."): every § up to read()'s "(Chinese:"
READS = re.compile(r"read content/\S+ (§.*?)(?: \(Chinese:|$)", re.M)


def section_problems_of(lesson, mistakes, found):
    """Each mistake's English message, where it says where to read, names the mistake's own section,
    or one above or below it: a message that sends the learner elsewhere misdirects."""

    def related(a, b):
        return a == b or a.startswith(b + ".") or b.startswith(a + ".")

    problems = []
    for m in mistakes:
        text = found[m.key][3] or found[m.key][2]
        named = {s for reads in READS.findall(text) for s in re.findall(r"§(\d+(?:\.\d+)*)", reads)}
        if named and not any(related(m.section, s) for s in named):
            problems.append(
                f"{lesson.id} mistake {m.key!r} is in §{m.section}, but its message reads "
                f"{', '.join('§' + s for s in sorted(named))}: {text[:200]!r}"
            )
    return problems


@costly(1)  # reads the runs of the mistakes checks above
def check_each_mistake_reads_its_own_section():
    """Every mistake and mutant of every lesson: its message sends the learner to its own section."""
    from course.lesson_data import mistakes_of
    from tools.core.mistakes import lessons_with_mistakes, seen_by_learner

    return [
        p
        for lesson in lessons_with_mistakes()
        for p in section_problems_of(lesson, mistakes_of(lesson), seen_by_learner(lesson, mistakes_of(lesson), "en"))
    ]
