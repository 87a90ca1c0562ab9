"""`make check`: prove the repo's invariants, the way rustlings' `dev check` does.

Each module in tools/checks/ contributes functions named check_*; each returns a list of
problems (empty when the invariant holds).  This runs them all and exits non-zero on any problem.
`python tools/check.py NAME...` runs only the checks whose names contain one of the NAMEs.
"""
import importlib
import pkgutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tools.checks  # noqa: E402


def all_checks():
    for info in sorted(pkgutil.iter_modules(tools.checks.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"tools.checks.{info.name}")
        for name in sorted(vars(module)):
            if name.startswith("check_") and callable(getattr(module, name)):
                yield f"{info.name}.{name[len('check_'):]}", getattr(module, name)


def main(selected):
    passed = failed = 0
    for name, fn in all_checks():
        if selected and not any(s in name for s in selected):
            continue
        start = time.time()
        problems = fn()
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
