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
sees.  To keep `make check` quick, a worker process per core imports torch and triton once and
runs its share of the mistakes one pytest session after another, each mistake in every language
(the tables of both explainers and make check's message checks want both), and what each mistake
showed in each language is kept (tools/core/cache.py, shared_many) under a hash of what its run
reads and of the mistake itself: the tables and make check's message checks
(tools/checks/messages.py) share the runs, and a mistake added to a lesson's file runs alone.
A substitution that no longer matches the reference is an error, so the table cannot quietly
describe code that has changed.
Numbers that vary from run to run (relative errors of random inputs) print as x.xe-xx.
"""

import argparse
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from course import i18n
from course.registry import LESSONS
from course.registry import lesson as lesson_by_id
from tools.core.cache import RUN_READS, fingerprint, shared_many
from tools.core.repo import scratch_repo, solution_file
from tools.core.tables import table


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


def run_in_worker(lesson, jobs):
    """{job: (outcome, first line, first line as printed, message)} for jobs {job: (mistake, lang)},
    run one after another by one worker process in its own copy, each under COURSE_LANG=lang."""
    reference = solution_file(lesson).read_text()
    with scratch_repo(earlier_references(lesson) or None) as tmp:
        given = Path(tmp) / "jobs.json"
        given.write_text(
            json.dumps(
                {
                    "lesson": lesson.id,
                    "jobs": {
                        job: [m.test, mistaken_source(lesson, m, reference), lang] for job, (m, lang) in jobs.items()
                    },
                }
            )
        )
        # `-m` from the scratch copy: its packages come first on sys.path, ahead of the checkout's.
        proc = subprocess.run(
            [sys.executable, "-m", "tools.explainers.mistakes", "--worker", str(given)],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=900,
            env=dict(os.environ, TRITON_INTERPRET="1", SOLUTION="0", SEED="0"),
        )
        out = Path(tmp) / "seen.json"
        if not out.exists():
            raise SystemExit(f"tools/explainers/mistakes.py worker failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
        return json.loads(out.read_text())


def worker(jobs_path):
    """Inside a scratch repo: one pytest session per job (a mistake in a language), in this one process."""
    import pytest

    from tools.core import plugin

    given = json.loads(Path(jobs_path).read_text())
    lesson = lesson_by_id(given["lesson"])
    suite_module = Path(lesson.suite).stem
    seen = {}
    for i, (job, (test, source, lang)) in enumerate(given["jobs"].items()):
        Path(f"mine/{lesson.file}").write_text(source)
        # all of course/ too: `from course.lessons import t4_probes` would find the old probes as an attribute
        for name in [
            n
            for n in sys.modules
            if n.split(".")[0] in ("mine", "course", "conftest", suite_module) or n == plugin.__name__
        ]:
            del sys.modules[name]  # the next session imports the mistaken file afresh
        os.environ["COURSE_LANG"] = lang
        os.environ[plugin.REPORT] = report = os.path.abspath(f"report-{i}.json")
        pytest.main([f"{lesson.suite}::{test}", "-q", "--tb=no", "-p", plugin.__name__])
        results = json.loads(Path(report).read_text())["results"] if Path(report).exists() else {}
        if len(results) != 1:
            raise SystemExit(f"mistake {job!r}: expected one result for {test}, got {results}")
        (result,) = results.values()
        reason = VARYING.sub("x.xe-xx", LOADS.sub("", WHERE.sub("", result["reason"]))).strip()
        seen[job] = (result["outcome"], reason, result["reason"], result.get("message") or result.get("text", ""))
    Path("seen.json").write_text(json.dumps(seen))


# What a mistake's run reads besides the suite's inputs (tools/core/cache.py, RUN_READS): this
# file, which runs it.  Its data file is not read: the mistake itself (its text) is hashed instead.
MISTAKE_READS = RUN_READS + ("tools/explainers/mistakes.py",)


def saw_before(lesson, m, lang):
    """The key under which what mistake m showed in lang is kept: a hash of what the run reads (the
    suite, what it imports, the reference and the earlier lessons' in mine/, this machinery, the
    versions of Python and the packages, the environment) and of the mistake itself, so any change
    that could alter its message misses it, and a mistake added to a lesson's file runs alone."""
    # mine/ as the run has it: the earlier references, and this lesson's file made from its reference
    # and the mistake (hashed both), whatever the learner's own file says
    texts = {**earlier_references(lesson), lesson: solution_file(lesson).read_text()}
    return fingerprint("mistake", lang, repr(m), reads=MISTAKE_READS, mine_texts=texts)


def seen_by_learner(lesson, chosen, lang):
    """{key: (outcome, first line without its pointers, first line as printed, the message whole)} for these
    mistakes of the lesson, each run under COURSE_LANG=lang.  Each mistake runs in every language at
    once (the tables and make check's message checks want both), and what it showed is kept
    (tools/core/cache.py, shared) under saw_before's key; a lock per lesson lets a second
    caller wait for the first one's runs instead of making its own."""
    # TRITON_INTERPRET=1 in the workers: the same messages on every machine, the learner's CPU path.
    reference = solution_file(lesson).read_text()
    for m in chosen:
        mistaken_source(lesson, m, reference)  # refuse a stale substitution even when a kept run would answer
    keys = {f"{m.key}|{la}": saw_before(lesson, m, la) for m in chosen for la in i18n.LANGS}
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
    print(table(HEADS[args.lang], rows, markdown=True))


if __name__ == "__main__":
    main()
