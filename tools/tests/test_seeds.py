"""Every random input comes from SEED: a failing check prints its seed, and the same SEED replays it
exactly, through plain pytest and through make test's grader alike."""

import os
import re
import sys

import pytest

from course.registry import lesson
from tools.core.repo import scratch_repo, solution_file

T4 = lesson("T4")

CHECK = T4.node_of("test_mainloop_accumulates_in_fp32")  # tests/t4/test_mainloop.py::...
ROUNDED = ("acc = tl.dot(a, b, acc)", "acc += tl.dot(a, b).to(tl.float16)")  # its error depends on the inputs


@pytest.fixture(scope="module")
def repo():
    with scratch_repo({T4: solution_file(T4).read_text().replace(*ROUNDED)}) as tmp:
        yield tmp


def pytest_says(run_python, repo, seed):
    env = dict(os.environ, SEED=str(seed), SOLUTION="0", COURSE_LANG="en")
    return run_python(["-m", "pytest", "-q", "-p", "no:cacheprovider", CHECK], repo, env).stdout


@pytest.mark.timeout(600)  # three pytest runs, each importing torch
def test_the_same_seed_replays_a_failure_exactly_and_another_does_not(repo, run_python):
    first, again, other = (pytest_says(run_python, repo, seed) for seed in (11, 11, 12))
    error = lambda out: re.search(r"relative error (\S+) > 1e-5", out)[1]  # noqa: E731 - the part inputs change
    assert "1 failed" in first and error(first) == error(again)
    assert error(other) != error(first)
    replay = re.search(r"SEED=11 (\S+) -m pytest '(\S+)' replays this check", first)
    assert replay and replay[2] == "tests/t4/test_mainloop.py::test_mainloop_accumulates_in_fp32"
    assert os.path.samefile(os.path.join(repo, replay[1]), sys.executable)  # the python that ran it
    assert "SEED=11" in first.splitlines()[0] or "SEED=11" in first  # the header names it too


def grader_says(run_python, repo, seed):
    env = dict(os.environ, SOLUTION="0", COLUMNS="100", COURSE_LANG="en")
    return run_python(
        ["-m", "tools.learner.grade", "--details", "--step", "T4.2", "--seed", str(seed)], repo, env, 600
    ).stdout


@pytest.mark.timeout(600)  # three make test runs of a step, each importing torch: minutes on a busy machine
def test_make_test_prints_the_seed_and_replays_with_it(repo, run_python):
    first, again, other = (grader_says(run_python, repo, seed) for seed in (11, 11, 12))
    assert "these random inputs again: make test SEED=11 STEP=T4.2" in first
    assert re.findall(r"relative error \S+", first) == re.findall(r"relative error \S+", again) != []
    assert re.findall(r"relative error \S+", first) != re.findall(r"relative error \S+", other)
