"""make check's runner gives every check the same environment: what one check sets is gone for the next."""

import os
import subprocess
import sys

from course import ROOT
from tools.checks.__main__ import main


def test_a_check_cannot_change_the_environment_of_the_next(capsys):
    before = os.environ.get("TRITON_INTERPRET")
    seen = {}

    def first():
        os.environ["TRITON_INTERPRET"] = "0" if before == "1" else "1"
        os.environ["COURSE_LEAKED"] = "yes"
        return []

    def second():
        seen.update(interpret=os.environ.get("TRITON_INTERPRET"), leaked=os.environ.get("COURSE_LEAKED"))
        return []

    assert main([], checks=[("a.first", first), ("b.second", second)]) == 0
    assert seen == {"interpret": before, "leaked": None}
    assert "check: 2 passed, 0 failed" in capsys.readouterr().out


def test_the_reference_check_leaves_its_process_as_it_found_it():
    """It used to set TRITON_INTERPRET=1 and import triton in make check's own process, so every
    later check graded on the interpreter, even on a GPU host."""
    code = (
        "import os, sys\nfrom tools.checks import reference\n"
        "assert reference.check_every_common_gpu_keeps_several_configs() == []\n"
        "print('triton' in sys.modules, os.environ.get('TRITON_INTERPRET'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "None"]
