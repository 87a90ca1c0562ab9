"""Runs kept between checks and between make checks, each under a hash of all that it reads
(fingerprint), made once even when several processes want the same run (shared, shared_many)."""

import fcntl
import hashlib
import json
import os
import re
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from course import ROOT
from course.lesson_data import read_by_runs

# Runs kept between checks and between make checks, each under a hash of all that it reads.
# `rm -rf` it for a cold start; COURSE_CHECK_CACHE names another folder.
CACHE = Path(os.environ.get("COURSE_CHECK_CACHE") or Path(tempfile.gettempdir()) / "course-checks")
# What a run of the suite or of the grader reads in a scratch copy: the suite, what it imports, the
# graded files, the code given to them (given/) and pytest's settings.  Not tools/checks,
# tools/explainers, tools/study or content/.
RUN_READS = (
    "course",
    "tests",
    "tools/__init__.py",
    "tools/core",
    "tools/learner",
    "solutions",
    "mine",
    "given",
    "pytest.ini",
    "pyproject.toml",
)
# The environment a run can read: the course's and the suite's own settings, the locale, Python's,
# torch's and triton's.  A GPU's presence counts too (gpu_seen).
ENV_READ = re.compile(
    r"^(COURSE_|SEED$|SOLUTION$|LESSON$|STEP$|TRITON|PYTEST|CUDA|NVIDIA|LANG|LC_|COLUMNS$|NO_COLOR$|OMP_|PYTHON|TORCH)"
)
VERSIONS = ("torch", "triton", "numpy", "pytest", "pytest-timeout")
_used = []  # the kept runs this process read: forgotten if its check fails (forget_used)


def _files(rel):
    """The files under rel that a run can read: not caches, backups, or lesson data no run imports."""
    path = ROOT / rel
    if path.is_file():
        return [path]
    skip = ("__pycache__", "backups")
    return sorted(
        f
        for f in path.rglob("*")
        if f.is_file() and not any(s in f.parts for s in skip) and read_by_runs(f.relative_to(ROOT).as_posix())
    )


def gpu_seen():
    return sorted(str(p) for p in Path("/dev").glob("nvidia*"))


def fingerprint(*parts, reads=RUN_READS, mine_texts=None):
    """A hash of everything a run reads: the files under `reads` (mine/ as mine_texts, {lesson: text},
    replaces it), the versions of Python and the pinned packages, the environment it can read, and
    parts (the run's own arguments, as text)."""
    h = hashlib.sha256()
    replaced = {f"mine/{lesson.file}": text for lesson, text in (mine_texts or {}).items()}
    for rel in reads:
        for f in _files(rel):
            name = str(f.relative_to(ROOT))
            h.update(name.encode() + b"\0" + (replaced.pop(name).encode() if name in replaced else f.read_bytes()))
    for name, text in sorted(replaced.items()):  # a lesson file mine/ lacks on disk
        h.update(name.encode() + b"\0" + text.encode())
    h.update(sys.version.encode())
    for pkg in VERSIONS:
        try:
            h.update(f"{pkg}={metadata.version(pkg)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{pkg}=none".encode())
    h.update(repr(sorted((k, v) for k, v in os.environ.items() if ENV_READ.match(k))).encode())
    h.update(repr(gpu_seen()).encode())
    h.update(repr(parts).encode())
    return h.hexdigest()[:24]


def shared(kind, key, compute):
    """compute()'s result (JSON), made once for this key: kept in CACHE, so the checks running side
    by side and later make checks read it instead of running it again.  A lock per key makes a
    second check that wants the same run wait for the first one's, not run its own."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{kind}-{key}.json"
    with open(CACHE / f"{kind}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            value = json.loads(path.read_text())
        except (OSError, ValueError):
            part = path.with_suffix(f".{os.getpid()}.part")
            part.write_text(json.dumps(compute()))
            value = json.loads(part.read_text())  # as a later reader gets it: tuples become lists
            os.replace(part, path)
    _used.append(path)
    return value


def shared_many(kind, keys, compute):
    """{name: value} for keys {name: key}, each value kept under its own key, as shared() does, so
    that a change reruns only what it touches: under one lock for the kind, compute(names) gives
    {name: value} for the names not kept yet."""
    CACHE.mkdir(parents=True, exist_ok=True)
    paths = {name: CACHE / f"{kind}-{key}.json" for name, key in keys.items()}
    found = {}
    with open(CACHE / f"{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name, path in paths.items():
            try:
                found[name] = json.loads(path.read_text())
            except (OSError, ValueError):
                pass
        missing = [name for name in keys if name not in found]
        if missing:
            made = compute(missing)
            for name in missing:
                part = paths[name].with_suffix(f".{os.getpid()}.part")
                part.write_text(json.dumps(made[name]))
                os.replace(part, paths[name])
                found[name] = json.loads(json.dumps(made[name]))  # as read back: tuples become lists
    _used.extend(paths.values())
    return found


def forget_used(keep=False):
    """Drop the kept runs this process's check read: it failed, and the next make check runs them
    again (keep: only stop counting them, for the next check)."""
    while _used:
        path = _used.pop()
        if not keep:
            path.unlink(missing_ok=True)


def reads_of(solution):
    """RUN_READS, less mine/ for a run of solutions/ (SOLUTION=1 grades solutions/ alone, T5 on the
    same side's T4): a learner's edit does not cost the reference's kept runs."""
    return tuple(r for r in RUN_READS if r != "mine") if solution else RUN_READS
