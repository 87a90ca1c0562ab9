"""Make each classic mistake in a copy of the reference, run the test that should catch it, and
print what the learner would see (explainer §8).

    python -m tools.explainers.mistakes --lang zh                     # lesson T4's table
    python -m tools.explainers.mistakes --lesson T5 --lang en         # lesson T5's
    python -m tools.explainers.mistakes --lesson T5 --only sk-extra-last  # one row

A lesson's mistakes are its own file, tools/explainers/mistakes_<lesson>.py (mistakes_t4.py,
mistakes_t5.py): a tuple MISTAKES, each a text substitution in the lesson's reference
(solutions/<module>.py) and the node id of the test in its section of the suite that must catch it.
A lesson with such a file has a generated §8 table, and `make check` runs its mistakes; adding a
lesson's mistakes is adding that file, nothing here.

Each mistaken copy becomes mine/<module>.py of a scratch repo whose mine/ holds the references of
the lessons before it (T5 imports tile_coords and bias_and_activation from the same side's T4), and
one test runs on Triton's interpreter, the way a learner without a GPU runs it, with COURSE_LANG
set to the table's language, so each table quotes the messages a learner reading that language
sees.  To keep `make check` quick, a few worker processes each import torch and triton once and
run their share of the mistakes one pytest session after another, and what they saw is kept in the
temp folder under a hash of everything it depends on and the language, so the tables and `make
check`'s message check (tools/checks/messages.py) share the runs.  A substitution that no longer
matches the reference is an error, so the table cannot quietly describe code that has changed.
Numbers that vary from run to run (relative errors of random inputs) print as x.xe-xx.
"""

import argparse
import hashlib
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from course import ROOT
from course.registry import LESSONS
from course.registry import lesson as lesson_by_id
from tools.checks.common import scratch_repo, solution_file
from tools.study import common as study


@dataclass(frozen=True)
class Mistake:
    key: str
    step: str
    zh: str
    en: str
    section: str
    old: str
    new: str
    test: str  # the node id in the lesson's suite (tests/test_t4.py::...) that catches it
    cause: str = ""  # a key of the lesson's CAUSES: the cause its message must name; "" names none
    table: bool = True  # shown in §8; False: a mutant of our own, which only make check runs


DATA = "tools.explainers.mistakes_{}"  # a lesson's mistakes: DATA.format("t5") holds MISTAKES


def mistakes_of(lesson):
    """The lesson's MISTAKES, from its own file; () for a lesson that has none."""
    name = DATA.format(lesson.id.lower())
    if importlib.util.find_spec(name) is None:
        return ()
    return tuple(importlib.import_module(name).MISTAKES)


def causes_of(lesson):
    """The lesson's CAUSES, {key: (zh words, en words)}: the words a message says when, and only
    when, it has detected that cause (make check: each mistake's message names its own and no other)."""
    name = DATA.format(lesson.id.lower())
    if importlib.util.find_spec(name) is None:
        return {}
    return dict(getattr(importlib.import_module(name), "CAUSES", {}))


def lessons_with_mistakes():
    return [lesson for lesson in LESSONS if mistakes_of(lesson)]


VARYING = re.compile(r"\d\.\d+e[+-]\d+")  # relative errors of random inputs
# The pointers a message ends with: where to read (the table has its own column) and `make loads`.
WHERE = re.compile(
    r"[;；]? ?(?:read content/[\w.]+\.en\.md .*?\(Chinese: content/[\w.]+\.md\)"
    r"|详见 content/[\w.]+\.md .*?（English: content/[\w.]+\.en\.md）)"
)
LOADS = re.compile(r"[.。] ?(?:see your own loads: make loads|用 make loads) .*$")
HEADS = {
    "zh": ("错误", "步骤", "讲解", "抓住它的测试", "你会看到的失败信息（第一行）"),
    "en": ("mistake", "step", "read", "the test that catches it", "what you see (first line)"),
}


def mistaken_source(lesson, m, reference):
    if reference.count(m.old) != 1:
        raise SystemExit(
            f"mistake {m.key!r}: its text occurs {reference.count(m.old)} times in solutions/{lesson.file}, "
            f"not once; update {DATA.format(lesson.id.lower()).replace('.', '/')}.py to the reference as it is now"
        )
    return reference.replace(m.old, m.new)


def earlier_references(lesson):
    """{earlier lesson: its reference}: the mine/ a learner at this lesson has (the lessons before it done)."""
    return {done: solution_file(done).read_text() for done in LESSONS[: LESSONS.index(lesson)]}


def run_in_worker(lesson, chosen, reference, lang):
    """{key: (outcome, first line, first line as printed)} for these mistakes, run by one worker
    process in its own copy with COURSE_LANG=lang."""
    with scratch_repo(earlier_references(lesson) or None) as tmp:
        jobs = Path(tmp) / "jobs.json"
        jobs.write_text(
            json.dumps(
                {"lesson": lesson.id, "jobs": {m.key: [m.test, mistaken_source(lesson, m, reference)] for m in chosen}}
            )
        )
        # `-m` from the scratch copy: its packages come first on sys.path, ahead of the checkout's.
        proc = subprocess.run(
            [sys.executable, "-m", "tools.explainers.mistakes", "--worker", str(jobs)],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=900,
            env=dict(os.environ, TRITON_INTERPRET="1", SOLUTION="0", SEED="0", COURSE_LANG=lang),
        )
        out = Path(tmp) / "seen.json"
        if not out.exists():
            raise SystemExit(f"tools/explainers/mistakes.py worker failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
        return json.loads(out.read_text())


def worker(jobs_path):
    """Inside a scratch repo: one pytest session per mistake, in this one process."""
    import pytest

    from tools.learner import plugin

    given = json.loads(Path(jobs_path).read_text())
    lesson = lesson_by_id(given["lesson"])
    suite_module = Path(lesson.suite).stem
    seen = {}
    for key, (test, source) in given["jobs"].items():
        Path(f"mine/{lesson.file}").write_text(source)
        # all of course/ too: `from course import t4_probes` would find the old probes as an attribute
        for name in [
            n
            for n in sys.modules
            if n.split(".")[0] in ("mine", "course", "conftest", suite_module) or n == plugin.__name__
        ]:
            del sys.modules[name]  # the next session imports the mistaken file afresh
        os.environ[plugin.REPORT] = report = os.path.abspath(f"report-{key}.json")
        pytest.main([f"{lesson.suite}::{test}", "-q", "--tb=no", "-p", plugin.__name__])
        results = json.loads(Path(report).read_text())["results"] if Path(report).exists() else {}
        if len(results) != 1:
            raise SystemExit(f"mistake {key!r}: expected one result for {test}, got {results}")
        (result,) = results.values()
        reason = VARYING.sub("x.xe-xx", LOADS.sub("", WHERE.sub("", result["reason"]))).strip()
        seen[key] = (result["outcome"], reason, result["reason"], result.get("message") or result.get("text", ""))
    Path("seen.json").write_text(json.dumps(seen))


def saw_before(lesson, keys, reference, lang):
    """The cache file for these mistakes: a hash of the reference and the earlier lessons' (mine/
    holds them), the suite, the tools that run it, the versions of Python, torch and triton and the
    language, so any change to what could alter a message misses it."""
    from importlib import metadata

    h = hashlib.sha256(reference.encode())
    for text in earlier_references(lesson).values():
        h.update(text.encode())
    for part in ("course", "tests", "tools"):
        for f in sorted((ROOT / part).rglob("*.py")):
            h.update(f.read_bytes())
    for pkg in ("torch", "triton", "numpy", "pytest"):
        h.update(metadata.version(pkg).encode())
    h.update((sys.version + ",".join(sorted(keys)) + lang).encode())
    return Path(tempfile.gettempdir()) / f"{lesson.id.lower()}-mistakes-{h.hexdigest()[:20]}.json"


def seen_by_learner(lesson, chosen, lang):
    """{key: (outcome, first line without its pointers, first line as printed, the message whole)} for these
    mistakes of the lesson, each run under COURSE_LANG=lang; cached (saw_before)."""
    # TRITON_INTERPRET=1 in the workers: the same messages on every machine, the learner's CPU path.
    reference = solution_file(lesson).read_text()
    for m in chosen:
        mistaken_source(lesson, m, reference)  # refuse a stale substitution even when the cache would answer
    cache = saw_before(lesson, [m.key for m in chosen], reference, lang)
    if cache.exists():
        return json.loads(cache.read_text())
    n = min(len(chosen), os.cpu_count() or 2)
    with ThreadPoolExecutor(max_workers=n) as pool:
        shares = pool.map(lambda i: run_in_worker(lesson, chosen[i::n], reference, lang), range(n))
        found = {k: v for share in shares for k, v in share.items()}
    cache.write_text(json.dumps(found))
    return found


def parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lesson", type=str.upper, default="T4", help="whose mistakes (default T4)")
    p.add_argument("--lang", choices=HEADS, default="zh")
    p.add_argument("--only", nargs="+", metavar="KEY", help="these mistakes alone, by key")
    p.add_argument("--worker", metavar="JOBS", help=argparse.SUPPRESS)
    return p


def main():
    p = parser()
    args = p.parse_args()
    if args.worker:
        return worker(args.worker)
    lesson = lesson_by_id(args.lesson)
    mistakes = mistakes_of(lesson)
    if not mistakes:
        with_some = ", ".join(x.id for x in lessons_with_mistakes())
        p.error(f"{lesson.id} has no {DATA.format(lesson.id.lower())}; lessons with mistakes: {with_some}")
    unknown = sorted(set(args.only or ()) - {m.key for m in mistakes})
    if unknown:
        p.error(f"{lesson.id} has no mistake {', '.join(unknown)}; its keys: {', '.join(m.key for m in mistakes)}")
    chosen = [m for m in mistakes if not args.only or m.key in args.only]
    found = seen_by_learner(lesson, chosen, args.lang)
    seen = [found[m.key] for m in chosen]
    caught = [(m, seen[1]) for m, seen in zip(chosen, seen, strict=True) if seen[0] == "failed" and m.table]
    missed = [m.key for m, seen in zip(chosen, seen, strict=True) if seen[0] != "failed"]
    if missed:
        raise SystemExit(f"the suite no longer catches: {', '.join(missed)}")
    rows = [
        (getattr(m, args.lang), m.step, f"§{m.section}", f"`{m.test.split('[')[0]}`", reason.replace("|", "\\|"))
        for m, reason in caught
    ]
    print(study.table(HEADS[args.lang], rows, markdown=True))


if __name__ == "__main__":
    main()
