"""course/toolchain.py refuses exactly the broken toolchain, and says how to fix it."""

import pytest

from course import ROOT, toolchain


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
from course import ROOT, toolchain
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

@triton.jit
def loops(p, n):
    total = tl.zeros((), tl.int64)
    for i in range(0, n):
        total += i.to(tl.int64)  # a tensor's method on a loop's variable, as compiled code takes it
    for j in tl.range(0, n, 2):
        total += j.to(tl.int64)
    for s in tl.static_range(2):
        total += (1, 10)[s]  # a static_range loop's variable stays an int: it indexes a tuple
    tl.store(p, total)

y = torch.zeros(1, dtype=torch.int64)
loops[(1,)](y, 5)
print(int(y[0]))
"""


def test_nested_jit_calls_under_the_interpreter_leave_the_language_to_the_launch(tmp_path):
    """course/interpreter_calls.py: 16 programs, two nested calls each, walk the language as one launch
    does (4 walks), not once more per call (128 more); the numbers and the restored tl are as before.  And a
    range or tl.range loop's variable is a tensor there, as on a GPU, where a tl.static_range one stays an int."""
    import os
    import subprocess
    import sys

    script = tmp_path / "nested_calls.py"  # a file: the interpreter rewrites a jit function from its source
    script.write_text(NESTED_CALLS)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's course/, not another the venv may point at
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    right, walks, load_name, loops = (out.stdout.split() + [""] * 4)[:4]
    assert right == "True", out.stderr[-2000:]
    assert int(walks) < 16, f"{walks} walks of the language for one launch: the shortcut is not installed"
    assert load_name == "load", "tl.load was left patched after the launch"
    assert loops == str(sum(range(5)) + sum(range(0, 5, 2)) + 11), f"loop variables: {loops!r}\n{out.stderr[-2000:]}"
