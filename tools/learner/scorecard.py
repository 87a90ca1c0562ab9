"""Drawing the scorecard: a row per step, the first failure of the step to work on, the next
step and where to read; for one step (make test STEP=T4.2) every failing check in full, those that
fail the same way about their own cases once with a line counting the rest, and which cases pass,
named in words (tools/core/case_labels.py).  Plain text, colour only on a terminal that wants it; Chinese
or English as course.i18n chooses (COURSE_LANG=zh|en, else the locale)."""

import os
import re
import shutil
import sys
from itertools import combinations

from course import i18n, seam
from course.i18n import say
from course.messages import read
from tools.core.failure_words import short

COLOR = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
WIDTH = min(120, shutil.get_terminal_size((100, 24)).columns)


def wrap(text, indent, first=None):
    """text wrapped to the terminal, every line of it kept (never cut), each line indented."""
    out = []
    for line in text.splitlines() or [""]:
        lead = " " * (len(line) - len(line.lstrip()))
        out += i18n.wrap(line, max(20, WIDTH - indent), first=lead, rest=lead)  # CJK-aware, by display width
    pad = " " * indent
    return [(first if first is not None and i == 0 else pad) + x for i, x in enumerate(out)]


def paint(text, code):
    return f"\033[{code}m{text}\033[0m" if COLOR else text


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
        elif r.skipped:  # a pass of what ran: say what did not
            lines += wrap(not_run_line(r), 10)
    if whole:
        required = [r for r in rows if not r.step.advanced]
        done, checks, total = sum(r.done for r in required), sum(r.passed for r in rows), sum(r.total for r in rows)
        skipped = sum(len(r.skipped) for r in rows)
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
        [
            paint(
                say(
                    zh=f"  下一课：{after.id}（{after.title_zh or after.title}），直接 make test 就会给它评分；"
                    f"{read(after.steps[0], titled=True)}",
                    en=f"  Next lesson: {after.id}, {after.title}: make test now grades it; "
                    f"{read(after.steps[0], titled=True)}",
                ),
                "1",
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
    writes = ", ".join(s.writes)
    nxt = say(
        zh=f"{'可选的下一步' if optional else '下一步'}：{s.id} {s.name}，在 {seam.path(lesson)} 里写 {writes}",
        en=f"{'Optional next' if optional else 'Next'}: {s.id} {s.name}: {writes} in {seam.path(lesson)}",
    )
    lines += [paint(line, "1") for line in wrap(nxt, 8, first="  ")]
    alone = say(zh=f"    只跑这一步：make test STEP={s.id}", en=f"    this step alone: make test STEP={s.id}")
    lines += wrap(read(s, titled=True), 8)
    lines.append(
        say(zh=f"        卡住了？make hint STEP={s.id}", en=f"        stuck? make hint STEP={s.id}")
        + (alone if whole else "")
    )
    if any(not r.done and not r.broke for r in rows):
        again = f"make test SEED={seed}" + ("" if whole else f" STEP={s.id}")
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


# What sets one case's failure message apart from another's when the diagnosis is the same: its
# numbers (shapes, strides, errors, tolerances, pictures of pids), the values of its parameters
# ("row-major", "torch.float16"; fp16 and fp32 differ only in their digits) and the make loads
# command drawn for it.  NaN stays a word: a NaN and a large error are told apart.
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
NUMBERS_ONLY = re.compile(r"(?m)^[\s#?!.,:;()\[\]-]*#[\s#?!.,:;()\[\]-]*$")  # a row of a picture of pids
NUMBER_RUN = re.compile(r"[\s,()\[\]]*#(?:[\s,()\[\]]*#)*[\s,()\[\]]*")  # (208, 1), [0, 3, 7]
COMMAND_ARGS = re.compile(r'ARGS="[^"]*"')


def case_values(row, tests):
    """The words the parameters of these tests' cases take, longest first: each id ("row-major",
    "torch.float16", also without "torch."), and the words inside an id pytest made of several
    values ("none" in "True-none"); numbers, True, False and None are not words here."""
    plain = re.compile(r"[\d.eE+-]+|True|False|None")
    words = set()
    for test, ids, _ in row.cases:
        if test not in tests:
            continue
        for part in ids:
            pieces = part.split("-")
            if all(plain.fullmatch(p) for p in pieces):
                continue
            words |= {part, part.removeprefix("torch.")}
            if any(plain.fullmatch(p) for p in pieces):  # several values joined by "-"
                words |= {p.removeprefix("torch.") for p in pieces if not plain.fullmatch(p)}
    return sorted((w for w in words if len(w) > 1), key=len, reverse=True)


def _marked(message, words=()):
    """message with its case's own parts (case_values, NUMBER, make loads' ARGS) each made "#"."""
    text = COMMAND_ARGS.sub('ARGS="#"', message)
    for w in words:
        text = re.sub(rf"(?<![\w.-]){re.escape(w)}(?![\w-])", "#", text)
    text = NUMBER.sub("#", text)
    return re.sub(r"# ([a-z]+?)s\b", r"# \1", text)  # 1 row, 3 rows


def _runs(text):
    """Runs of marks, and rows of a picture of pids, as one mark each."""
    return NUMBER_RUN.sub("#", NUMBERS_ONLY.sub("#", text))


def skeleton(message, words=()):
    """A failure message with its case's own parts set aside (case_values and NUMBER): two checks
    whose skeletons are equal say the same thing, each about its own case."""
    return _runs(_marked(message, words))


KEY_VALUE = re.compile(r"\b\w+: (?:#|None\b|True\b|False\b)")  # a config's repr: "BLOCK_M: #, num_warps: #"
CASE_THEN = re.compile(r"^([^\n]*?)(?::\s|：)")  # what comes before a message's first colon
TAIL_AT_LEAST = 60  # characters after the case: fewer say too little to share a block on


def diagnosis(message, words=()):
    """What a failure says, with the case it says it about set aside: its skeleton, and when the
    message opens with a description of the case before a colon ("64x64 @ 64x64 torch.float16, A
    row-major: ", "config BLOCK_M: 32, ...: ", "x @ W.t() without .contiguous(): "), only what
    follows, provided that the description holds no sentence of its own and what follows is long
    enough to name a cause.  One cause seen by several checks, each describing its case its own
    way, then gives one key; a message that names another cause, one word apart, does not."""
    text = KEY_VALUE.sub("#", _marked(message, words))
    head = CASE_THEN.match(text)
    if head and ("#" in head[1] or "@" in head[1]) and ". " not in head[1] and "。" not in head[1]:
        tail = _runs(text[head.end() :]).strip()
        if len(tail) >= TAIL_AT_LEAST:
            return tail
    return _runs(text)


def case_name(row, test):
    """A check as the learner reads it: its function, and its case in words when it has one
    ("test_mainloop [M=45 N=37 K=83 BLOCK 16x32x16, A row-major, float16]")."""
    labels = row.labels.get(test) or next((ids for t, ids, _ in row.cases if t == test), None)
    if not labels and "[" in test:
        labels = [test.split("[", 1)[1].rstrip("]")]
    return short(test) + (f" [{say(zh='，', en=', ').join(labels)}]" if labels else "")


def same_failure(row, first, others, lines=2):
    """One line for the checks that fail as `first` does: how many, and the first few of them, as
    many as `lines` lines hold ("the same failure in 23 more cases: [...]; [...] and 21 more")."""
    tests = [first, *others]
    functions = {short(t) for t in tests}
    one = len(functions) == 1
    names = [case_name(row, t) for t in others]
    if one:  # the function is named above: the cases alone
        names = [n[len(short(first)) :].strip() or short(first) for n in names]
    n = len(others)
    head = say(
        zh=f"同样的失败还有 {n} 个用例" + (f"（都在 {short(first)}）" if one else "") + "：",
        en=f"the same failure in {n} more case{'s' * (n != 1)}" + (f" of {short(first)}" if one else "") + ": ",
    )
    sep = say(zh="；", en="; ")
    for k in range(n, 0, -1):  # as many as two lines hold, one at least
        rest = n - k
        more = say(zh=f" 等（还有 {rest} 个）", en=f" and {rest} more") if rest else ""
        line = head + sep.join(names[:k]) + more
        if k == 1 or len(wrap(line, 6)) <= lines:
            return line
    return head


def every_failure(row):
    """Every failing check of one step, one block each in full; checks that fail the same way,
    each about its own case (diagnosis), share the block of the first, whichever test function
    they belong to: one line counts the others and names a few.  A message that says something
    else always gets its own block."""
    blocks = {}
    words = case_values(row, {t for t, _, _ in row.cases})  # every case's words, so keys compare across checks
    for test, reason in row.failures:
        message = row.messages.get(test) or reason
        blocks.setdefault(diagnosis(message, words), []).append((test, message))
    n = len(row.failures)
    lines = [
        paint(say(zh=f"{row.step.id}：{n} 个检查失败", en=f"{row.step.id}: {n} failing check{'s' * (n != 1)}"), "1")
    ]
    for found in blocks.values():
        (first, message), others = found[0], [t for t, _ in found[1:]]
        lines.append(paint("  " + case_name(row, first), "1"))
        lines += wrap(message, 6)
        if others:
            lines += wrap(same_failure(row, first, others), 6)
    return [*lines, ""] if row.failures else []


def explain(cases):
    """Which parameter values tell the failing cases from the passing ones: cases [(ids, passed)],
    ids one per parametrize mark.  Returns (failing keys, passing keys), each key a tuple of ids,
    found on one parameter or a pair of them, fewest keys first; None if no such split."""
    failed = {i for i, (_, ok) in enumerate(cases) if not ok}
    width = {len(ids) for ids, _ in cases}
    if len(width) != 1 or not failed or len(failed) == len(cases):
        return None
    best = None
    for k in (1, 2):
        for dims in combinations(range(next(iter(width))), k):
            groups = {}
            for i, (ids, _) in enumerate(cases):
                groups.setdefault(tuple(ids[d] for d in dims), set()).add(i)
            bad = [key for key, members in groups.items() if members <= failed]
            if set().union(*(groups[key] for key in bad)) == failed:
                good = [key for key in groups if key not in bad]
                if best is None or len(bad) + len(good) < len(best[0]) + len(best[1]):
                    best = (bad, good)
        if best:
            return best
    return None


def which_pass(row, limit=6):
    """Per test function, how many of its cases pass, and the pattern when one parameter (or two)
    tells the failing cases from the passing ones: "test_mainloop: 8 of 24 pass; fail: every case
    with column-major or every-other-column"."""
    by_function = {}
    for test, ids, ok in row.cases:  # each case in words where the plugin found some (case_labels)
        words = row.labels.get(test)
        by_function.setdefault(short(test), []).append((tuple(words if words and len(words) == len(ids) else ids), ok))
    sep = say(zh="，", en=", ")
    lines = [paint(say(zh=f"{row.step.id}：哪些用例通过", en=f"{row.step.id}: which cases pass"), "1")]
    for name, cases in by_function.items():
        n, p = len(cases), sum(ok for _, ok in cases)
        if n == 1:
            lines.append("  " + name + (say(zh="：通过", en=": passes") if p else say(zh="：失败", en=": fails")))
            continue
        lines.append(say(zh=f"  {name}：{n} 个用例中 {p} 个通过", en=f"  {name}: {p} of {n} pass"))
        if p in (0, n):
            continue
        split = explain(cases)
        keys = lambda ks: say(zh=" 或 ", en=" or ").join(sep.join(k) for k in ks)  # noqa: E731
        if split:
            bad, good = split
            lines += wrap(say(zh=f"失败：凡是 {keys(bad)} 的用例", en=f"fail: every case with {keys(bad)}"), 6)
            lines += wrap(say(zh=f"通过：凡是 {keys(good)} 的用例", en=f"pass: every case with {keys(good)}"), 6)
        else:
            failing = ["[" + sep.join(ids) + "]" for ids, ok in cases if not ok]
            more = (
                say(zh=f" 等（共 {len(failing)} 个）", en=f" and {len(failing) - limit} more")
                if len(failing) > limit
                else ""
            )
            lines += wrap(say(zh="失败：", en="fail: ") + ", ".join(failing[:limit]) + more, 6)
    return [*lines, ""]


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
    if whole and unfinished and not blocked:
        first = next((r for r in unfinished if r.step is next_step(lesson, rows)), unfinished[0])
        out.append(
            say(
                zh=f"        每个失败检查的完整信息：make test STEP={first.step.id}",
                en=f"        every failing check in full: make test STEP={first.step.id}",
            )
        )
    print("\n".join(out))
