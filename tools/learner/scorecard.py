"""Drawing the scorecard: a row per step, the first failure of the step to work on, the next
step and where to read; for one step (make test STEP=T4.2) every failing check in full, those that
fail the same way about their own cases once with a line counting the rest, and which cases pass,
named in words (tools/core/case_labels.py).  Plain text, colour only on a terminal that wants it
(terminal.py); Chinese or English as course.i18n chooses (COURSE_LANG=zh|en, else the locale).
One step's failures, grouped, and its pass/fail pattern are worked out in failure_blocks.py."""

import re

from course import i18n, seam
from course.i18n import say
from course.messages import read, stub_reached
from tools.learner.failure_blocks import case_name, every_failure, which_pass
from tools.learner.terminal import paint, wrap


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


# The suite's reason for a check that needs a GPU (skipif INTERPRETING, reason="GPU only: ...").
GPU_ONLY = re.compile(r"\s*GPU only\b", re.I)


def not_run_line(row):
    """What the suite did not check here, in the learner's words ("6 checks need a GPU and did not
    run here"), from its own skip marks; "" when every check ran."""
    gpu = sum(bool(GPU_ONLY.match(why)) for _, why in row.skipped)
    other = len(row.skipped) - gpu
    parts = []
    if gpu:
        parts.append(
            say(
                zh=f"{gpu} 个检查需要 GPU，这里没有运行",
                en=f"{gpu} check{'s' * (gpu != 1)} need{'s' * (gpu == 1)} a GPU and did not run here",
            )
        )
    if other:
        parts.append(
            say(
                zh=f"{other} 个检查被测试套件在这里跳过",
                en=f"{other} check{'s' * (other != 1)} the suite skips here did not run",
            )
        )
    return say(zh="；", en="; ").join(parts)


def not_run_listing(row):
    """make test STEP=: the checks that did not run here, each named, and why (the suite's reason)."""
    if not row.skipped:
        return []
    lines = [
        paint(
            f"{row.step.id}: {not_run_line(row)}" if i18n.lang() == "en" else f"{row.step.id}：{not_run_line(row)}", "1"
        )
    ]
    for test, why in row.skipped:
        said = (
            say(zh="需要 GPU", en="needs a GPU")
            if GPU_ONLY.match(why)
            else say(zh=f"跳过：{why}", en=f"skipped: {why}")
        )
        lines += wrap(f"{case_name(row, test)}{say(zh='：', en=': ')}{said}", 6, first="  ")
    return [*lines, ""]


def rows_table(lesson, rows, blocked="", whole=False):
    """The title and one line per row; whole: the rows are the whole lesson (make test), so a
    line sums them up.  Else they are steps picked out of it (make test STEP=, make watch)."""
    titles = [r.step.name + say(zh="（进阶）", en=" (advanced)") * r.step.advanced for r in rows]
    title_width = max(map(i18n.display_width, titles))  # a CJK character takes two columns
    lines = [
        paint(
            say(
                zh=f"{lesson.id} 课成绩单：{seam.path(lesson)}", en=f"Lesson {lesson.id} scorecard: {seam.path(lesson)}"
            ),
            "1",
        )
    ]
    for r, title in zip(rows, titles, strict=False):
        colour = "32" if r.done else ("33" if r.step.advanced else "31")
        mark = "[x]" if r.done else "[ ]"
        padded = title + " " * (title_width - i18n.display_width(title))
        lines.append(paint(f"  {mark} {r.step.id}  {padded}  {bar(r)} {r.passed:>3}/{r.total}", colour))
        if not r.done and not blocked:  # that one reason is printed once, above
            lines += wrap(r.reason, 10)
        elif r.skipped and not blocked:  # a pass of what ran: say what did not (blocked: nothing ran at all)
            lines += wrap(not_run_line(r), 10)
    if whole:
        required = [r for r in rows if not r.step.advanced]
        done, checks, total = sum(r.done for r in required), sum(r.passed for r in rows), sum(r.total for r in rows)
        skipped = 0 if blocked else sum(len(r.skipped) for r in rows)  # blocked: no check ran, none was skipped
        optional = len(required) < len(rows)  # a lesson with an advanced step
        lines += wrap(
            say(
                zh=f"必做步骤完成 {done}/{len(required)}，检查通过 {checks}/{total}"
                + ("（进阶步骤可选）" if optional else "")
                + (f"；另有 {skipped} 个检查这里没有运行" if skipped else ""),
                en=f"{done} of {len(required)} required steps done, {checks} of {total} checks pass"
                + (" (advanced steps are optional)" if optional else "")
                + (f"; {skipped} more did not run here" if skipped else ""),
            ),
            2,
        )
    return lines


# A failure about handing the work to torch (point of the lesson's note): the suite's fixture that
# makes torch's products raise (HandedToTorch), a torch product named, or "torch" as a word on its
# own (" torch 的运算", "not in torch after it"); "torch.float16" in a case's name is not one.
ABOUT_TORCH = re.compile(r"HandedToTorch|\btorch\.(?:matmul|mm|bmm|addmm|einsum|tensordot|mv|nn)\b|\btorch\b(?![.\w])")


def about_torch(rows, s):
    return any(
        ABOUT_TORCH.search(f"{kind} {message}")
        for r in rows
        if r.step is s
        for kind, message in [(r.kinds.get(t, ""), r.messages.get(t, "")) for t, _ in r.failures]
    )


def next_lesson(lesson):
    """The lesson after this one in the registry, or None."""
    from course.registry import LESSONS

    at = LESSONS.index(lesson)
    return LESSONS[at + 1] if at + 1 < len(LESSONS) else None


def first_stub(rows, s):
    """(the step, the names, the sections) the row of s sends the learner to when its first failure is another
    step's body not written yet (T6.2's checks reach T4.1's tile_coords), as the row says it; else None."""
    row = next((r for r in rows if r.step is s and r.failures), None)
    reached = stub_reached(row.failures[0][1]) if row is not None else None
    return reached if reached is not None and reached[0] is not s else None


def advice(lesson, rows, blocked, seed, whole=False):
    """What to do next; whole: rows are the whole lesson (then a lesson done shows the next lesson)."""
    s = next_step(lesson, rows)
    if blocked:
        return [
            paint(
                say(
                    zh="  下一步：先修好上面指出的问题，再跑一次 make test。",
                    en="  Next: fix what is named above, then make test again.",
                ),
                "1",
            )
        ]
    after = next_lesson(lesson) if whole else None
    then = (
        [  # wrapped as every other line of the card: it is the longest (README: "a long line wraps")
            paint(line, "1")
            for line in wrap(
                say(
                    zh=f"下一课：{after.id}（{after.title_zh or after.title}），再运行一次 make test 就会给它评分；"
                    f"{read(after.steps[0], titled=True)}",
                    en=f"Next lesson: {after.id}, {after.title}: run make test again and it grades that one; "
                    f"{read(after.steps[0], titled=True)}",
                ),
                8,
                first="  ",
            )
        ]
        if after is not None
        else []
    )
    if s is None:
        if not whole:
            passed = ", ".join(r.step.id for r in rows)
            return [paint(say(zh=f"  {passed} 通过。", en=f"  {passed} passes."), "1;32")]
        every = (
            say(
                zh="  所有步骤都通过了，进阶那一步也是。干得漂亮。",
                en="  Every step passes, the advanced one included. Well done.",
            )
            if any(r.step.advanced for r in rows)
            else say(zh="  所有步骤都通过了。干得漂亮。", en="  Every step passes. Well done.")
        )
        return [paint(every, "1;32")] + then
    lines = []
    if s.advanced and whole:
        lines.append(
            paint(
                say(zh="  必做步骤全部通过：这一课完成了。", en="  Every required step passes: the lesson is done."),
                "1;32",
            )
        )
        lines += then
    optional = s.advanced and whole
    do, writes, sections = first_stub(rows, s) or (s, s.writes, ())
    writes = ", ".join(writes)
    nxt = say(
        zh=f"{'可选的下一步' if optional else '下一步'}：{do.id} {do.name}，在 {seam.path(do.lesson)} 里写 {writes}",
        en=f"{'Optional next' if optional else 'Next'}: {do.id} {do.name}: {writes} in {seam.path(do.lesson)}",
    )
    lines += [paint(line, "1") for line in wrap(nxt, 8, first="  ")]
    if do is not s:  # the row says so: its first check reached do's body, not written yet
        lines += wrap(
            say(
                zh=f"{s.id} 的检查要跑 {do.id} 的代码，它还没写：先写它，{s.id} 才能检查",
                en=f"{s.id}'s checks run {do.id}'s code, which is not written yet: write it first, then {s.id} "
                "can be checked",
            ),
            8,
        )
    alone = say(zh=f"    只跑这一步：make test STEP={do.id}", en=f"    this step alone: make test STEP={do.id}")
    lines += wrap(read(do, *sections, titled=True), 8)
    lines.append(
        say(zh=f"        卡住了？make hint STEP={do.id}", en=f"        stuck? make hint STEP={do.id}")
        + (alone if whole else "")
    )
    if any(not r.done and not r.broke for r in rows):
        # The whole card names its lesson: a bare make test grades the first lesson not done, maybe another one.
        again = f"make test SEED={seed}" + (f" LESSON={lesson.id}" if whole else f" STEP={s.id}")
        lines.append(say(zh=f"        用同一组随机输入重跑：{again}", en=f"        these random inputs again: {again}"))
    if lesson.note and s.id in lesson.note_steps and about_torch(rows, s):
        note = (
            dict(zip(i18n.LANGS, lesson.note, strict=True))[i18n.lang()]
            if isinstance(lesson.note, tuple)
            else lesson.note
        )
        lines += wrap(say(zh="注意：", en="Note: ") + note, 8)
    return lines


def first_failure(row, limit=20):
    text = wrap(row.detail, 4)
    more = (
        [say(zh=f"    ……还有 {len(text) - limit} 行", en=f"    ... {len(text) - limit} more lines")]
        if len(text) > limit
        else []
    )
    title = (
        say(zh="停在这里", en="stopped here") if row.broke else say(zh="第一个失败的检查", en="the first failing check")
    )
    return [
        paint(f"{row.step.id}, {title}:" if i18n.lang() == "en" else f"{row.step.id}，{title}：", "1"),
        *text[:limit],
        *more,
        "",
    ]


def finished_lines(lesson):
    """A lesson whose required steps passed (state.finished_before): one green line (80 columns)."""
    title = say(zh=lesson.title_zh or lesson.title, en=lesson.title)
    said = say(
        zh=f"[x] {lesson.id} 课 {title}：完成（再看一遍：make test LESSON={lesson.id}）",
        en=f"[x] Lesson {lesson.id}, {title}: done (again: make test LESSON={lesson.id})",
    )
    return [paint(line, "32") for line in wrap(said, 6, first="  ")]


def show(lesson, rows, seed, details, listing=False, finished=(), whole=False):
    """Print the scorecard of `lesson`'s rows; `finished`: earlier lessons done, one line each, first;
    whole: the rows are every step of the lesson (make test), not steps picked out (make test STEP=)."""
    blocked = blocker(rows)
    out = [line for done in finished for line in finished_lines(done)]
    if blocked:
        title, *rest = blocked.splitlines()
        rest = [x for line in rest for x in wrap(line.lstrip(), len(line) - len(line.lstrip()))]
        out += [paint(title, "1;31"), *rest, ""]
    elif details:
        row = next((r for r in rows if r.step is next_step(lesson, rows)), None)
        if listing:  # one step: what did not run here, every failing check in full, and what passes
            out += [line for r in rows for line in not_run_listing(r)]
        if row is not None and listing:
            out += first_failure(row) if row.broke and row.detail else []
            out += every_failure(row) + (which_pass(row) if row.cases and row.failures else [])
        else:
            out += first_failure(row) if row is not None and row.detail else []
    out += rows_table(lesson, rows, blocked, whole) + advice(lesson, rows, blocked, seed, whole)
    unfinished = [r for r in rows if not r.done and r.failures]
    if (whole or not details) and unfinished and not blocked:  # make test, or make grade STEP=
        first = next((r for r in unfinished if r.step is next_step(lesson, rows)), unfinished[0])
        out.append(
            say(
                zh=f"        每个失败检查的完整信息：make test STEP={first.step.id}",
                en=f"        every failing check in full: make test STEP={first.step.id}",
            )
        )
    print("\n".join(out))
