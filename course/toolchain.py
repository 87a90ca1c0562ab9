"""Refuse, with the fix, a torch / triton / numpy combination known to break the lessons.

Run it as `python -m course.toolchain`; the test suite calls `require_working_toolchain()` first.
"""

import os
import sys
from importlib import metadata

BROKEN = (
    # (what, test on the versions, the fix)
    (
        "Triton's interpreter in triton < 3.7.1 fails under numpy >= 2.4 with 'only 0-dimensional "
        "arrays can be converted to Python scalars' (triton issue 9171, fixed in 3.7.1)",
        lambda v: os.environ.get("TRITON_INTERPRET") == "1" and v["triton"] < (3, 7, 1) and v["numpy"] >= (2, 4),
        "pip install 'triton>=3.7.1'  (or pin numpy<2.4); `make setup` installs the tested pins",
    ),
)


def _version(pkg):
    try:
        text = metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None
    parts = []
    for piece in text.split("+")[0].split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def problems():
    versions = {pkg: _version(pkg) for pkg in ("torch", "triton", "numpy")}
    missing = [pkg for pkg, v in versions.items() if v is None]
    if missing:
        return [f"not installed: {', '.join(missing)}; run `make setup` (README: Setting up)"]
    return [f"{what}.\n  fix: {fix}" for what, broken, fix in BROKEN if broken(versions)]


def choose_backend():
    """Run on the GPU when there is one, else through Triton's interpreter on the CPU.

    Triton reads TRITON_INTERPRET when it is first imported, so call this before that.  Under the
    interpreter, nested jit calls then skip its redundant work, and a range loop's variable is a tensor, as
    on a GPU (course/interpreter_calls.py)."""
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    if os.environ.get("TRITON_INTERPRET") == "1":
        from course import interpreter_calls

        interpreter_calls.skip_repatching_nested_calls()
        interpreter_calls.loop_variables_as_tensors()


def require_working_toolchain():
    found = problems()
    if found:
        sys.exit("the course cannot run on this toolchain:\n- " + "\n- ".join(found))


if __name__ == "__main__":
    require_working_toolchain()
    print("toolchain ok:", ", ".join(f"{p} {metadata.version(p)}" for p in ("torch", "triton", "numpy")))
