"""`make hint [STEP=T4.2] [ALL=1]`: the next hint for a step, gentle first, nearly the answer last.

The hints live in tools/steps.py.  How many of each step's hints you have seen is kept in
.hints.json (yours alone, git-ignored), so every call shows one more; ALL=1 shows again the ones
seen so far.  Without STEP it is the first step not done, as the last scorecard saw it, or, if your file
changed since, as its tests say now (run one step at a time, in order, up to the first failing).
"""
import argparse
import json
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools import grade  # noqa: E402
from tools.steps import STEPS, step as find_step  # noqa: E402

SEEN = grade.ROOT / ".hints.json"


def first_unfinished_step():
    """Steps in order, each known from the last scorecard or else run now, up to the first not done."""
    done = grade.remembered() or {}
    for s in STEPS:
        if s.id not in done:
            print(f"running {s.id}'s tests to see whether it is done (STEP=T4.x skips this) ...", flush=True)
            row = grade.run_step(s)
            grade.remember([row])
            done[s.id] = row.done
        if not done[s.id]:
            break
    return grade.first_not_done(done)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", help="T4.2, t4.2 or 2; default: the step to work on")
    parser.add_argument("--all", action="store_true", help="show every hint seen so far")
    args = parser.parse_args(argv)
    try:
        s = find_step(args.step) if args.step else first_unfinished_step()
    except KeyError as e:
        print(e.args[0], file=sys.stderr)
        return 2
    if s is None:
        print("Every step passes: no hint needed. Pick one anyway with make hint STEP=T4.x")
        return 0
    seen = json.loads(SEEN.read_text()) if SEEN.exists() else {}
    count = max(1, seen.get(s.id, 0)) if args.all else min(seen.get(s.id, 0) + 1, len(s.hints))
    seen[s.id] = max(count, seen.get(s.id, 0))
    SEEN.write_text(json.dumps(seen, indent=1) + "\n")

    print(f"{s.id} {s.title} ({', '.join(s.writes)}); {s.where_to_read()}")
    for n in range(1 if args.all else count, count + 1):
        print(textwrap.fill(s.hints[n - 1], width=min(grade.WIDTH, 100), initial_indent=f"  hint {n} of {len(s.hints)}: ",
                            subsequent_indent=" " * 14))
    if count < len(s.hints):
        print(f"  the next one: make hint STEP={s.id}")
    else:
        print(f"  that was the last hint; all of them again: make hint STEP={s.id} ALL=1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
