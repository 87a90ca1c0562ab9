"""The time limits of learner runs (make test, make grade, make watch, make hint): how long one
check may compute, how long one step may take, and the environment a step's pytest process gets
with them.  Kept apart from the runner because the numbers come with their measurements, which
are longer than the code that uses them; tools/core/cpu_clock.py enforces the per-check limit."""

import functools
import os
import threading
import time

from tools.core.cpu_clock import CPU_LIMIT, CPU_LIMIT_GPU

STEP_LIMIT_S = 900  # a whole step; pytest-timeout stops a single test long before this

# The per-check limit of learner runs (make test, make grade, make watch; make check's own suite
# runs keep pytest.ini's 60 s).  It counts the check's CPU time, not the clock's (cpu_clock.cpu_limit):
# a loaded machine stretches the clock, not the work.  Measured with a probe of process_time per
# check, SOLUTION=1, both suites, on the 2-core machine at load average 9.5 (2026-12-01): the
# slowest check, test_every_autotune_config_runs, took 2.3 s of CPU time and 9.6 s on the clock,
# a hair under the 10 s wall-clock limit used before; T5's slowest 0.6 s (3.2 s on the clock).
# An endless loop under the interpreter computes all the time, so it still meets the limit.
LEARNER_TIMEOUT_S = 10  # CPU seconds on a machine as fast as that one: four times the slowest check
# A slower machine gets more: the limit is scaled by how much longer a fixed piece of pure-Python
# work (calibration_work) takes here than there, where it took CALIBRATION_S of CPU time (the same
# at load average 9.6 as alone: one thread per core), at least 1, at most MAX_FACTOR so that a
# planted `while True: pass` is still reported within half a minute.
CALIBRATION_S = 0.034
MAX_FACTOR = 2.0
# Compiled for a GPU, the first call of an autotuned kernel compiles and times every config, which
# is CPU time too: on a fresh H200, make test with a 10 s limit stopped test_empty_dimensions there
# (issue 17), while plain pytest ran all 313 checks of both suites in 87 s under pytest.ini's 60 s
# per check.  Twice that 60 s, and a step that still times out on a GPU is run once more (its
# kernels are in Triton's cache by then) before the hang is reported.
GPU_TIMEOUT_S = 120
# The clock's limit (pytest-timeout), for a hang that waits without computing (a sleep, a lock):
# far above both, so that load alone never meets it.
WALL_TIMEOUT_S = 300


def calibration_work(n=500_000):
    """CPU seconds of this thread for a fixed piece of pure-Python work, the kind the interpreter
    runs (the thread's, not the process's: steps start side by side, in threads)."""
    began, x = time.thread_time(), 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return time.thread_time() - began


_calibrating = threading.Lock()


@functools.cache
def _factor():
    took = min(calibration_work() for _ in range(3))
    return min(MAX_FACTOR, max(1.0, took / CALIBRATION_S))


def machine_factor():
    """How many times slower this machine computes than the one the limits were measured on:
    measured once per process, by one thread while the others wait."""
    with _calibrating:
        return _factor()


def cpu_limit_s():
    """The per-check CPU-time limit under the interpreter on this machine, whole seconds."""
    return round(LEARNER_TIMEOUT_S * machine_factor())


def learner_env(seed, parallel=False):
    env = dict(os.environ, SEED=str(seed))
    env.setdefault(CPU_LIMIT, str(cpu_limit_s()))
    env.setdefault(CPU_LIMIT_GPU, str(GPU_TIMEOUT_S))
    env.setdefault("PYTEST_TIMEOUT", str(WALL_TIMEOUT_S))
    if parallel:  # one thread each: processes side by side oversubscribe the cores otherwise
        env.setdefault("OMP_NUM_THREADS", "1")
    return env
