"""Drawing the scorecard: a row per step, the first failure of the step to work on, the next
step and where to read.  Plain text; colour only on a terminal that wants it."""

import os
import shutil
import sys
import textwrap

from course import seam
from tools.learner.plugin import short

COLOR = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
WIDTH = min(120, shutil.get_terminal_size((100, 24)).columns)


def paint(text, code):
    return f"\033[{code}m{text}\033[0m" if COLOR else text


def fit(text, indent):
    text = " ".join(text.split())
    room = WIDTH - indent
    return " " * indent + (text if len(text) <= room else text[: room - 3] + "...")


def bar(row, width=10):
    filled = round(width * row.passed / row.total) if row.total else 0
    if row.total and row.passed < row.total:
        filled = min(filled, width - 1)  # a full bar means done
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def next_step(lesson, rows):
    """The step to work on next among these rows (a single step's row: that step, unless done)."""
    done = {s.id: True for s in lesson.steps} | {r.step.id: r.done for r in rows}
    return lesson.next_step(done)


def blocker(rows):
    """What stopped every step alike (the file does not import, pytest cannot start), else ''."""
    found = {r.blocker for r in rows}
    return found.pop() if len(found) == 1 else ""


def rows_table(lesson, rows, blocked=""):
    titles = [r.step.title + (" (advanced)" if r.step.advanced else "") for r in rows]
    title_width = max(map(len, titles))
    lines = [paint(f"Lesson {lesson.id} scorecard: {seam.path(lesson)}", "1")]
    for r, title in zip(rows, titles, strict=False):
        colour = "32" if r.done else ("33" if r.step.advanced else "31")
        mark = "[x]" if r.done else "[ ]"
        lines.append(paint(f"  {mark} {r.step.id}  {title:<{title_width}}  {bar(r)} {r.passed:>3}/{r.total}", colour))
        if not r.done and not blocked:  # that one reason is printed once, above
            lines.append(fit(r.reason, 10))
    if len(rows) > 1:
        required = [r for r in rows if not r.step.advanced]
        lines.append(
            f"  {sum(r.done for r in required)} of {len(required)} required steps done, "
            f"{sum(r.passed for r in rows)} of {sum(r.total for r in rows)} checks pass "
            f"(advanced steps are optional)"
        )
    return lines


def advice(lesson, rows, blocked, seed):
    s = next_step(lesson, rows)
    if blocked:
        return [paint("  Next: fix what is named above, then make test again.", "1")]
    if s is None:
        return [
            paint(
                "  Every step passes, the advanced one included. Well done."
                if len(rows) > 1
                else f"  {rows[0].step.id} passes.",
                "1;32",
            )
        ]
    lines = []
    if s.advanced and len(rows) > 1:
        lines.append(paint("  Every required step passes: the lesson is done.", "1;32"))
    label = "Optional next" if s.advanced and len(rows) > 1 else "Next"
    lines += [
        paint(line, "1")
        for line in textwrap.wrap(
            f"{label}: {s.id} {s.title}: {', '.join(s.writes)} in {seam.path(lesson)}",
            WIDTH,
            initial_indent="  ",
            subsequent_indent=" " * 8,
        )
    ]
    lines += [
        f"        {s.where_to_read()}",
        f"        stuck? make hint STEP={s.id}"
        + (f"    this step alone: make test STEP={s.id}" if len(rows) > 1 else ""),
    ]
    if any(not r.done and not r.broke for r in rows):
        lines.append(
            f"        these random inputs again: make test SEED={seed}" + (f" STEP={s.id}" if len(rows) == 1 else "")
        )
    if lesson.note and s.id in lesson.note_steps:
        lines += textwrap.wrap("Note: " + lesson.note, WIDTH, initial_indent=" " * 8, subsequent_indent=" " * 8)
    return lines


def first_failure(row, limit=20):
    text = [w for line in row.detail.splitlines() for w in textwrap.wrap(line, WIDTH - 4) or [""]]
    more = [f"    ... {len(text) - limit} more lines"] if len(text) > limit else []
    title = "stopped here" if row.broke else "the first failing check"
    return [paint(f"{row.step.id}, {title}:", "1"), *("    " + t for t in text[:limit]), *more, ""]


def failure_list(row, limit=12):
    """Every failing check of one step, a line each; checks failing for the same reason share one."""
    groups = {}
    for test, reason in row.failures:
        groups.setdefault(reason, []).append(short(test))
    lines = [
        f"{names[0]}{f' and {len(names) - 1} more' if len(names) > 1 else ''}: {reason}"
        for reason, names in groups.items()
    ]
    more = [f"    ... {len(lines) - limit} more"] if len(lines) > limit else []
    n = len(row.failures)
    return (
        [
            paint(f"{row.step.id}: {n} failing check{'s' if n != 1 else ''}", "1"),
            *(fit(x, 4) for x in lines[:limit]),
            *more,
            "",
        ]
        if lines
        else []
    )


def show(lesson, rows, seed, details, listing=False):
    blocked = blocker(rows)
    out = []
    if blocked:
        title, *rest = blocked.splitlines()
        out += [paint(title, "1;31"), *rest, ""]
    elif details:
        row = next((r for r in rows if r.step is next_step(lesson, rows)), None)
        out += first_failure(row) if row is not None and row.detail else []
        out += failure_list(row) if row is not None and listing else []
    out += rows_table(lesson, rows, blocked) + advice(lesson, rows, blocked, seed)
    print("\n".join(out))
