"""make check's layering check sees an import against the folders' audiences, and an import circle
in course/, in a scratch tree; and it passes a tree that keeps the rules."""

from tools.checks import layering


def tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


GOOD = {
    "course/__init__.py": "",
    "course/i18n.py": "import os\n",
    "course/registry.py": "from course.i18n import say\n",
    "tools/__init__.py": "",
    "tools/core/__init__.py": "",
    "tools/core/repo.py": "from course import registry\n",
    "tools/learner/__init__.py": "",
    "tools/learner/grade.py": "from tools.core.repo import x\nfrom tools.learner import scorecard\n",
    "tools/learner/scorecard.py": "",
    "tools/checks/__init__.py": "",
    "tools/checks/grader.py": "import subprocess\nsubprocess.run(['python', '-m', 'tools.learner.grade'])\n",
    "tools/tests/__init__.py": "",
    "tools/tests/test_grade.py": "from tools.learner import grade\nfrom tools.checks import grader\n",
    "tests/test_t9.py": "from course.registry import LESSONS\n",
    "given/t9_host.py": "import math\n\nimport torch\n",
}


def test_a_tree_that_keeps_the_rules_passes(tmp_path):
    root = tree(tmp_path, GOOD)
    assert layering.arrow_problems(root) == []
    assert layering.circles(root) == []


def test_an_import_from_another_tools_folder_is_reported_with_its_line(tmp_path):
    lazy = "import os\n\n\ndef f():\n    from tools.checks import grader\n"
    root = tree(tmp_path, {**GOOD, "tools/learner/watch.py": lazy})
    assert layering.arrow_problems(root) == [
        "tools/learner/watch.py:5 imports tools.checks.grader: "
        "tools/learner/ may import only itself, tools/core/ and course/"
    ]


def test_the_core_course_and_the_suite_import_no_audience(tmp_path):
    root = tree(
        tmp_path,
        {
            **GOOD,
            "tools/core/repo.py": "from tools.learner.grade import y\n",
            "course/seam.py": "import tools.checks.grader\n",
            "tests/test_t9.py": "from tools.core import repo\n",
        },
    )
    said = layering.arrow_problems(root)
    assert [p.split(" imports ")[0] for p in said] == ["course/seam.py:1", "tests/test_t9.py:1", "tools/core/repo.py:1"]


def test_given_code_imports_neither_side_nor_the_machinery(tmp_path):
    host = "import torch\n\nfrom solutions import t9\nfrom course import registry\n"
    root = tree(tmp_path, {**GOOD, "given/t9_host.py": host})
    said = layering.arrow_problems(root)
    assert [p.split(" imports ")[0] for p in said] == ["given/t9_host.py:3", "given/t9_host.py:4"]
    assert all("given/ is lesson code both sides read" in p for p in said)


def test_a_circle_in_course_is_reported_even_through_a_lazy_import(tmp_path):
    lazy = "def stub_report():\n    from course import registry\n"
    root = tree(tmp_path, {**GOOD, "course/i18n.py": lazy})
    assert layering.circles(root) == [["course.i18n", "course.registry", "course.i18n"]]
