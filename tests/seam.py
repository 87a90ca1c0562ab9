"""The one seam: the only code in the suite that knows which side it grades.

SOLUTION=1 grades solutions/t4_matmul.py (the instructor's reference); anything else grades
mine/t4_matmul.py (the learner's file).  Everything else in tests/ asks `load()` for the module.
"""
import importlib
import os
import traceback

SIDE = "solutions" if os.environ.get("SOLUTION") == "1" else "mine"
MODULE = f"{SIDE}.t4_matmul"
PATH = f"{SIDE}/t4_matmul.py"


class LearnerImportError(Exception):
    """The graded file did not import; the message is a short report naming the file and line."""


def load():
    try:
        return importlib.import_module(MODULE)
    except SyntaxError as e:
        raise LearnerImportError(
            f"{PATH} line {e.lineno}: SyntaxError: {e.msg}\n    {(e.text or '').rstrip()}") from None
    except Exception as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.endswith(PATH)]
        where = f"{PATH} line {frames[-1].lineno}" if frames else PATH
        raise LearnerImportError(f"{where}: {type(e).__name__} while importing: {e}") from None
