"""`make check`: prove the repo's invariants, the way rustlings' `dev check` does.

Each module in tools/checks/ contributes functions named check_*; each returns a list of
problems (empty when the invariant holds).  This runs them all and exits non-zero on any problem.
`python -m tools.checks NAME...` runs only the checks whose names contain one of the NAMEs;
`-j N` runs N at once (default: one per core; `-j 1` runs them one after another in this process).

Each check starts from the same environment: os.environ is put back as it was after every check,
and with -j above 1 each check runs in its own forked process, so no check's setting
(TRITON_INTERPRET, say) decides how a later one runs.  Most of a check's time is spent in the
processes it starts (pytest, the grader, the tools), so checks side by side keep both cores busy;
those are forked from this process once it has imported torch and triton (course/warm.py).
The slowest start first (a check's `cost`, tools/checks/common.py); a check marked `alone` (it
times something against a limit meant for an idle machine) runs with nothing beside it.  The runs
that several checks read are shared and kept (tools/core/cache.py, shared): see README, "make check".
"""

import argparse
import importlib
import multiprocessing
import os
import pkgutil
import resource
import sys
import time
import traceback
from multiprocessing.connection import wait

import tools.checks
from course import warm
from tools.core import cache

NOT_CHECKS = ("common", "time_suite")  # helpers and benchmarks, no invariants


def all_checks():
    for info in sorted(pkgutil.iter_modules(tools.checks.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in NOT_CHECKS:
            continue
        try:
            module = importlib.import_module(f"tools.checks.{info.name}")
        except Exception:  # noqa: BLE001 - a module that does not import is a failed check, not a crash
            said = f"tools/checks/{info.name}.py does not import:\n{traceback.format_exc()}"
            yield f"{info.name}.imports", lambda said=said: [said]
            continue
        for name in sorted(vars(module)):
            if name.startswith("check_") and callable(getattr(module, name)):
                yield f"{info.name}.{name[len('check_') :]}", getattr(module, name)


def run_isolated(fn):
    """fn's problems, with os.environ restored afterwards whatever fn did to it.  A check that
    raises fails with its traceback, and the runs it read are not kept (tools/core/cache.py, forget_used)."""
    saved = dict(os.environ)
    cache.forget_used(keep=True)  # what earlier checks of this process read is theirs
    try:
        problems = list(fn())
    except Exception:  # noqa: BLE001 - any error of a check is its failure, reported with its traceback
        problems = [f"the check raised:\n{traceback.format_exc()}"]
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if problems:  # a failure may be the machine's (a timeout under load): the next make check runs it again
        cache.forget_used()
    return problems


def cpu_seconds():
    """user + system time of this process and of the processes it waited for."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _child(fn, conn):
    try:
        problems = run_isolated(fn)
        conn.send((problems, cpu_seconds()))
    finally:
        conn.close()


def run_parallel(checks, jobs, report):
    """Run the checks, `jobs` at once, each in a forked process; report(name, problems, seconds)
    as each ends.  The costliest start first; a check marked alone waits for the running ones to
    end, and nothing starts beside it."""
    fork = multiprocessing.get_context("fork")
    alone = lambda fn: getattr(fn, "alone", False)  # noqa: E731
    waiting = sorted(checks, key=lambda c: (not alone(c[1]), -getattr(c[1], "cost", 0)))
    running = {}  # connection: (name, process, start)
    while waiting or running:
        while waiting and len(running) < jobs:
            name, fn = waiting[0]
            if running and (alone(fn) or any(alone(r[3]) for r in running.values())):
                break
            waiting.pop(0)
            here, there = fork.Pipe(duplex=False)
            proc = fork.Process(target=_child, args=(fn, there), name=name, daemon=True)
            proc.start()
            there.close()
            running[here] = (name, proc, time.time(), fn)
        for conn in wait(list(running)):
            name, proc, start, _ = running.pop(conn)
            try:
                problems, cpu = conn.recv()
            except EOFError:
                problems, cpu = None, 0.0
            proc.join()
            if problems is None:
                problems = [f"the check's process died (exit status {proc.exitcode}) before it answered"]
            report(name, problems, time.time() - start, cpu)


def main(selected, checks=None, jobs=1):
    chosen = [(n, f) for n, f in (checks if checks is not None else all_checks())]
    chosen = [(n, f) for n, f in chosen if not selected or any(s in n for s in selected)]
    passed = failed = 0

    def report(name, problems, seconds, cpu):
        nonlocal passed, failed
        mark = "ok  " if not problems else "FAIL"
        print(f"{mark} {name}  ({seconds:.1f}s, {cpu:.1f}s CPU)", flush=True)
        for p in problems:
            print("     - " + p.replace("\n", "\n       "), flush=True)
        failed += bool(problems)
        passed += not problems

    began, cpu = time.time(), cpu_seconds()
    if any(getattr(f, "cost", 0) for _, f in chosen):  # the checks that start pythons start them warm
        warm.warm_up()
    if jobs > 1 and len(chosen) > 1:
        run_parallel(chosen, jobs, report)
    else:
        for name, fn in chosen:
            start, cpu = time.time(), cpu_seconds()
            report(name, run_isolated(fn), time.time() - start, cpu_seconds() - cpu)
    print(f"\nmake check: {'all invariants hold' if not failed else 'some invariants do not hold'}")
    print(
        f"({len(chosen)} checks, {jobs} at once: {time.time() - began:.0f} s, {cpu_seconds() - cpu:.0f} s of CPU; "
        f"runs kept in {cache.CACHE})"
    )
    print(f"check: {passed} passed, {failed} failed")  # the closing line CI reads
    return 1 if failed else 0


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m tools.checks", description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="run only the checks whose names contain one of these")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="checks at once (default: cores)")
    return p.parse_args(argv)


if __name__ == "__main__":
    args = parse(sys.argv[1:])
    sys.exit(main(args.names, jobs=max(1, args.jobs)))
