"""course/toolchain.py refuses exactly the broken toolchain, and says how to fix it."""

import pytest

from course import toolchain


@pytest.mark.parametrize(
    "triton, numpy, interpret, broken",
    [
        ("3.6.0", "2.4.0", "1", True),  # issue 9171
        ("3.7.0", "2.5.2", "1", True),
        ("3.7.1", "2.4.6", "1", False),  # fixed from 3.7.1
        ("3.6.0", "2.3.5", "1", False),  # numpy before 2.4 is fine
        ("3.6.0", "2.5.2", "0", False),  # the GPU path does not use the interpreter
    ],
)
def test_the_interpreter_numpy_combination(monkeypatch, triton, numpy, interpret, broken):
    versions = {"torch": "2.13.0+cpu", "triton": triton, "numpy": numpy}
    monkeypatch.setattr(toolchain.metadata, "version", lambda pkg: versions[pkg])
    monkeypatch.setenv("TRITON_INTERPRET", interpret)
    found = toolchain.problems()
    assert bool(found) == broken, found
    if broken:
        assert "9171" in found[0] and "fix:" in found[0] and "triton>=3.7.1" in found[0]


def test_a_missing_package_names_the_fix(monkeypatch):
    def version(pkg):
        if pkg == "triton":
            raise toolchain.metadata.PackageNotFoundError(pkg)
        return "2.4.6"

    monkeypatch.setattr(toolchain.metadata, "version", version)
    assert toolchain.problems() == ["not installed: triton; run `make setup` (README: Setting up)"]


def test_refusal_exits_with_the_message(monkeypatch):
    monkeypatch.setattr(toolchain, "problems", lambda: ["a problem.\n  fix: do this"])
    with pytest.raises(SystemExit, match="fix: do this"):
        toolchain.require_working_toolchain()


NESTED_CALLS = """
import inspect, os
os.environ["TRITON_INTERPRET"] = "1"
from course import toolchain
toolchain.choose_backend()
import torch, triton, triton.language as tl
walks = []
real = inspect.getmembers
inspect.getmembers = lambda *a, **k: walks.append(1) or real(*a, **k)  # what _patch_lang walks with

@triton.jit
def doubled(x):
    return x * 2

@triton.jit
def kernel(p, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(p + offs, doubled(doubled(tl.load(p + offs))))

x = torch.ones(8)
kernel[(16,)](x, 8)
print(x.tolist() == [4.0 ** 16] * 8, len(walks), tl.load.__name__)
"""


def test_nested_jit_calls_under_the_interpreter_leave_the_language_to_the_launch():
    """course/interpreter_calls.py: 16 programs, two nested calls each, walk the language as one launch
    does (4 walks), not once more per call (128 more); the numbers and the restored tl are as before."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", NESTED_CALLS], capture_output=True, text=True, timeout=120)
    right, walks, load_name = out.stdout.split()
    assert right == "True", out.stderr[-2000:]
    assert int(walks) < 16, f"{walks} walks of the language for one launch: the shortcut is not installed"
    assert load_name == "load", "tl.load was left patched after the launch"
