"""`make upgrade`: your bodies, moved into the course's current file.

A course update may change the lines around your bodies, the scaffold: a signature, a given
decorator, a given kernel.  A file of yours in mine/ keeps the scaffold it was begun with, and the
tests, written for the current one, may then fail for a reason that is not yours.  `make test` says
so when it sees it (scaffold_notice, below).  `make upgrade` mends it: each file of yours whose
scaffold is not the course's (solutions/ has the current scaffold: outside the marked bodies the two
sides are the same line for line) is first copied to mine/backups/, as `make reset` does, then
written again as the current file with your bodies in it, body for body, in order.  A file whose
bodies do not line up with the current file's (a step added or taken away) is left as it is, with
the reason.  LESSON=T4 upgrades that lesson's file alone.  A scaffold that only gained lines (a helper of
the learner's own outside the bodies) is said to be theirs: the tests run it, make upgrade would not carry it.
"""

import difflib
import sys

from course import registry, seam
from course.i18n import say
from tools.core.bodies import split_bodies
from tools.core.repo import mine_file, pristine_stub, solution_file
from tools.learner.reset import keep_copy, on_chosen_lessons, tell
from tools.learner.terminal import wrap


def numbered_scaffold(text):
    """[(line number, line)] of the lines outside the marked bodies (the marks included), but the
    docstring's first line, which says stub on one side and reference solution on the other: the
    first line that opens a string (line 1 in the course's files; a line the learner put above it,
    an import say, is then named as the line that differs), else line 1."""
    numbered, at = [], 1
    for step, lines in split_bodies(text):
        if step is None:
            numbered += [(at + i, line.rstrip("\n")) for i, line in enumerate(lines)]
        at += len(lines)
    first = next((n for n, line in numbered if line.lstrip().startswith('"""')), 1)
    return [(n, line) for n, line in numbered if n != first]


def first_difference(mine, course):
    """None where the two texts' scaffolds are the same; else (line number in mine, mine's line or
    None, the course's line or None, how many scaffold lines differ in all)."""
    a, b = numbered_scaffold(mine), numbered_scaffold(course)
    ops = difflib.SequenceMatcher(None, [x for _, x in a], [y for _, y in b], autojunk=False).get_opcodes()
    changed = [op for op in ops if op[0] != "equal"]
    if not changed:
        return None
    _, i1, i2, j1, j2 = changed[0]
    lineno = a[i1][0] if i1 < len(a) else (a[-1][0] + 1 if a else 1)
    count = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in changed)
    return lineno, a[i1][1] if i1 < i2 else None, b[j1][1] if j1 < j2 else None, count


def only_added(mine, course):
    """True where every scaffold line that differs is one mine has and the course has not: lines the learner
    added outside the bodies (a helper function of their own, say), none of the course's changed or gone."""
    a, b = numbered_scaffold(mine), numbered_scaffold(course)
    ops = difflib.SequenceMatcher(None, [x for _, x in a], [y for _, y in b], autojunk=False).get_opcodes()
    changed = [op for op in ops if op[0] != "equal"]
    return bool(changed) and all(tag == "delete" for tag, *_ in changed)


def scaffold_notice(lesson):
    """What make test says before grading, for the lesson's file in mine/ and the earlier lessons'
    files it imports: each file whose scaffold is not the course's, with its first such line.  ""
    where every one is the course's, or where solutions/ is graded."""
    if seam.side() != "mine":
        return ""
    notes = []
    for done in registry.LESSONS[: registry.LESSONS.index(lesson) + 1]:
        mine = mine_file(done)
        if not mine.exists():
            continue
        diff = first_difference(mine.read_text(), solution_file(done).read_text())
        if diff is None:
            continue
        lineno, yours, course, count = diff
        if only_added(mine.read_text(), solution_file(done).read_text()):
            notes.append(added_notice(done, lineno, yours, count))
            continue
        none = say(zh="（没有这一行）", en="(no such line)")
        notes.append(
            say(
                zh=f"mine/{done.file}：在你写的代码块之外，有 {count} 行和课程现在的不一样，第一处在第 {lineno} 行：\n"
                f"    你的：  {none if yours is None else yours.strip()}\n"
                f"    课程的：{none if course is None else course.strip()}\n"
                "  测试是照课程现在的这些行写的。这些行如果不是你改的，你的文件就是在课程更新之前开始的："
                "make upgrade 会把你写的代码块搬进现在的文件（你的文件先保存在 mine/backups/）。",
                en=f"mine/{done.file}: outside your steps' bodies, {count} line(s) are not the course's current "
                f"ones, the first at line {lineno}:\n"
                f"    yours:        {none if yours is None else yours.strip()}\n"
                f"    the course's: {none if course is None else course.strip()}\n"
                "  The tests are written for the course's lines.  If you did not change these, your file was begun "
                "before an update of the course: make upgrade moves your bodies into the current file (yours is "
                "kept in mine/backups/ first).",
            )
        )
    return "\n".join(x for line in "\n".join(notes).splitlines() for x in wrap(line.lstrip(), indent(line)))


def added_notice(done, lineno, first, count):
    """The notice for a file whose scaffold only gained lines (the learner's own, outside the bodies): the tests run
    them as they are, and make upgrade would not carry them."""
    return say(
        zh=f"mine/{done.file}：在你写的代码块之外，你加了 {count} 行，第一行在第 {lineno} 行：{first.strip()}\n"
        "  这没问题，测试照样运行它们。不过 make upgrade 只把代码块里的内容搬进课程现在的文件，这些行不会跟着过去"
        "（原文件先存到 mine/backups/）：自己的辅助函数放进某个代码块里最稳妥。",
        en=f"mine/{done.file}: outside your steps' bodies you added {count} line(s), the first at line {lineno}: "
        f"{first.strip()}\n"
        "  That is fine: the tests run them as they are.  But make upgrade carries only your bodies into the "
        "course's current file, so these lines would not move with them (your file is kept in mine/backups/ first): "
        "a helper of your own is safest inside one of the bodies.",
    )


def indent(line):
    return len(line) - len(line.lstrip())


def upgraded(mine, stub, solution):
    """(the current file with mine's bodies, None), or (None, (zh, en): why not).  The current file is
    the stub where its scaffold is the course's, else the solution's scaffold with mine's first line
    (every body then comes from mine)."""
    template = stub if first_difference(stub, solution) is None else solution
    parts, yours = split_bodies(template), [(s, lines) for s, lines in split_bodies(mine) if s is not None]
    wanted = [s for s, _ in parts if s is not None]
    if wanted != [s for s, _ in yours]:
        have = " ".join(s for s, _ in yours) or "-"
        need = " ".join(wanted)
        return None, (
            f"你的代码块依次属于 {have}，现在的文件要的是 {need}：对不上，没有改动",
            f"your bodies belong to {have} in turn, the current file's to {need}: they do not line up, nothing changed",
        )
    bodies = iter(lines for _, lines in yours)
    text = "".join("".join(next(bodies) if s is not None else lines) for s, lines in parts)
    if template is solution:
        first = mine.splitlines(keepends=True)[:1]
        text = "".join(first + text.splitlines(keepends=True)[1:])
    if first_difference(text, solution) is not None:
        return None, ("搬过去之后骨架仍然不一样，没有改动", "the scaffold still differs once moved: nothing changed")
    return text, None


def upgrade(lesson):
    rel, mine = f"mine/{lesson.file}", mine_file(lesson)
    if not mine.exists():
        tell(
            say(
                zh=f"{rel} 不存在：make reset LESSON={lesson.id} 会取回 stub。",
                en=f"{rel} does not exist: make reset LESSON={lesson.id} brings the stub back",
            )
        )
        return 0
    text, course = mine.read_text(), solution_file(lesson).read_text()
    if first_difference(text, course) is None:
        tell(say(zh=f"{rel} 的骨架已经是课程现在的，不用改。", en=f"{rel} already has the course's current scaffold"))
        return 0
    new, why = upgraded(text, pristine_stub(lesson), course)
    if new is None:
        tell(
            say(
                zh=f"{rel}：{why[0]}。可以 make reset（你的文件先保存下来），再把代码块从备份里一块块搬过去。",
                en=f"{rel}: {why[1]}.  make reset (your file is kept first), then move your bodies over from "
                "the copy by hand.",
            ),
            file=sys.stderr,
        )
        return 1
    kept = keep_copy(lesson, mine)
    if kept is None:
        return 1
    mine.write_text(new)
    tell(
        say(
            zh=f"{rel} 现在是课程现在的文件，里面是你写的代码块（对比：diff {kept} {rel}）。",
            en=f"{rel} is now the course's current file with your bodies in it (compare: diff {kept} {rel}).",
        )
    )
    return 0


def main():
    return on_chosen_lessons(upgrade)


if __name__ == "__main__":
    sys.exit(main())
