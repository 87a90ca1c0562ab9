"""make test STEP=: one step's failures in full, and which of its cases pass.  Failures that say
the same thing, each about its own case, share one block (diagnosis sets the case's own numbers
and words aside, then compares); the cases that fail are told from those that pass by one
parameter or two when they can be (explain), and named in words (tools/core/case_labels.py).
Apart from the scorecard (scorecard.py), which draws the rows and what to do next, because this
is analysis of one row's failures, with its own rules and tests (tools/tests/test_scorecard.py)."""

import re
from itertools import combinations

from course.i18n import say
from tools.core.failure_words import short
from tools.learner.terminal import paint, wrap

# What sets one case's failure message apart from another's when the diagnosis is the same: its
# numbers (shapes, strides, errors, tolerances, pictures of pids), the values of its parameters
# ("row-major", "torch.float16"; fp16 and fp32 differ only in their digits) and the make loads
# command drawn for it.  NaN stays a word: a NaN and a large error are told apart.  A number's own
# minus sign is part of it ("-3.09 instead of 0.999" is the same as "1.34 instead of -3.03"); a
# minus after a word, a digit or a bracket is not ("K - 1", "0-15", "x[1]-2" keep it).
NUMBER = re.compile(r"(?:(?<![\w.)\]])-)?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
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
        lines += [paint(x, "1") for x in wrap(case_name(row, first), 4, first="  ")]  # a long case wraps too
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
