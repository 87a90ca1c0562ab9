"""What the tests of the study tools share: running command lines as a learner runs them, each in a
fresh process, all at once (each spends seconds importing torch), and English for the checks that
call a tool in this process, whatever the locale of the machine running them."""

import os
import subprocess
import sys

import pytest


def run_at_once(commands, timeout=300):
    """{name: CompletedProcess} of commands {name: (argv after python, cwd, extra environment)}.

    Each runs as `python ARGV...` in cwd with COURSE_LANG=en (the tests read the English text)
    unless the extra environment says otherwise; all start before the first is waited for."""
    started = {
        name: subprocess.Popen(
            [sys.executable, *argv],
            cwd=cwd,
            env=dict(os.environ, **dict(dict(COURSE_LANG="en"), **env)),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name, (argv, cwd, env) in commands.items()
    }
    done = {}
    for name, proc in started.items():
        out, err = proc.communicate(timeout=timeout)
        done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return done


@pytest.fixture(scope="session")
def run_cli():
    """run_at_once, for a module-scoped `cli` fixture: `run_cli({name: (argv, cwd, env)})`."""
    return run_at_once


@pytest.fixture
def english(monkeypatch):
    """COURSE_LANG=en for this test, for the tools it calls in this process."""
    monkeypatch.setenv("COURSE_LANG", "en")
