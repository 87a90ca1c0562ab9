"""Make each classic mistake in a copy of the reference, run the test that should catch it, and
print what the learner would see (explainer §8).

    python -m tools.explainers.mistakes --lang zh                     # the first lesson's table
    python -m tools.explainers.mistakes --lesson T5 --lang en         # lesson T5's
    python -m tools.explainers.mistakes --lesson T5 --only sk-extra-last  # one row

A lesson's mistakes are its own module, course/lessons/<id>_mistakes.py (course/lesson_data.py finds
it): a tuple MISTAKES, each a text substitution in the lesson's reference (solutions/<module>.py)
and the node id of the test in its section of the suite that must catch it.  A lesson with such a
module has a generated §8 table, and `make check` runs its mistakes; adding a lesson's mistakes is
adding that module, nothing here.

The runs themselves (a scratch copy per worker, the mistaken file in mine/, the one test on Triton's
interpreter under COURSE_LANG set to the table's language, so each table quotes the messages a
learner reading that language sees) are tools/core/mistakes.py's, shared with make check's message
checks and kept under a hash of what each run reads.  A substitution that no longer matches the
reference is an error, so the table cannot quietly describe code that has changed.  Numbers that
vary from run to run (relative errors of random inputs) print as x.xe-xx.
"""

from course.lesson_data import mistakes_file, mistakes_of
from course.registry import lesson as lesson_by_id
from tools.core.mistakes import lessons_with_mistakes, seen_by_learner, table_parser
from tools.core.tables import table

HEADS = {
    "zh": ("错误", "步骤", "讲解", "抓住它的测试", "你会看到的失败信息（第一行）"),
    "en": ("mistake", "step", "read", "the test that catches it", "what you see (first line)"),
}


def main():
    p = table_parser(__doc__)
    args = p.parse_args()
    lesson = lesson_by_id(args.lesson)
    mistakes = mistakes_of(lesson)
    if not mistakes:
        names = ", ".join(x.id for x in lessons_with_mistakes())
        p.error(f"{lesson.id} has no {mistakes_file(lesson)}; lessons with mistakes: {names}")
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
