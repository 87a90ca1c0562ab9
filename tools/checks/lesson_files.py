"""Every lesson has all its files: the list is derived from its entry in course/lessons/<id>.py, so
a new lesson is told which file it lacks before any other check trips over the gap.  README's
"What a lesson is" lists the same files; `python -m tools.checks.lesson_files <id>` prints them."""

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
