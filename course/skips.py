"""Which skips are the suite's own: a test skipped by a skip mark, or by a skipif mark whose
condition is a plain True (decided when the suite was written: "GPU only" under the interpreter).
The suite's conftest fails any other skip (the graded code may not skip a check), and the grader's
plugin counts these as "did not run here"; both ask this module."""


def suite_skip_reason(item):
    """Why the suite's own marks skip this pytest item here: the mark's reason, "skipped" when it
    gives none; None when the test runs here."""
    for m in item.iter_markers():
        if m.name == "skip" or (m.name == "skipif" and m.args and m.args[0] is True):
            return str(m.kwargs.get("reason") or (m.args[0] if m.name == "skip" and m.args else "") or "skipped")
    return None
