"""The marked bodies of a graded file (`# ---- T4.1 begin` ... `# ---- T4.1 end`): the parts a
learner writes.  Split a file into them, and make a learner midway (fill_in) or a planted mistake
(plant) for the checks and make watch --bench."""

import re

# A step id is its lesson's id, a dot and a number ("T4.2"); the begin mark may name the body's
# sections ("# ---- T5.2 begin (§3.1) ----").
STEP_ID = r"[A-Za-z]\w*\.\d+"
MARK = re.compile(rf"^\s*# ---- ({STEP_ID}) (begin|end)\b(?: \(([^)]*)\))?")


def split_bodies(text):
    """[(step, lines)]: the scaffold (step None, marker lines included) and each marked body."""
    parts, lines, inside = [], [], None
    for line in text.splitlines(keepends=True):
        m = MARK.match(line)
        if m and m.group(2) == "begin":
            parts.append((None, lines + [line]))
            lines, inside = [], m.group(1)
        elif m:
            parts.append((inside, lines))
            lines, inside = [line], None
        else:
            lines.append(line)
    return parts + [(None, lines)]


def scaffold(text):
    """The file with every marked body removed, and the docstring's first line dropped."""
    return [line.rstrip("\n") for step, lines in split_bodies(text) if step is None for line in lines][1:]


def fill_in(stub, solution, step_ids):
    """The stub with the marked bodies of `step_ids` taken from the solution: a learner midway."""
    return "".join(
        "".join(sol if step in step_ids else mine)
        for (step, mine), (_, sol) in zip(split_bodies(stub), split_bodies(solution), strict=False)
    )


def plant(text, step_id, lines):
    """text with `lines` put at the start of step_id's first marked body; (new text, first line number)."""
    parts = split_bodies(text)
    at = next(i for i, (step, _) in enumerate(parts) if step == step_id)
    lineno = sum(len(body) for _, body in parts[:at]) + 1
    parts[at] = (step_id, list(lines) + parts[at][1])
    return "".join("".join(body) for _, body in parts), lineno
