"""Each mistake of a lesson (course/lessons/<id>_mistakes.py) made in a copy of the reference and
caught, or not, by its one test, as a learner without a GPU would see it: what make check's message
checks and the explainers' §8 tables both read, run once and kept.

Each mistaken copy becomes mine/<module>.py of a scratch repo whose mine/ holds the references of
the lessons before it (a later lesson imports pieces of the earlier ones from the same side), and
one test runs on Triton's interpreter with COURSE_LANG set to a language.  A worker process per
core imports torch and triton once and runs its share of the mistakes one pytest session after
another, each mistake in every language.  What each showed is kept (tools/core/cache.py,
shared_many) under a hash of what that run reads (run_reads: the lesson's suite file and the
suite's support, the course/ modules they import, the plugin and this runner, the references in
mine/) and of the mistake itself, so an edit elsewhere (another lesson's suite or probes, a tool, a
mistakes module) keeps it, and a mistake added to a lesson's module runs alone.
"""

import argparse
import ast
import json
import os
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from course import ROOT, i18n
from course.lesson_data import mistakes_file, mistakes_of
from course.registry import LESSONS
from course.registry import lesson as lesson_by_id
from course.warm import run_python
from tools.core.cache import fingerprint, shared_many
from tools.core.repo import earlier_lessons_written, scratch_repo, solution_file


def lessons_with_mistakes():
    return [lesson for lesson in LESSONS if mistakes_of(lesson)]


def table_parser(description=None):
    """The command line of a §8 table (python -m tools.explainers.mistakes), here because make check
    reads the tables' generated commands with it too.  --lesson defaults to the first lesson that
    has mistakes, so a generated block without it shows that lesson's table."""
    first = next(iter(lessons_with_mistakes()), lesson_by_id())
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--lesson", type=str.upper, default=first.id, help=f"whose mistakes (default {first.id}: the first with some)"
    )
    p.add_argument("--lang", choices=i18n.LANGS, default="zh")
    p.add_argument("--only", nargs="+", metavar="KEY", help="these mistakes alone, by key")
    return p


VARYING = re.compile(r"\d\.\d+e[+-]\d+")  # relative errors of random inputs
# The pointers a message ends with: where to read (the table has its own column) and `make loads`.
WHERE = re.compile(
    r"[;；]? ?(?:read content/[\w.]+\.en\.md .*?\(Chinese: content/[\w.]+\.md\)"
    r"|详见 content/[\w.]+\.md .*?（English: content/[\w.]+\.en\.md）)"
)
LOADS = re.compile(r"[.。] ?(?:see your own loads: make loads|用 make loads) .*$")


def planted_in(lesson, m):
    """The file mistake m is made in, relative to the repo: the lesson's reference, or the file it
    names (the lesson's given host, say)."""
    return m.file or f"solutions/{lesson.file}"


# A reference's speed-only lines: a path for one case (T4's mainloop for nn.Linear's W.t()) that a learner's
# file never has.  A mistake is made in the text without them, so that it runs in every case, as the same
# mistake in a learner's code would, and not in the cases the fast path leaves to the learner's lines.
SPEED_ONLY = re.compile(r"^[ \t]*# ---- speed only begin\b.*?^[ \t]*# ---- speed only end ----\n", re.M | re.S)


def without_speed_only(text):
    """text with every speed-only block (its two marker lines included) cut out."""
    begins, ends = text.count("# ---- speed only begin"), text.count("# ---- speed only end ----")
    if begins != ends:
        raise SystemExit(f"{begins} '# ---- speed only begin' markers and {ends} '# ---- speed only end ----' ones")
    return SPEED_ONLY.sub("", text)


def mistaken_source(lesson, m, reference=None):
    """The text of the file m is made in (planted_in; `reference`, its text, when given), its speed-only
    lines cut (without_speed_only), with m made."""
    text = (ROOT / planted_in(lesson, m)).read_text() if reference is None else reference
    text = without_speed_only(text)
    if text.count(m.old) != 1:
        raise SystemExit(
            f"mistake {m.key!r}: its text occurs {text.count(m.old)} times in {planted_in(lesson, m)}, "
            f"not once; update {mistakes_file(lesson)} to the code as it is now"
        )
    return text.replace(m.old, m.new)


def planted_path(lesson, m):
    """Where the mistaken text goes in a scratch copy: mine/<file> for the reference, else its own file."""
    return m.file or f"mine/{lesson.file}"


def run_in_worker(lesson, jobs):
    """{job: (outcome, first line, first line as printed, message)} for jobs {job: (mistake, lang)},
    run one after another by one worker process in its own copy, each under COURSE_LANG=lang.

    A mistaken kernel on Triton's interpreter can store outside its tensors, into the worker's own memory
    (the interpreter stores through raw addresses), and a worker has died in C code now and then (three
    times in two days of make checks; which job spoiled it was not found).  The worker keeps what each job
    showed as it goes, so the jobs left after such a death run again in a fresh worker, on the planted files
    as they were; a worker that dies before finishing a single job is reported with its dump."""
    # mine/ holds the reference, as every job but one made in another file (its given host) finds it
    with scratch_repo({**earlier_lessons_written(lesson), lesson: solution_file(lesson).read_text()}) as tmp:
        given, out = Path(tmp) / "jobs.json", Path(tmp) / "seen.json"
        # `-m` from the scratch copy: its packages come first on sys.path, ahead of the checkout's.
        env = dict(os.environ, TRITON_INTERPRET="1", SOLUTION="0", SEED="0")
        seen, left = {}, dict(jobs)
        planted = {path: (Path(tmp) / path).read_text() for path in {planted_path(lesson, m) for m, _ in jobs.values()}}
        while left:
            for path, text in planted.items():  # a worker that died left its job's mistake in place
                (Path(tmp) / path).write_text(text)
            given.write_text(
                json.dumps(
                    {
                        "lesson": lesson.id,
                        "jobs": {
                            job: [m.test, planted_path(lesson, m), mistaken_source(lesson, m), lang]
                            for job, (m, lang) in left.items()
                        },
                    }
                )
            )
            out.unlink(missing_ok=True)
            _, stdout, stderr = run_python(["-m", __name__, str(given)], tmp, env, 900)
            done = json.loads(out.read_text()) if out.exists() else {}
            if left and not done:
                # a crash's dump (stderr) begins with its kind and innermost frames: keep both of its ends,
                # and the end of what pytest printed before it (stdout: the jobs that ran)
                dump = stderr if len(stderr) <= 6000 else f"{stderr[:3000]}\n[...]\n{stderr[-3000:]}"
                raise SystemExit(f"{RUNNER} worker failed:\n{stdout[-2000:]}\n[stderr]\n{dump}")
            seen.update(done)
            left = {job: v for job, v in left.items() if job not in done}
            if left:
                print(
                    f"{RUNNER}: a worker died after {len(done)} jobs; {len(left)} run again in a fresh one",
                    file=sys.stderr,
                )
        return seen


def worker(jobs_path):
    """Inside a scratch repo: one pytest session per job (a mistake in a language), in this one process."""
    import pytest

    from tools.core import plugin

    given = json.loads(Path(jobs_path).read_text())
    lesson = lesson_by_id(given["lesson"])
    # what pytest imports the suite as: tests/test_x.py -> test_x; the package tests/t4/ -> t4, t4.common, ...
    suite_module = Path(lesson.suite).stem
    # Each job imports course/, the suite and its assertion rewriting afresh; with bytecode kept in
    # this scratch copy (even where PYTHONDONTWRITEBYTECODE is set) they compile once per worker, not
    # once per job (about 15 % of a job's CPU, measured).  Only mine/ changes between jobs, its bytecode
    # goes before each, so no job can load the last one's (a pyc is checked by mtime and size only).
    sys.dont_write_bytecode = False
    seen, kept = {}, {}  # kept: each planted file's text before any job
    for i, (job, (test, path, source, lang)) in enumerate(given["jobs"].items()):
        for planted, text in kept.items():
            Path(planted).write_text(text)  # the last job's mistake undone
        kept.setdefault(path, Path(path).read_text())
        for folder in {"mine", *(str(Path(p).parent) for p in kept)}:
            shutil.rmtree(f"{folder}/__pycache__", ignore_errors=True)
        Path(path).write_text(source)
        # all of course/ too: `from course.lessons import <id>_probes` would find the old probes as an attribute
        for name in [
            n
            for n in sys.modules
            if n.split(".")[0] in ("mine", "given", "course", "conftest", suite_module) or n == plugin.__name__
        ]:
            del sys.modules[name]  # the next session imports the mistaken file afresh
        os.environ["COURSE_LANG"] = lang
        os.environ[plugin.REPORT] = report = os.path.abspath(f"report-{i}.json")
        pytest.main([lesson.node_of(test), "-q", "--tb=no", "-p", plugin.__name__])
        results = json.loads(Path(report).read_text())["results"] if Path(report).exists() else {}
        if len(results) != 1:
            raise SystemExit(f"mistake {job!r}: expected one result for {test}, got {results}")
        (result,) = results.values()
        reason = VARYING.sub("x.xe-xx", LOADS.sub("", WHERE.sub("", result["reason"]))).strip()
        seen[job] = (result["outcome"], reason, result["reason"], result.get("message") or result.get("text", ""))
        # kept after each job, whole: a worker that dies later leaves these for run_in_worker
        Path("seen.json.part").write_text(json.dumps(seen))
        os.replace("seen.json.part", "seen.json")


# ------------------------------------------------------------------------------------------------
# What a run reads, and the key it is kept under
# ------------------------------------------------------------------------------------------------
RUNNER = "tools/core/mistakes.py"  # this file: the worker, and the environment it runs under
PYTEST_SETTINGS = ("pytest.ini", "pyproject.toml")
OURS = ("course", "tests", "tools", "given")  # the packages whose modules a run may import from the repo


def _module_file(name, root):
    """The file of module `name` under root (a package's __init__.py), or None."""
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imported_files(path, root):
    """The files under root of the modules path imports (at any depth, lazy imports too), each
    module's packages' __init__.py with it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = path.relative_to(root).parent.parts
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the file's package, level - 1 steps up
                base = ".".join([*package[: len(package) - (node.level - 1)], *([base] if base else [])])
            names += [base] + [f"{base}.{alias.name}" for alias in node.names]
    found = set()
    for name in names:
        if name.split(".")[0] not in OURS:
            continue
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__.py and a/b/__init__.py too
            f = _module_file(".".join(parts[:i]), root)
            if f:
                found.add(f)
    return found


def run_reads(lesson, root=ROOT):
    """The files one test of the lesson's suite, run by this runner, reads besides mine/ (which the
    key takes as text): the files of the lesson's suite; the suite's support, the files of tests/
    that are no lesson's suite (conftest.py, the shared helpers); this runner and the pytest plugin; the lessons'
    LESSON modules, which the registry imports by searching; the code given to the sides of this lesson
    and the ones before it (given/, which mine/ imports); every repo module these import, followed
    import by import; and pytest's settings.  Not read: the other lessons' suites and probes, the
    mistakes modules (the mistake's own text is hashed instead), tools/ outside what is imported."""
    suites = {each.suite for each in LESSONS}
    start = [root / f for f in lesson.suite_files(root)] + [root / RUNNER, root / "tools" / "core" / "plugin.py"]
    start += [f for f in sorted((root / "tests").glob("*.py")) if str(f.relative_to(root)) not in suites]
    start += [f for f in sorted((root / "course" / "lessons").glob("*.py")) if "_" not in f.stem]
    start += [root / path for each in LESSONS[: LESSONS.index(lesson) + 1] for path in each.given]
    seen, todo = set(), [f for f in start if f.is_file()]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        todo += sorted(_imported_files(f, root) - seen)
    return tuple(sorted(str(f.relative_to(root)) for f in seen)) + PYTEST_SETTINGS


def saw_before(lesson, m, lang, reads=None):
    """The key under which what mistake m showed in lang is kept: a hash of what the run reads
    (run_reads, and mine/ as the run has it: the earlier references and this lesson's reference, the
    mistake's text hashed beside it, whatever the learner's own files say), the versions of Python
    and the packages, the environment, and the mistake itself."""
    texts = {**earlier_lessons_written(lesson), lesson: solution_file(lesson).read_text()}
    return fingerprint("mistake", lang, repr(m), reads=reads or run_reads(lesson), mine_texts=texts)


def seen_by_learner(lesson, chosen, lang):
    """{key: (outcome, first line without its pointers, first line as printed, the message whole)} for these
    mistakes of the lesson, each run under COURSE_LANG=lang.  Each mistake runs in every language at
    once (the tables and make check's message checks want both), and what it showed is kept
    (tools/core/cache.py, shared_many) under saw_before's key; a lock per lesson lets a second
    caller wait for the first one's runs instead of making its own."""
    # TRITON_INTERPRET=1 in the workers: the same messages on every machine, the learner's CPU path.
    for m in chosen:
        mistaken_source(lesson, m)  # refuse a stale substitution even when a kept run would answer
    reads = run_reads(lesson)
    keys = {f"{m.key}|{la}": saw_before(lesson, m, la, reads) for m in chosen for la in i18n.LANGS}
    by_key = {m.key: m for m in chosen}

    def run(missing):
        # Each worker takes whole mistakes, its languages one after the other; the workers share them out.
        wanted = list(dict.fromkeys(job.split("|")[0] for job in missing))
        n = min(len(wanted), os.cpu_count() or 2)
        shares = [
            {
                job: (by_key[job.split("|")[0]], job.split("|")[1])
                for job in missing
                if job.split("|")[0] in wanted[i::n]
            }
            for i in range(n)
        ]
        with ThreadPoolExecutor(max_workers=n) as pool:
            return {
                job: seen
                for share in pool.map(lambda jobs: run_in_worker(lesson, jobs), shares)
                for job, seen in share.items()
            }

    found = shared_many(f"mistake-{lesson.id.lower()}", keys, run)
    return {m.key: found[f"{m.key}|{lang}"] for m in chosen}


if __name__ == "__main__":
    worker(sys.argv[1])
