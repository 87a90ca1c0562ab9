"""Lesson T6's fixtures: the graded module, its probes, and integer tensors that start UNSET in every test."""

import pytest

from .common import T6, UNSET
from support import poison_allocations


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
