"""The learner's language: Chinese or English, for hints, the scorecard and every failure message.

COURSE_LANG=zh or COURSE_LANG=en chooses; without it, a locale whose LC_ALL, LC_MESSAGES or LANG
starts with "zh" gives Chinese, anything else English.  Every text the learner reads is written
twice, `say(zh=..., en=...)`, and `make check` proves both are there."""

import os
import re

LANGS = ("zh", "en")


def lang():
    chosen = os.environ.get("COURSE_LANG", "").strip().lower()
    if chosen in LANGS:
        return chosen
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def say(zh, en):
    """The text in the learner's language; both must be given."""
    return zh if lang() == "zh" else en


def count(n, noun):
    """An English count: count(1, "tile") is "1 tile", count(3, "tile") "3 tiles"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def cells(n):
    return count(n, "cell")


def agree(n, one, many):
    """The English verb that agrees with a count: agree(1, "was", "were") is "was"."""
    return one if n == 1 else many


# Said before the stub's own text when a check reaches a body not written yet.  The English words
# stay in the Chinese form too: README, the scorecard and `make check` look for them.
NOT_WRITTEN = {"zh": "还没写（not written yet）", "en": "not written yet"}


def not_written():
    return NOT_WRITTEN[lang()]


def has_cjk(text):
    """Whether text holds a Chinese character (CJK ideographs and CJK punctuation)."""
    return any("\u4e00" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef" for ch in text)


_NO_LINE_START = set("。，、；：！？）」』》〉】”’.,;:!?)]}")
_NO_LINE_END = set("（「『《〈【“‘")  # an opening bracket stays with what it opens


def display_width(text):
    """Columns a terminal gives the text: a CJK character takes two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pieces(text):
    """Pieces a line may break between: a run of non-space characters that are not CJK (an
    identifier, a number, an English word) stays whole; each CJK character is a piece; a space is
    a piece; punctuation that may not start a line sticks to the piece before it."""
    pieces = []
    for ch in text:
        wide = display_width(ch) == 2
        if pieces and (ch in _NO_LINE_START or pieces[-1][-1] in _NO_LINE_END):
            pieces[-1] += ch
        elif ch == " " or wide or not pieces or pieces[-1] == " " or display_width(pieces[-1][-1]) == 2:
            pieces.append(ch)
        else:
            pieces[-1] += ch
    return pieces


LINE_NUMBER = re.compile(r"\b(line) (?=\d)")
# A command to copy: make, its target and its VAR=value settings (ARGS="..." quoted).  Broken over two
# lines it pastes as two commands (make loads ARGS="--m, then 32 --n ...), so it stays whole where it
# fits on a line of its own.
COMMAND = re.compile(r'\bmake [a-z]+(?: [A-Z]+=(?:"[^"]*"|[^\s"]+))+')


def wrap(text, width, first="", rest=""):
    """Lines of `text` (one paragraph) at most `width` columns, by display width, breaking at
    spaces and between CJK characters but never inside an identifier or a number: Chinese has no
    spaces to break at, and Python's textwrap would otherwise cut `stride_cn` in two."""
    lines, line = [], first
    text = LINE_NUMBER.sub("\\1\u00a0", " ".join(text.split()))  # "line 38" stays whole, to be found
    room = width - display_width(rest)
    text = COMMAND.sub(lambda m: m[0].replace(" ", "\u00a0") if display_width(m[0]) <= room else m[0], text)
    for piece in _pieces(text):
        if line.strip() and display_width(line + piece) > width:
            lines.append(line.rstrip().replace("\u00a0", " "))
            line = rest
            if piece == " ":
                continue
        line += piece
    return lines + [line.rstrip().replace("\u00a0", " ")]


def add_lang_flag(parser):
    """--lang on a tool's command line: what an explainer's generated block uses to pin a language."""
    parser.add_argument(
        "--lang",
        choices=LANGS,
        help="the language of the text (default: COURSE_LANG, else the locale); an explainer's "
        "generated block pins it, as tools.explainers.counts does",
    )


def use_lang(args):
    """--lang, if given, for everything this process says (say() reads COURSE_LANG)."""
    if args.lang:
        os.environ["COURSE_LANG"] = args.lang
