"""tools/study/streamk.py tells the truth: on the reference, every k-block of every stream-K tile
goes to exactly one program, the runs lie end to end and are balanced to within one k-block, the
owner of a tile is the program holding its last k-block, and §4.1's example comes out as the
explainer draws it; on the untouched stub it says "not written yet" and exits 1.

Each command runs in a fresh process, as the learner runs it, all of them at once."""

import json
import re

import pytest

from course import ROOT
from course.i18n import display_width
from course.registry import lesson
from tools.core.repo import pristine_stub, scratch_repo

MEANWHILE = "(meanwhile, --solution shows the reference's)"  # a stub's message, wrapped to 100 columns

T5 = lesson("T5")

# (M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, num_sms, mode): §4.1's example, a hybrid split, all
# stream-K with programs that do not divide the k-blocks, fewer k-blocks than programs, data-parallel.
PROBLEMS = [
    (64, 64, 160, 32, 32, 32, 3, "auto"),
    (96, 128, 256, 32, 32, 32, 5, "auto"),
    (100, 70, 300, 32, 32, 32, 7, "sk"),
    (32, 32, 64, 32, 32, 32, 4, "sk"),
    (64, 64, 160, 32, 32, 32, 3, "dp"),
]

DUMP = (
    "import json, sys\n"
    "from tools.study import streamk\n"
    "out = []\n"
    "for p in json.loads(sys.argv[1]):\n"
    "    s = streamk.compute(*p, solution=True)\n"
    "    out.append(dict(num_tiles=s.num_tiles, k_blocks=s.k_blocks, sk_tiles=s.sk_tiles, programs=s.programs,\n"
    "        runs=s.runs, program_of=s.program_of,\n"
    "        cells=[[s.cell(t, kb) for kb in range(s.k_blocks)] for t in range(s.num_tiles)],\n"
    "        owners=[s.owner(t) for t in range(s.num_tiles)], problems=s.problems()))\n"
    "print(json.dumps(out))\n"
)

COMMANDS = {
    "dump": (["-c", DUMP, json.dumps(PROBLEMS)], False, "1"),
    "example": (["-m", "tools.study.streamk", "--solution"], False, "1"),
    "stub": (["-m", "tools.study.streamk"], True, "0"),
}


@pytest.fixture(scope="module")
def cli(run_cli):
    """{name: CompletedProcess} of COMMANDS, in English (conftest.py's run_cli)."""
    with scratch_repo({T5: pristine_stub(T5)}) as stub_repo:
        return run_cli(
            {
                name: (argv, stub_repo if on_stub else ROOT, dict(SOLUTION=side))
                for name, (argv, on_stub, side) in COMMANDS.items()
            }
        )


@pytest.fixture(scope="module")
def splits(cli):
    out = cli["dump"]
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("i", range(len(PROBLEMS)))
def test_every_stream_k_block_has_exactly_one_program(splits, i):
    s = splits[i]
    total = s["sk_tiles"] * s["k_blocks"]
    holders = [[p for p, (b, e) in enumerate(s["runs"]) if b <= it < e] for it in range(total)]
    assert all(len(h) == 1 for h in holders), holders
    assert s["program_of"] == [h[0] for h in holders]
    assert s["problems"] == []
    for t in range(s["sk_tiles"]):
        assert s["cells"][t] == [holders[t * s["k_blocks"] + kb][0] for kb in range(s["k_blocks"])]
        assert s["owners"][t] == s["cells"][t][-1]  # the last k-block's program runs the epilogue


@pytest.mark.parametrize("i", range(len(PROBLEMS)))
def test_runs_are_contiguous_and_balanced(splits, i):
    s = splits[i]
    if not s["sk_tiles"]:
        assert s["runs"] == []
        return
    runs = s["runs"]
    assert len(runs) == s["programs"]
    assert runs[0][0] == 0 and runs[-1][1] == s["sk_tiles"] * s["k_blocks"]
    assert all(runs[p][1] == runs[p + 1][0] for p in range(len(runs) - 1))
    lengths = [e - b for b, e in runs]
    assert max(lengths) - min(lengths) <= 1 and min(lengths) >= 1


def test_data_parallel_tiles_are_whole_and_round_robin(splits):
    for s in splits:
        for t in range(s["sk_tiles"], s["num_tiles"]):
            assert s["cells"][t] == [(t - s["sk_tiles"]) % s["programs"]] * s["k_blocks"]


def test_the_hybrid_split(splits):
    assert [(s["sk_tiles"], s["programs"]) for s in splits] == [(4, 3), (7, 5), (12, 7), (1, 2), (0, 3)]


def test_the_explainers_example(cli):
    out = cli["example"]
    assert out.returncode == 0, out.stderr
    assert "4 tiles to stream-K (20 k-blocks) and 0 to data-parallel" in " ".join(out.stdout.split())
    assert all(display_width(line) <= 100 for line in out.stdout.splitlines()), out.stdout  # wrapped, not cut
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines() if re.match(r"\s+[0-3]\s+\d", line)}
    assert rows["0"][:7] == ["0", "0", "0", "0", "0", "0", "-"]
    assert rows["1"][:7] == ["0", "0", "1", "1", "1", "1", "0"]
    assert rows["2"][:7] == ["1", "1", "1", "1", "2", "2", "1"]
    assert rows["3"][:7] == ["2", "2", "2", "2", "2", "2", "-"]
    assert "[0, 7)" in out.stdout and "[7, 14)" in out.stdout and "[14, 20)" in out.stdout


def test_the_stub_says_not_written_yet(cli):
    out = cli["stub"]
    assert out.returncode == 1
    assert out.stdout == ""
    stub_line = re.search(r'NotImplementedError\("(T5\.3 stream_k_split[^"]*)"', pristine_stub(T5)).group(1)
    assert " ".join(out.stderr.split()) == f"not written yet: {stub_line} {MEANWHILE}"
