"""A lesson's two files, its stub as committed, and throw-away copies of the repo to run things in:
what make check, make watch --bench and the mistakes table all need."""

import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

from course import ROOT
from course.registry import LESSONS

# What a scratch copy holds: everything the suite, the grader and the tools need to run there.
COPIED = ("course", "tests", "tools", "solutions", "mine", "given", "pytest.ini", "pyproject.toml")


def solution_file(lesson):
    return ROOT / "solutions" / lesson.file


def mine_file(lesson):
    return ROOT / "mine" / lesson.file


def committed(rel):
    """A file as committed in HEAD; raises CalledProcessError or FileNotFoundError."""
    return subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def pristine_stub(lesson):
    """The lesson's stub as committed (a learner's edits to mine/ do not count), else as on disk."""
    try:
        return committed(f"mine/{lesson.file}")
    except (subprocess.CalledProcessError, FileNotFoundError):
        return mine_file(lesson).read_text()


def pristine_stubs():
    return {lesson: pristine_stub(lesson) for lesson in LESSONS}


def earlier_lessons_written(lesson):
    """{earlier lesson: its solution}: mine/ as a learner who has reached `lesson` has it, since
    `make test` moves on only when a lesson passes, and a later lesson imports the earlier ones."""
    return {done: solution_file(done).read_text() for done in LESSONS[: LESSONS.index(lesson)]}


@contextmanager
def scratch_repo(mine_texts=None):
    """A throw-away copy of the repo; mine_texts ({lesson: text}) replaces those files of mine/ there.

    Checks plant their mistakes here, never in the real mine/.  Run Python there with `-m` and
    cwd set to the copy, so that its packages come before the checkout's on sys.path."""
    with tempfile.TemporaryDirectory(prefix="course-check-") as tmp:
        for part in COPIED:
            src, dst = ROOT / part, Path(tmp) / part
            if src.is_dir():
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "backups", "*.egg-info"))
            else:
                shutil.copy(src, dst)
        for lesson, text in (mine_texts or {}).items():
            (Path(tmp) / "mine" / lesson.file).write_text(text)
        yield Path(tmp)
