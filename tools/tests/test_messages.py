"""The language of the learner's messages: how it is chosen, and that the message check catches a
message written in one language only."""

import ast

import pytest

from course import ROOT, i18n
from course.messages import stub_report
from course.registry import lesson
from tools.checks import message_code, messages
from tools.checks.docs import headings


def test_the_language_follows_course_lang_then_the_locale(monkeypatch):
    for var in ("COURSE_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    assert i18n.lang() == "en"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert i18n.lang() == "zh" and i18n.say(zh="中", en="en") == "中"
    monkeypatch.setenv("COURSE_LANG", "en")
    assert i18n.lang() == "en"


def test_the_stub_report_names_the_step_and_the_learners_explainer_first(monkeypatch):
    stub = "T4.4 check_inputs: refuse bad inputs; read §6.3 in content/t4.md or content/t4.en.md"
    monkeypatch.setenv("COURSE_LANG", "en")
    en = stub_report(stub)
    assert en.startswith("not written yet: T4.4 (check_inputs); read content/t4.en.md §6.3 Input checks")
    assert en.endswith(stub) and not i18n.has_cjk(en.replace(stub, ""))
    monkeypatch.setenv("COURSE_LANG", "zh")
    zh = stub_report(stub)
    assert zh.startswith("还没写（not written yet）：T4.4（check_inputs）。详见 content/t4.md §6.3 输入检查")


def problems_of(source):
    tree = ast.parse(source)
    return message_code.say_problems(tree, "t.py") + message_code.unspoken_messages(tree, "t.py")


def test_the_check_passes_messages_in_both_languages():
    assert not problems_of(
        'x = say(zh=f"错了 {n}", en=f"wrong {n}")\n'
        "pytest.fail(x)\n"
        'assert ok, say(zh="不对", en="not so")\n'
        "pytest.fail(f\"{e}; {read('T4.4', '6.2')}\")\n"
        'fail(T5, "错了", "wrong", "2.2")\n'
        "def hint(x):\n"  # a helper of the file built on say speaks too, without a list of names
        '    if x:\n        return None\n    return say(zh="提示", en="a hint")\n'
        "assert ok, hint(x)\n"
    )


def test_the_check_catches_a_message_in_one_language():
    found = problems_of(
        'pytest.fail(f"wrong {n}")\n'
        'assert ok, "not so"\n'
        "assert ok\n"
        'say(zh="wrong", en="错")\n'
        'say(en="only English")\n'
        'tl.static_assert(c, "English only")\n'
    )
    assert len(found) == 7, found
    assert any("pytest.fail" in p for p in found) and any("without a message" in p for p in found)
    assert any("zh text" in p for p in found) and any("en text" in p for p in found)
    assert any("static_assert" in p for p in found) and any("needs zh= and en=" in p for p in found)


def test_the_check_knows_no_helper_by_name():
    found = problems_of('def hint(x):\n    return f"plain {x}"\nassert ok, hint(x)\nfail(T5, "wrong", "错了", "2.2")\n')
    assert len(found) == 3, found  # the helper returns plain text; fail's zh has no Chinese and its en has
    assert any("assert" in p for p in found) and any("zh text" in p for p in found)


def section_problems(rel, text, checked=None):
    """The section check on one file's text, as make check runs it on the file at rel; checked: the
    file of the same suite whose messages are read instead (with rel's text beside it: the file of a
    helper whose callers in rel pass it their sections)."""
    checked = checked or rel
    own = dict(messages.sources())[checked]
    tree = ast.parse(text if checked == rel else (ROOT / checked).read_text())

    def headings_of(lesson):
        return {r: set(headings((ROOT / r).read_text())) for r in lesson.explainers.values()}

    source = messages.source_of(checked, tree, own, given={rel: ast.parse(text)})
    return messages.section_problems(checked, source, own, headings_of)


def mutant(rel, old, new):
    """The file's text with the first `old` (which must be there) made `new`."""
    text = (ROOT / rel).read_text()
    assert old in text, (rel, old)
    return text.replace(old, new, 1)


def test_the_suite_names_only_sections_its_explainers_have():
    for rel in [*lesson("T4").suite_files(), *lesson("T5").suite_files()]:
        assert section_problems(rel, (ROOT / rel).read_text()) == [], rel


def test_a_changed_section_number_is_caught_in_every_lesson():
    """Mutants of the suite's sections, one site each: a literal at fail() (the issue's "4.1" to
    "4.9"), one passed down through a parameter from another file of the lesson's folder
    (test_tile_loop.py's "2.2" to check_trace of common.py), a step's at read(), a tuple of
    stub_report's, one in a tuple spread into read(), one in a module-level table read by key
    (stray.py's SECTION_OF)."""
    split, tile_loop, t5_common, stray = (
        f"tests/t5/{f}.py" for f in ("test_stream_k_split", "test_tile_loop", "common", "stray")
    )
    validation, common, mainloop = (f"tests/t4/{f}.py" for f in ("test_input_validation", "common", "test_mainloop"))
    at_fail = 'else longer[1]\n            ),\n            "4.1",'
    passed_down = 'case,\n            "2.2",\n            owner='
    cases = [
        (split, mutant(split, at_fail, at_fail.replace("4.1", "4.9")), "4.9", None),
        (tile_loop, mutant(tile_loop, passed_down, passed_down.replace("2.2", "2.9")), "2.9", t5_common),
        (validation, mutant(validation, "{read('T4.4', '6.3')}", "{read('T4.4', '6.9')}"), "6.9", None),
        (common, mutant(common, 'sections=("6.1",)', 'sections=("6.7",)'), "6.7", None),
        (mainloop, mutant(mainloop, 'sections = ("3", "3.1")', 'sections = ("3", "3.8")'), "3.8", None),
        (stray, mutant(stray, '"sk_publish_partial": "4.2"', '"sk_publish_partial": "4.8"'), "4.8", None),
    ]
    for rel, text, wrong, checked in cases:
        found = section_problems(rel, text, checked)
        assert found and all(f"§{wrong}" in p for p in found), (rel, wrong, found)


def test_a_section_the_check_cannot_follow_is_a_problem():
    rel = "tests/t5/test_fix_up.py"
    text = (ROOT / rel).read_text() + '\n\ndef later(x):\n    fail(T5, "错", "wrong", x.section)\n'
    found = section_problems(rel, text)
    assert len(found) == 1 and "cannot tell which sections" in found[0], found


def test_read_is_the_one_way_to_say_where_to_read(monkeypatch):
    from course.messages import read
    from course.registry import lesson, step

    monkeypatch.setenv("COURSE_LANG", "en")
    assert read("T4.4", "6.2") == "read content/t4.en.md §6.2 (Chinese: content/t4.md)"
    assert read(step("T4.2")) == read("t4_2") == "read content/t4.en.md §3, §4 (Chinese: content/t4.md)"
    assert read(lesson("T5"), "3.1", titled=True).startswith("read content/t5.en.md §3.1 ")
    assert not i18n.has_cjk(read("T4.1", titled=True))  # the hint's old English said "(中文: ...)"
    monkeypatch.setenv("COURSE_LANG", "zh")
    assert read("T4.4", "6.2", "6.3") == "详见 content/t4.md §6.2、§6.3（English: content/t4.en.md）"
    with pytest.raises(ValueError):
        read("T5")  # a lesson has no sections of its own: name them


def test_fail_says_what_is_wrong_then_where_to_read(monkeypatch):
    from course.messages import fail

    for lang, said in (("zh", "错了；详见 content/t5.md §2.2（English: content/t5.en.md）"), ("en", "wrong; read")):
        monkeypatch.setenv("COURSE_LANG", lang)
        with pytest.raises(pytest.fail.Exception) as failed:
            fail("T5", "错了", "wrong", "2.2")
        assert str(failed.value).startswith(said), str(failed.value)


def test_a_helper_of_its_own_that_says_where_to_read_is_a_problem():
    """The old T5 helper: it wrote the explainer's path itself, so no check saw its sections."""
    text = (
        'def fail(zh, en, section):\n    """read content/t5.md: a docstring may name it"""\n'
        '    read = say(zh=f"详见 content/t5.md §{section}", en=f"read content/t5.en.md §{section}")\n'
    )
    found = message_code.explainers_named_by_hand(ast.parse(text), "t.py")
    assert len(found) == 2 and all("line 3" in p for p in found), found


def test_a_mistake_names_each_of_its_causes_and_no_other():
    """cause "a+b": the message must say both causes' words, and no third cause's."""
    from types import SimpleNamespace

    causes = {
        k: {"en": w}
        for k, w in (("out", "outside every tensor"), ("index", "never an index"), ("late", "started late"))
    }
    both = SimpleNamespace(key="m", cause="out+index")
    said = {"m": (None, None, "", "read outside every tensor: an id is never an index")}
    assert messages.cause_problems(SimpleNamespace(id="T9"), [both], causes, "en", said) == []
    one = {"m": (None, None, "", "read outside every tensor")}
    problems = messages.cause_problems(SimpleNamespace(id="T9"), [both], causes, "en", one)
    assert len(problems) == 1 and "does not name its cause ('never an index')" in problems[0]
    single = SimpleNamespace(key="m", cause="out")
    problems = messages.cause_problems(SimpleNamespace(id="T9"), [single], causes, "en", said)
    assert len(problems) == 1 and "names another cause, 'index'" in problems[0]
    unknown = SimpleNamespace(key="m", cause="out+nowhere")
    problems = messages.cause_problems(SimpleNamespace(id="T9"), [unknown], causes, "en", said)
    assert "its cause 'nowhere' is not in CAUSES" in problems[0]
