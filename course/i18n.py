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


# Said before the stub's own text when a check reaches a body not written yet.  The English words
# stay in the Chinese form too: README, the scorecard and `make check` look for them.
NOT_WRITTEN = {"zh": "还没写（not written yet）", "en": "not written yet"}


def not_written():
    return NOT_WRITTEN[lang()]


def has_cjk(text):
    """Whether text holds a Chinese character (CJK ideographs and CJK punctuation)."""
    return any("\u4e00" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef" for ch in text)


def where_to_read(explainers, sections):
    """Where to read, the learner's explainer first: explainers {"zh": path, "en": path}, sections
    a list of numbers ("6.2"); the other language's file follows in brackets."""
    if lang() == "zh":
        secs = "、".join("§" + s for s in sections)
        return f"详见 {explainers['zh']} {secs}（English: {explainers['en']}）"
    secs = ", ".join("§" + s for s in sections)
    return f"read {explainers['en']} {secs} (Chinese: {explainers['zh']})"


def stub_report(message, sections=None):
    """What a check says when it reaches a body not written yet: "not written yet" in the learner's
    language, the step (the stub message's leading "T4.x"), where to read (the sections the stub
    names, else the step's), then the stub's own text."""
    import re

    from course import registry

    found = re.match(r"\s*([A-Za-z]+\d+\.\d+)\b", message)
    step = registry.BY_ID.get(found[1].upper()) if found else None
    if step is None:
        return f"{not_written()}: {message}" if lang() == "en" else f"{not_written()}：{message}"
    named = [n for n in re.findall(r"§(\d+(?:\.\d+)*)", message) if n in step.lesson.sections]
    sections = list(sections or dict.fromkeys(named) or step.sections)
    titled = [f"{n} {step.lesson.sections[n][0 if lang() == 'zh' else 1]}" for n in sections]
    place = where_to_read(step.lesson.explainers, titled)
    what = ", ".join(step.writes if len(step.writes) < 3 else [w for w in step.writes if w in message] or step.writes)
    return say(
        zh=f"{not_written()}：{step.id}（{what}）。{place}。stub 原文：{message}",
        en=f"{not_written()}: {step.id} ({what}); {place}. The stub says: {message}",
    )


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


def wrap(text, width, first="", rest=""):
    """Lines of `text` (one paragraph) at most `width` columns, by display width, breaking at
    spaces and between CJK characters but never inside an identifier or a number: Chinese has no
    spaces to break at, and Python's textwrap would otherwise cut `stride_cn` in two."""
    lines, line = [], first
    text = LINE_NUMBER.sub("\\1\u00a0", " ".join(text.split()))  # "line 38" stays whole, to be found
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
