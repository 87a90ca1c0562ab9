"""Where an error came from, as the learner's loop tells it (tools/core/failure_words.py): code the learner
did not write (the scaffold, the given host, a library) or the learner's own line, each with the body's
sections; Python's own words explained where they mislead.  The rest of the loop: test_learner_loop.py."""

import pytest

from course import ROOT, messages
from course.registry import lesson
from tools.core import failure_words

T4 = lesson("T4")


# ------------------------------------------------------------------------------------------------
# An error raised in code the learner did not write
# ------------------------------------------------------------------------------------------------
def at_lines(filename, functions):
    """Functions compiled as if written in `filename` at the given lines: {name: (line, body)}, the
    body one statement; a traceback through them names that file and those lines."""
    space = {}
    for name, (line, body) in functions.items():
        source = "\n" * (line - 1) + f"def {name}(call=None):\n    {body}\n"
        exec(compile(source, str(filename), "exec"), space)
    return space


def raised(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the error under test, whatever it is
        return e
    raise AssertionError("nothing raised")


@pytest.fixture
def t4_lines(monkeypatch):
    """(a line inside T4.1's marked body of mine/, two scaffold lines in a row outside any body)."""
    monkeypatch.delenv("SOLUTION", raising=False)
    graded = f"mine/{T4.file}"
    inside = failure_words.bodies(graded)
    body = min(n for n, (step, _) in inside.items() if step == "T4.1")
    scaffold = next(n for n in range(2, body - 2) if n not in inside and n + 1 not in inside)
    return graded, body, scaffold


LIBRARY = "/venv/lib/python3.11/site-packages/triton/tools/tensor_descriptor.py"


def test_an_error_from_the_scaffold_says_it_is_not_the_learners_code(t4_lines, lang):
    graded, body, scaffold = t4_lines
    given = at_lines(ROOT / graded, {"given": (scaffold, "raise AssertionError('strides must be 16-byte aligned')")})
    yours = at_lines(ROOT / graded, {"yours": (body - 1, "call()")})
    error = raised(lambda: yours["yours"](given["given"]))
    found = failure_words.graded_frames(error)
    said, place = failure_words.given_code(error, "T4.1", found)
    assert place == f"{graded} line {scaffold + 1}", place
    assert f"{graded} line {body}" in said, said  # the learner's line on the way there
    assert "§2" in said and T4.explainers[lang] in said, said
    assert ("不是你写的代码" in said) if lang == "zh" else ("code you did not write" in said), said


def test_an_error_from_the_given_host_code_shows_its_line(lang):
    """given/'s host code calls the learner's functions (T5's matmul unpacks tma_ready's answer): the
    place of an error raised there shows that line, which names the function whose answer it used."""
    host = ROOT / "given" / "t5_host.py"
    line = next(n for n, text in enumerate(host.read_text().splitlines(), 1) if "= side.tma_ready(" in text)
    given = at_lines(host, {"first_call": (line - 1, "raise ValueError('not enough values to unpack')")})
    said, place = failure_words.given_code(raised(given["first_call"]), "T5.2", None)
    assert place.startswith(f"given/t5_host.py line {line} (first_call): "), place
    assert place.endswith("side.tma_ready(a, b, tma_fallback)"), place
    assert place in said, said


def test_an_error_from_a_library_named_with_the_bodys_sections(t4_lines, lang):
    graded, body, _ = t4_lines
    library = at_lines(LIBRARY, {"__post_init__": (22, "raise AssertionError('base must be 16-byte aligned')")})
    yours = at_lines(ROOT / graded, {"yours": (body - 1, "call()")})
    error = raised(lambda: yours["yours"](library["__post_init__"]))
    found = failure_words.graded_frames(error)
    assert found[1] == body
    assert failure_words.given_code(error, "T4.1", found) is None  # the learner's line called it: theirs
    note = failure_words.library_note(error, found)
    assert "triton/tools/tensor_descriptor.py line 23 (__post_init__)" in note, note
    assert "T4.1" in note and "§2" in note, note
    error = raised(lambda: library["__post_init__"]())  # called by the check itself, no graded frame
    assert failure_words.library_note(error, failure_words.graded_frames(error)) == ""
    said, place = failure_words.given_code(error, "T4.1", None)
    assert place.startswith("triton/tools/tensor_descriptor.py line 23"), place


def test_an_error_raised_by_the_learners_own_line_names_the_bodys_sections(t4_lines, lang):
    """tl.arnage, or a tensor's attribute it lacks: raised by the body's line itself, with no library
    frame below it; the note still says where to read, as for an error a library raised."""
    graded, body, _ = t4_lines
    yours = at_lines(ROOT / graded, {"yours": (body - 1, "object().arnage(0, 16)")})
    error = raised(lambda: yours["yours"]())
    found = failure_words.graded_frames(error)
    assert found[1] == body
    note = failure_words.library_note(error, found)
    assert "T4.1" in note and "§2" in note and T4.explainers[lang] in note, note
    assert ("你这一行自己" in note) if lang == "zh" else ("your line itself" in note), note


def test_errors_that_are_not_given_codes(t4_lines):
    graded, body, _ = t4_lines
    check = at_lines(ROOT / "tests" / "t4" / "test_wrapper.py", {"check": (10, "raise TypeError('the check itself')")})
    error = raised(check["check"])
    assert failure_words.given_code(error, "T4.1", failure_words.graded_frames(error)) is None
    yours = at_lines(ROOT / graded, {"yours": (body - 1, "raise ValueError('mine')")})
    error = raised(yours["yours"])
    assert failure_words.given_code(error, "T4.1", failure_words.graded_frames(error)) is None
    stub = at_lines(LIBRARY, {"stub": (5, "raise NotImplementedError('T4.1 not written')")})
    assert failure_words.given_code(raised(stub["stub"]), "T4.1", None) is None


def test_a_tensor_method_on_an_int_is_explained_under_the_interpreter_alone(monkeypatch):
    """A tensor's method on a Python int under the interpreter (a tl.constexpr's, a tl.static_range loop's variable's)
    is explained there, with tl.cast as what takes both."""
    error = raised(lambda: (5).to("int64"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("COURSE_LANG", "en")
    note = failure_words.interpreter_int_note(error)
    assert ".to on a Python int" in note and "tl.cast(x, tl.int64)" in note and "t4.en.md §2" in note, note
    assert failure_words.interpreter_int_note(raised(lambda: "text".to("int64"))) == ""  # not an int
    assert failure_words.interpreter_int_note(raised(lambda: (5).bit_length(1))) == ""  # not an AttributeError
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert failure_words.interpreter_int_note(error) == ""  # on a GPU the cause is another


def test_a_cast_to_a_pointer_type_is_named_and_the_tiles_values_cut(monkeypatch):
    """Triton's "cannot cast <a block's values> to <pointer<fp16>>" (acc.to(c_ptr.dtype)): the values, fifty lines
    for a 32 x 32 tile, are cut to their first few, and the element type is named (enlearner12)."""
    import numpy as np

    values = np.arange(1024, dtype=np.float32).reshape(32, 32) / 7
    error = raised(
        lambda: (_ for _ in ()).throw(AssertionError(f"cannot cast {values} to <['32', '32'], pointer<fp16>>"))
    )
    monkeypatch.setenv("COURSE_LANG", "en")
    cut = failure_words.abridged(error)
    assert cut.startswith("cannot cast [[0.0") and " ...]]" in cut and "pointer<fp16>" in cut and len(cut) < 120, cut
    note = failure_words.pointer_cast_note(error)
    assert "c_ptr.dtype.element_ty" in note and "t4.en.md §1.2" in note, note
    assert (
        failure_words.pointer_cast_note(raised(lambda: (_ for _ in ()).throw(AssertionError("cannot cast x to fp16"))))
        == ""
    )


def test_a_split_of_a_last_dimension_other_than_2_is_explained(monkeypatch):
    """Triton's "expected last dimension to be 2 for split, got 16" (halves reshaped to (BLOCK_M, 2, BLOCK_N // 2) and
    split without the permute): triton_said says which axis tl.split takes; other text gets nothing (learner37)."""
    from course.messages import triton_said

    monkeypatch.setenv("COURSE_LANG", "en")
    note = triton_said("AssertionError: expected last dimension to be 2 for split, got 16")
    assert "last dimension is 16" in note and "tl.permute(..., (0, 2, 1))" in note, note
    assert triton_said("AssertionError: cannot cast x") == ""


def test_an_atomic_refused_for_its_dtype_is_explained(lang):
    """Triton's bare "atomic_xchg does not support fp16" (a tile stored with an atomic, hunt15) and the interpreter's
    "Unsupported data type", raised in its create_atomic_rmw for an fp32 atomic_xchg, are said with their cause and
    the way out (tl.store); the same words raised anywhere else are left alone."""
    half = messages.triton_said("ValueError: atomic_xchg does not support fp16")
    rule = "fp16 和 bf16 的元素只有 atomic_add 收" if lang == "zh" else "take fp16 and bf16 elements in atomic_add"
    assert rule in half, half
    assert "atomic_xchg" in half and "tl.store" in half, half
    assert messages.triton_said("ValueError: atomic_add does not support fp32") == ""  # no such rule in Triton
    chain = at_lines(ROOT / "interpreter.py", {"create_atomic_rmw": (5, "raise ValueError('Unsupported data type')")})
    kernel = at_lines(ROOT / "semantic.py", {"atomic_xchg": (9, "call()")})
    error = raised(lambda: kernel["atomic_xchg"](chain["create_atomic_rmw"]))
    said = messages.triton_said(str(error), error)
    assert ("解释器没有这种元素类型的 atomic_xchg" if lang == "zh" else "interpreter has no atomic_xchg") in said, said
    other = at_lines(ROOT / "interpreter.py", {"create_tensor": (5, "raise ValueError('Unsupported data type')")})
    elsewhere = raised(lambda: kernel["atomic_xchg"](other["create_tensor"]))
    assert messages.triton_said(str(elsewhere), elsewhere) == ""  # not the interpreter's atomic
    assert messages.triton_said(str(error)) == ""  # without the error, the plain words say nothing of where


def test_a_math_function_refused_for_half_precision_is_explained(lang):
    """Triton's "Expected dtype ['fp32', 'fp64'] but got fp16" (tl.sigmoid of an fp16 gate: its tl.exp checks the
    dtype, left36) is said in the learner's language with the dtype it got and the way out (float32); an error
    that names other dtypes is left alone."""
    said = messages.triton_said("ValueError(\"Expected dtype ['fp32', 'fp64'] but got bf16\")")
    rule = "只收 fp32 或 fp64 的块" if lang == "zh" else "take fp32 or fp64 blocks only"
    assert rule in said and "bf16" in said and "tl.float32" in said, said
    assert messages.triton_said("ValueError: Expected dtype ['int32'] but got fp16") == ""
