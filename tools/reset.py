"""`make reset`: start over from the stub, without losing what you wrote.

Your mine/t4_matmul.py is first copied to mine/backups/t4_matmul.<time>.py (git-ignored), then
the file is restored as committed in git's HEAD.  Nothing is written if the copy fails.
"""
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.checks.common import MINE, ROOT, committed_stub  # noqa: E402

BACKUPS = MINE.parent / "backups"


def main():
    try:
        stub = committed_stub()
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        print(f"make reset needs git and a commit holding mine/t4_matmul.py ({e}); nothing changed.",
              file=sys.stderr)
        return 1
    if MINE.exists() and MINE.read_text() == stub:
        print("mine/t4_matmul.py is already as committed; nothing to do.")
        return 0
    if MINE.exists():
        BACKUPS.mkdir(exist_ok=True)
        backup = BACKUPS / f"t4_matmul.{time.strftime('%Y%m%d-%H%M%S')}.py"
        n = 1
        while backup.exists():  # two resets in one second keep both
            backup, n = backup.with_name(f"t4_matmul.{time.strftime('%Y%m%d-%H%M%S')}-{n}.py"), n + 1
        shutil.copy2(MINE, backup)
        if backup.read_bytes() != MINE.read_bytes():
            print(f"could not keep a copy in {backup}; nothing changed.", file=sys.stderr)
            return 1
        print(f"your file is kept in {backup.relative_to(ROOT)}")
        print(f"  (compare: diff {backup.relative_to(ROOT)} mine/t4_matmul.py)")
    MINE.write_text(stub)
    print("mine/t4_matmul.py is the stub again, as committed in HEAD.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
