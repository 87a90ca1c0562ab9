"""The per-check limit of learner runs, in CPU seconds: a SIGPROF timer started around each
check's setup and call (the plugin's hooks), its handler failing the check where it is.  The
limits themselves are chosen, and measured, in tools/learner/time_limits.py, which passes them
here through the environment."""

import os
import signal

import pytest

# The learner runs' per-check limit in CPU seconds (tools/learner/time_limits.py sets these, and says why):
# the check's own process's CPU time, which other programs on a busy machine do not use up, so a
# slow check on a loaded machine is not taken for a hang.  pytest-timeout (PYTEST_TIMEOUT) stays,
# with a long limit, for a hang that waits without computing.
CPU_LIMIT = "COURSE_CPU_LIMIT_S"  # under the interpreter
CPU_LIMIT_GPU = "COURSE_CPU_LIMIT_GPU_S"  # compiled for a GPU: compiling and autotuning take CPU time
CPU_TIMEOUT = "Timeout (>{:g}s of CPU time)"


def interpreting():
    return os.environ.get("TRITON_INTERPRET") == "1"


def cpu_limit():
    """This run's per-check CPU-time limit in seconds, or None (no limit: make check's own runs)."""
    said = os.environ.get(CPU_LIMIT if interpreting() else CPU_LIMIT_GPU) or os.environ.get(CPU_LIMIT)
    try:
        return float(said) if said and float(said) > 0 else None
    except ValueError:
        return None


def _over_the_limit(signum, frame):
    # pytest.fail, not an Exception: a check's own `except Exception` must not swallow it
    pytest.fail(CPU_TIMEOUT.format(cpu_limit() or 0), pytrace=True)


class cpu_clock:  # noqa: N801 - used as `with cpu_clock():`
    """SIGPROF after cpu_limit() seconds of this process's CPU time (ITIMER_PROF: every thread,
    user and system), its handler failing the check where it is; nothing without a limit."""

    def __enter__(self):
        self.limit = cpu_limit()
        if self.limit:
            self.before = signal.signal(signal.SIGPROF, _over_the_limit)
            signal.setitimer(signal.ITIMER_PROF, self.limit)

    def __exit__(self, *exc):
        if self.limit:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, self.before)
        return False
