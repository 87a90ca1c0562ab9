"""make test STEP=: failures that say the same thing about their own cases share one block, and the
pass/fail pattern names cases in words (tools/learner/failure_blocks.py, tools/core/case_labels.py)."""

import os
import re

import pytest

from course import ROOT, i18n
from course.registry import BY_ID
from tools.core.pytest_run import run_pytest
from tools.learner import failure_blocks, terminal
from tools.learner.step_row import Row

LAYOUTS = ("row-major", "column-major", "every-other-column")
SHAPES = ((32, 32, 64, 16, 16, 16), (45, 37, 83, 16, 32, 16), (17, 50, 7, 16, 16, 32), (64, 16, 130, 32, 16, 32))
DTYPES = ("torch.float16", "torch.float32")


def mainloop_case(shape, layout, dtype, lang):
    """A test_mainloop case and the message of a wrong a_ptrs advance about it, as the suite words it."""
    M, N, K, bm, bn, bk = shape
    test = f"tests/t4/test_mainloop.py::test_mainloop[{'-'.join(map(str, shape))}-{layout}-{dtype}]"
    ids = ["-".join(map(str, shape)), layout, dtype]
    labels = [f"M={M} N={N} K={K} BLOCK {bm}x{bn}x{bk}", f"A {layout}", dtype.removeprefix("torch.")]
    fp32 = " --dtype fp32" * (dtype == DTYPES[1])
    loads = f'make loads ARGS="--m {M} --n {N} --k {K} --block {bm} {bn} {bk} --layout {layout}{fp32}"'
    if lang == "zh":
        message = (
            f"M={M} N={N} K={K}，BLOCK {bm}x{bn}x{bk}，A 为 {layout}，{dtype}，A 的 stride ({M + 2 * 72}, 1)："
            f"累加器里有 NaN，a_ptrs 在循环里按错的 stride 前进；详见 content/t4.md §4.3。用 {loads} 看看"
        )
    else:
        message = (
            f"M={M} N={N} K={K}, BLOCK {bm}x{bn}x{bk}, A {layout}, {dtype}, strides A ({M + 2 * 72}, 1): the "
            f"accumulator holds NaN: a_ptrs advances by the wrong stride; read content/t4.en.md §4.3. see: {loads}"
        )
    return test, ids, labels, message


def row_of(cases, passed=()):
    """A T4.2 row whose cases [(test, ids, labels, message)] fail, but those in passed."""
    row = Row(BY_ID["T4.2"])
    failing = [c for c in cases if c[0] not in passed]
    row.failures = tuple((t, m.splitlines()[0]) for t, _, _, m in failing)
    row.messages = {t: m for t, _, _, m in failing}
    row.cases = tuple((t, ids, t in passed) for t, ids, _, _ in cases)
    row.labels = {t: labels for t, _, labels, _ in cases}
    row.total, row.passed = len(cases), len(passed)
    return row


def block_heads(lines):
    return [line for line in lines if line.startswith("  test_")]


def test_24_failures_saying_the_same_make_one_block_and_one_line(lang):
    cases = [mainloop_case(s, lay, d, lang) for s in SHAPES for lay in LAYOUTS for d in DTYPES]
    assert len(cases) == 24 and len({m for *_, m in cases}) == 24  # every message its own text
    lines = failure_blocks.every_failure(row_of(cases))
    text = "\n".join(lines)
    assert block_heads(lines) == [
        "  test_mainloop [M=32 N=32 K=64 BLOCK 16x16x16"
        + ("，A row-major，float16]" if lang == "zh" else ", A row-major, float16]")
    ], text
    assert text.count("a_ptrs") == 1, text  # the message once, in full
    same = "同样的失败还有 23 个用例" if lang == "zh" else "the same failure in 23 more cases of test_mainloop:"
    assert text.count(same) == 1, text
    assert re.search(r"还有 \d+ 个）$" if lang == "zh" else r" and \d+ more$", text.rstrip()), text
    assert "45-37-83" not in text, text  # cases in words, not pytest ids
    assert len(lines) <= 12, text


def test_a_case_longer_than_the_terminal_wraps_in_its_block(lang, monkeypatch):
    monkeypatch.setattr(terminal, "WIDTH", 60)
    lines = failure_blocks.every_failure(row_of([mainloop_case(SHAPES[0], "column-major", "torch.float16", lang)]))
    assert all(i18n.display_width(line) <= 60 for line in lines), "\n".join(lines)
    assert "float16]" in "\n".join(lines[1:3]), "\n".join(lines)  # the case's words, none cut


def test_two_different_messages_make_two_blocks(lang):
    cases = [mainloop_case(s, "row-major", "torch.float16", lang) for s in SHAPES[:2]]
    test, ids, labels, message = cases[1]
    other = message.replace("a_ptrs", "b_ptrs")  # another diagnosis: one word apart
    cases[1] = (test, ids, labels, other)
    lines = failure_blocks.every_failure(row_of(cases))
    text = "\n".join(lines)
    assert len(block_heads(lines)) == 2, text
    assert "a_ptrs" in text and "b_ptrs" in text, text
    assert "the same failure" not in text and "同样的失败" not in text, text


def test_what_counts_as_the_same_failure():
    cases = [mainloop_case(s, lay, d, "en") for s in SHAPES[:1] for lay in LAYOUTS for d in DTYPES]
    words = failure_blocks.case_values(row_of(cases), {cases[0][0], cases[2][0]})  # the cases asked about only
    assert words == ["torch.float16", "column-major", "row-major", "float16"]  # longest first; no numbers
    same = [
        ("the last group has only 1 row", "the last group has only 3 rows"),
        ("relative error 3.1e-02 > 1.5e-03 (fp16)", "relative error 7.0e-01 > 1e-05 (fp32)"),
        ("at (22, 26): -3.09 instead of 0.999", "at (1, 22): 1.343 instead of -3.026"),  # signs are the case's
        ("strides A (208, 1) B (1, 208)", "strides A (1, 176) B (208, 2)"),
        ("yours:\n    0 2 4\n    1 ? !", "yours:\n    0 1\n    2 3\n    4 5"),
        ('see: make loads ARGS="--m 32"', 'see: make loads ARGS="--m 45 --layout column-major --dtype fp32"'),
    ]
    for a, b in same:
        assert failure_blocks.skeleton(a) == failure_blocks.skeleton(b), (a, b)
    assert failure_blocks.skeleton("A row-major, float16", ["row-major"]) == failure_blocks.skeleton(
        "A column-major, float16", ["column-major"]
    )
    different = [
        ("move a_ptrs by BLOCK_K", "move b_ptrs by BLOCK_K"),
        ("relative error nan > 1e-5", "relative error 0.5 > 1e-5"),  # a NaN read is not a large error
        ("computed twice: []", "computed twice: [(1, 2)]"),
        ("A row-major: the accumulator holds NaN", "A row-major: 3 cells of C were never written"),
    ]
    for a, b in different:
        assert failure_blocks.skeleton(a, ["row-major"]) != failure_blocks.skeleton(b, ["row-major"]), (a, b)


def test_which_pass_names_the_cases_in_words(lang):
    cases = [mainloop_case(s, lay, "torch.float16", lang) for s in SHAPES for lay in LAYOUTS]
    passed = {t for t, ids, _, _ in cases if ids[1] == "row-major"}
    text = "\n".join(failure_blocks.which_pass(row_of(cases, passed)))
    assert ("A column-major 或 A every-other-column" if lang == "zh" else "A column-major or A every-other-column") in (
        text
    ), text
    cases = [mainloop_case(s, lay, d, lang) for s in SHAPES for lay in LAYOUTS for d in DTYPES]
    odd = {cases[0][0], cases[9][0]}  # no parameter or pair tells these apart: the failing cases listed
    text = " ".join(" ".join(failure_blocks.which_pass(row_of(cases, {t for t, *_ in cases} - odd))).split())
    sep = "，" if lang == "zh" else ", "
    assert f"[M=32 N=32 K=64 BLOCK 16x16x16{sep}A row-major{sep}float16]" in text, text
    assert f"[M=45 N=37 K=83 BLOCK 16x32x16{sep}A column-major{sep}float32]" in text, text
    assert "32-32-64" not in text and "torch." not in text, text


def test_ids_a_test_gave_itself_read_in_the_learners_language():
    """case_words(id_zh={id: words}): an id of ids=[...] in the words given for it in Chinese, else as it is."""
    from tools.core.case_labels import _mark_words

    words = {"id_zh": {"combined": "合并"}}
    os.environ["COURSE_LANG"], before = "zh", os.environ.get("COURSE_LANG")
    try:
        assert _mark_words(["combine"], [True], "combined", words) == "合并"
        assert _mark_words(["combine"], [False], "sorted", words) == "sorted"
        os.environ["COURSE_LANG"] = "en"
        assert _mark_words(["combine"], [True], "combined", words) == "combined"
    finally:
        os.environ.pop("COURSE_LANG") if before is None else os.environ.update(COURSE_LANG=before)


@pytest.mark.timeout(300)  # a collection of both suites in a fresh process: a minute on a busy machine
def test_every_case_of_the_suite_has_words():
    """No label of a parametrized case is pytest's id of numbers joined by "-" (17-50-70-0-3-True):
    the plugin puts each argument's name to its value, or the test gives its own words."""
    env = dict(os.environ, TRITON_INTERPRET="1", SOLUTION="1", COURSE_LANG="en")
    report, rc, output = run_pytest(["-q", "--collect-only"], ROOT, env, 300)
    assert report and report["collected"], output[-2000:]
    raw = re.compile(r"[\w.]*\d[\w.]*(?:-[\w.<>]+)+")  # 45-37-83, 64-8-132-auto-want0
    for c in report["collected"]:
        assert len(c["labels"]) == len(c["ids"]), c
        for label in c["labels"]:
            assert not raw.fullmatch(label) and "<lambda>" not in label and "torch." not in label, (c["test"], label)
    labels = {c["test"].split("::")[-1]: c["labels"] for c in report["collected"]}
    assert labels["test_k_block_loop[17-50-70-0-3-True-torch.float16]"] == [
        "M=17 N=50 K=70 kb_begin=0 kb_end=3 kmajor=True",
        "float16",
    ]
    assert labels["test_mainloop[45-37-83-16-32-16-column-major-torch.float32]"] == [
        "M=45 N=37 K=83 BLOCK 16x32x16",
        "A column-major, B every-other-column",
        "float32",
    ]


def failing_row(failures, step="T4.4"):
    """A row whose checks [(test, ids, message)] all fail."""
    row = Row(BY_ID[step])
    row.failures = tuple((t, m.splitlines()[0]) for t, _, m in failures)
    row.messages = {t: m for t, _, m in failures}
    row.cases = tuple((t, ids, False) for t, ids, _ in failures)
    row.total = len(failures)
    return row


NEVER_WRITTEN = {
    "en": "{n} cells of C were never written (they are set to -1234.0 before the launch); is the grid computed "
    "from the config's BLOCK_M and BLOCK_N? read content/t4.en.md §6.2 (Chinese: content/t4.md)",
    "zh": "C 里有 {n} 个格子从没被写过（launch 之前它们被设成 -1234.0）；网格是按配置的 BLOCK_M 和 BLOCK_N "
    "算的吗？详见 content/t4.md §6.2（English: content/t4.en.md）",
}


def test_one_cause_seen_by_several_checks_is_one_block(lang):
    """The same diagnosis from four test functions, each describing its case its own way before a
    colon (a product, a config's repr, words), is one block counting the other cases."""
    colon = "：" if lang == "zh" else ": "
    said = NEVER_WRITTEN[lang]
    failures = [
        (
            f"tests/t4/test_wrapper.py::test_matmul[{m}-{m}-{m}-{lay}-torch.float16]",
            [f"{m}-{m}-{m}", lay, "torch.float16"],
            f"{m}x{m} @ {m}x{m} torch.float16, A {lay}{colon}" + said.format(n=m * m // 2),
        )
        for m in (64, 45)
        for lay in LAYOUTS
    ]
    failures += [
        (
            "tests/t4/test_wrapper.py::test_matmul_of_plain_tensors",
            [],
            f"x @ W.t() without .contiguous(){colon}" + said.format(n=192),
        ),
        (
            "tests/t4/test_wrapper.py::test_grid_follows_the_config",
            [],
            f"config BLOCK 16x16x16{colon}" + said.format(n=7976),
        ),
        (
            "tests/t4/test_wrapper.py::test_every_autotune_config_runs",
            [],
            "config BLOCK_M: 32, BLOCK_N: 64, BLOCK_K: 128, GROUP_M: 8, num_warps: 4, num_ctas: 1, num_stages: 4, "
            f"maxnreg: None, ir_override: None{colon}" + said.format(n=175),
        ),
    ]
    lines = failure_blocks.every_failure(failing_row(failures))
    text = "\n".join(lines)
    assert len(block_heads(lines)) == 1, text
    assert text.count("BLOCK_N") == 1, text  # the message once
    assert ("同样的失败还有 8 个用例" if lang == "zh" else "the same failure in 8 more cases:") in text, text


def test_causes_one_word_apart_stay_apart_whatever_the_case_says(lang):
    colon = "：" if lang == "zh" else ": "
    failures = [
        (
            "tests/t4/test_wrapper.py::test_matmul[64-64-64]",
            ["64-64-64"],
            f"64x64 @ 64x64{colon}" + NEVER_WRITTEN[lang].format(n=3),
        ),
        (
            "tests/t4/test_wrapper.py::test_grid_follows_the_config",
            [],
            f"config BLOCK 16x16x16{colon}" + NEVER_WRITTEN[lang].format(n=3).replace("BLOCK_N", "BLOCK_K"),
        ),
        # a short tail after the case says too little to share a block with another short one
        ("tests/t4/test_wrapper.py::test_a", [], f"64x64 @ 64x64{colon}relative error 0.5 > 1e-5"),
        ("tests/t4/test_wrapper.py::test_b", [], f"64x64 @ 64x64{colon}3 cells differ"),
        # a colon after a sentence: the sentence is the diagnosis, kept
        (
            "tests/t4/test_wrapper.py::test_c",
            [],
            "wrong tile order for a 5 x 3 grid. The last group has only 1 row: use group_size_m",
        ),
        (
            "tests/t4/test_wrapper.py::test_d",
            [],
            "wrong tile order for a 5 x 3 grid. The ids run row first: use group_size_m",
        ),
    ]
    lines = failure_blocks.every_failure(failing_row(failures))
    assert len(block_heads(lines)) == 6, "\n".join(lines)


def test_diagnosis_sets_the_case_aside():
    same = [
        (
            "64x64 @ 64x64 torch.float16, A row-major: " + NEVER_WRITTEN["en"],
            "config BLOCK 16x16x16: " + NEVER_WRITTEN["en"],
        ),
        (
            "M=45 N=37 K=83: " + NEVER_WRITTEN["en"].format(n=3),
            "BLOCK_M: 32, num_warps: 4, maxnreg: None: " + NEVER_WRITTEN["en"].format(n=9),
        ),
    ]
    for a, b in same:
        assert failure_blocks.diagnosis(a, ["row-major", "torch.float16"]) == failure_blocks.diagnosis(b), (a, b)
    assert failure_blocks.diagnosis("x: " + NEVER_WRITTEN["en"]) != failure_blocks.diagnosis(
        "y: " + NEVER_WRITTEN["en"]
    )  # words, no case


def test_a_crash_after_a_failing_step_says_the_earlier_step_may_be_its_cause(lang):
    from tools.learner.grade import note_earlier_failures

    failing, crashed, alone = Row(BY_ID["T6.2"]), Row(BY_ID["T6.3"]), Row(BY_ID["T6.3"])
    failing.total, failing.passed = 10, 4
    for row in (crashed, alone):
        row.broke, row.reason = True, "crashed (SIGSEGV)"
    note_earlier_failures([failing, crashed])
    note_earlier_failures([alone])  # make test STEP=T6.3: no earlier row, nothing to say
    assert "T6.2" in crashed.reason and crashed.reason.startswith("crashed (SIGSEGV)")
    assert alone.reason == "crashed (SIGSEGV)"
