"""`make check`: prove the repo's invariants, the way rustlings' `dev check` does.

Each module in tools/checks/ contributes functions named check_*; each returns a list of
problems (empty when the invariant holds).  This runs them all and exits non-zero on any problem.
`python -m tools.checks NAME...` runs only the checks whose names contain one of the NAMEs.

Each check starts from the same environment: os.environ is put back as it was after every check,
so no check's setting (TRITON_INTERPRET, say) decides how a later one runs.
"""

import importlib
import os
import pkgutil
import sys
import time

import tools.checks

NOT_CHECKS = ("common", "time_suite")  # helpers and benchmarks, no invariants


def all_checks():
    for info in sorted(pkgutil.iter_modules(tools.checks.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in NOT_CHECKS:
            continue
        module = importlib.import_module(f"tools.checks.{info.name}")
        for name in sorted(vars(module)):
            if name.startswith("check_") and callable(getattr(module, name)):
                yield f"{info.name}.{name[len('check_') :]}", getattr(module, name)


def run_isolated(fn):
    """fn's problems, with os.environ restored afterwards whatever fn did to it."""
    saved = dict(os.environ)
    try:
        return fn()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main(selected, checks=None):
    passed = failed = 0
    for name, fn in checks if checks is not None else all_checks():
        if selected and not any(s in name for s in selected):
            continue
        start = time.time()
        problems = run_isolated(fn)
        mark = "ok  " if not problems else "FAIL"
        print(f"{mark} {name}  ({time.time() - start:.1f}s)", flush=True)
        for p in problems:
            print("     - " + p.replace("\n", "\n       "))
        failed += bool(problems)
        passed += not problems
    print(f"\nmake check: {'all invariants hold' if not failed else 'some invariants do not hold'}")
    print(f"check: {passed} passed, {failed} failed")  # the closing line CI reads
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
