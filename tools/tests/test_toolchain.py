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
