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
from course.registry import T4
from tools.checks.common import pristine_stub, scratch_repo, solution_file
from tools.study import loads

pytestmark = pytest.mark.usefixtures("english")

TAIL_MASK = "mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining)"
STORE_MASK = "mask=c_mask"


def planted():
    """The reference with the K tail of A unmasked, and the epilogue's store unmasked."""
    text = solution_file(T4).read_text()
    assert TAIL_MASK in text and STORE_MASK in text, "the reference changed: update the planted mistakes"
    return text.replace(TAIL_MASK, "mask=offs_m[:, None] < M").replace(", mask=c_mask", "")


# (argv, text of mine/t4_matmul.py in a scratch copy or None for the checkout, SOLUTION)
COMMANDS = {
    "reference": (["--solution"], None, "1"),
    "planted": (["--k", "6", "--pid-m", "1"], "planted", "0"),
    "stub": ([], "stub", "0"),
}


@pytest.fixture(scope="module")
def cli(run_cli):
    """{name: CompletedProcess} of COMMANDS, in English (conftest.py's run_cli)."""
    texts = {"planted": planted(), "stub": pristine_stub(T4)}
    with scratch_repo({T4: texts["planted"]}) as planted_repo, scratch_repo({T4: texts["stub"]}) as stub_repo:
        where = {None: ROOT, "planted": planted_repo, "stub": stub_repo}
        return run_cli(
            {
                name: (["-m", "tools.study.loads", *argv], where[repo], dict(SOLUTION=side))
                for name, (argv, repo, side) in COMMANDS.items()
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
    assert text.count("every load and store inside, each exactly once") == 3  # programs (0, 1), (1, 0), (1, 1)


def test_unmasked_k_tail_reads_outside_a(cli):
    out = cli["planted"]
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    a = grids(text, "A")
    # program (1, 0), K = 6: step 1 covers columns 4..7 of rows 4..7; columns 6, 7 are past K
    assert {rc for rc, ch in a[1].items() if ch == "!"} == {(m, c) for m in (4, 5) for c in (6, 7)}
    assert {rc for rc, ch in a[0].items() if ch == "!"} == set()
    assert "!! K step 1 (line 71): 4 loads of A fall outside A: A[4,6], A[4,7], A[5,6], A[5,7]" in text
    assert "!! A: 4 loads fall outside A" in text
    assert "the tile mainloop returned holds" in text and "NaN" in text
    # the unmasked store writes rows 6 and 7 of C, past M = 6
    assert re.search(r"!! line \d+: 8 writes fall outside C: C\[6,0\], C\[6,1\]", text), text
    assert "!! (0, 0): A: 8 loads fall outside A" in text  # the other programs are summed up too


def test_stub_says_not_written_yet(cli):
    out = cli["stub"]
    stub_line = re.search(r'NotImplementedError\("(T4\.2 mainloop[^"]*)"', pristine_stub(T4)).group(1)
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stderr.strip().endswith(stub_line) and "not written yet" in out.stderr
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
