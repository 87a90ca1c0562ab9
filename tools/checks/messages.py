"""Every message the suite can show a learner exists in Chinese and in English, and points at a
section that exists.

Proved twice.  By reading the code: every failure message of the suite (each `pytest.fail(...)`
and each `assert ..., message` in tests/, each `tl.static_assert` of the probes) goes through
course.i18n (`say(zh=..., en=...)` or a helper built on it), and the text of each `say` is Chinese
where it says zh and free of Chinese where it says en.  By behaviour: the classic mistakes of
§8 of every lesson that has them (tools/explainers/mistakes.py, whose runs are cached and shared
with the §8 tables) and the untouched stub run under COURSE_LANG=zh and COURSE_LANG=en, and each
failure the learner sees is Chinese in zh and has no Chinese in en.
"""

import ast

from course import ROOT, i18n
from course.registry import LESSONS
from tools.checks.common import costly, suite_run
from tools.core.repo import earlier_lessons_written, pristine_stubs

# Where the suite's messages are written: the rules every check keeps, and each lesson's section
# of the suite and its probes.
SOURCES = ("tests/conftest.py",) + tuple(rel for lesson in LESSONS for rel in (lesson.suite, lesson.probes) if rel)
# Calls whose result is already in the learner's language (defined on top of say).
SPEAKERS = {"say", "stub_report", "where", "launch_where", "tanh_gelu_hint", "see_loads", "_later_stub_report", "fail"}


def _texts(node):
    """The literal text of a message expression: its string constants and f-string parts."""
    return "".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _calls(node):
    return {
        n.func.id if isinstance(n.func, ast.Name) else n.func.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))
    }


def forwarders(tree):
    """Functions of the file that take (zh, en, ...) and hand them to say(): their call sites are
    checked as say()'s are, and their own say(zh=zh, en=en) is not."""
    return {
        f.name
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef) and [a.arg for a in f.args.args[:2]] == ["zh", "en"]
    }


def say_problems(tree, rel):
    """Each say() gives zh and en, Chinese text in zh and none in en (and so does each call of a
    function that forwards its zh and en to say)."""
    problems = []
    passing = forwarders(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id in passing:
            given = dict(zip(("zh", "en"), node.args[:2], strict=False)) | {k.arg: k.value for k in node.keywords}
        elif node.func.id == "say":
            given = {k.arg: k.value for k in node.keywords}
            if all(isinstance(v, ast.Name) and v.id == k for k, v in given.items()) and set(given) == {"zh", "en"}:
                continue  # say(zh=zh, en=en) inside a forwarder: its callers are checked
        else:
            continue
        given = {k: v for k, v in given.items() if k in ("zh", "en")}
        if set(given) != {"zh", "en"}:
            problems.append(f"{rel} line {node.lineno}: say() needs zh= and en=, got {sorted(given)}")
            continue
        if not i18n.has_cjk(_texts(given["zh"])):
            problems.append(f"{rel} line {node.lineno}: the zh text of say() has no Chinese: {_texts(given['zh'])!r}")
        if i18n.has_cjk(_texts(given["en"])):
            problems.append(f"{rel} line {node.lineno}: the en text of say() holds Chinese: {_texts(given['en'])!r}")
    return problems


def spoken(node, speaking_names):
    """Whether a message expression is in the learner's language: it calls say or a helper built
    on it, or uses a name assigned from one."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return bool(_calls(node) & SPEAKERS) or bool(names & speaking_names)


def unspoken_messages(tree, rel):
    """Every pytest.fail, assert message and static_assert message that does not go through i18n."""
    speaking = {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and _calls(n.value) & SPEAKERS
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    problems = []
    for node in ast.walk(tree):
        message, what = None, None
        if isinstance(node, ast.Assert):
            message, what = node.msg, "assert"
            if message is None:
                problems.append(f"{rel} line {node.lineno}: an assert without a message (the learner sees only code)")
                continue
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr == "fail" and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest":
                message, what = node.args[0], "pytest.fail"
            elif node.func.attr == "static_assert" and len(node.args) > 1:
                message, what = node.args[1], "tl.static_assert"
        if message is not None and not spoken(message, speaking):
            problems.append(f"{rel} line {node.lineno}: a {what} message not written with say(zh=..., en=...)")
    return problems


def check_every_message_of_the_suite_is_written_in_both_languages():
    problems = []
    for rel in SOURCES:
        tree = ast.parse((ROOT / rel).read_text())
        problems += say_problems(tree, rel) + unspoken_messages(tree, rel)
    return problems


def where_sections(tree):
    """(line, section) of every literal section a message sends the learner to: where("T4.4", "6.2")."""
    return [
        (node.lineno, arg.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "where"
        for arg in node.args[1:]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]


def check_every_subsection_a_message_names_exists():
    """A message that names a subsection (§6.2, §4.3) names a heading both explainers have."""
    from tools.checks.docs import headings

    problems = []
    for lesson in LESSONS:
        found = {rel: set(headings((ROOT / rel).read_text())) for rel in lesson.explainers.values()}
        tree = ast.parse((ROOT / lesson.suite).read_text())
        for line, number in where_sections(tree):
            problems += [
                f"{lesson.suite} line {line} sends the learner to §{number}, which {rel} lacks"
                for rel, numbers in found.items()
                if number not in numbers
            ]
    return problems


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
        its = lambda test: test.startswith(lesson.suite + "::")  # noqa: E731 - the lesson marker is its file's
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
        if m.cause and m.cause not in causes:
            problems.append(f"{lesson.id} mistake {m.key!r}: its cause {m.cause!r} is not in CAUSES")
        for key, words in causes.items():
            said = words[lang] in text
            if key == m.cause and not said:
                problems.append(
                    f"COURSE_LANG={lang}: {lesson.id} mistake {m.key!r} does not name its cause "
                    f"({words[lang]!r}): {text[:300]!r}"
                )
            elif key != m.cause and said:
                problems.append(
                    f"COURSE_LANG={lang}: {lesson.id} mistake {m.key!r} names another cause, {key!r} "
                    f"({words[lang]!r}): {text[:300]!r}"
                )
    return problems


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
