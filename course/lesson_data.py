"""Where a lesson's data beyond its LESSON lives, found from the lesson alone, so that no machinery
names a lesson and adding one is adding files:

- its mistakes: course/lessons/<id>_mistakes.py (mistakes_file), a tuple MISTAKES of Mistake (the
  §8 table's, then mutants of our own with table=False) and a dict CAUSES; it may import further
  modules of its own beside it, named <id>_mistakes_<what>.py.  tools/core/mistakes.py runs them.
  No run of the suite reads these (a mistake's run hashes the mistake's own text), so the kept
  runs leave them out of what they read (read_by_runs).
- its correct solution in another style: solutions/other_style/<module>.py (other_style_file), which
  make check's other_styles puts in mine/ and grades.  It sits beside the reference, in a folder of
  its own: seam imports solutions.<module> only, pytest collects tests/ only, and ruff lints it as
  it lints solutions/ (and leaves its hand layout unformatted).  A second one may sit in
  solutions/other_style/more/ (more_style_file): other_styles runs those too, in one more run.

data_files(lesson) lists both: the files a lesson needs besides those Lesson.files() names.
"""

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import PurePosixPath

MISTAKES_MODULE = "course.lessons.{id}_mistakes"  # .format(id=lesson.id.lower()): the module holding MISTAKES
OTHER_STYLE = "solutions/other_style"  # folder of the solutions in another style, one per lesson
MORE_STYLES = "solutions/other_style/more"  # one more such solution per lesson, where there is one (optional)


@dataclass(frozen=True)
class Mistake:
    key: str
    step: str
    zh: str
    en: str
    section: str
    old: str
    new: str
    test: str  # the node id in the lesson's suite that catches it, by name (test_x[ids]): Lesson.node_of finds its file
    cause: str = ""  # a key of the lesson's CAUSES: the cause its message must name (several: "a+b"); "" names none
    table: bool = True  # shown in §8; False: a mutant of our own, which only make check runs
    file: str = ""  # the file it is made in, relative to the repo: "" the lesson's reference; its given host, say


def mistakes_module(lesson):
    """The dotted name of the lesson's mistakes module (whether or not it exists)."""
    return MISTAKES_MODULE.format(id=lesson.id.lower())


def mistakes_file(lesson):
    """The lesson's mistakes module as a path relative to the repo: course/lessons/<id>_mistakes.py."""
    return mistakes_module(lesson).replace(".", "/") + ".py"


def other_style_file(lesson):
    """The lesson's solution in another style, relative to the repo: solutions/other_style/<module>.py."""
    return f"{OTHER_STYLE}/{lesson.file}"


def more_style_file(lesson):
    """The lesson's second solution in another style, if it has one: solutions/other_style/more/<module>.py.
    make check's other_styles grades every lesson's together, in a suite run of their own."""
    return f"{MORE_STYLES}/{lesson.file}"


def read_by_runs(rel):
    """False for a file of lesson data that no run of the suite or of the grader imports: a
    mistakes module (course/lessons/<id>_mistakes*.py); editing one need not run anything again."""
    path = PurePosixPath(rel)
    return not (path.parent == PurePosixPath("course/lessons") and "_mistakes" in path.stem)


def data_files(lesson):
    """The lesson's data files besides Lesson.files(): its mistakes and its other-style solution."""
    return [mistakes_file(lesson), other_style_file(lesson)]


def _module(lesson):
    name = mistakes_module(lesson)
    return importlib.import_module(name) if importlib.util.find_spec(name) is not None else None


def mistakes_of(lesson):
    """The lesson's MISTAKES, from its own module; () for a lesson that has none."""
    module = _module(lesson)
    return tuple(module.MISTAKES) if module else ()


def causes_of(lesson):
    """The lesson's CAUSES, {key: (zh words, en words)}: the words a message says when, and only
    when, it has detected that cause (make check: each mistake's message names its own and no other)."""
    module = _module(lesson)
    return dict(getattr(module, "CAUSES", {})) if module else {}
