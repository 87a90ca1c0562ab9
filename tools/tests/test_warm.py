"""course/warm.py: a warm child answers as a fresh `python -m` would, and no child is forked where
a fork is not known to be safe.  What a fork may do depends on what its parent has run, so each
scenario runs in a fresh interpreter that imports torch itself: one runs them all in order (the
torch ops last, after which it must stop forking), another imports torch before warm_up."""

import json
import os
import subprocess
import sys

import pytest

from course import ROOT

PROBE = """
import json, os, sys, threading
try:
    raise ValueError("the child's")
except ValueError as e:
    context = repr(e.__context__)
print(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "path0": sys.path[0], "env": os.environ.get("PROBE"),
                  "context": context, "main": threading.current_thread() is threading.main_thread(),
                  "course": sys.modules["course"].__file__ if "course" in sys.modules else None}))
print("to stderr", file=sys.stderr)
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""
STARTER = """
import multiprocessing
p = multiprocessing.get_context("fork").Process(target=print, args=("grandchild ran",))
p.start()
p.join()
print("exit", p.exitcode)
"""
SCENARIOS = """
import json, multiprocessing, os, sys, time
from course import warm

here, said = sys.argv[1], {}
said["warm"] = warm.warm_up()
try:
    raise FileNotFoundError("the parent's, being handled when the child is forked")
except FileNotFoundError:
    env = dict(os.environ, PROBE="given", PROBE_EXIT="3")
    said["probe"] = warm.run_python(["-m", "probe_module", "a", "b"], here, env, 60)

def check(conn):  # as make check runs a check: a daemonic multiprocessing child
    conn.send(warm.run_python(["-m", "starter"], here, dict(os.environ), 60))
inbox, outbox = multiprocessing.get_context("fork").Pipe(duplex=False)
proc = multiprocessing.get_context("fork").Process(target=check, args=(outbox,), daemon=True)
proc.start()
said["daemonic"] = inbox.recv()
proc.join()

# A step's process runs numpy (the interpreter's tl.dot) and then forks again (tests/t4 does)
again = "import numpy; x = numpy.random.rand(300, 300); x @ x; from course import warm; print(warm.can_fork())"
said["fork again"] = warm.run_python(["-c", again], here, dict(os.environ), 60)

for name, timeout, progress in (("timeout", 0.5, None), ("progress", 60, lambda: True)):
    began = time.monotonic()
    rc, _, _ = warm.run_python(["-c", "import time; time.sleep(60)"], here, dict(os.environ), timeout, progress)
    said[name] = [rc, time.monotonic() - began]

import numpy, torch
x = numpy.random.rand(300, 300)
x @ x  # the interpreter's tl.dot is numpy's: OpenBLAS on one thread starts none
a = torch.randn(512, 512)
(a @ a).sum()
said["one thread"] = [torch.get_num_threads(), warm.can_fork()]  # no pool has run: forks stay safe
torch.set_num_threads(2)
(a @ a).sum()
said["after ops"] = warm.can_fork()
said["fresh"] = warm.run_python(["-m", "probe_module"], here, dict(os.environ), 60)
print(json.dumps(said))
"""
TORCH_FIRST = "import json, torch\nfrom course import warm\nprint(json.dumps({'warm': warm.warm_up()}))\n"


def fresh_python(code, folder):
    out = subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        cwd=ROOT,
        env={**{k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}, "TRITON_INTERPRET": "1"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def said(tmp_path_factory):
    folder = tmp_path_factory.mktemp("warm")
    (folder / "probe_module.py").write_text(PROBE)
    (folder / "starter.py").write_text(STARTER)
    return dict(fresh_python(SCENARIOS, folder), folder=str(folder))


def test_a_warm_child_is_a_fresh_python_m_in_its_folder(said):
    assert said["warm"] is True
    rc, out, err = said["probe"]
    child = json.loads(out)
    assert rc == 3 and err == "to stderr\n"
    assert child["argv"] == ["a", "b"] and child["env"] == "given"
    assert child["cwd"] == said["folder"] and child["path0"] == said["folder"]
    assert child["context"] == "None", "the parent's handled exception leaked into the child"
    assert child["main"] is True
    assert child["course"] is None, "the repo's modules must be imported afresh, not inherited"


def test_a_warm_child_that_ran_numpy_may_fork_again(said):
    """The interpreter's tl.dot is numpy's: a step's process that ran it must still fork warm (its
    own children: tests/t4's check without the interpreter), so numpy's BLAS must start no thread."""
    rc, out, err = said["fork again"]
    assert rc == 0 and out.strip() == "True", err


def test_a_child_forked_from_a_daemonic_process_may_start_processes(said):
    """Each of make check's checks is a daemonic multiprocessing child; what it forks warm is a main
    process again, as a fresh python would be (test_check_runner starts checks side by side)."""
    rc, out, err = said["daemonic"]
    assert rc == 0 and "grandchild ran" in out and "exit 0" in out, err


@pytest.mark.parametrize("stop", ["timeout", "progress"])
def test_a_child_past_its_time_or_stopped_by_progress_is_killed(said, stop):
    rc, took = said[stop]
    assert rc is None and took < 10


def test_no_fork_once_torch_has_started_threads(said):
    """A fork after torch's thread pool has run hangs in the child's first parallel op (seen here):
    warm keeps torch on one thread, and once it has more, starts fresh processes, which still answer."""
    assert said["one thread"] == [1, True]
    assert said["after ops"] is False
    rc, out, _ = said["fresh"]
    assert rc == 0 and json.loads(out)["argv"] == []


def test_no_fork_where_torch_was_imported_before_warm_up(tmp_path):
    assert fresh_python(TORCH_FIRST, tmp_path) == {"warm": False}
