"""Helpers the checks alone share: the whole suite in a scratch copy, run once per input and kept
(suite_run), and the scheduler's mark (costly).  What other folders share too is in tools/core/."""

import os

from course.registry import LESSONS
from tools.core.cache import fingerprint, reads_of, shared
from tools.core.pytest_run import run_pytest
from tools.core.repo import scratch_repo


def run_suite(mine_texts=None, solution=False, args=(), **env):
    """Run the whole suite (args: pytest's, `-m t5` for one lesson) in a scratch copy of the repo,
    with env added to the environment; return (report, output).

    report is tools/core/plugin.py's: {"collected": [...], "results": {test: {...}}}."""
    with scratch_repo(mine_texts) as tmp:
        env = dict(os.environ, SOLUTION="1" if solution else "0", **env)
        report, _, output = run_pytest(["-q", "--tb=no", *args], tmp, env, timeout=900)
        return report or {"collected": [], "results": {}}, output


def costly(seconds, alone=False):
    """Mark a check for make check's scheduler (tools/checks/__main__.py): about how many seconds it
    takes on the idle 2-core machine with nothing kept (the slowest start first), and whether it must
    run with nothing beside it (it holds a time limit meant for an idle machine)."""

    def mark(fn):
        fn.cost, fn.alone = seconds, alone
        return fn

    return mark


def suite_run(mine_texts=None, solution=False, args=(), **env):
    """run_suite's (report, output), shared: one run per side (solutions/, the stubs, the variants,
    a language) for every check that reads it."""
    texts = {lesson: mine_texts[lesson] for lesson in LESSONS if lesson in (mine_texts or {})}
    key = fingerprint("suite", solution, list(args), sorted(env.items()), reads=reads_of(solution), mine_texts=texts)
    report, output = shared("suite", key, lambda: list(run_suite(texts or None, solution, args, **env)))
    return report, output
