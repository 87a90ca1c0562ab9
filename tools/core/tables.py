"""Tables as text or markdown, measured in the columns a terminal gives them (a Chinese character
takes two): the explainers' tables and the study tools' reports print them the same way."""

from course.i18n import display_width


def table(headers, rows, markdown):
    """Rows of cells as a markdown table, or as plain columns right-aligned for a terminal."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    if markdown:
        lines = ["| " + " | ".join(row) + " |" for row in cells]
        lines.insert(1, "|" + "|".join(" --- " for _ in headers) + "|")
        return "\n".join(lines)
    widths = [max(display_width(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join("  ".join(rjust(c, w) for c, w in zip(row, widths, strict=False)).rstrip() for row in cells)


def ljust(text, width):
    """str.ljust by the columns a terminal gives the text (a Chinese character takes two)."""
    return text + " " * (width - display_width(text))


def rjust(text, width):
    return " " * (width - display_width(text)) + text
