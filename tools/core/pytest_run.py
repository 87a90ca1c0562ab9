"""Running pytest with the course's plugin in a process of its own, and reading the report it wrote
(tools/core/plugin.py says what the report holds).  Apart from the plugin because it runs in the
process that starts pytest (the grader, make check, make reset), not in pytest's own."""

import json
import tempfile
from pathlib import Path

from course.warm import run_python

REPORT = "COURSE_REPORT"  # the environment variable naming the plugin's report file


def run_pytest(args, cwd, env, timeout, progress=None):
    """Run `python -m pytest -p tools.core.plugin ARGS` in cwd: a process of its own, forked warm
    where that is safe (course/warm.py), else fresh.

    Returns (state, exit status, output): state is what this plugin wrote (None if the process
    could not even collect), exit status None if it ran past `timeout` seconds and was stopped.
    progress(state), if given, is called about twice a second with what the report says so far;
    when it returns True the process is stopped there (exit status None, as at the limit)."""
    with tempfile.TemporaryDirectory(prefix="course-report-") as tmp:
        report = Path(tmp) / "report.json"
        rc, out, err = run_python(
            ["-m", "pytest", "-p", "tools.core.plugin", *args],
            cwd,
            dict(env, **{REPORT: str(report)}),
            timeout,
            None if progress is None else lambda: progress(read_report(report)),
        )
        return read_report(report), rc, out + err


def read_report(path):
    """The plugin's report at path, or None when there is none (yet)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
