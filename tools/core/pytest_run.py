"""Running pytest with the course's plugin in a fresh process, and reading the report it wrote
(tools/core/plugin.py says what the report holds).  Apart from the plugin because it runs in the
process that starts pytest (the grader, make check, make reset), not in pytest's own."""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPORT = "COURSE_REPORT"  # the environment variable naming the plugin's report file


def run_pytest(args, cwd, env, timeout, progress=None):
    """Run `python -m pytest -p tools.core.plugin ARGS` in a fresh process in cwd.

    Returns (state, exit status, output): state is what this plugin wrote (None if the process
    could not even collect), exit status None if it ran past `timeout` seconds and was stopped.
    progress(state), if given, is called about twice a second with what the report says so far;
    when it returns True the process is stopped there (exit status None, as at the limit)."""
    with tempfile.TemporaryDirectory(prefix="course-report-") as tmp:
        report = Path(tmp) / "report.json"
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "tools.core.plugin", *args],
            cwd=cwd,
            env=dict(env, **{REPORT: str(report)}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                out, err = proc.communicate(timeout=min(0.5, max(0.01, deadline - time.monotonic())))
                rc, output = proc.returncode, out + err
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    proc.kill()
                    out, err = proc.communicate()
                    rc, output = None, _text(out) + _text(err)
                    break
                if progress is not None and progress(read_report(report)):
                    proc.kill()
                    out, err = proc.communicate()
                    rc, output = None, _text(out) + _text(err)
                    break
        return read_report(report), rc, output


def read_report(path):
    """The plugin's report at path, or None when there is none (yet)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _text(data):
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
