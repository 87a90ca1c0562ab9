"""A libdevice call under Triton's interpreter, where it gives None: the error about None at the learner's line is
followed by a note that says why (zhlearner14: a tanh GELU through tl.extra.libdevice.tanh was told only that its
own line raised "unsupported operand type(s) for +: 'float' and 'NoneType'")."""

from tools.core import failure_words
from tools.tests.test_error_origins import raised  # the one helper that catches what a call raises


def test_a_libdevice_call_on_the_interpreter_is_named(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "en")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    line = {"text": "acc = 0.5 * acc * (1.0 + tl.extra.libdevice.tanh(acc))"}
    monkeypatch.setattr(failure_words, "source_line", lambda graded, n: f"{graded} line {n}: {line['text']}")
    found = ("mine/t4_matmul.py", 101, "")
    none_error = raised(lambda: 1.0 + None)
    note = failure_words.libdevice_note(none_error, found)
    assert "has no libdevice" in note and "tl.erf" in note, note
    assert failure_words.libdevice_note(raised(lambda: 1.0 + "x"), found) == ""  # not about None
    assert failure_words.libdevice_note(none_error, None) == ""  # not at a learner's line
    monkeypatch.setenv("COURSE_LANG", "zh")
    assert "解释器没有 libdevice" in failure_words.libdevice_note(none_error, found)
    line["text"] = "acc = 0.5 * acc * (1.0 + tl.erf(acc))"
    assert failure_words.libdevice_note(none_error, found) == ""  # no libdevice on that line
    line["text"] = "acc = tl.extra.libdevice.tanh(acc)"
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert failure_words.libdevice_note(none_error, found) == ""  # on a GPU libdevice is there
