"""tools/core/docs.py must fail when the explainers drift from the code, and only then.

Each test builds a tiny repo in a scratch folder (a cited file, a tool, a page) and breaks one
thing the way a real edit would: a line moves, a line changes, a tool prints something else, a
picture is drawn differently.
"""

import textwrap
from types import SimpleNamespace

import pytest

from tools.checks import docs as docs_checks
from tools.core import docs

CODE = "def f(x):\n    y = x + 1\n    return y\n"
TOOL = textwrap.dedent("""\
    import sys
    from pathlib import Path
    value = Path("value.txt").read_text().strip()
    if "--png" in sys.argv:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig = plt.figure(figsize=(1, 1), dpi=20)
        fig.patch.set_facecolor("white" if value == "1" else "black")
        fig.savefig(sys.argv[sys.argv.index("--png") + 1])
        print("drew", sys.argv[sys.argv.index("--png") + 1])
    print("value", value)
    """)


def page(*blocks):
    return "# page\n\n" + "\n".join(blocks)


CITATION = "<!-- cite: src/code.py:2-3 -->\n```python\n    y = x + 1\n    return y\n```\n"
GENERATED = "<!-- generated: python tool.py -->\nvalue 1\n<!-- end generated -->\n"
FENCED = "<!-- generated: python tool.py -->\n```text\nvalue 1\n```\n<!-- end generated -->\n"
PICTURE = (
    "<!-- generated: python tool.py --png img/p.png -->\ndrew img/p.png\nvalue 1\n<!-- end generated -->\n"
    "![p](img/p.png)\n"
)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "code.py").write_text(CODE)
    (tmp_path / "tool.py").write_text(TOOL)
    (tmp_path / "value.txt").write_text("1\n")
    (tmp_path / "img").mkdir()
    return tmp_path


def write(repo, text):
    doc = repo / "page.md"
    doc.write_text(text)
    return doc


def test_a_true_page_has_no_problems(repo):
    doc = write(repo, page(CITATION, GENERATED, FENCED))
    assert docs.problems(doc, repo) == []


def test_a_moved_line_is_caught_and_fix_renumbers_it(repo):
    doc = write(repo, page(CITATION))
    (repo / "src" / "code.py").write_text("# a new first line\n" + CODE)
    assert any("no longer holds" in p for p in docs.citation_problems(doc, repo))
    assert docs.fix_citations(doc, repo) == 1
    assert "src/code.py:3-4 -->" in doc.read_text()
    assert docs.citation_problems(doc, repo) == []


def test_an_edited_line_is_caught_and_fix_leaves_it_alone(repo):
    doc = write(repo, page(CITATION))
    (repo / "src" / "code.py").write_text(CODE.replace("x + 1", "x + 2"))
    assert any("no longer holds" in p for p in docs.citation_problems(doc, repo))
    assert docs.fix_citations(doc, repo) == 0
    assert docs.citation_problems(doc, repo) != []


def test_fix_does_not_guess_between_two_copies(repo):
    doc = write(repo, page(CITATION))
    (repo / "src" / "code.py").write_text("\n" + CODE + CODE)
    assert docs.fix_citations(doc, repo) == 0


def test_fix_fills_in_an_empty_citation(repo):
    doc = write(repo, page("<!-- cite: src/code.py:2-3 -->\n```python\n```\n"))
    assert docs.citation_problems(doc, repo) != []  # empty is not a quote of lines 2-3
    assert docs.fix_citations(doc, repo) == 1
    assert doc.read_text() == page(CITATION)
    assert docs.citation_problems(doc, repo) == []


def test_a_citation_of_a_missing_file_is_caught(repo):
    doc = write(repo, page(CITATION.replace("src/code.py", "src/gone.py")))
    assert any("does not exist" in p for p in docs.citation_problems(doc, repo))


def test_a_marker_without_its_fence_is_not_silently_skipped(repo):
    doc = write(
        repo,
        page(
            "<!-- cite: src/code.py:2-3 -->\n\n```python\n    y = x + 1\n```\n",
            "<!-- cite: src/code.py 2-3 -->\n```python\n    y = x + 1\n```\n",
        ),
    )
    assert len(docs.citation_problems(doc, repo)) == 2


def test_a_stale_generated_block_is_caught_and_regen_rewrites_it(repo):
    doc = write(repo, page(GENERATED, FENCED))
    (repo / "value.txt").write_text("2\n")
    assert len(docs.generated_problems(doc, repo)) == 2
    docs.regen(doc, repo)
    assert "value 2\n<!-- end" in doc.read_text() and "```text\nvalue 2\n```\n" in doc.read_text()
    assert docs.generated_problems(doc, repo) == []


def test_a_generated_block_without_its_end_is_caught(repo):
    doc = write(repo, page("<!-- generated: python tool.py -->\nvalue 1\n"))
    assert any("no `<!-- end generated -->`" in p for p in docs.generated_problems(doc, repo))


def test_a_failing_command_is_a_problem_not_a_crash(repo):
    doc = write(repo, page(GENERATED.replace("tool.py", "no_such_tool.py")))
    assert any("failed" in p for p in docs.generated_problems(doc, repo))


def test_a_changed_picture_is_caught_and_regen_redraws_it(repo):
    doc = write(repo, page(PICTURE))
    docs.regen(doc, repo)  # draws img/p.png
    assert docs.problems(doc, repo) == []  # stdout names img/p.png, not the scratch file
    (repo / "value.txt").write_text("2\n")
    found = docs.generated_problems(doc, repo)
    assert any("img/p.png differs" in p for p in found) and any("changed" in p for p in found)
    docs.regen(doc, repo)
    assert docs.problems(doc, repo) == []


def test_a_missing_picture_is_caught(repo):
    doc = write(repo, page(PICTURE))
    assert any("img/p.png differs" in p for p in docs.generated_problems(doc, repo))
    assert any("does not exist" in p for p in docs.image_problems(doc))


def test_a_renamed_or_missing_section_is_caught(tmp_path, monkeypatch):
    sections = {"1": ("一", "One"), "2.1": ("二点一", "Two one")}
    explainers = {"zh": "zh.md", "en": "en.md"}
    (tmp_path / "zh.md").write_text("## 1 一\n\n### 2.1 二点一\n")
    (tmp_path / "en.md").write_text("## 1 One\n\n### 2.1 Two and one\n\n## 3 Extra\n")
    lesson = SimpleNamespace(id="T9", sections=sections, explainers=explainers)
    monkeypatch.setattr(docs_checks, "ROOT", tmp_path)
    monkeypatch.setattr(docs_checks, "LESSONS", (lesson,))
    found = docs_checks.check_every_section_exists_in_both_explainers()
    assert found == ["en.md: §2.1 is titled 'Two and one', course/registry.py says 'Two one'; change one of them"]
    assert docs_checks.check_both_explainers_have_the_same_sections() == ["§3 is only in en.md"]
    (tmp_path / "zh.md").write_text("## 1 一\n")
    assert any("lacks a heading for §2.1" in p for p in docs_checks.check_every_section_exists_in_both_explainers())


def test_one_command_on_two_pages_runs_once_with_a_shared_cache(repo):
    (repo / "count.py").write_text(
        "from pathlib import Path\np = Path('runs.txt')\n"
        "p.write_text(p.read_text() + 'x' if p.exists() else 'x')\nprint('same')\n"
    )
    block = "<!-- generated: python count.py -->\nsame\n<!-- end generated -->\n"
    first, second = write(repo, page(block)), repo / "other.md"
    second.write_text(page(block))
    ran = {}
    assert docs.generated_problems(first, repo, ran) == docs.generated_problems(second, repo, ran) == []
    assert (repo / "runs.txt").read_text() == "x"


def test_regen_only_rewrites_the_blocks_asked_for(repo):
    doc = write(repo, page(GENERATED, FENCED.replace("tool.py", "tool.py --again")))
    (repo / "value.txt").write_text("2\n")
    docs.regen(doc, repo, only="--again")
    assert "\nvalue 1\n<!-- end" in doc.read_text() and "```text\nvalue 2\n```" in doc.read_text()


SOLUTION = textwrap.dedent("""\
    def f(x):
        # ---- T9.1 begin (§1) ----
        # a comment line quotes nothing
        y = x * 2 + 1  # the answer
        return_value = [
        ]
        # ---- T9.1 end ----
        return y
    """)


@pytest.fixture
def lesson_repo(tmp_path, monkeypatch):
    """A lesson T9 whose reference has one marked body, and two explainers that quote none of it."""
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "t9.py").write_text(SOLUTION)
    for name in ("t9.md", "t9.en.md"):
        (tmp_path / name).write_text("## 1 One\n\nDouble x, then add one: `y` is the answer.\n")
    lesson = SimpleNamespace(id="T9", file="t9.py", explainers={"zh": "t9.md", "en": "t9.en.md"})
    monkeypatch.setattr(docs_checks, "ROOT", tmp_path)
    monkeypatch.setattr(docs_checks, "LESSONS", (lesson,))
    return tmp_path


def test_a_reference_body_line_pasted_into_an_explainer_is_caught(lesson_repo):
    assert docs_checks.check_no_reference_body_stands_in_an_explainer() == []
    en = lesson_repo / "t9.en.md"
    en.write_text(en.read_text() + "\n```python\n    y  =  x * 2 + 1\n```\n")  # spacing and indent do not hide it
    found = docs_checks.check_no_reference_body_stands_in_an_explainer()
    assert len(found) == 1 and "t9.en.md quotes line 4 of solutions/t9.py" in found[0] and "`y = x * 2 + 1`" in found[0]


def test_body_lines_are_caught_in_prose_and_in_generated_output_but_comments_and_longer_names_are_not(lesson_repo):
    zh = lesson_repo / "t9.md"
    zh.write_text(
        "## 1 一\n\n"
        "# a comment line quotes nothing\n"  # a comment-only line of the body
        "`yy = x * 2 + 1`, `y = x * 2 + 10`\n"  # a longer name, a longer number
        "]\n"  # punctuation alone
    )
    assert docs_checks.check_no_reference_body_stands_in_an_explainer() == []
    text = zh.read_text()
    zh.write_text(text + "先算 `y = x * 2 + 1`。\n")
    assert len(docs_checks.check_no_reference_body_stands_in_an_explainer()) == 1
    # a failure message that spells the answer gives it away just as well inside the §8 table
    zh.write_text(text + "<!-- generated: python tool.py -->\nfix: y = x * 2 + 1\n<!-- end generated -->\n")
    assert len(docs_checks.check_no_reference_body_stands_in_an_explainer()) == 1


def test_a_keyword_alone_in_a_body_is_no_line_to_give_away():
    body = ("pass", "y = x + 1", "return y")
    text = "def f(x):\n    # ---- T9.1 begin (§1) ----\n" + "".join(f"    {line}\n" for line in body)
    text += "    # ---- T9.1 end ----\n"
    found = docs_checks.body_lines(text)
    assert "y = x + 1" in found and "return y" in found and "pass" not in found, found


def test_the_answers_file_may_quote_the_bodies(lesson_repo):
    (lesson_repo / "t9.answers.md").write_text("    y = x * 2 + 1  # the answer\n")
    assert docs_checks.check_no_reference_body_stands_in_an_explainer() == []


def test_a_hint_must_come_in_chinese_and_in_english():
    from tools.checks.steps import hint_problems

    assert hint_problems(("先画出来。", "Draw it first.")) == []
    assert hint_problems("Draw it first.") != []  # one language only
    assert any("no Chinese" in p for p in hint_problems(("Draw it first.", "Draw it first.")))
    assert any("English text holds" in p for p in hint_problems(("先画出来。", "Draw it first：")))


def test_a_drifted_steps_table_in_the_chinese_readme_is_reported(tmp_path):
    """README.zh.md's steps tables are generated blocks that check and regen cover, as README.md's."""
    from course import ROOT

    real = ROOT / "README.zh.md"
    assert real in docs.DOCS and ROOT / "README.md" in docs.DOCS  # the pages `check` and `regen` take
    row = "| T4.1 | `tile_coords` |"
    assert row in real.read_text()
    drifted = tmp_path / "README.zh.md"  # a copy whose table a hand edit changed; commands still run in ROOT
    drifted.write_text(real.read_text().replace(row, "| T4.1 | `tile_coords`, `mainloop` |", 1))
    found = docs.generated_problems(drifted, ROOT)
    assert "README.zh.md: the output of `python -m tools.explainers.counts steps --lang zh` changed" in found[0]
    docs.regen(drifted, ROOT, only="steps --lang zh")
    assert row in drifted.read_text() and "`tile_coords`, `mainloop`" not in drifted.read_text()


def readme(*commands):
    return "".join(f"<!-- generated: {cmd} -->\n| table |\n<!-- end generated -->\n" for cmd in commands)


STEPS = "python -m tools.explainers.counts steps"


def test_each_readme_must_show_every_lesson_s_table_in_its_language(tmp_path, monkeypatch):
    from course.registry import LESSONS

    monkeypatch.setattr(docs_checks, "ROOT", tmp_path)
    ids = [lesson.id for lesson in LESSONS]
    (tmp_path / "README.md").write_text(
        readme(f"{STEPS} --lang en", *(f"{STEPS} --lang en --lesson {i}" for i in ids[1:]))
    )
    assert docs_checks.check_both_readmes_list_every_lesson_in_their_language() == [
        "README.zh.md does not exist: the zh README, with every lesson's table of steps"
    ]
    assert tmp_path / "README.zh.md" not in docs.pages(tmp_path)  # named by the check above, no crash
    zh = [f"{STEPS} --lang zh --lesson {i}" for i in ids]
    (tmp_path / "README.zh.md").write_text(readme(*zh))
    assert tmp_path / "README.zh.md" in docs.pages(tmp_path)
    assert docs_checks.check_both_readmes_list_every_lesson_in_their_language() == []
    (tmp_path / "README.zh.md").write_text(readme(*zh[:-1], f"{STEPS} --lang en --lesson {ids[-1]}"))
    found = docs_checks.check_both_readmes_list_every_lesson_in_their_language()
    assert len(found) == 2 and f"README.zh.md lacks {ids[-1]}'s table of steps" in found[0], found
    assert f"README.zh.md shows {ids[-1]}'s table of steps in en" in found[1], found
    (tmp_path / "README.zh.md").write_text(readme(*zh[:-1], f"{STEPS} --lesson {ids[-1]}"))  # counts' default: zh
    assert docs_checks.check_both_readmes_list_every_lesson_in_their_language() == []
