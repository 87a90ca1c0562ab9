"""The code is linted and formatted by ruff, at the version pinned in requirements.txt (its rules
are in pyproject.toml).  `make format` fixes what it can; `make lint` runs these two alone."""

import subprocess
import sys

from course import ROOT


def ruff(*args):
    """[] if `ruff ARGS` exits 0, else its complaints, a line each."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
        )
    except FileNotFoundError as e:
        return [f"cannot run ruff ({e}); `make setup` installs it"]
    if out.returncode == 0:
        return []
    said = [line for line in (out.stdout + out.stderr).splitlines() if line.strip()]
    return said[-40:] or [f"ruff {' '.join(args)} exited {out.returncode}"]


def check_ruff_finds_no_lint():
    return ruff("check", "--no-fix", "--output-format", "concise", ".")


def check_ruff_format_leaves_every_file_as_it_is():
    return ruff("format", "--check", ".")
