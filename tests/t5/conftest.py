"""Lesson T5's fixtures: the graded module and its probes."""

import pytest

from .common import T5


@pytest.fixture(scope="session")
def t5(graded_module):
    return graded_module(T5)


@pytest.fixture(scope="session")
def probes(t5):
    from course.lessons import t5_probes  # its kernels call the graded module's functions, so it loads after `t5`

    return t5_probes
