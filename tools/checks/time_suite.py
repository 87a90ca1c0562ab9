"""How long the whole suite takes on each side: a benchmark, not a timed test.

    python -m tools.checks.time_suite [--runs 3]

Runs the suite --runs times on solutions/ and on the untouched stub, each in a scratch copy of
the repo in a fresh process (so torch and triton are imported every time, as for a learner), and
prints the median and the slowest wall-clock time.  README records what it printed.
"""

import argparse
import os
import platform
import statistics
import time

from tools.checks.common import run_suite
from tools.core.repo import pristine_stubs


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    print(
        f"# {platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{'GPU' if os.environ.get('TRITON_INTERPRET') == '0' else 'interpreter if no GPU'}"
    )
    for label, kwargs in (("solutions/", dict(solution=True)), ("untouched stub", dict(mine_texts=pristine_stubs()))):
        times, counts = [], set()
        for _ in range(args.runs):
            start = time.perf_counter()
            report, _ = run_suite(**kwargs)
            times.append(time.perf_counter() - start)
            counts.add(len(report["collected"]))
        print(
            f"{label:15} {sorted(counts)} tests: median {statistics.median(times):.1f} s, "
            f"slowest {max(times):.1f} s over {args.runs} runs"
        )


if __name__ == "__main__":
    main()
