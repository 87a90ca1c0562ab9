"""`make hint [STEP=T4.2] [ALL=1]`: the next hint for a step, gentle first, concrete last.

The hints live in course/registry.py.  How many of each step's hints you have seen is kept in
.hints.json (yours alone, git-ignored), so every call shows one more; ALL=1 shows again the ones
seen so far.  Without STEP it is the first step not done, as the last scorecard saw it, or, if your
file changed since, as its tests say now (run one step at a time, in order, up to the first failing).
"""

import argparse
import os
import random
import sys
import textwrap

from course import registry
from tools.learner import grade, state
from tools.learner.scorecard import WIDTH


def first_unfinished_step(lesson):
    """Steps in order, each known from the last scorecard or else run now, up to the first not done."""
    done = state.remembered(lesson) or {}
    for s in lesson.steps:
        if s.id not in done:
            print(f"running {s.id}'s tests to see whether it is done (STEP={s.id} skips this) ...", flush=True)
            row = grade.run_step(s, seed=random.randrange(10**6))
            state.remember(lesson, {s.id: row.done})
            done[s.id] = row.done
        if not done[s.id]:
            break
    return lesson.next_step(done)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default=os.environ.get("LESSON") or None, help="T4 (default: the first lesson)")
    parser.add_argument("--step", help="T4.2, t4.2 or 2; default: the step to work on")
    parser.add_argument("--all", action="store_true", help="show every hint seen so far")
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)  # make passes SEED= to every command
    args = parser.parse_args(argv)
    try:
        lesson = registry.lesson(args.lesson)
        s = registry.step(args.step, within=lesson.id) if args.step else first_unfinished_step(lesson)
    except KeyError as e:
        print(e.args[0], file=sys.stderr)
        return 2
    if s is None:
        print(f"Every step passes: no hint needed. Pick one anyway with make hint STEP={lesson.id}.x")
        return 0
    seen = state.hints_seen()
    count = max(1, seen.get(s.id, 0)) if args.all else min(seen.get(s.id, 0) + 1, len(s.hints))
    seen[s.id] = max(count, seen.get(s.id, 0))
    state.see_hints(seen)

    print(f"{s.id} {s.title} ({', '.join(s.writes)}); {s.where_to_read()}")
    for n in range(1 if args.all else count, count + 1):
        print(
            textwrap.fill(
                s.hint(n),
                width=min(WIDTH, 100),
                initial_indent=f"  hint {n} of {len(s.hints)}: ",
                subsequent_indent=" " * 14,
            )
        )
    if count < len(s.hints):
        print(f"  the next one: make hint STEP={s.id}")
    else:
        print(f"  that was the last hint; all of them again: make hint STEP={s.id} ALL=1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
