"""Lesson T4's fixtures: the graded module, its probes, and the defences its wrapper's checks run under."""

import pytest

from .common import T4, check_inputs_in_place, check_inputs_kept, check_launch, launch_watch, layouts
from support import copies, poison_allocations


@pytest.fixture(scope="session")
def t4(graded_module):
    return graded_module(T4)


@pytest.fixture(scope="session")
def probes(t4):
    from course.lessons import t4_probes  # its kernels call the graded module's functions, so it loads after `t4`

    return t4_probes


@pytest.fixture
def poisoned_allocations(monkeypatch):
    """Every new floating tensor starts as NaN, so a tile the kernel never writes cannot pass."""
    poison_allocations(monkeypatch)


@pytest.fixture
def watched(t4, monkeypatch):
    """matmul under a LaunchWatch: watched(a, b, step=..., **kwargs) returns C once its launch checks out."""

    def call(a, b, step="T4.4", **kwargs):
        case = f"{tuple(a.shape)} @ {tuple(b.shape)} {a.dtype}"
        bias, activation = kwargs.get("bias"), kwargs.get("activation")
        # the last call's watch, for a test that asks what ran
        call.watch = watch = launch_watch(
            t4, monkeypatch, case=case, bias=bias, activation=activation, step=step, dtype=getattr(a, "dtype", None)
        )
        given = {"a": a, "b": b, "bias": bias}
        before, where = copies(given), layouts(given)
        c = t4.matmul(a, b, **kwargs)
        check_inputs_in_place(where, given, case)
        check_inputs_kept(before, given, case)
        check_launch(watch, c, a, b, bias, activation, case, step)
        return c

    return call
