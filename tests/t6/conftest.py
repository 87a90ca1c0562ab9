"""Lesson T6's fixtures: the graded module, its probes, integer tensors that start UNSET in every test, and
every launch of its kernels watched on the interpreter for an access outside its tensors (stray.py)."""

import pytest

from .common import T6, UNSET
from .stray import KERNELS, histogram_out_of_range, undefined_lanes_as_nan, watch_launches
from support import INTERPRETING, poison_allocations


@pytest.fixture(scope="session")
def t6(graded_module):
    return graded_module(T6)


@pytest.fixture(autouse=True)
def integers_start_unset():
    """torch.empty's integer tensors start as UNSET, not as whatever memory held: a position the
    routing never writes then reads the same in every run, and so does its message (§8's table)."""
    with pytest.MonkeyPatch.context() as patch:  # its own: watched_call undoes the test's monkeypatch
        poison_allocations(patch, floats=None, integers=UNSET)
        yield


@pytest.fixture(scope="session")
def probes(t6):
    from course.lessons import t6_probes  # its kernels call the graded module's functions, so it loads after `t6`

    return t6_probes


@pytest.fixture(autouse=True)
def no_stray_access(request):
    """On the interpreter, every launch of T6's kernels and of the probes' fails the test that made
    it when it read or wrote outside the tensors it was given (the access itself is not made):
    stray.py.  Its own patch, set before the test's: watched_call's undo leaves it on."""
    if not INTERPRETING:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        undefined_lanes_as_nan(patch)  # what a GPU may read where a masked load has no `other`
        histogram_out_of_range(patch)  # what a GPU's tl.histogram counts where the interpreter's drops it
        if "t6" in request.fixturenames:
            watch_launches(request.getfixturevalue("t6"), KERNELS, patch)
        if "probes" in request.fixturenames:
            probes = request.getfixturevalue("probes")
            watch_launches(probes, tuple(n for n in dir(probes) if n.endswith("_probe")), patch)
        yield
