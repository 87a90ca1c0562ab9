"""Python processes started warm: `python -m MODULE ARGS` (or `-c CODE`) answered by a child forked
from a process that has imported torch, triton and pytest once (warm_up), instead of a fresh
interpreter that imports them again (about 1.6 s of CPU each on the 2-core machine, most of what a
short check or a study tool costs).  make test forks its steps this way, make watch its saves,
make check its suite runs, grader runs, generated blocks and mistake workers, the tools' tests their
command lines, and tests/t4 its check without the interpreter (why it lives in course/).

A fork is taken only where it is known to be safe, and a fresh process is started otherwise:
- on Linux, where the threads of this process can be counted (/proc/self/task);
- under Triton's interpreter: compiled for a GPU, a CUDA context does not survive a fork;
- while torch runs its ops on this one thread.  A child forked after torch's OpenMP pool has run
  hangs in its first parallel op (seen here with torch 2.13: a matmul in the parent, then one in
  the child), so warm_up sets torch to one thread, the children keep it unless OMP_NUM_THREADS
  asks for more, and no fork is made once torch has more or more threads are running than at
  warm_up (numpy's OpenBLAS is put on one thread too, so that it starts none to be counted).  One
  thread costs little here: the interpreter's work is Python's, and the runs that use it go side
  by side, one per core.

The child is made to look like a fresh `python -m` in cwd: sys.path[0] is cwd, the repo's own
modules (FRESH) are imported again from there (a scratch copy's, not this checkout's), the
environment is env, stdout and stderr go to files the caller reads.  torch.cuda.is_available()
checks through NVML (PYTORCH_NVML_BASED_CUDA_CHECK=1, PyTorch's docs of is_available), so that a
fork after it is not poisoned on a GPU either (make watch forks there)."""

import importlib
import io
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

# The modules a child imports afresh: everything of the repo, which may read the learner's file,
# the scratch copy it runs in, or the environment it was given when imported.  Third-party
# modules stay warm.
FRESH = ("mine", "solutions", "given", "course", "tests", "tools", "conftest")
# and the suite's own modules, whatever pytest named them (test_x, or t5.common for tests/t5/common.py)
SUITE_DIR = str(Path(__file__).resolve().parent.parent / "tests") + os.sep
POLL_S = 0.05
PROGRESS_S = 0.5  # how often progress() is asked (pytest_run's rhythm)
_native_at_warm_up = None  # threads not Python's own, counted right after warm_up's imports


def _stale(name, module):
    """Whether a module of the parent must be imported afresh in a child (FRESH, or the suite's)."""
    return (
        name.split(".")[0] in FRESH
        or name.startswith("test_")
        or (getattr(module, "__file__", None) or "").startswith(SUITE_DIR)
    )


def native_threads():
    """Threads of this process that Python did not start (torch's, OpenMP's), or None off Linux."""
    try:
        return len(os.listdir("/proc/self/task")) - threading.active_count()
    except OSError:
        return None


def warm_up():
    """Import what every run needs, once: the backend first (TRITON_INTERPRET), then torch, triton
    and pytest, and put torch on one thread.  Returns True when children may be forked from here
    from now on (can_fork); never where torch was imported before, and may have run ops."""
    global _native_at_warm_up
    fresh = "torch" not in sys.modules
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    if fresh and "numpy" not in sys.modules:
        # numpy's OpenBLAS starts its threads when loaded (torch loads it), drops them at each fork
        # and starts them again at its next product: on one thread it starts none, so the count of
        # threads below tells what it must, torch's pool (the interpreter's tl.dot is numpy's; the
        # steps side by side ran with OMP_NUM_THREADS=1, which OpenBLAS reads too, before forks)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from course import toolchain

    toolchain.choose_backend()
    import pytest  # noqa: F401
    import torch
    import triton  # noqa: F401
    import triton.language  # noqa: F401

    if _native_at_warm_up is None and fresh:
        torch.set_num_threads(1)
        _native_at_warm_up = native_threads()
    return can_fork()


def can_fork():
    now = native_threads()
    torch = sys.modules.get("torch")
    return (
        _native_at_warm_up is not None
        and now is not None
        and now <= _native_at_warm_up
        and torch is not None
        and torch.get_num_threads() == 1
        and os.environ.get("TRITON_INTERPRET") == "1"
        and hasattr(os, "fork")
    )


def _child(argv, cwd, env, out, err):
    """In the forked child: become `python ARGV` in cwd under env, and never return."""
    code = 1
    try:
        for fd, path in ((1, out), (2, err)):  # the same path twice: one file, both streams in order
            if fd == 2 and Path(err) == Path(out):
                os.dup2(1, 2)
                continue
            opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(opened, fd)
            os.close(opened)
        # New stdout and stderr objects: another thread of the parent may have held the old ones'
        # locks at the fork, and that thread does not exist here to let go of them.
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(cwd)
        given = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]  # read at start-up only
        ours = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        os.environ.clear()
        os.environ.update(env)
        rest = [p for p in sys.path[1:] if p not in ("", str(cwd), *ours, *given)]
        sys.path[:] = [str(cwd), *given, *rest]
        for name in [n for n, m in list(sys.modules.items()) if _stale(n, m)]:
            if name != __name__:  # this module stays, with what it knows of the threads
                del sys.modules[name]
        global _native_at_warm_up  # no thread survives a fork: counted again, for the child's own forks
        _native_at_warm_up = native_threads()
        _as_a_main_process()
        import torch

        if env.get("OMP_NUM_THREADS", "").isdigit():  # read when the parent imported torch, not now
            torch.set_num_threads(max(1, int(env["OMP_NUM_THREADS"])))
        if argv[0] not in ("-m", "-c"):
            raise ValueError(f"a warm child runs `python -m MODULE ...` or `python -c CODE ...`, not {argv!r}")
        sys.argv = [argv[1] if argv[0] == "-m" else "-c", *argv[2:]]
        try:
            if argv[0] == "-m":
                runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
            else:
                exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int) and e.code is not None:
                print(e.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - whatever happens, the child must not return into its parent's code
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def _as_a_main_process():
    """multiprocessing as a fresh interpreter has it: this process its main one, with no parent and
    no children.  Forked from a multiprocessing child (each of make check's checks is one), it would
    think itself that daemonic child, which may not start processes of its own."""
    if "multiprocessing.process" in sys.modules:  # its module state made again, in the same namespace
        importlib.reload(sys.modules["multiprocessing.process"])


def start(argv, cwd, env, out, err):
    """Fork a child that runs `python ARGV` (["-m", module, args...] or ["-c", code, args...]) in cwd under env, its
    stdout and stderr into the files out and err.  Returns its pid.  Only when can_fork().

    The fork is made from a thread of its own, so that the child starts from a clean stack: forked
    inside an `except` block (cache.shared forks there), every error of the child would otherwise
    carry the parent's handled exception as its __context__, which failure_words reads."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = []

    def fork():
        pid.append(os.fork())
        if pid[0] == 0:
            _child(argv, cwd, env, out, err)

    forker = threading.Thread(target=fork, name="warm-fork")
    forker.start()
    forker.join()
    return pid[0]


def kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def run_python(argv, cwd, env, timeout, progress=None):
    """`python ARGV` in cwd under env, forked warm when can_fork(), else a fresh process.

    Returns (exit status, stdout, stderr); the status is None when the run was stopped: past
    `timeout` seconds, or when progress(), asked about twice a second, returned True."""
    if not can_fork():
        return _fresh(argv, cwd, env, timeout, progress)
    with tempfile.TemporaryDirectory(prefix="course-warm-") as tmp:
        out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
        pid = start(argv, cwd, env, out, err)
        deadline = asked = time.monotonic()
        deadline += timeout
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
                    if progress():
                        break
                time.sleep(POLL_S)
        finally:  # stopped, or interrupted: the child does not outlive this call
            if pid is not None:
                kill(pid)
        read = lambda p: p.read_text(errors="replace") if p.exists() else ""  # noqa: E731
        return rc, read(out), read(err)


def _fresh(argv, cwd, env, timeout, progress):
    proc = subprocess.Popen(
        [sys.executable, *argv], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            out, err = proc.communicate(timeout=min(PROGRESS_S, max(0.01, deadline - time.monotonic())))
            return proc.returncode, out, err
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline or (progress is not None and progress()):
                proc.kill()
                out, err = proc.communicate()
                return None, _text(out), _text(err)


def _text(data):
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
