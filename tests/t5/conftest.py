"""Lesson T5's fixtures: the graded module and its probes, each of their launches watched on the
interpreter for an access outside its tensors (stray.py)."""

import pytest

from .common import T5
from .stray import watch_launches
from support import INTERPRETING


@pytest.fixture(scope="session")
def t5(graded_module):
    return graded_module(T5)


@pytest.fixture(scope="session")
def probes(t5):
    from course.lessons import t5_probes  # its kernels call the graded module's functions, so it loads after `t5`

    return t5_probes


@pytest.fixture(autouse=True)
def no_stray_access(request, monkeypatch):
    """On the interpreter, t5_kernel and the probes' kernels fail the test that launched them when
    they read or wrote outside the tensors they were given (the access itself is not made)."""
    if not INTERPRETING:
        return
    if "t5" in request.fixturenames:
        t5 = request.getfixturevalue("t5")
        watch_launches(t5, ("t5_kernel",), monkeypatch)
    if "probes" in request.fixturenames:
        probes = request.getfixturevalue("probes")
        watch_launches(probes, tuple(n for n in dir(probes) if n.endswith("_probe")), monkeypatch)
