"""The one list of the course's lessons: for each, its files, its explainer sections, its steps
and their hints.  Everything that names a lesson or a step reads it from here: the test markers,
the failure messages, `make test`, `make hint`, `make check` and the explainers' step tables.

A lesson is: an explainer pair in content/ (Chinese first, English companion), a stub in mine/,
a reference in solutions/, its section of the one suite in tests/ (a folder tests/<id>/ of test
files, or one file), and an entry here.  To add one, add those files and course/lessons/<id>.py
defining LESSON; the machinery reads the rest from it.
"""

import re
from dataclasses import dataclass

from course import ROOT
from course.i18n import say


@dataclass(frozen=True)
class Step:
    id: str  # "T4.1": the lesson's id, a dot, the step's number
    title: str
    sections: tuple  # explainer sections to read, keys of the lesson's SECTIONS
    writes: tuple  # names in the lesson's file whose marked bodies this step fills in
    hints: tuple  # from gentle to concrete; the last still leaves something to write
    advanced: bool = False
    title_zh: str = ""  # the title in Chinese (title is English)
    needs: tuple = ()  # steps whose functions this step's checks call: when one of them hangs, so do these

    @property
    def marker(self):  # pytest marker: T4.2 -> t4_2
        return self.id.lower().replace(".", "_")

    @property
    def lesson(self):
        return __getattr__("LESSON_OF")[self.id]

    @property
    def name(self):
        """The step's title in the learner's language."""
        return say(zh=self.title_zh or self.title, en=self.title)


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one object per lesson
class Lesson:
    id: str  # "T4"
    title: str
    module: str  # mine/<module>.py is the learner's file, solutions/<module>.py the reference
    explainers: dict  # {"zh": path, "en": path}
    sections: dict  # {number: (Chinese title, English title)}; every heading has its number
    steps: tuple
    suite: str  # the lesson's section of the one suite: a folder (tests/t5) or one file (tests/test_t5.py)
    probes: str = ""  # kernels that test one device function alone (course/), if the lesson has them
    given: tuple = ()  # given/<file>s: code the lesson hands both sides to read, not to write (its host side)
    title_zh: str = ""  # the title in Chinese
    note: tuple = ()  # (zh, en): said under the advice when a failure of a step in note_steps is about torch
    note_steps: tuple = ()

    @property
    def file(self):
        return f"{self.module}.py"

    @property
    def marker(self):  # pytest marker of every test of the lesson
        return self.id.lower()

    def files(self):
        """The lesson's code files, relative to the repo: its stub, reference, suite, probes and given code."""
        return (
            [f"mine/{self.file}", f"solutions/{self.file}", *self.suite_files()]
            + ([self.probes] if self.probes else [])
            + list(self.given)
        )

    def suite_files(self, root=ROOT):
        """The files of the lesson's section of the suite, relative to the repo: the suite itself when
        it is one file, else every .py of its folder (its tests, their helpers, its conftest.py)."""
        if self.suite.endswith(".py"):
            return [self.suite]
        found = (root / self.suite).rglob("*.py")
        return sorted(f.relative_to(root).as_posix() for f in found if "__pycache__" not in f.parts)

    def owns(self, nodeid):
        """Whether a pytest node id (tests/t5/test_fix_up.py::test_x[ids]) is a test of this lesson's suite."""
        return nodeid.startswith(self.suite + ("::" if self.suite.endswith(".py") else "/"))

    def node_of(self, test, root=ROOT):
        """The node id of a test of the lesson's suite given by its name (test_x, or test_x[ids]):
        the file that defines it, then the name.  A name no file of the suite defines, or more than
        one does, is an error: the name alone must say which test it is."""
        name = test.split("[")[0]
        define = re.compile(rf"^def {re.escape(name)}\(", re.MULTILINE)
        where = [rel for rel in self.suite_files(root) if define.search((root / rel).read_text())]
        if len(where) != 1:
            said = f"is defined in {', '.join(where)}" if where else "is defined in none of its files"
            raise KeyError(f"{test!r} of lesson {self.id}'s suite {self.suite} {said}")
        return f"{where[0]}::{test}"

    def next_step(self, done):
        """The first required step not done, else the first advanced one, else None; done: {id: bool}."""
        return next(
            (s for s in self.steps if not done.get(s.id) and not s.advanced),
            next((s for s in self.steps if not done.get(s.id)), None),
        )


def _natural(lesson_id):
    """T4 < T5 < T10: the number after the letters, compared as a number."""
    digits = "".join(ch for ch in lesson_id if ch.isdigit())
    return (int(digits) if digits else 0, lesson_id)


def _find_lessons():
    """Every course/lessons/<id>.py that defines LESSON, in the order of their ids.  A lesson's other
    modules there are named <id>_<what>.py and are not imported here (its probes load the graded file)."""
    import importlib
    import pkgutil

    from course import lessons

    found = []
    for info in pkgutil.iter_modules(lessons.__path__):
        if "_" in info.name:
            continue
        module = importlib.import_module(f"course.lessons.{info.name}")
        if isinstance(getattr(module, "LESSON", None), Lesson):
            found.append(module.LESSON)
    return tuple(sorted(found, key=lambda lesson: _natural(lesson.id)))


_found = {}


def __getattr__(name):
    """LESSONS, BY_ID, LESSON_OF and LESSON_BY_ID, found on first use: a lesson's module imports this
    one for the types, so the search must wait until that module has finished defining LESSON."""
    if name not in ("LESSONS", "BY_ID", "LESSON_OF", "LESSON_BY_ID"):
        raise AttributeError(f"module 'course.registry' has no attribute {name!r}")
    if not _found:
        lessons = _find_lessons()
        _found["LESSONS"] = lessons
        _found["BY_ID"] = {s.id: s for each in lessons for s in each.steps}
        _found["LESSON_OF"] = {s.id: each for each in lessons for s in each.steps}
        _found["LESSON_BY_ID"] = {each.id: each for each in lessons}
    return _found[name]


def lesson(lesson_id=None):
    """A lesson by "T4" or "t4"; the first lesson when lesson_id is empty."""
    if not lesson_id:
        return __getattr__("LESSONS")[0]
    key = lesson_id.strip().upper()
    by_id = __getattr__("LESSON_BY_ID")
    if key not in by_id:
        raise KeyError(f"no lesson {lesson_id!r}; lessons are {', '.join(by_id)}")
    return by_id[key]


def step(step_id, within=None):
    """A step by "T4.2", "t4.2", "t4_2", or "2" (a step of `within`, by default the first lesson)."""
    key = step_id.strip().upper().replace("_", ".")
    if "." not in key:
        key = f"{lesson(within).id}.{key}"
    by_id = __getattr__("BY_ID")
    if key not in by_id:
        raise KeyError(f"no step {step_id!r}; steps are {', '.join(by_id)}")
    return by_id[key]


def step_writing(name):
    """The first step that writes `name` (a function or constant of its lesson's file): how a tool that
    studies one function finds its step, and so its lesson, without naming either."""
    for each in __getattr__("LESSONS"):
        for s in each.steps:
            if name in s.writes:
                return s
    raise KeyError(f"no step writes {name!r}")


def lesson_writing(name):
    """The lesson whose steps write `name`: step_writing(name)'s lesson."""
    return step_writing(name).lesson
