"""The one seam: the only code that knows which side is graded.

SOLUTION=1 grades solutions/ (the instructor's reference); anything else grades mine/ (the
learner's files).  The suite and the tools ask `load(lesson)` for a lesson's module and
`path(lesson)` for the file it came from; nothing else reads SOLUTION.
"""

import ast
import importlib
import os
import traceback

from course import ROOT
from course.errors import error_chain
from course.i18n import say


def side():
    """ "solutions" with SOLUTION=1, else "mine"; read at each call, so a tool's --solution can set it."""
    return "solutions" if os.environ.get("SOLUTION") == "1" else "mine"


class LearnerImportError(Exception):
    """The graded file did not import; the message is a short report naming the file and line."""


class GradedFileMissing(LearnerImportError):
    """The graded file is not there (deleted, moved); the message, in the learner's language, says how
    to get it back.  Checked before the import: a `mine` package elsewhere on the path (another
    checkout's editable install) would otherwise be graded in its place, without a word."""


def path(lesson):
    """The graded file of a lesson, relative to the repo: mine/t4_matmul.py or solutions/t4_matmul.py."""
    return f"{side()}/{lesson.file}"


def missing_words(lesson):
    """What to say of a lesson's graded file that is not there, and how to get it back."""
    where_file = path(lesson)
    return say(
        zh=f"{where_file} 不在了（删掉了，还是挪走了？）：make reset LESSON={lesson.id} 重新写出 stub；"
        f"git checkout -- {where_file} 取回最后提交的那一版",
        en=f"{where_file} is not there (deleted or moved?): make reset LESSON={lesson.id} writes the stub "
        f"again; git checkout -- {where_file} brings back the version last committed",
    )


def load(lesson):
    """The graded module of a lesson.  Whatever the file raises while it imports (a skip, an exit,
    any exception) is reported as a LearnerImportError naming the file and the line; where the
    error is in an earlier lesson's file that this one imports, that file and line too
    (`mine/t5_persistent.py line 31 -> mine/t4_matmul.py line 44`), and an earlier lesson's file that
    is not there is named so."""
    where_file = path(lesson)
    if not (ROOT / where_file).is_file():
        raise GradedFileMissing(missing_words(lesson))
    try:
        return importlib.import_module(f"{side()}.{lesson.module}")
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as e:  # noqa: BLE001 - pytest.skip and sys.exit at import time included
        gone = missing_lesson(e)
        if gone is not None:
            raise GradedFileMissing(f"{where_file}: {missing_words(gone)}") from None
        frames = [f for f in traceback.extract_tb(e.__traceback__) if graded_file(f.filename)]
        if isinstance(e, SyntaxError) and graded_file(e.filename or ""):  # the line that did not parse: last
            frames.append(traceback.FrameSummary(e.filename, e.lineno, ""))
        own = [f for f in frames if f.filename.endswith(where_file)]
        where = where_file + (f" line {own[-1].lineno}" if own else "")
        if frames and not frames[-1].filename.endswith(where_file):
            where += f" -> {graded_file(frames[-1].filename)} line {frames[-1].lineno}"
        if isinstance(e, SyntaxError):
            raise LearnerImportError(f"{where}: SyntaxError: {e.msg}\n    {(e.text or '').rstrip()}") from None
        raise LearnerImportError(f"{where}: {type(e).__name__} while importing: {e}") from None


def missing_lesson(error):
    """The lesson whose graded module `error` says is not there (a ModuleNotFoundError naming it), else None."""
    from course.registry import LESSONS

    name = getattr(error, "name", None) if isinstance(error, ModuleNotFoundError) else None
    return next((lz for lz in LESSONS if name == f"{side()}.{lz.module}"), None)


def graded_paths():
    """The graded file of every lesson."""
    from course.registry import LESSONS

    return tuple(path(lesson) for lesson in LESSONS)


def graded_file(filename):
    """The graded file (as path() names it) that `filename`, a frame's file, is; None if none."""
    return next((g for g in graded_paths() if str(filename).endswith(g)), None)


def _not_implemented_raise(node):
    """The message of `raise NotImplementedError("...")` at this AST node, else None."""
    if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
        return None
    call = node.exc
    if not (isinstance(call.func, ast.Name) and call.func.id == "NotImplementedError"):
        return None
    try:
        return str(ast.literal_eval(call.args[0])) if call.args else ""
    except ValueError:
        return ""


def stub_message(exc):
    """The stub's own message if `exc` comes from a body not written yet, else None.

    Under the interpreter the stub's raise runs as Python: a NotImplementedError raised in a
    graded file, by its own raise statement (one that Triton or torch raises from inside a call the
    body makes, such as Triton 3.9's for tl.make_block_ptr or torch.aminmax's for complex input, is an
    error, though a C function's raise leaves the graded line last in the traceback).  The GPU compiler cannot
    compile a raise at all: it stops with a CompilationError whose node is that raise statement.
    Only these two count; a compiler error elsewhere in a half-written body is a real error, even
    when its message quotes the stub's text."""
    graded = graded_paths()
    for error in error_chain(exc, suppressed=True):
        frames = traceback.extract_tb(error.__traceback__)
        # the graded file's own `raise` line: torch's NotImplementedError from a call there (torch.aminmax
        # of complex ids, say) has that file's line last too, and is the learner's error, not a stub
        if isinstance(error, NotImplementedError) and frames and frames[-1].filename.endswith(graded):
            if (frames[-1].line or "raise").lstrip().startswith("raise"):
                return str(error)
        message = _not_implemented_raise(getattr(error, "node", None))
        if message is not None:
            return message
    return None
