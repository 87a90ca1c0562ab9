"""`make test` and `make grade`: where you stand, one row per step of a lesson.

    python -m tools.learner.grade                the scorecard of your lesson (mine/; SOLUTION=1: solutions/)
    python -m tools.learner.grade --details      also the first failure of the step to work on (make test)
    python -m tools.learner.grade --step T4.2    that step's row alone (make grade STEP=T4.2)
    python -m tools.learner.grade --details --step T4.2    every failing check listed (make test STEP=T4.2)
    python -m tools.learner.grade --seed 1234    replay a run's random inputs exactly (make test SEED=1234)

Each step runs in its own pytest process (`pytest -m t4_2 -p tools.core.plugin`), so a file that
does not import, a test that hangs (time_limits.LEARNER_TIMEOUT_S) or a kernel that crashes the
interpreter costs that step only, and the scorecard is always printed.  The rows are read from the
plugin's report (tools/core/plugin.py); scorecard.py draws them, state.py remembers them.  The
parts: time_limits.py (the limits, and why), step_runs.py (a step's process), step_row.py (its
report read into a row), upgrade.py (the notice of a file begun before a course update); this file is the
command line.
Exit status 0 once every required step passes (or, with --step, that step).
"""

import argparse
import os
import random
import sys

from course import registry, seam
from course.i18n import say
from tools.learner import scorecard, state
from tools.learner.step_runs import Live, run_steps
from tools.learner.terminal import wrap
from tools.learner.upgrade import scaffold_notice


class Parser(argparse.ArgumentParser):
    """argparse for make test, grade, watch and hint: a command line it cannot read (STEP="T4.2 T4.3")
    is refused in the learner's language (argparse's own words inside stay English), pointing at make
    help, not with argparse's usage line for a python module the learner did not type."""

    def error(self, message):
        self.exit(
            2,
            say(
                zh=f"命令行有误：{message}（STEP=、LESSON=、SEED= 后面各只写一项，不带空格；make help 列出各个命令）\n",
                en=f"{message} (STEP=, LESSON= and SEED= take one word each, no spaces; make help lists "
                "the commands)\n",
            ),
        )


def lesson_flags(parser, step_help):
    """--lesson and --step, as make test, make watch and make hint take them (LESSON=, STEP=)."""
    parser.add_argument(
        "--lesson",
        default=os.environ.get("LESSON") or None,
        help="a lesson's id (default: the first lesson whose required steps have not all passed)",
    )
    parser.add_argument("--step", help=f"{step_help}: a step's id, in any case, or its number in the lesson")


def seed_flag(parser, help):
    """--seed, as make passes SEED=: read by seed_of, so that SEED=abc gets words, not argparse's."""
    parser.add_argument("--seed", default=None, help=help)


def seed_of(args, default=None):
    """(seed, None): --seed, else SEED, else `default`; or (None, words) where that is no whole number."""
    text = args.seed if args.seed is not None else os.environ.get("SEED") or None
    if text is None:
        return default, None
    try:
        return int(text), None
    except ValueError:
        return None, say(
            zh=f"SEED={text} 不是整数：SEED= 后面写一次运行打印的那个数（例如 make test SEED=123456），"
            "不写 SEED 就是每次随机",
            en=f"SEED={text} is not a whole number: give SEED= the number a run printed (make test "
            "SEED=123456, say), or leave SEED out for new random inputs",
        )


def choose(args):
    """(lesson, steps to run) from --step and --lesson."""
    lesson = state.current_lesson(args.lesson)
    if args.step:
        s = registry.step(args.step, within=lesson.id)
        return s.lesson, [s]
    return lesson, list(lesson.steps)


def why_this_lesson(lesson):
    """With no LESSON=, the first lesson whose required steps were not all seen to pass is graded: where a later
    lesson has a step seen passing (make test LESSON=T5 run before), say why this one, and how to grade that."""
    later = registry.LESSONS[registry.LESSONS.index(lesson) + 1 :]
    later = [other for other in later if any((state.remembered(other) or {}).values())]
    if later:
        name = later[-1].id
        words = say(
            zh=f"这次评的是 {lesson.id}：没有给 LESSON= 时，评的是第一课还没见到必做步骤全部通过的课（文件改过之后也要"
            f"重新评过才算）；评 {name} 用 make test LESSON={name}",
            en=f"grading {lesson.id}: with no LESSON=, the first lesson whose required steps have not all been seen "
            f"to pass is graded (a file changed since is graded again); for {name}: make test LESSON={name}",
        )
        print("\n".join(wrap(words, 2, first="")), flush=True)


def not_found(error, args):
    """The registry's KeyError for a --lesson or --step that names nothing, in the learner's language."""
    lessons = ", ".join(lesson.id for lesson in registry.LESSONS)
    steps = ", ".join(registry.BY_ID)
    if str(error.args[0]).startswith("no lesson"):
        return say(
            zh=f"没有 {args.lesson!r} 这一课；可选的课：{lessons}",
            en=f"no lesson {args.lesson!r}; lessons are {lessons}",
        )
    return say(zh=f"没有 {args.step!r} 这一步；可选的步骤：{steps}", en=f"no step {args.step!r}; steps are {steps}")


def refuse(words):
    """A command line that names nothing (STEP=T9.9, SEED=abc): its words on stderr, wrapped; exit status 2."""
    print("\n".join(wrap(words, 2, first="")), file=sys.stderr)
    return 2


def note_earlier_failures(rows):
    """A step whose process crashed or hung, after a step that does not pass yet, says so: later
    steps run the earlier steps' code (a tile schedule past the rows sends T6.3's loads out of
    bounds), so the crash may not be its own.  Said as a possibility: nothing here has seen the cause."""
    for i, row in enumerate(rows):
        before = [r.step.id for r in rows[:i] if not r.done and not r.step.advanced]
        if row.broke and before:
            row.reason += say(
                zh=f"；前面的 {before[0]} 还没通过，它的代码这里也会跑，崩溃可能来自那里：先把它改好",
                en=f"; an earlier step, {before[0]}, does not pass yet and its code runs here too, so the crash "
                "may come from there: fix it first",
            )


def main(argv=None):
    parser = Parser(description=__doc__.splitlines()[0])
    lesson_flags(parser, "grade this step alone")
    parser.add_argument("--details", action="store_true", help="show the next step's first failure in full")
    seed_flag(parser, "the seed of every random input (default: SEED, else random)")
    args = parser.parse_args(argv)
    seed, bad = seed_of(args, random.randrange(10**6))
    if bad:
        return refuse(bad)
    try:
        lesson, steps = choose(args)
    except KeyError as e:
        return refuse(not_found(e, args))
    if not args.lesson and not args.step:
        why_this_lesson(lesson)
    if len(steps) > 1 and sys.stdout.isatty():
        print(
            say(
                zh=f"正在评分 {seam.path(lesson)}：{len(steps)} 个步骤，各跑在自己的进程里……",
                en=f"grading {seam.path(lesson)}: {len(steps)} steps, each in its own process ...",
            ),
            flush=True,
        )
    try:
        rows = run_steps(steps, seed, Live())
    except KeyboardInterrupt:
        print(say(zh="\n已中断：这次没有成绩单", en="\ninterrupted: no scorecard this time"), file=sys.stderr)
        return 130
    note_earlier_failures(rows)
    finished = [] if args.lesson or args.step else state.finished_before(lesson)
    scorecard.show(
        lesson,
        rows,
        seed,
        details=args.details,  # make test; make grade, STEP= or not, is the card alone
        listing=args.details and bool(args.step),
        finished=finished,
        whole=not args.step,
    )
    notice = scaffold_notice(lesson)  # last, where it is read: a failure above may be its doing
    if notice:
        print("\n" + notice)
    state.remember(lesson, {r.step.id: r.done for r in rows})
    return 0 if all(r.done for r in rows if not r.step.advanced or args.step) else 1


if __name__ == "__main__":
    sys.exit(main())
