"""make loads tells the truth about the learner's own loads and stores: on the reference, §3's
example loads every element of the program's blocks exactly once over the K steps and nothing
outside; with the K tail unmasked (a planted mistake), the reads past A's last column stand out;
on the stub it says "not written yet".  The address -> element map is checked on its own, against
the §3 formula, in every layout, and the picture comes out the same twice.

The command lines run as a learner runs them, in fresh processes started all at once (COMMANDS),
in English; the checks that call make loads in this process are given English too.
"""

import re

import pytest

from course import ROOT
from course.i18n import NOT_WRITTEN, display_width
from course.registry import lesson
from tools.core.bodies import fill_in
from tools.core.repo import pristine_stub, scratch_repo, solution_file
from tools.study import loads, loads_guard, loads_text

T4 = lesson("T4")

pytestmark = pytest.mark.usefixtures("english")

TAIL_MASK = "mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining)"
STORE_MASK = "mask=c_mask"


def planted():
    """The reference with the K tail of A unmasked, and the epilogue's store unmasked."""
    text = solution_file(T4).read_text()
    assert TAIL_MASK in text and STORE_MASK in text, "the reference changed: update the planted mistakes"
    return text.replace(TAIL_MASK, "mask=offs_m[:, None] < M").replace(", mask=c_mask", "")


# The suite's widest failing case (tests/t4/test_mainloop.py MAINLOOP_CASES): A 64 x 130, 5 K steps.
WIDE_CASE = ["--m", "64", "--n", "16", "--k", "130", "--block", "32", "16", "32", "--layout", "every-other-column"]
WIDE_CASE += ["--layout-b", "row-major"]

# (argv, text of mine/t4_matmul.py in a scratch copy or None for the checkout, SOLUTION, COURSE_LANG)
COMMANDS = {
    "reference": (["--solution"], None, "1", "en"),
    "planted": (["--k", "6", "--pid-m", "1"], "planted", "0", "en"),
    "stub": ([], "stub", "0", "en"),
    "stub zh": ([], "stub", "0", "zh"),
    "mainloop only": ([], "mainloop only", "0", "en"),
    "large": ([*WIDE_CASE, "--solution"], None, "1", "en"),
    "large wide": ([*WIDE_CASE, "--solution", "--wide"], None, "1", "en"),
    "large planted zh": (WIDE_CASE, "planted", "0", "zh"),
    # a failing test_mainloop case's own command (tests/t4/common.see_loads): the suite's padding of 72
    "suite's padding": (
        [
            "--m",
            "45",
            "--n",
            "37",
            "--k",
            "83",
            "--block",
            "16",
            "32",
            "16",
            "--layout-b",
            "column-major",
            "--pad",
            "72",
        ],
        None,
        "1",
        "en",
    ),
}


@pytest.fixture(scope="module")
def cli(run_cli):
    """{name: CompletedProcess} of COMMANDS, in English (conftest.py's run_cli)."""
    texts = {"planted": planted(), "stub": pristine_stub(T4)}
    midway = fill_in(texts["stub"], solution_file(T4).read_text(), {"T4.1", "T4.2"})  # T4.3 still to write
    with (
        scratch_repo({T4: texts["planted"]}) as planted_repo,
        scratch_repo({T4: texts["stub"]}) as stub_repo,
        scratch_repo({T4: midway}) as midway_repo,
    ):
        where = {None: ROOT, "planted": planted_repo, "stub": stub_repo, "mainloop only": midway_repo}
        return run_cli(
            {
                name: (["-m", "tools.study.loads", *argv], where[repo], dict(SOLUTION=side, COURSE_LANG=lang))
                for name, (argv, repo, side, lang) in COMMANDS.items()
            }
        )


def grids(stdout, name):
    """{K step: {(row, col): mark}} of tensor `name` ("A" or "B") in the side-by-side grids, whose
    first column is 0 (no lane left of the tensor)."""
    found, lines = {}, stdout.splitlines()
    for i, line in enumerate(lines):
        step = re.match(r"K step (\d+)$", line)
        if not step:
            continue
        title = lines[i + 1]
        left, right = title.index("A (line"), title.index("B (line")
        cells = found.setdefault(int(step[1]), {})
        for row in lines[i + 3 :]:  # after the titles and the column numbers
            part = row[left:right] if name == "A" else row[right:]
            got = re.match(r"\s*(-?\d+) (.*)", part)
            if not row.strip() or row.lstrip().startswith("!!"):
                break
            if got:
                for j, ch in enumerate(got[2][::2]):
                    if ch != " ":
                        cells[(int(got[1]), j)] = ch
    return found


def test_the_padding_is_said_and_the_suites_gives_the_suites_strides(cli):
    """make loads says how much NaN lies around each tensor; with --pad 72, as the command a failing
    test prints passes, the strides are the ones that failure prints (poisoned_view: K + 2 * 72 per row)."""
    out = cli["suite's padding"]
    assert out.returncode == 0, out.stderr[-3000:]
    assert "strides (227, 1)" in out.stdout and "strides (1, 227)" in out.stdout, out.stdout[:800]
    assert "72 elements on each side (--pad)" in out.stdout, out.stdout[:800]
    assert "10 elements on each side (--pad)" in cli["reference"].stdout  # §3's example: 2 * 4 + 2


def test_reference_loads_each_element_of_its_blocks_once(cli):
    out = cli["reference"]
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    assert "M = 6, N = 6, K = 8; BLOCK_M = 4, BLOCK_N = 4, BLOCK_K = 4" in text  # §3's example
    a, b = grids(text, "A"), grids(text, "B")
    assert sorted(a) == sorted(b) == [0, 1]  # cdiv(8, 4) K steps
    for k in (0, 1):
        assert set(a[k]) == {(m, c) for m in range(6) for c in range(8)}  # A's grid: 6 x 8, nothing outside
        assert {rc for rc, ch in a[k].items() if ch == "#"} == {
            (m, c) for m in range(4) for c in range(4 * k, 4 * k + 4)
        }
        assert {rc for rc, ch in b[k].items() if ch == "#"} == {
            (r, n) for r in range(4 * k, 4 * k + 4) for n in range(4)
        }
        assert set(a[k].values()) | set(b[k].values()) == {"#", "-"}
    for name, count in (("A", 32), ("B", 32), ("C", 16)):
        verb = "written" if name == "C" else "loaded"
        assert f"{name}: the {count} elements this tile needs, each {verb} exactly once; nothing else" in text
    assert "!!" not in text, text
    assert "the tile mainloop returned is this block of A @ B" in text
    # programs (0, 1), (1, 0) and (1, 1) share a line in the default view, have one each with --wide
    assert "   (0, 1), (1, 0), (1, 1): every load and store inside, each exactly once" in text


def test_unmasked_k_tail_reads_outside_a(cli):
    out = cli["planted"]
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    a = grids(text, "A")
    # program (1, 0), K = 6: step 1 covers columns 4..7 of rows 4..7; columns 6, 7 are past K
    assert {rc for rc, ch in a[1].items() if ch == "!"} == {(m, c) for m in (4, 5) for c in (6, 7)}
    assert {rc for rc, ch in a[0].items() if ch == "!"} == set()
    assert re.search(
        r"!! K step 1 \(line \d+\): 4 loads of A fall outside A: A\[4,6\], A\[4,7\], A\[5,6\], A\[5,7\]", text
    )
    assert "!! A: 4 loads fall outside A" in text
    assert "the tile mainloop returned holds" in text and "NaN" in text
    # the unmasked store writes rows 6 and 7 of C, past M = 6
    assert re.search(r"!! line \d+: 8 writes fall outside C: C\[6,0\], C\[6,1\]", text), text
    assert "!! (0, 0): A: 8 loads fall outside A" in text  # the other programs are summed up too


def test_mainloop_written_and_epilogue_not_yet_shows_the_loads_and_exits_0(cli):
    out = cli["mainloop only"]
    assert out.returncode == 0, out.stdout + out.stderr
    assert "C: the epilogue is not written yet" in out.stdout and "not written yet: T4.3" in out.stdout
    assert "each loaded exactly once" in out.stdout and "Traceback" not in out.stderr


def test_stub_says_not_written_yet(cli):
    out = cli["stub"]
    stub_line = re.search(r'NotImplementedError\("(T4\.2 mainloop[^"]*)"', pristine_stub(T4)).group(1)
    assert out.returncode == 1, out.stdout + out.stderr
    assert " ".join(out.stderr.split()).endswith(" ".join(stub_line.split())), out.stderr  # wrapped, never cut
    assert "not written yet" in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


# ------------------------------------------------------------------------------------------------
# The address map and the picture, in this process (no kernel)
# ------------------------------------------------------------------------------------------------
def tracked(layout, rows=6, cols=8, pad=8):
    import torch

    view, buf = loads.padded(rows, cols, layout, torch.float16, pad, torch.zeros(rows, cols))
    return loads.Tracked("A", view, buf, pad)


@pytest.mark.parametrize("layout", loads.LAYOUTS)
def test_addresses_map_back_to_the_element_of_the_formula(layout):
    """a_ptr + (m * stride_am + k * stride_ak) * element size, §3's formula, is A[m, k] for every
    element, and a step past each edge lands in the padding under the indices it would have."""
    t = tracked(layout)
    sm, sk = t.view.stride()
    for m in range(-2, 8):
        for k in range(-2, 10):
            addr = t.view.data_ptr() + (m * sm + k * sk) * t.esize
            assert t.where[addr] == (m, k)
            assert t.inside((m, k)) == (0 <= m < 6 and 0 <= k < 8)


def fake_program(t, k_tail_masked):
    """The calls of §3's program (0, 0) over A (6, 8) with BLOCK_K = 6, made in Python."""
    sm, sk = t.view.stride()
    calls = []
    for step in range(2):
        lanes = [(m, k) for m in range(4) for k in range(6 * step, 6 * step + 6)]
        addrs = [t.view.data_ptr() + (m * sm + k * sk) * t.esize for m, k in lanes]
        mask = [k < 8 or not k_tail_masked for _, k in lanes]
        calls.append(loads.Call("load", (0, 0), 70, addrs, mask))
    return [loads.see(c, t, [t]) for c in calls]


@pytest.mark.parametrize("layout", loads.LAYOUTS)
def test_tail_masked_or_not(layout):
    t = tracked(layout)
    need = loads.needed(t, range(4), range(8))
    good, bad = fake_program(t, True), fake_program(t, False)
    assert loads.verdict(t, good, need, "loaded")[0]
    assert good[1].masked == {(m, k) for m in range(4) for k in (8, 9, 10, 11)}
    ok, sentence = loads.verdict(t, bad, need, "loaded")
    assert not ok and sentence == "A: 16 loads fall outside A"
    assert sorted(bad[1].outside) == [(m, k) for m in range(4) for k in (8, 9, 10, 11)]
    lines = loads.grid_lines(t, loads.marks(t, bad[1]))
    assert lines[0] == "  0 1 2 3 4 5 6 7 8 9 0 1" and lines[1] == "0 - - - - - - # # ! ! ! !"


def test_picture_is_the_same_twice(tmp_path):
    from argparse import Namespace

    t = tracked("row-major")
    steps = fake_program(t, False)
    prog = loads.Program((0, 0), steps, steps, [], [])
    seen = loads.Observed([t, t, t], [(0, 0)], {(0, 0): prog}, None, set(), "", "")
    args = Namespace(pid_m=0, pid_n=0, m=6, n=6, k=8, block=[4, 4, 6], layout="row-major")
    for name in ("a.png", "b.png"):
        loads.draw(seen, args, tmp_path / name)
    first = (tmp_path / "a.png").read_bytes()
    assert first.startswith(b"\x89PNG") and first == (tmp_path / "b.png").read_bytes()
    assert b"Software" not in first


# ------------------------------------------------------------------------------------------------
# A 100-column terminal, and the learner's language on every line
# ------------------------------------------------------------------------------------------------
def test_the_default_view_fits_100_columns_and_wide_draws_every_cell(cli):
    for name in ("reference", "planted", "large", "large planted zh", "stub zh"):
        out = cli[name]
        assert out.returncode == (1 if "stub" in name else 0), out.stderr[-3000:]
        lines = (out.stdout + out.stderr).splitlines()
        widest = max(lines, key=display_width)
        assert display_width(widest) <= loads.WIDTH, f"{name}: {display_width(widest)} columns:\n{widest}"
    large, wide = cli["large"].stdout, cli["large wide"].stdout
    assert len(large.splitlines()) < 80 < 700 < len(wide.splitlines())  # 5 K steps of 64 x 130 and 130 x 16
    assert max(map(display_width, wide.splitlines())) > 250  # --wide: every cell, A beside B
    # the compact grid of A at the last K step: columns 128-129 loaded by rows 0-31, 130-159 masked
    # (B's grid beside it)
    assert re.search(r"(?m)^\s+0-127 128-129 130-159 ", large) and re.search(r"(?m)^\s+0-31\s+-\s+#\s+\. ", large)
    for sentence in ("the 4160 elements this tile needs, each loaded exactly once", "(1, 0): every load and store"):
        assert sentence in large and sentence in wide


# English words of make loads' sentences, not inside a name such as every-other-column
ENGLISH_ONLY = re.compile(r"(?<![-\w])(loaded|masked|written|step|Program|programs|every|outside|line|the)(?![-\w])")


def test_every_line_is_in_the_learners_language(cli):
    """In Chinese, no line of make loads is an English sentence: what English is left is names
    (mainloop, stride, lane, row-major), numbers, the "(not written yet)" the grader looks for, and
    the stub's own text, quoted after 'stub 原文'."""
    for name in ("large planted zh", "stub zh"):
        out = cli[name]
        said = (out.stdout + out.stderr.split("stub 原文")[0]).replace(NOT_WRITTEN["zh"], "")
        for line in said.splitlines():
            assert not ENGLISH_ONLY.search(line), f"{name}: {line}"
    assert "还没写（not written yet）" in cli["stub zh"].stderr and "stub 原文" in cli["stub zh"].stderr
    assert "其他程序" in cli["large planted zh"].stdout and "!! K 第 4 步" in cli["large planted zh"].stdout


def expand(lines):
    """{(row, col): mark} of every cell of a compact grid (the labels "a-b" spread out again)."""

    def cells(label):
        a, _, b = label.partition("-")
        return range(int(a), int(b or a) + 1)

    header, out = lines[0], {}
    cols = [(m.end(), m[0]) for m in re.finditer(r"\d+(?:-\d+)?", header)]
    for line in lines[1:]:
        row = re.match(r"\s*(\d+(?:-\d+)?)", line)
        for end, label in cols:
            for r in cells(row[1]):
                for c in cells(label):
                    out[(r, c)] = line[end - 1] if end - 1 < len(line) else " "
    return out


def test_a_compact_grid_holds_the_same_marks_as_the_full_one():
    t = tracked("row-major", rows=6, cols=40)
    sm, sk = t.view.stride()
    lanes = [(m, k) for m in range(1, 5) for k in range(30, 44)]  # past the last column: 40 to 43
    addrs = [t.view.data_ptr() + (m * sm + k * sk) * t.esize for m, k in lanes]
    call = loads.Call("load", (0, 0), 70, addrs, [k < 42 for _, k in lanes])
    cells = loads.marks(t, loads.see(call, t, [t]))
    full = loads.grid_lines(t, cells)
    compact = loads_text.compact_grid_lines(t, cells, 60)
    assert len(compact) < len(full) and max(map(len, compact)) <= 60 < max(map(len, full))
    want = {(r, c): cells.get((r, c), "-" if t.inside((r, c)) else " ") for r in range(6) for c in range(44)}
    assert expand(compact) == want
    assert compact[0].split() == ["0-29", "30-39", "40-41", "42-43"]


# ------------------------------------------------------------------------------------------------
# The patch of Triton's private interpreter methods
# ------------------------------------------------------------------------------------------------
class NewBuilder:
    """An InterpreterBuilder whose masked load takes other arguments than make loads wraps."""

    def create_masked_load(self, pointers, mask, other):
        pass

    def create_masked_store(self, ptrs, value, mask, cache_policy):
        pass

    def set_grid_idx(self, x, y, z):
        pass


class SameBuilder(NewBuilder):
    def create_masked_load(self, ptrs, mask, other, cache_modifier, eviction_policy, is_volatile):
        pass


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_another_triton_is_refused_in_the_learners_language(monkeypatch, capsys, lang):
    import triton
    from triton.runtime import interpreter

    monkeypatch.setenv("COURSE_LANG", lang)
    monkeypatch.setattr(triton, "__version__", "4.0.0")
    monkeypatch.setattr(interpreter, "InterpreterBuilder", NewBuilder)
    with pytest.raises(SystemExit) as stop:
        loads_guard.wrap_loads_and_stores(lambda *a: None)
    said = str(stop.value.code)
    assert "Triton 4.0.0" in said and "Triton 3.9" in said and "create_masked_load" in said, said
    assert ("没法" in said) == (lang == "zh") and ("cannot run" in said) == (lang == "en"), said
    monkeypatch.setattr(interpreter, "InterpreterBuilder", SameBuilder)
    monkeypatch.setattr(loads_guard, "_warned", [])
    original = SameBuilder.__dict__["create_masked_load"]
    restore = loads_guard.wrap_loads_and_stores(lambda *a: None)  # the same arguments: a note, and on
    assert SameBuilder.__dict__["create_masked_load"] is not original
    restore()
    assert SameBuilder.__dict__["create_masked_load"] is original
    note = capsys.readouterr().err
    assert "Triton 4.0.0" in note and ("注意" in note) == (lang == "zh"), note
