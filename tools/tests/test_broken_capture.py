"""A check that fails only because torch's CUDA generator was left broken by an earlier failed capture says
so (course/messages.broken_capture_words, said by tests/conftest.py and tools/core/plugin.py): on the H100
in session 34 one capture that autotuned inside it failed 191 later checks with torch's words alone."""

import os
import subprocess
import sys

from course import ROOT
from course.messages import BROKEN_CAPTURE_RNG, broken_capture_words

TORCH_SAID = f"RuntimeError: {BROKEN_CAPTURE_RNG}."


def test_the_words_come_only_with_torchs_own(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    assert "CUDA graph" in broken_capture_words(TORCH_SAID) and "不是原因" in broken_capture_words(TORCH_SAID)
    monkeypatch.setenv("COURSE_LANG", "en")
    assert "this check itself is not the cause" in broken_capture_words(TORCH_SAID)
    assert broken_capture_words("RuntimeError: CUDA error: an illegal memory access was encountered") == ""


def test_the_suite_says_them_under_the_failure(tmp_path):
    """A throwaway test in the suite's folder raising torch's words: pytest's report carries the cause."""
    probe = ROOT / "tests" / f"test_zz_broken_capture_probe_{tmp_path.name}.py"
    probe.write_text(f"def test_draw():\n    raise RuntimeError({TORCH_SAID!r})\n")
    try:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", str(probe), "-q", "-p", "no:cacheprovider"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "COURSE_LANG": "en"},
            timeout=120,
        )
    finally:
        probe.unlink()
    assert run.returncode == 1, run.stdout + run.stderr
    assert "this check itself is not the cause" in run.stdout, run.stdout
