"""How the learner's commands print on a terminal: its width (WIDTH), colour only where it is
wanted (COLOR: a terminal, no NO_COLOR, not TERM=dumb), and text wrapped by display width so
Chinese lines fit too.  One place for them, so the scorecard and make watch colour and wrap
alike, and make test's live line and make hint fit the same width."""

import os
import shutil
import sys

from course import i18n

COLOR = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
WIDTH = min(120, shutil.get_terminal_size((100, 24)).columns)


def wrap(text, indent, first=None):
    """text wrapped to the terminal, every line of it kept (never cut), each line indented."""
    out = []
    for line in text.splitlines() or [""]:
        if i18n.display_width(line.rstrip()) <= max(20, WIDTH - indent):
            out.append(line.rstrip())  # as it is: a line that fits keeps its runs of spaces (a grid's columns)
            continue
        lead = " " * (len(line) - len(line.lstrip()))
        out += i18n.wrap(line, max(20, WIDTH - indent), first=lead, rest=lead)  # CJK-aware, by display width
    pad = " " * indent
    return [(first if first is not None and i == 0 else pad) + x for i, x in enumerate(out)]


def paint(text, code):
    return f"\033[{code}m{text}\033[0m" if COLOR else text
