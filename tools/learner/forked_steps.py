"""Steps run as forked children of a process that has imported torch and triton once (warm_up), so
a step's verdict does not wait for those imports (about 1.6 s of CPU a step on the 2-core machine):
make watch runs every save this way (run_forked), and make test every step under Triton's
interpreter (fork_pytest, called by step_runs.py).  Each child runs pytest on its step's marker with
the grader's plugin and imports the learner's file, the suite and course/ afresh.  A child past the
step limit is killed, so a hang costs its row, never the loop.  Apart from watch.py and step_runs.py
because this is process handling (fork, wait, kill) with rules of its own.

Compiled for a GPU, make test starts fresh processes instead (step_runs.py): a CUDA context does
not survive a fork, and which kernels a fork may reuse is not worth the risk there."""

import io
import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from course import ROOT, toolchain
from tools.core.pytest_run import REPORT, read_report
from tools.learner.step_row import row_of
from tools.learner.time_limits import STEP_LIMIT_S, learner_env

POLL_S = 0.1  # how often the children (and, in watch.py, the file) are looked at
PROGRESS_S = 0.5  # how often fork_pytest's progress() is asked (run_pytest's rhythm)
# The modules a child imports afresh: the learner's file and everything of the repo that may read
# it, or read the environment the child was given, when imported.  Third-party modules stay warm.
FRESH = ("mine", "solutions", "course", "tests", "tools", "conftest")


def warm_up():
    """Import what every run needs, once: the backend first (TRITON_INTERPRET), then torch, triton
    and pytest.  Never the learner's file: each child imports it fresh.  Returns True when the runs
    are interpreted (the CPU), where forked children are safe.

    torch.cuda.is_available() does not poison a later fork when PyTorch checks through NVML
    (PYTORCH_NVML_BASED_CUDA_CHECK=1, PyTorch's docs of torch.cuda.is_available), so make watch's
    children can still start CUDA on a GPU."""
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    toolchain.choose_backend()
    import pytest  # noqa: F401
    import torch  # noqa: F401
    import triton  # noqa: F401

    return os.environ.get("TRITON_INTERPRET") == "1"


def start_pytest(args, env, log, report):
    """Fork a child that runs `pytest ARGS -p tools.core.plugin` in ROOT under env (and the plugin's
    report at `report`), its output into the file `log`.  Returns the child's pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 3  # the child, which must never return into its parent's code
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        # New stdout and stderr objects: another thread of the parent may have held the old ones'
        # locks at the fork, and that thread does not exist here to let go of them.
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
        os.chdir(ROOT)
        os.environ.clear()
        os.environ.update(env, **{REPORT: str(report)})
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for name in [n for n in sys.modules if n.split(".")[0] in FRESH or n.startswith("test_")]:
            del sys.modules[name]
        import pytest
        import torch

        if env.get("OMP_NUM_THREADS"):  # OpenMP read it when the parent imported torch, not now
            torch.set_num_threads(int(env["OMP_NUM_THREADS"]))
        code = int(pytest.main([*args, "-p", "tools.core.plugin"]))
    except BaseException:  # noqa: BLE001 - whatever happens, the child must not return into the loop
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def fork_pytest(args, cwd, env, timeout, progress=None):
    """pytest_run.run_pytest's contract, answered by a forked child (start_pytest) instead of a fresh
    process: (the plugin's report or None, exit status or None when stopped, output).  cwd must be
    ROOT, where the warm process's imports come from."""
    if Path(cwd).resolve() != ROOT.resolve():
        raise ValueError(f"a forked step runs in {ROOT}, not {cwd}")
    with tempfile.TemporaryDirectory(prefix="course-report-") as tmp:
        log, report = Path(tmp) / "output.txt", Path(tmp) / "report.json"
        pid = start_pytest(args, env, log, report)
        deadline, asked = time.monotonic() + timeout, time.monotonic()
        rc = None
        try:
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    rc, pid = os.waitstatus_to_exitcode(status), None
                    break
                now = time.monotonic()
                if now >= deadline:
                    break
                if progress is not None and now - asked >= PROGRESS_S:
                    asked = now
                    if progress(read_report(report)):
                        break
                time.sleep(POLL_S / 2)
        finally:  # stopped, or interrupted: the child does not outlive this call
            if pid is not None:
                _kill(pid)
        output = log.read_text(errors="replace") if log.exists() else ""
        return read_report(report), rc, output


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def fork_step(s, seed, folder, parallel):
    """Start step s in a forked child; its report and output go into folder.  Returns the pid."""
    args = ["-q", "--tb=short", "-m", s.marker]
    return start_pytest(args, learner_env(seed, parallel), folder / "output.txt", folder / "report.json")


def run_forked(steps, seed, live=None, limit=STEP_LIMIT_S):
    """{step id: Row} of steps, each in its own forked child, as many at once as there are cores
    (at least two: the step in progress beside an earlier one); a child past `limit` is killed."""
    width = max(2, os.cpu_count() or 1)
    waiting, running, rows = list(steps), {}, {}
    with tempfile.TemporaryDirectory(prefix="course-watch-") as tmp:
        try:
            while waiting or running:
                while waiting and len(running) < width:
                    s = waiting.pop(0)
                    folder = Path(tmp) / s.id
                    folder.mkdir()
                    if live:
                        live.start(s)
                    running[fork_step(s, seed, folder, len(steps) > 1)] = (s, folder, time.monotonic() + limit)
                for pid, (s, folder, deadline) in list(running.items()):
                    done, status = os.waitpid(pid, os.WNOHANG)
                    rc = os.waitstatus_to_exitcode(status) if done else None
                    if not done and time.monotonic() > deadline:
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                        done = True
                    report = read_report(folder / "report.json")
                    if not done:
                        if live:
                            live.update(s, report)
                        continue
                    log = folder / "output.txt"
                    output = log.read_text(errors="replace") if log.exists() else ""
                    rows[s.id] = row_of(s, report, rc, output)
                    if live:
                        live.finish(s, rows[s.id])
                    del running[pid]
                time.sleep(POLL_S)
        finally:  # stopped (Ctrl-C, kill): no child outlives the loop
            for pid in running:
                _kill(pid)
    return rows
