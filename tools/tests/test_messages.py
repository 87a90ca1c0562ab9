"""The language of the learner's messages: how it is chosen, and that the message check catches a
message written in one language only."""

import ast

from course import i18n
from course.messages import stub_report
from tools.checks import messages


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
    return messages.say_problems(tree, "t.py") + messages.unspoken_messages(tree, "t.py")


def test_the_check_passes_messages_in_both_languages():
    assert not problems_of(
        'x = say(zh=f"错了 {n}", en=f"wrong {n}")\n'
        "pytest.fail(x)\n"
        'assert ok, say(zh="不对", en="not so")\n'
        "pytest.fail(f\"{e}; {where('T4.4', '6.2')}\")\n"
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


def test_the_suite_names_subsections_by_where():
    tree = ast.parse("where('T4.4', '6.2')\nwhere('T4.2')\n")
    assert messages.where_sections(tree) == [(1, "6.2")]
