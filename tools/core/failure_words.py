"""What a failed check says, worked out from its exception: the graded file's line it went
through (graded_frames), whether the error came from code the learner did not write (given_code)
or from a library the learner's line called (library_note), the check's own message without
pytest's assertion rewriting (message_of), and a timeout's one line (timed_out).  The pytest
plugin (plugin.py) stores what these say in its report; the grader reads it back (short,
source_line).  Apart from the plugin because none of it is a pytest hook: it is plain functions
of an exception, testable alone (tools/tests/test_learner_loop.py)."""

import re
import traceback
from pathlib import Path

import pytest

from course import ROOT, seam
from course.errors import error_chain
from course.i18n import say
from tools.core.bodies import MARK
from tools.core.cpu_clock import interpreting


def short(nodeid):
    """test_mainloop[32-32-64-...] -> test_mainloop: the reason names the case."""
    return nodeid.split("::")[-1].split("[")[0] if nodeid else "?"


def graded_frames(exc):
    """(file, line number, 'TypeName: message') of the innermost exception in the chain that passed
    through a graded file, at its deepest frame there; None if none did.  Under the interpreter
    your @triton.jit code runs as Python, so its frames are real."""
    found = None
    for error in error_chain(exc):
        frames = [f for f in traceback.extract_tb(error.__traceback__) if seam.graded_file(f.filename)]
        if frames:
            said = f"{type(error).__name__}: {abridged(error)}"
            found = seam.graded_file(frames[-1].filename), frames[-1].lineno, said
    return found


# A block's values as numpy prints them inside an error's text ("cannot cast [[ 0.73 -1.63 ...]] to ..."):
# brackets around numbers, spaces and newlines only; the whole tile can run to fifty lines.
_VALUES = re.compile(r"\[[\[\]\s\d.eE+\-naif,]{80,}\]")


def abridged(exc):
    """exc's text with every long run of a block's printed values cut to its first numbers and "...]"."""

    def cut(m):
        opened = len(m[0]) - len(m[0].lstrip("["))
        numbers = m[0].lstrip("[").split()[:3]
        return "[" * opened + " ".join(numbers) + " ..." + "]" * opened

    return _VALUES.sub(cut, str(exc))


def pointer_cast_note(exc):
    """For a value cast to a pointer type (`acc.to(c_ptr.dtype)`: a pointer argument's dtype is the pointer's
    own type, pointer<fp16>), one line naming the element type instead; "" for any other error."""
    cast = re.search(r"cannot cast (.*) to (.*)", str(error_chain(exc)[-1]), re.S)
    if not cast or "pointer<" not in cast[2] or "pointer<" in cast[1]:
        return ""  # no cast, a cast to a value type, or a pointer cast: another mistake
    return say(
        zh="你把数值转换成了指针类型：指针参数的 .dtype 是指针本身的类型（pointer<fp16> 之类），"
        "它指向的元素类型是 .dtype.element_ty，比如 c_ptr.dtype.element_ty（content/t4.md §1.2）",
        en="you cast values to a pointer type: a pointer argument's .dtype is the pointer's own type "
        "(pointer<fp16>, say); the element type it points to is .dtype.element_ty, as in "
        "c_ptr.dtype.element_ty (content/t4.en.md §1.2)",
    )


def graded_calls(exc, most=3):
    """Where a check stopped inside the graded files, for a timeout: the source line of its deepest
    graded frame, then up to `most` lines that called into it ("called from ..."), each from another
    function, innermost first.  An endless loop that calls others (a k-loop inside a walk over tiles
    that never moves on, say) is stopped wherever its callee happens to be: its own line is among
    the callers."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if seam.graded_file(f.filename)]
    if not frames:
        return ""
    lines, names = [source_line(seam.graded_file(frames[-1].filename), frames[-1].lineno)], {frames[-1].name}
    for f in reversed(frames[:-1]):
        if f.name in names or len(lines) > most:
            continue
        names.add(f.name)
        at = source_line(seam.graded_file(f.filename), f.lineno)
        lines.append(say(zh=f"  调用它的是 {at}", en=f"  called from {at}"))
    return "\n".join(line for line in lines if line.strip())


def bodies(graded):
    """{line number: (step, its sections)} for every line inside a marked body of the graded file;
    the sections are those the body's begin mark names ("# ---- T5.2 begin (§3.1) ----")."""
    inside, found = None, {}
    try:
        lines = (ROOT / graded).read_text().splitlines()
    except OSError:
        return found
    for n, line in enumerate(lines, 1):
        m = MARK.match(line)
        if m:
            inside = (m[1], tuple(re.findall(r"§(\d+(?:\.\d+)*)", m[3] or ""))) if m[2] == "begin" else None
        elif inside:
            found[n] = inside
    return found


def where_for(step_id, sections=()):
    """Where to read for a step: the sections given (those of a body's mark), else the step's own."""
    from course.messages import read
    from course.registry import BY_ID

    step = BY_ID[step_id]
    colon = say(zh="：", en=": ")  # the learner's own punctuation: "T6.3：详见 ...", "T6.3: read ..."
    return f"{step_id}{colon}" + read(step, *(n for n in sections if n in step.lesson.sections), titled=True)


def shown_path(filename):
    """A file as the learner reads it: the repo's files from its root, a library's from its package."""
    path = Path(filename)
    try:
        return str(path.resolve().relative_to(ROOT.resolve()))
    except ValueError:
        parts = path.parts
        at = max((i for i, p in enumerate(parts) if p in ("site-packages", "dist-packages")), default=None)
        return "/".join(parts[at + 1 :]) if at is not None else path.name


OUTCOMES = (pytest.fail.Exception, pytest.skip.Exception, pytest.xfail.Exception, pytest.exit.Exception)


def triton_lead(exc):
    """(what raised exc, the words that lead into its own text), said before Triton's own English: Triton's
    interpreter running a kernel (an InterpreterError in the chain) or Triton compiling one (a CompilationError);
    the course's spin watch stopping one (ProgramWaitsForever: its words are the learner's language already);
    where neither, the plain words for an error the learner's code raised (none in English, where the error's own
    words say it)."""
    kinds = {type(e).__name__ for e in error_chain(exc)}
    if type(error_chain(exc)[-1]).__name__ in ("ProgramWaitsForever", "ProgramsStuck"):
        # the course's own watch (interpreter_spin, interpreter_order) stopped the kernel: its words are the
        # learner's language already, not Triton's English
        return say(
            zh="解释器运行你的 kernel 时，课程的监视让它停了下来", en="the course's watch stopped your kernel"
        ), say(zh="：", en=": ")
    quote = say(zh="，Triton 的英文原话：", en=": ")
    if "CompilationError" in kinds:
        return say(zh="Triton 编译你的 kernel 时拒绝了它", en="Triton refused to compile your kernel"), quote
    if "InterpreterError" in kinds:
        return say(
            zh="Triton 的解释器运行你的 kernel 时报错", en="Triton's interpreter raised this while running your kernel"
        ), quote
    return say(zh="你的代码抛出了错误", en=""), say(zh="：", en="")


def given_code(exc, step_id, found):
    """For an error raised in code the learner did not write (the graded file's scaffold, course/,
    Triton, torch), and not by the check itself, one line of what is known, in the learner's
    language: where it was raised, the learner's last line on the way there if any, and the step's
    sections; (that line, the place); None for any other error.  found: graded_frames(exc)."""
    if isinstance(exc, OUTCOMES + (NotImplementedError,)) or step_id is None:
        return None
    if any(type(e).__name__ == "CompilationError" for e in error_chain(exc)):
        return None  # a kernel that does not compile names the learner's own line itself
    if found and found[1] in bodies(found[0]):
        return None  # raised in, or called from, a body the learner writes: graded_frames names that line
    frames = [f for e in error_chain(exc) for f in traceback.extract_tb(e.__traceback__)]
    inner = traceback.extract_tb(error_chain(exc)[-1].__traceback__)
    if not inner or shown_path(inner[-1].filename).startswith(("tests/", "tools/")):
        return None  # the check's own code: its message says what it checked
    said = str(exc) + str(error_chain(exc)[-1])
    if "§" in said and any(shown_path(f.filename).startswith("course/") for f in frames):
        return None  # the course's own check (a probe's tl.static_assert, raised inside Triton): it says why
    raised = inner[-1]
    place = (
        f"{found[0]} line {found[1]}"
        if found
        else f"{shown_path(raised.filename)} line {raised.lineno} ({raised.name})"
        # the host code given beside the learner's file calls the learner's functions: its line shows which
        + (f": {raised.line.strip()}" if shown_path(raised.filename).startswith("given/") and raised.line else "")
    )
    yours = [
        f"{g} line {f.lineno}" for f in frames for g in [seam.graded_file(f.filename)] if g and f.lineno in bodies(g)
    ]
    return (
        say(
            zh=f"这个错误出自不是你写的代码（{place}），不在你的代码块里"
            + (f"；途中经过你写的 {yours[-1]}" if yours else "")
            + f"。{where_for(step_id)}",
            en=f"this error was raised in code you did not write ({place}), outside your marked bodies"
            + (f"; on the way there it went through your {yours[-1]}" if yours else "")
            + f". {where_for(step_id)}",
        ),
        place,
    )


def library_note(exc, found, tested=None):
    """For an error a library raised (Triton, torch) when a line of the learner's body called it,
    one line naming where it was raised and the body's sections; for one raised by the body's line itself
    (an attribute Triton or a tensor lacks, say), one line naming those sections; "" when it says where to
    read already.  tested: the step whose check failed; when that line is
    another step's body (T4.5's bias_and_activation) and a line of the tested step's body called it
    on the way (T5.4's store_tile), that call is named too: what it passes may be the cause."""
    if not found or found[1] not in bodies(found[0]) or "§" in str(exc):
        return ""
    inner = traceback.extract_tb(error_chain(exc)[-1].__traceback__)
    if not inner:
        return ""
    step_id, sections = bodies(found[0])[found[1]]
    if seam.graded_file(inner[-1].filename):  # your line itself raised it (tl.arnage, a tensor's missing attribute)
        return say(
            zh=f"这个错误由你这一行自己抛出；{where_for(step_id, sections)}",
            en=f"raised by your line itself; {where_for(step_id, sections)}",
        ) + _called_from(exc, tested, step_id)
    place = f"{shown_path(inner[-1].filename)} line {inner[-1].lineno} ({inner[-1].name})"
    return say(
        zh=f"这个错误出自 {place}，由你这一行调用；{where_for(step_id, sections)}",
        en=f"raised inside {place}, which your line called; {where_for(step_id, sections)}",
    ) + _called_from(exc, tested, step_id)


def interpreter_int_note(exc):
    """For a tensor's method called on a Python int under Triton's interpreter, one line saying which ints a
    kernel has there: a tl.constexpr and a tl.static_range loop's variable (a range or tl.range loop's variable
    is a tensor there, as on a GPU: course/interpreter_calls.py); "" for any other error."""
    inner = error_chain(exc)[-1]
    called = re.fullmatch(r"'int' object has no attribute '(\w+)'", str(inner))
    if not (isinstance(inner, AttributeError) and called and interpreting()):
        return ""
    return say(
        zh=f"你的代码在一个 Python int 上调用了 .{called[1]}：在 Triton 的解释器里，tl.constexpr 和 tl.static_range "
        "循环的变量（以及它们之间的 Python 运算结果）都是 int，没有张量的方法。改用对 int 和张量都行的写法，"
        "比如 tl.cast(x, tl.int64)（content/t4.md §2）",
        en=f"your code called .{called[1]} on a Python int: under Triton's interpreter a tl.constexpr and a "
        "tl.static_range loop's variable (and Python arithmetic on them) are ints, which have no tensor methods. "
        "Write what takes both an int and a tensor, such as tl.cast(x, tl.int64) (content/t4.en.md §2)",
    )


def libdevice_note(exc, found):
    """For an error about None raised at a learner's line that calls tl.extra's libdevice under Triton's interpreter
    (tanh, say, for a tanh GELU: the interpreter has no libdevice, and such a call gives None), one line saying so;
    "" for any other error, and on a GPU."""
    inner = str(error_chain(exc)[-1])
    if not (found and interpreting() and "None" in inner and "libdevice" in source_line(*found[:2])):
        return ""
    return say(
        zh="这一行调用了 libdevice 的函数：Triton 的解释器没有 libdevice，这样的调用在 CPU 上返回 None，"
        "报的就是 None 的错；在 GPU 上它能用。在 CPU 上改用 tl 自己的函数（tl.erf、tl.exp、tl.sigmoid 等）",
        en="this line calls a libdevice function: Triton's interpreter has no libdevice, and on the CPU such a call "
        "gives None, which is what the error is about; on a GPU it works. On the CPU use tl's own functions "
        "(tl.erf, tl.exp, tl.sigmoid and the like)",
    )


def _called_from(exc, tested, step_id):
    """The words "; called from your <file> line n (<tested>'s code) ..." when the body that raised is step_id's,
    not the tested step's, and a line of the tested step's body is on the way there; else ""."""
    if tested is None or tested == step_id:
        return ""
    frames = [f for e in error_chain(exc) for f in traceback.extract_tb(e.__traceback__)]
    calls = [
        (g, f.lineno, bodies(g)[f.lineno][1])
        for f in frames
        for g in [seam.graded_file(f.filename)]
        if g and bodies(g).get(f.lineno, (None,))[0] == tested
    ]
    if not calls:
        return ""
    g, n, sections = calls[-1]
    return say(
        zh=f"；它由你在 {g} 第 {n} 行（{tested} 的代码）调用：那一行传的参数也可能是原因；"
        f"{where_for(tested, sections)}",
        en=f"; it was called from your {g} line {n} ({tested}'s code): what that line passes may be the cause "
        f"as well; {where_for(tested, sections)}",
    )


def reduction_pair_note(exc, found):
    """For an error about an axis raised at a learner's line that calls tl.min or tl.max with two values
    (tl.min(a, b): a reduction, whose second argument is the axis), one line naming tl.minimum and tl.maximum,
    the element-wise pair; "" for any other error."""
    line = source_line(*found[:2]) if found else ""
    said = " ".join(str(e) for e in error_chain(exc)).lower()
    call = re.search(r"tl\.(min|max)\((?:[^(),]|\([^()]*\))+,\s*(?!axis\b)[^)]", line)
    if not call or "axis" not in said:
        return ""
    pair = f"tl.{call[1]}imum"
    return say(
        zh=f"这一行调用了 tl.{call[1]}(a, b)：tl.{call[1]} 是沿一个轴的归约，第二个参数是 axis（沿哪个轴），"
        f"不是另一个数；要两个数（或两个张量逐元素）取{'小' if call[1] == 'min' else '大'}的，用 {pair}(a, b)",
        en=f"this line calls tl.{call[1]}(a, b): tl.{call[1]} is a reduction along one axis, and its second argument "
        f"is that axis, not another value; the {'smaller' if call[1] == 'min' else 'larger'} of two values (element "
        f"by element for tensors) is {pair}(a, b)",
    )


def source_line(graded, lineno):
    try:
        text = (ROOT / graded).read_text().splitlines()[lineno - 1].strip()
    except (OSError, IndexError):
        return ""
    return f"{graded} line {lineno}: {text}"


def reason_of(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    text = _plain(text.removeprefix("Failed: ")).removeprefix("AssertionError: ").strip()
    return text.splitlines()[0] if text else ""


def _plain(text):
    """A failure message without pytest's assertion rewriting: for `assert x, msg` pytest appends
    "\nassert <x>" and "+ where ..." lines (tensor reprs, <built-in method ...>) to msg."""
    return re.split(r"\n(?:assert |AssertionError$)", text, maxsplit=1)[0].rstrip()


def message_of(exc):
    """The check's own words for an exception that failed it: the message it was given, in full."""
    if isinstance(exc, AssertionError):
        said = _plain(str(exc))
        return said or "AssertionError (an assert without a message)"
    said = str(exc).strip()
    if isinstance(exc, pytest.fail.Exception):
        return said
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def first_line(exc):
    said = str(exc).strip()
    return said.splitlines()[0] if said else ""


def timed_out(test, message, found):
    """The one line for a check stopped by a timeout ("Timeout (>10s of CPU time)" from our clock,
    "Timeout (>300.0s)" from pytest-timeout), in the learner's language."""
    seconds = re.search(r">([\d.]+)s", message)
    n = f"{float(seconds[1]) if seconds else 0:g}"
    cpu = "CPU time" in message
    where = f"{found[0]} line {found[1]}" if found else ""
    return say(
        zh=f"{test} 超时：{'计算了' if cpu else '过了'} {n} s{'（CPU 时间）' if cpu else ''}还没结束"
        + (f"，停在 {where}" if where else "")
        + "（死循环？）；这一步后面的测试没有运行",
        en=f"{test} timed out after {n} s{' of CPU time' if cpu else ''}"
        + (f" at {where}" if where else "")
        + " (an endless loop?); the step's later tests did not run",
    )
