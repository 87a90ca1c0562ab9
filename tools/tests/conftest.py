"""What the tests of the tools share: running command lines as a learner runs them, each in a
process of its own, all at once (each would spend seconds importing torch: they are forked warm
where that is safe, course/warm.py), and English for the checks that call a tool in this
process, whatever the locale of the machine running them."""

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from course import warm

# Warm before anything imports torch, which puts torch on one thread: its ops in this process then
# start no thread pool, so the processes the tests start can be forked from here to the end.
warm.warm_up()


def python(argv, cwd, env, timeout=300):
    """`python ARGV` in cwd under env, as a CompletedProcess; TimeoutExpired past `timeout`."""
    rc, out, err = warm.run_python(list(argv), cwd, env, timeout)
    if rc is None:
        raise subprocess.TimeoutExpired(argv, timeout, out, err)
    return subprocess.CompletedProcess(argv, rc, out, err)


def run_at_once(commands, timeout=300):
    """{name: CompletedProcess} of commands {name: (argv after python, cwd, extra environment)}.

    Each runs as `python ARGV...` in cwd with COURSE_LANG=en (the tests read the English text)
    unless the extra environment says otherwise; all run side by side."""
    with ThreadPoolExecutor(max(1, len(commands))) as pool:
        futures = {
            name: pool.submit(python, argv, cwd, dict(os.environ, **dict(dict(COURSE_LANG="en"), **env)), timeout)
            for name, (argv, cwd, env) in commands.items()
        }
        return {name: f.result() for name, f in futures.items()}


@pytest.fixture(scope="session")
def run_python():
    """python(), for a test: `run_python(argv, cwd, env, timeout)`."""
    return python


@pytest.fixture(scope="session")
def run_cli():
    """run_at_once, for a module-scoped `cli` fixture: `run_cli({name: (argv, cwd, env)})`."""
    return run_at_once


@pytest.fixture
def english(monkeypatch):
    """COURSE_LANG=en for this test, for the tools it calls in this process."""
    monkeypatch.setenv("COURSE_LANG", "en")


@pytest.fixture(params=["en", "zh"])
def lang(request, monkeypatch):
    """Each language in turn (COURSE_LANG), a learner's terminal without colour: for the tests of what
    the learner's tools print."""
    from tools.learner import terminal

    monkeypatch.setenv("COURSE_LANG", request.param)
    monkeypatch.setattr(terminal, "COLOR", False)
    return request.param
