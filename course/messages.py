"""The one way a message sends the learner to the explainer, in the learner's language.

    read(at, *sections, titled=False)
        "read content/t4.en.md §6.2 (Chinese: content/t4.md)" in English,
        "详见 content/t4.md §6.2（English: content/t4.en.md）" in Chinese: the learner's explainer
        first, the other language's in brackets.  `at` is a lesson or a step, or its id ("T5",
        "T4.4"); `sections` are numbers of that lesson's explainer ("6.2"); with none, the step's
        own.  titled=True adds each section's title ("§6.2 The grid").
    fail(at, zh, en, *sections)
        pytest.fail with say(zh=zh, en=en) and, after it, read(at, *sections): a test's failure.
    stub_report(message, sections=None)
        what a check says when it reaches a body not written yet.
    written_elsewhere(step_id, name)
        when `name`, a function of a lesson's file, is another step's code: (that step, read(it)).

Tests, hints, the scorecard and the tools all say "read §x.y" through read(); `say` (course.i18n)
writes everything else.  `make check` (tools/checks/messages.py) reads every call of read() and
fail() in tests/ and in the lessons' probes, and proves that each section it names is a heading of
both explainers of its lesson.  So name the lesson (or step) and the sections as literals at the
call, or pass them down through a function's parameters from calls that name them as literals:
the check follows parameters within a file, and reports a call whose sections it cannot tell.
"""

import re

from course import registry
from course.errors import error_chain
from course.i18n import NOT_WRITTEN, lang, not_written, say

__all__ = [
    "read",
    "fail",
    "stub_report",
    "stub_reached",
    "written_elsewhere",
    "triton_said",
    "int64_coordinate_words",
    "block_pointer_words",
    "atomic_dtype_words",
    "math_dtype_words",
    "broken_capture_words",
]


def place(at):
    """(lesson, step or None) of a lesson, a step, or an id of either ("T5", "T4.4", "t4_4")."""
    if isinstance(at, registry.Lesson):
        return at, None
    if isinstance(at, registry.Step):
        return at.lesson, at
    if "." in at or "_" in at:
        found = registry.step(at)
        return found.lesson, found
    return registry.lesson(at), None


def read(at, *sections, titled=False):
    """Where to read, in the learner's explainer first (see the module's docstring)."""
    lesson, step = place(at)
    numbers = sections or (step.sections if step else ())
    if not numbers:
        raise ValueError(f"read({at!r}): name the sections of a lesson; only a step has its own")
    column = 0 if lang() == "zh" else 1
    named = [f"{n} {lesson.sections[n][column]}" if titled and n in lesson.sections else n for n in numbers]
    zh, en = lesson.explainers["zh"], lesson.explainers["en"]
    if lang() == "zh":
        return f"详见 {zh} {'、'.join('§' + n for n in named)}（English: {en}）"
    return f"read {en} {', '.join('§' + n for n in named)} (Chinese: {zh})"


def fail(at, zh, en, *sections):
    """Fail the running test: what is wrong, in the learner's language, then where to read."""
    import pytest

    pytest.fail(say(zh=f"{zh}；{read(at, *sections)}", en=f"{en}; {read(at, *sections)}"), pytrace=False)


def stub_report(message, sections=None):
    """What a check says when it reaches a body not written yet: "not written yet" in the learner's
    language, the step (the stub message's leading "T4.x"), where to read (the sections given, else
    the ones the stub names, else the step's), then the stub's own text."""
    found = re.match(r"\s*([A-Za-z]+\d+\.\d+)\b", message)
    step = registry.BY_ID.get(found[1].upper()) if found else None
    if step is None:
        return f"{not_written()}: {message}" if lang() == "en" else f"{not_written()}：{message}"
    named = [n for n in re.findall(r"§(\d+(?:\.\d+)*)", message) if n in step.lesson.sections]
    where = read(step, *(sections or dict.fromkeys(named) or step.sections), titled=True)
    what = ", ".join(step.writes if len(step.writes) < 3 else [w for w in step.writes if w in message] or step.writes)
    return say(
        zh=f"{not_written()}：{step.id}（{what}）。{where}。stub 原文：{message}",
        en=f"{not_written()}: {step.id} ({what}); {where}. The stub says: {message}",
    )


# stub_report's opening in either language: "not written yet: T4.1 (tile_coords); read ..."
STUB_REPORTED = re.compile(
    "(?:" + "|".join(map(re.escape, NOT_WRITTEN.values())) + r")[:：]\s*([A-Za-z]+\d+\.\d+)\s*[（(]([^）)]*)[）)]"
)


def stub_reached(text):
    """(the step, the names it writes that the report named, the sections it sends the learner to) when `text`
    is stub_report's words, else None: what the scorecard's row said, read back for the lines under it."""
    found = STUB_REPORTED.search(text)
    step = registry.BY_ID.get(found[1].upper()) if found else None
    if step is None:
        return None
    what = [w for w in re.split(r",\s*", found[2]) if w in step.writes] or list(step.writes)
    named = [n for n in re.findall(r"§(\d+(?:\.\d+)*)", text[found.end() :]) if n in step.lesson.sections]
    return step, what, tuple(dict.fromkeys(named)) or step.sections


def written_elsewhere(step_id, name):
    """(the step that writes `name`, read(that step)) when `name` is a function (or constant) of a
    lesson's file that step_id does not write, else None: a check of one step that finds a problem in
    another step's code sends the learner there.  The sections are that step's own, which make
    check proves exist (tools/checks/steps.py); found at run time, so this is not a read() call."""
    writers = [s for each in registry.LESSONS for s in each.steps if name in s.writes]
    if not writers or any(s.id == step_id for s in writers):
        return None
    return writers[0], read(writers[0])


SHAPES_APART = re.compile(r"Cannot make_shape_compatible: incompatible dimensions at index (\d+): (\d+) and (\d+)")


# tl.dot's words for two blocks whose inner dimensions differ (triton/language/core.py, dot), and a descriptor
# store's for a block of another shape than the descriptor's box (triton/language/semantic.py, descriptor_store).
DOT_INNER = "input and other must have equal reduction dimensions"
BOX_STORED = re.compile(r"expected value shape (\[[^\]]*\]), got (\[.*\])")  # the block's dims: constexpr[32]


def dot_shapes(exc):
    """(the first block's shape, the second's) where tl.dot refused them, read off the frame of its check along
    exc's chain (the interpreter's and a compile's raise there, a_shape and b_shape in hand); None without one."""
    for error in error_chain(exc, suppressed=True):
        tb = error.__traceback__
        while tb is not None:
            names = tb.tb_frame.f_locals
            if isinstance(names.get("a_shape"), list) and isinstance(names.get("b_shape"), list):
                return tuple("x".join(str(getattr(d, "value", d)) for d in names[s]) for s in ("a_shape", "b_shape"))
            tb = tb.tb_next
    return None


def triton_said(text, exc=None):
    """What Triton's English in `text` says, in the learner's language, for the complaints a learner meets and
    cannot read off: two blocks of other sizes added or broadcast ("Cannot make_shape_compatible: incompatible
    dimensions at index 1: 16 and 32"), tl.dot given blocks whose inner dimensions differ (their shapes too where
    `exc`, the error, holds them), a descriptor store given a block of another shape than its box, an int64
    descriptor coordinate (int64_coordinate_words), a block pointer (block_pointer_words), an atomic that takes no
    elements of that dtype (atomic_dtype_words, which needs `exc` for the interpreter's words), a math function
    (tl.exp, tl.sigmoid) given fp16 or bf16 (math_dtype_words), tl.split given a last dimension other than 2
    (split_axis_words); "" for any other text.  It says what Triton
    said, not why."""
    coordinate = (
        int64_coordinate_words(text)
        or block_pointer_words(text)
        or atomic_dtype_words(text, exc)
        or math_dtype_words(text)
        or split_axis_words(text)
    )
    if coordinate:
        return coordinate
    if DOT_INNER in text:
        shapes = dot_shapes(exc)
        if shapes is None:
            return say(
                zh="tl.dot 拿到的两个块内维对不上：第一个块的列数（K）要等于第二个块的行数（K）",
                en="tl.dot was given two blocks whose inner dimensions differ: the first's columns (its K) must "
                "equal the second's rows (its K)",
            )
        return say(
            zh=f"tl.dot 拿到的两个块是 {shapes[0]} 和 {shapes[1]}，内维对不上：第一个块的列数（K）要等于第二个块的"
            "行数（K）",
            en=f"tl.dot was given a {shapes[0]} block and a {shapes[1]} one, whose inner dimensions differ: the "
            "first's columns (its K) must equal the second's rows (its K)",
        )
    stored = BOX_STORED.search(text)
    if stored:
        box, block = ("x".join(re.findall(r"\d+", dims)) for dims in stored.groups())
        return say(
            zh=f"通过描述符写回的块是 {block}，描述符的 box 却是 {box}：描述符的 store 一次写一个 box，块的形状要和 "
            "box 一样",
            en=f"the block stored through a descriptor is {block}, and the descriptor's box is {box}: a "
            "descriptor's store writes one box, so the block must have the box's shape",
        )
    found = SHAPES_APART.search(text)
    if not found:
        return ""
    at, one, other = found.groups()
    return say(
        zh=f"Triton 这句话是说：两个块在第 {at} 维上一个长 {one}、一个长 {other}，形状对不上，不能逐元素运算或广播",
        en=f"what Triton says: two blocks are {one} and {other} long in dimension {at}, shapes that do not match, "
        "so they cannot be combined element by element or broadcast",
    )


# Triton's words where a descriptor's load, store or atomic is given a coordinate of dtype int64: only descriptor
# accesses ask for 32-bit coordinates (semantic._convert_elem_to_ir_value, require_i64=False), and these words
# come only from an int64 tensor there.  The interpreter and a compile for a GPU say the same.
INT64_COORDINATE = "Expected a 32-bit integer; add"


def int64_coordinate_words(text):
    """The words, in the reader's language, for Triton's refusal of an int64 descriptor coordinate where `text`
    (an error's words) holds it; "" otherwise."""
    if INT64_COORDINATE not in text:
        return ""
    return say(
        zh="Triton 拒绝了一次描述符的 load 或 store：它的一个坐标是 int64，而描述符的坐标是 32 位的；"
        "坐标里别有 int64 的值（.to(tl.int64)，或从 int64 的值算出来的行号、偏移）",
        en="Triton refused a descriptor load or store: a coordinate is an int64, and a descriptor's "
        "coordinates are 32-bit; keep int64 values (a .to(tl.int64), or a row or offset computed from an int64 "
        "value) out of them",
    )


# Triton's words where one of its math functions (tl.exp, tl.log, tl.sqrt, tl.erf, ...; tl.sigmoid goes through
# tl.exp) is given a block that is neither fp32 nor fp64 (triton/language/math.py, _check_dtype): an fp16 or bf16
# activation, say.  The interpreter and a compile for a GPU say the same.
MATH_DTYPE = re.compile(r"Expected dtype \['fp32', 'fp64'\] but got (\w+)")


def math_dtype_words(text):
    """The words, in the reader's language, for Triton's refusal of a math function's block of another dtype than
    fp32 and fp64 where `text` (an error's words) holds it; "" otherwise.  What Triton said, not which line made
    the block that dtype: a test that knows says that itself."""
    found = MATH_DTYPE.search(text)
    if not found:
        return ""
    return say(
        zh=f"Triton 的数学函数（tl.exp、tl.log、tl.sqrt、tl.erf 等；tl.sigmoid 也要经过 tl.exp）只收 fp32 或 fp64 "
        f"的块，这里拿到的是 {found[1]} 的块：这样的运算留在 float32 里做（半精度的块先 .to(tl.float32)）",
        en=f"Triton's math functions (tl.exp, tl.log, tl.sqrt, tl.erf and the like; tl.sigmoid goes through tl.exp) "
        f"take fp32 or fp64 blocks only, and this one was given a block of {found[1]}: keep such math in float32 "
        "(.to(tl.float32) on a half-precision block first)",
    )


# Triton's words where tl.split is given a block whose last dimension is not 2 (semantic.py's split)
SPLIT_LAST = re.compile(r"expected last dimension to be 2 for split, got (\d+)")


def split_axis_words(text):
    """The words, in the reader's language, for tl.split given a block whose last dimension is not 2 where `text`
    holds Triton's complaint; "" otherwise.  The halves' axis must come last (learner37: acc reshaped to
    (BLOCK_M, 2, BLOCK_N // 2) and split without the permute was told Triton's words alone)."""
    found = SPLIT_LAST.search(text)
    if not found:
        return ""
    return say(
        zh=f"tl.split 只拆长度为 2 的最后一维，这里的最后一维长 {found[1]}：放两半的那一维要排在最后"
        "（reshape 成 (BLOCK_M, 2, BLOCK_N // 2) 时它在中间，tl.permute(..., (0, 2, 1)) 把它挪到最后）",
        en=f"tl.split splits a last dimension of length 2, and this block's last dimension is {found[1]}: the axis "
        "that holds the two halves must come last (a reshape to (BLOCK_M, 2, BLOCK_N // 2) puts it in the middle, "
        "and tl.permute(..., (0, 2, 1)) moves it last)",
    )


# Triton's words where a kernel calls tl.make_block_ptr (or tl.advance on one): Triton 3.9 took block pointers out
# (triton/language/core.py raises them, the interpreter and a compile for a GPU alike), and older tutorials and
# kernels still use them.
BLOCK_POINTERS_GONE = "Block pointers have been removed in favor of the tensor descriptor API"


def block_pointer_words(text):
    """The words, in the reader's language, for Triton's refusal of a block pointer where `text` (an error's words)
    holds it; "" otherwise."""
    if BLOCK_POINTERS_GONE not in text:
        return ""
    return say(
        zh="这个 Triton（3.9 起）没有块指针了：tl.make_block_ptr 和 tl.advance 都不能用；照 t4 §3 用 tl.arange "
        "算出指针块并用掩码 load（TMA 的张量描述符在 T5）",
        en="this Triton (3.9 on) has no block pointers: tl.make_block_ptr and tl.advance are gone; build the "
        "pointer blocks from tl.arange and masked loads as t4 §3 does (TMA's tensor descriptors come in T5)",
    )


# torch's words when its CUDA generator is asked for numbers after a capture that failed partway left it
# believing a capture still runs (H200 and H100, torch 2.11: content/bench/h200-2026-12-03-session23-probes.log).
BROKEN_CAPTURE_RNG = "Offset increment outside graph capture encountered unexpectedly"


def broken_capture_words(text):
    """Why a failure whose words (`text`) hold torch's BROKEN_CAPTURE_RNG is not its own check's fault, in the
    reader's language; "" for any other failure."""
    if BROKEN_CAPTURE_RNG not in text:
        return ""
    return say(
        zh="torch 在这个进程里已经不能在 GPU 上取随机数了：之前某个 CUDA graph 捕获中途出错（比如一次在捕获中"
        "自动调优的调用），留下的生成器以为捕获还在进行；先看本轮第一个提到捕获的失败，这一项本身不是原因",
        en="torch can no longer draw random numbers on the GPU in this process: a CUDA graph capture earlier in the "
        "run failed partway (a call that autotuned inside it, say) and left the generator believing a capture still "
        "runs; read the run's first failure that names a capture: this check itself is not the cause",
    )


# Triton's words where an atomic other than atomic_add (and atomic_cas) is given fp16 or bf16 elements
# (semantic.py, _validate_atomic_rmw_element_type): refused on a GPU too.  The interpreter's own, where it has no
# atomic of that kind for a dtype a GPU may take (fp32 atomic_xchg, bf16 atomic_add): "Unsupported data type",
# raised in its create_atomic_rmw, a message too plain to read without the frame it came from.
HALF_ATOMIC = re.compile(r"atomic_(\w+) does not support (fp16|bf16)")
NO_ATOMIC = "Unsupported data type"


def interpreter_atomic_refused(exc):
    """The atomic (xchg, add, ...) Triton's interpreter had none of for its elements' dtype, where the innermost
    error of exc's chain was raised in its create_atomic_rmw; None otherwise."""
    import traceback

    inner = error_chain(exc, suppressed=True)[-1] if exc is not None else None
    if inner is None or NO_ATOMIC not in str(inner):
        return None
    names = [f.name for f in traceback.extract_tb(inner.__traceback__)]
    if not names or names[-1] != "create_atomic_rmw":
        return None
    # the tl function the kernel called (tl.atomic_xchg), past the shared helpers on the way (atomic_rmw)
    return next((n for n in reversed(names) if n.startswith("atomic_") and n != "atomic_rmw"), "an atomic")


def atomic_dtype_words(text, exc=None):
    """The words, in the reader's language, for an atomic refused for its elements' dtype, where `text` (an error's
    words) holds Triton's refusal of fp16 or bf16, or `exc` ends in the interpreter's lack of that atomic; "" else."""
    found = HALF_ATOMIC.search(text)
    needless = say(
        zh="每个输出格子只由一个程序写一次的话，用不着原子操作：tl.store 就行",
        en="where each cell of the output is written once, by one program, no atomic is needed: tl.store it",
    )
    if found:
        return (
            say(
                zh=f"Triton 的原子操作里，fp16 和 bf16 的元素只有 atomic_add 收（atomic_{found[1]} 不收，"
                "在 GPU 上也一样）；",
                en=f"Triton's atomics take fp16 and bf16 elements in atomic_add alone (atomic_{found[1]} refuses "
                "them, on a GPU too); ",
            )
            + needless
        )
    op = interpreter_atomic_refused(exc) if NO_ATOMIC in text else None
    if op:
        return (
            say(
                zh=f"Triton 的解释器没有这种元素类型的 {op}（GPU 上也许有），在 CPU 上跑不了；",
                en=f"Triton's interpreter has no {op} for these elements' dtype (a GPU may have one), so it cannot "
                "run on the CPU; ",
            )
            + needless
        )
    return ""
