"""The learner's language: Chinese or English, for hints, the scorecard and every failure message.

COURSE_LANG=zh or COURSE_LANG=en chooses; without it, a locale whose LC_ALL, LC_MESSAGES or LANG
starts with "zh" gives Chinese, anything else English.  Every text the learner reads is written
twice, `say(zh=..., en=...)`, and `make check` proves both are there."""

import os

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
