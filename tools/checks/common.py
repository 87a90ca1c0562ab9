"""Helpers the checks share: where things are, and running the suite on either side."""
import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "t4_matmul.py"
MINE = ROOT / "mine" / "t4_matmul.py"


def committed_stub():
    """mine/t4_matmul.py as committed in HEAD; raises CalledProcessError or FileNotFoundError."""
    return subprocess.run(["git", "show", "HEAD:mine/t4_matmul.py"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout


def pristine_stub():
    """The stub as committed (a learner's edits to mine/ do not count), else as on disk."""
    try:
        return committed_stub()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return MINE.read_text()


@contextmanager
def scratch_repo(mine_text=None):
    """A throw-away copy of what the suite needs; mine_text replaces mine/t4_matmul.py there.

    Checks plant their mistakes here, never in the real mine/.
    """
    with tempfile.TemporaryDirectory(prefix="t4check-") as tmp:
        for part in ("tests", "tools", "solutions", "mine", "pytest.ini"):
            src, dst = ROOT / part, Path(tmp) / part
            if src.is_dir():
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "backups"))
            else:
                shutil.copy(src, dst)
        if mine_text is not None:
            (Path(tmp) / "mine" / "t4_matmul.py").write_text(mine_text)
        yield Path(tmp)


def run_suite(mine_text=None, solution=False, args=(), timeout=600):
    """Run the suite in a scratch copy of the repo; return (results, output).

    mine_text replaces mine/t4_matmul.py in the copy; results are tools/report.py's records.
    """
    from tools.report import run_pytest  # here: make reset imports this file with a python3 that may lack pytest
    with scratch_repo(mine_text) as tmp:
        env = dict(os.environ, SOLUTION="1" if solution else "0")
        results, _, output = run_pytest(["-q", "--tb=no", "-p", "no:randomly", *args], tmp, env, timeout)
        return results or [], output
