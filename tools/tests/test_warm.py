"""tools/core/warm.py: a warm child answers as a fresh `python -m` would, and no child is forked where
a fork is not known to be safe.  Each test runs in a process of its own (a fresh interpreter that
imports torch itself), since what a fork may do depends on what its parent has run."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from course import ROOT

PROBE = '''
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
'''


def in_fresh_python(body, tmp_path):
    """Run body (which prints one JSON line last) in a fresh interpreter from ROOT; its answer."""
    (tmp_path / "probe_module.py").write_text(PROBE)
    script = "import json, os, sys, time\nfrom tools.core import warm\n" + textwrap.dedent(body)
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(tmp_path), TRITON_INTERPRET="1"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_warm_child_is_a_fresh_python_m_in_its_folder(tmp_path):
    said = in_fresh_python(
        f"""
        warm_now = warm.warm_up()
        try:
            raise FileNotFoundError("the parent's, being handled when the child is forked")
        except FileNotFoundError:
            env = dict(os.environ, PROBE="given", PROBE_EXIT="3")
            rc, out, err = warm.run_python(["-m", "probe_module", "a", "b"], {str(tmp_path)!r}, env, 60)
        print(json.dumps({{"warm": warm_now, "rc": rc, "out": json.loads(out), "err": err}}))
        """,
        tmp_path,
    )
    assert said["warm"] is True
    child = said["out"]
    assert said["rc"] == 3 and said["err"] == "to stderr\n"
    assert child["argv"] == ["a", "b"] and child["env"] == "given"
    assert child["cwd"] == str(tmp_path) and child["path0"] == str(tmp_path)
    assert child["context"] == "None", "the parent's handled exception leaked into the child"
    assert child["main"] is True
    assert child["course"] is None, "the repo's modules must be imported afresh, not inherited"


def test_no_fork_once_torch_has_started_threads(tmp_path):
    """A fork after torch's thread pool has run hangs in the child's first parallel op (seen here):
    warm must then start fresh processes, which still answer."""
    said = in_fresh_python(
        f"""
        before = warm.warm_up()
        import torch
        a = torch.randn(512, 512)
        (a @ a).sum()
        after = warm.can_fork()
        rc, out, err = warm.run_python(["-m", "probe_module"], {str(tmp_path)!r}, dict(os.environ), 60)
        print(json.dumps({{"before": before, "after": after, "rc": rc, "out": json.loads(out)}}))
        """,
        tmp_path,
    )
    assert said["before"] is True and said["after"] is False
    assert said["rc"] == 0 and said["out"]["argv"] == []


def test_no_fork_where_torch_was_imported_before_warm_up(tmp_path):
    said = in_fresh_python(
        "import torch\nprint(json.dumps({'warm': warm.warm_up()}))\n",
        tmp_path,
    )
    assert said["warm"] is False


@pytest.mark.parametrize("stop", ["timeout", "progress"])
def test_a_child_past_its_time_or_stopped_by_progress_is_killed(tmp_path, stop):
    (tmp_path / "sleeper.py").write_text("import time\ntime.sleep(60)\n")
    timeout, progress = (0.5, "None") if stop == "timeout" else (60, "lambda: True")
    said = in_fresh_python(
        f"""
        warm.warm_up()
        began = time.monotonic()
        rc, out, err = warm.run_python(["-m", "sleeper"], {str(tmp_path)!r}, dict(os.environ), {timeout}, {progress})
        print(json.dumps({{"rc": rc, "took": time.monotonic() - began}}))
        """,
        tmp_path,
    )
    assert said["rc"] is None and said["took"] < 10


def test_a_child_forked_from_a_daemonic_process_may_start_processes(tmp_path):
    """Each of make check's checks is a daemonic multiprocessing child; what it forks warm is a main
    process again, as a fresh python would be (test_check_runner starts checks side by side)."""
    (tmp_path / "starter.py").write_text(
        "import multiprocessing\n"
        "p = multiprocessing.get_context('fork').Process(target=print, args=('grandchild ran',))\n"
        "p.start()\np.join()\nprint('exit', p.exitcode)\n"
    )
    said = in_fresh_python(
        f"""
        import multiprocessing
        warm.warm_up()
        def check(conn):
            conn.send(warm.run_python(["-m", "starter"], {str(tmp_path)!r}, dict(os.environ), 60))
        here, there = multiprocessing.get_context("fork").Pipe(duplex=False)
        proc = multiprocessing.get_context("fork").Process(target=check, args=(there,), daemon=True)
        proc.start()
        rc, out, err = here.recv()
        proc.join()
        print(json.dumps({{"rc": rc, "out": out, "err": err}}))
        """,
        tmp_path,
    )
    assert said["rc"] == 0 and "grandchild ran" in said["out"] and "exit 0" in said["out"], said["err"]
