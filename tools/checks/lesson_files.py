"""Every lesson has all its files: the list is derived from its entry in course/lessons/<id>.py, so
a new lesson is told which file it lacks before any other check trips over the gap.  README's
"What a lesson is" lists the same files; `python -m tools.checks.lesson_files <id>` prints them."""

import ast
import sys

from course import ROOT
from course.lesson_data import other_style_file
from course.registry import LESSONS


def answers_of(explainer):
    """content/t4.md -> content/t4.answers.md; content/t4.en.md -> content/t4.answers.en.md."""
    stem = explainer.removesuffix(".md")
    lang = ""
    if "." in stem.rsplit("/", 1)[-1]:
        stem, lang = stem.rsplit(".", 1)
        lang = "." + lang
    return f"{stem}.answers{lang}.md"


def files_of(lesson):
    """[(path relative to the repo, what it is)] of every file the lesson needs."""
    files = [(f"course/lessons/{lesson.id.lower()}.py", "its entry: sections, steps, hints (defines LESSON)")]
    for lang, explainer in lesson.explainers.items():
        files.append((explainer, f"its explainer ({lang})"))
        files.append((answers_of(explainer), f"its answers, kept out of the explainer's way ({lang})"))
    files += [
        (f"mine/{lesson.file}", "the stub the learner fills in"),
        (f"solutions/{lesson.file}", "the reference"),
        (other_style_file(lesson), "a solution in another style (make check's other_styles runs it)"),
        (lesson.suite, "its section of the suite (a folder of test files, or one file)"),
    ]
    if lesson.probes:
        files.append((lesson.probes, "its probes (declared in its entry)"))
    files += [(path, "code it gives both sides to read (declared in its entry)") for path in lesson.given]
    return files


def present(path):
    """A file, or a folder of the suite that holds at least one test file."""
    found = ROOT / path
    return found.is_file() or (found.is_dir() and any(found.glob("test_*.py")))


def check_every_lesson_has_all_its_files():
    return [
        f"{lesson.id} lacks {path}: {what}"
        for lesson in LESSONS
        for path, what in files_of(lesson)
        if not present(path)
    ]


def file_order_problems(suite):
    """What is wrong with the ORDER of a suite that is a folder: its __init__.py lists each of its
    test files once (tests/conftest.py runs them in that order, the lesson's)."""
    init = ROOT / suite / "__init__.py"
    if not init.is_file():
        return [f"{suite} lacks __init__.py (a package, whose ORDER lists its test files in the lesson's order)"]
    given = [
        node.value
        for node in ast.parse(init.read_text()).body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "ORDER" for t in node.targets)
    ]
    order = ast.literal_eval(given[0]) if given else ()
    files = sorted(f.name for f in (ROOT / suite).glob("test_*.py"))
    problems = [f"{suite}/__init__.py: ORDER lacks {name}" for name in files if name not in order]
    problems += [
        f"{suite}/__init__.py: ORDER names {name}, which is no test file there" for name in order if name not in files
    ]
    problems += [f"{suite}/__init__.py: ORDER names {name} twice" for name in set(order) if list(order).count(name) > 1]
    return problems


def check_a_suite_that_is_a_folder_lists_its_files_in_order():
    return [p for lesson in LESSONS if (ROOT / lesson.suite).is_dir() for p in file_order_problems(lesson.suite)]


def check_every_lesson_is_defined_in_its_own_entry():
    """course/lessons/<id>.py defines the lesson <id> (the registry finds lessons by module, the
    learner and README by id)."""
    import importlib

    problems = []
    for lesson in LESSONS:
        if not (ROOT / "course" / "lessons" / f"{lesson.id.lower()}.py").is_file():
            continue  # said by check_every_lesson_has_all_its_files
        module = importlib.import_module(f"course.lessons.{lesson.id.lower()}")
        if getattr(module, "LESSON", None) is not lesson:
            problems.append(f"course/lessons/{lesson.id.lower()}.py does not define lesson {lesson.id} as LESSON")
    return problems


if __name__ == "__main__":
    from course.registry import lesson as lesson_by_id

    for chosen in sys.argv[1:] or [each.id for each in LESSONS]:
        for path, what in files_of(lesson_by_id(chosen)):
            print(f"{path:45} {what}")
