"""A lesson's section of the suite may be a folder of test files (tests/t5/) or one file: its
files, which of them defines a test named by name alone (a §8 mistake names its test so), and the
order its files run in (ORDER, the lesson's)."""

import ast
from dataclasses import replace

import pytest

from course import ROOT
from course.registry import LESSONS, lesson

T4 = lesson("T4")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_a_test_s_name_says_which_test_it_is(lesson):
    """A mistake names its test by name alone (node_of finds the file), so no two files of a
    lesson's suite define a test of the same name."""
    where = {}
    for rel in lesson.suite_files():
        for f in ast.parse((ROOT / rel).read_text()).body:
            if isinstance(f, ast.FunctionDef) and f.name.startswith("test_"):
                where.setdefault(f.name, []).append(rel)
    assert where, f"{lesson.suite} defines no test"
    assert not {name: files for name, files in where.items() if len(files) > 1}


def test_a_test_is_found_in_its_file_of_a_folder_suite(tmp_path):
    """A suite that is a folder: the node id of a test is its file's; a name in none of them, or in
    two, is refused."""
    (tmp_path / "tests" / "x9").mkdir(parents=True)
    (tmp_path / "tests" / "x9" / "test_a.py").write_text("def test_one():\n    pass\n\n\ndef test_two():\n    pass\n")
    (tmp_path / "tests" / "x9" / "test_b.py").write_text("def test_three():\n    pass\n\n\ndef test_two():\n    pass\n")
    folder = replace(T4, id="X9", suite="tests/x9")
    assert folder.node_of("test_three[8-fp16]", tmp_path) == "tests/x9/test_b.py::test_three[8-fp16]"
    assert folder.owns("tests/x9/test_a.py::test_one") and not folder.owns("tests/x99/test_a.py::test_one")
    for name, said in (("test_two", "test_a.py, tests/x9/test_b.py"), ("test_four", "none of its files")):
        with pytest.raises(KeyError, match=said):
            folder.node_of(name, tmp_path)
    one_file = replace(T4, id="X9", suite="tests/test_x9.py")
    (tmp_path / "tests" / "test_x9.py").write_text("def test_one():\n    pass\n")
    assert one_file.suite_files(tmp_path) == ["tests/test_x9.py"]
    assert one_file.node_of("test_one", tmp_path) == "tests/test_x9.py::test_one"
    assert one_file.owns("tests/test_x9.py::test_one") and not one_file.owns("tests/test_x9.pyc::x")


def test_a_folder_suite_lists_each_of_its_test_files_in_order(tmp_path, monkeypatch):
    """lesson_files: a folder suite's ORDER (tests/conftest.py runs its files so) names each of its
    test files once, and no other; a folder without __init__.py is said too."""
    from tools.checks import lesson_files

    monkeypatch.setattr(lesson_files, "ROOT", tmp_path)
    folder = tmp_path / "tests" / "x9"
    folder.mkdir(parents=True)
    for name in ("test_a.py", "test_b.py"):
        (folder / name).write_text("")
    assert "lacks __init__.py" in lesson_files.file_order_problems("tests/x9")[0]
    (folder / "__init__.py").write_text('ORDER = ("test_b.py", "test_c.py", "test_b.py")\n')
    assert lesson_files.file_order_problems("tests/x9") == [
        "tests/x9/__init__.py: ORDER lacks test_a.py",
        "tests/x9/__init__.py: ORDER names test_c.py, which is no test file there",
        "tests/x9/__init__.py: ORDER names test_b.py twice",
    ]
    (folder / "__init__.py").write_text('"""X9."""\n\nORDER = ("test_b.py", "test_a.py")\n')
    assert lesson_files.file_order_problems("tests/x9") == []
