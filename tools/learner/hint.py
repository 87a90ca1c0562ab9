"""`make hint [STEP=T4.2] [ALL=1]`: the next hint for a step, gentle first, concrete last.

The hints live in course/registry.py, each in Chinese and English, and are printed in the
learner's language (course/i18n.py: COURSE_LANG=zh|en, else a zh_* locale gives Chinese).  How
many of each step's hints you have seen is kept in .hints.json (yours alone, git-ignored), so every
call shows one more; ALL=1 shows again the ones seen so far.  Without STEP it is the first step
not done, as the last scorecard saw it, or, if your file changed since, as its tests say now (run
one step at a time, in order, up to the first failing).
"""

import argparse
import random
import sys

from course import registry
from course.i18n import display_width, lang, say
from course.i18n import wrap as i18n_wrap
from course.messages import read
from tools.learner import grade, state
from tools.learner.step_runs import run_step
from tools.learner.terminal import WIDTH


def first_unfinished_step(lesson):
    """Steps in order, each known from the last scorecard or else run now, up to the first not done."""
    done = state.remembered(lesson) or {}
    for s in lesson.steps:
        if s.id not in done:
            print(
                say(
                    zh=f"正在运行 {s.id} 的测试，看它是否已完成（加 STEP={s.id} 可跳过这一步）……",
                    en=f"running {s.id}'s tests to see whether it is done (STEP={s.id} skips this) ...",
                ),
                flush=True,
            )
            row = run_step(s, seed=random.randrange(10**6))
            state.remember(lesson, {s.id: row.done})
            done[s.id] = row.done
        if not done[s.id]:
            break
    return lesson.next_step(done)


def fill(text, label):
    """Wrap a hint under its label.  Chinese has no spaces to break at, so a line of it is cut by
    display width (a CJK character takes two columns)."""
    width = min(WIDTH, 100)
    return "\n".join(i18n_wrap(text, width, first=label, rest=" " * display_width(label)))


def main(argv=None):
    parser = grade.Parser(description=__doc__.splitlines()[0])
    grade.lesson_flags(parser, "the hints of this step (default: the step to work on)")
    parser.add_argument("--all", action="store_true", help="show every hint seen so far")
    parser.add_argument("--seed", help=argparse.SUPPRESS)  # make passes SEED= to every command; a hint needs none
    args = parser.parse_args(argv)
    try:
        lesson = state.current_lesson(args.lesson)
        s = registry.step(args.step, within=lesson.id) if args.step else first_unfinished_step(lesson)
    except KeyError as e:
        return grade.refuse(grade.not_found(e, args))
    if s is None:
        print(
            say(
                zh=f"每一步都通过了，不需要提示。仍想看的话，用 make hint STEP={lesson.id}.x 指定一步。",
                en=f"Every step passes: no hint needed. Pick one anyway with make hint STEP={lesson.id}.x",
            )
        )
        return 0
    seen = state.hints_seen()
    count = max(1, seen.get(s.id, 0)) if args.all else min(seen.get(s.id, 0) + 1, len(s.hints))
    seen[s.id] = max(count, seen.get(s.id, 0))
    state.see_hints(seen)

    column = 0 if lang() == "zh" else 1  # each hint is a (Chinese, English) pair
    writes = ", ".join(s.writes)
    header = say(zh=f"{s.id} {s.name}（{writes}）；{read(s)}", en=f"{s.id} {s.name} ({writes}); {read(s)}")
    print("\n".join(i18n_wrap(header, min(WIDTH, 100), rest="  ")))  # T4.4's names and sections pass 100 columns
    for n in range(1 if args.all else count, count + 1):
        label = say(zh=f"  提示 {n}/{len(s.hints)}：", en=f"  hint {n} of {len(s.hints)}: ")
        print(fill(s.hints[n - 1][column], label))
    if count < len(s.hints):
        print(say(zh=f"  下一条：make hint STEP={s.id}", en=f"  the next one: make hint STEP={s.id}"))
    else:
        print(
            say(
                zh=f"  这是最后一条提示；全部再看一遍：make hint STEP={s.id} ALL=1",
                en=f"  that was the last hint; all of them again: make hint STEP={s.id} ALL=1",
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
