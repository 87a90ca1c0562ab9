"""tools/study/groups.py tells the truth: on the reference, every tile of every expert is done once,
by program tile % programs, on its expert's rows alone, and the tables say so for a routing drawn by
hand below; a planted mistake (a last m-block not cut at the expert's end, a loop every program
starts at tile 0) comes out as the problems it causes, with exit status 1; on the untouched stub it
says the stub's own "not written yet" and exits 1.  Both languages fit an 80-column terminal.

Each command runs in a fresh process, as the learner runs it, all of them at once."""

import json
import re

import pytest

from course import ROOT
from course.i18n import display_width, has_cjk
from course.registry import lesson_writing
from tools.core.repo import earlier_lessons_written, pristine_stub, scratch_repo, solution_file
from tools.study import groups, groups_check
from tools.study.groups_check import Schedule

MEANWHILE = "(meanwhile, --solution shows the reference's)"  # a stub's message, wrapped to 100 columns

LESSON = lesson_writing(groups.STUDIED)

# The routings the reference is dumped for: (make_routing's arguments, compute's shape).
ROUTINGS = [
    (
        dict(tokens=24, top_k=2, experts=8, skew="zipf", seed=1),
        dict(n=64, block_m=16, block_n=32, group_m=2, programs=3),
    ),
    (
        dict(tokens=0, top_k=1, experts=5, skew="zipf", seed=0, counts=[0, 37, 3, 16, 0]),
        dict(n=64, block_m=16, block_n=32, group_m=2, programs=4),
    ),
    (dict(tokens=9, top_k=3, experts=4, skew="one", seed=0), dict(n=40, block_m=8, block_n=16, group_m=4, programs=5)),
    (
        dict(tokens=1, top_k=1, experts=3, skew="balanced", seed=2),
        dict(n=16, block_m=16, block_n=16, group_m=1, programs=2),
    ),
]

DUMP = (
    "import json, os, sys\n"
    "from tools.study import groups\n"
    "out = []\n"
    "for routing, shape in json.loads(sys.argv[1]):\n"
    "    texts = {}\n"
    "    for lang in ('en', 'zh'):\n"
    "        os.environ['COURSE_LANG'] = lang\n"
    "        r = groups.make_routing(**routing)\n"
    "        s = groups.compute(r, solution=True, **shape)\n"
    "        texts[lang] = groups.report(s, r, shape['group_m'], False)\n"
    "    out.append(dict(histogram=s.histogram, counts=s.counts, offsets=s.offsets, trace=s.trace,\n"
    "        m_blocks=s.m_blocks, tile_ends=s.tile_ends, problems=s.problems(), texts=texts))\n"
    "print(json.dumps(out))\n"
)

EXAMPLE = ["-m", "tools.study.groups", "--counts", "0,37,3,16,0", "--programs", "4"]
CUT = "row_end = tl.minimum(row_begin + BLOCK_M, expert_end)"
LOOP = "tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN)"
MUTANTS = {  # the mistake planted in the reference, as (what the reference says, what the mutant says)
    "uncut": (CUT, "row_end = row_begin + BLOCK_M"),
    "from zero": (LOOP, "tl.range(0, total, NUM_PROGS, flatten=FLATTEN)"),
}


def mutant(name):
    before, after = MUTANTS[name]
    text = solution_file(LESSON).read_text()
    assert text.count(before) == 1, f"the reference no longer holds {before!r}: plant the mistake anew"
    return text.replace(before, after)


@pytest.fixture(scope="module")
def cli(run_cli):
    """{name: CompletedProcess}, in English unless told: the dump and the example on the reference,
    the example on the solution in another style and on each planted mistake, and the untouched
    stub, each in its own scratch copy of the repo."""
    written = earlier_lessons_written(LESSON)
    other = {each: (ROOT / "solutions" / "other_style" / each.file).read_text() for each in [*written, LESSON]}
    with (
        scratch_repo({LESSON: pristine_stub(LESSON)}) as stub_repo,
        scratch_repo(other) as other_repo,
        scratch_repo({**written, LESSON: mutant("uncut")}) as uncut_repo,
        scratch_repo({**written, LESSON: mutant("from zero")}) as zero_repo,
    ):
        return run_cli(
            {
                "dump": (["-c", DUMP, json.dumps(ROUTINGS)], ROOT, dict(SOLUTION="1")),
                "example": ([*EXAMPLE, "--solution"], ROOT, dict(SOLUTION="1")),
                "other style": (EXAMPLE, other_repo, dict(SOLUTION="0")),
                "uncut": (EXAMPLE, uncut_repo, dict(SOLUTION="0")),
                "from zero": (EXAMPLE, zero_repo, dict(SOLUTION="0")),
                "stub": (["-m", "tools.study.groups"], stub_repo, dict(SOLUTION="0")),
            }
        )


@pytest.fixture(scope="module")
def dumps(cli):
    out = cli["dump"]
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def oracle(counts, block_m, block_n, n, group_m):
    """[(expert, pid_m, pid_n, row begin, row end)] by global tile id, built by walking the experts:
    each expert's tiles in T4's grouped order over its own m-blocks, its rows cut at its end."""
    out, start = [], 0
    for e, c in enumerate(counts):
        m_blocks, n_blocks = -(-c // block_m), -(-n // block_n)
        for first in range(0, m_blocks, group_m):  # a group of up to group_m m-blocks, column by column
            rows = min(group_m, m_blocks - first)
            for pn in range(n_blocks):
                for pm in range(first, first + rows):
                    out.append((e, pm, pn, start + pm * block_m, min(start + (pm + 1) * block_m, start + c)))
        start += c
    return out


@pytest.mark.parametrize("i", range(len(ROUTINGS)))
def test_the_reference_does_every_tile_once(dumps, i):
    d, (_, shape) = dumps[i], ROUTINGS[i]
    assert d["counts"] == d["histogram"] and d["offsets"] == [
        sum(d["counts"][: e + 1]) for e in range(len(d["counts"]))
    ]
    want = oracle(d["counts"], shape["block_m"], shape["block_n"], shape["n"], shape["group_m"])
    for t, (epilogues, e, pm, pn, begin, end, prog) in enumerate(d["trace"]):
        if t < len(want):
            assert (epilogues, (e, pm, pn, begin, end), prog) == (1, want[t], t % shape["programs"]), t
        else:
            assert epilogues == 0, t  # no tile id past the total
    assert d["problems"] == []
    assert "No problems: every tile of every expert was done exactly once." in d["texts"]["en"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_both_languages_fit_80_columns(dumps, lang):
    for d in dumps:
        lines = d["texts"][lang].splitlines()
        assert max(display_width(line) for line in lines) <= 80
        sentences = [line for line in lines if re.search(r"[A-Za-z]{4,} [a-z]{3,} [a-z]{3,}", line)]
        if lang == "zh":  # a line of English words in the Chinese text is an untranslated one
            assert all(has_cjk(line) for line in sentences), sentences
            assert "没有发现问题" in d["texts"]["zh"]


def tile_rows(stdout):
    """The rows of the table of global tiles: tile, expert, m-block, n-block, sorted rows, program."""
    return [row for row in (line.split() for line in stdout.splitlines()) if len(row) == 6 and row[0].isdigit()]


def test_the_hand_drawn_example(cli):
    out = cli["example"]
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line.split() for line in out.stdout.splitlines()]
    assert ["1", "37", "0..36", "2x16", "+", "1x5*", "0-5"] in lines  # 37 rows: two full m-blocks, one of 5
    assert ["3", "16", "40..55", "1x16", "8-9"] in lines  # 16 rows: one whole m-block, not ragged
    assert ["0", "0", "-", "0", "-"] in lines and ["4", "0", "-", "0", "-"] in lines  # no rows, no tiles
    assert tile_rows(out.stdout) == [
        ["0", "1", "0", "0", "0..15", "0"],
        ["1", "1", "1", "0", "16..31", "1"],
        ["2", "1", "0", "1", "0..15", "2"],  # GROUP_M = 2: down the group's two m-blocks, then along n
        ["3", "1", "1", "1", "16..31", "3"],
        ["4", "1", "2", "0", "32..36*", "0"],
        ["5", "1", "2", "1", "32..36*", "1"],
        ["6", "2", "0", "0", "37..39*", "2"],
        ["7", "2", "0", "1", "37..39*", "3"],
        ["8", "3", "0", "0", "40..55", "0"],
        ["9", "3", "0", "1", "40..55", "1"],
    ]
    assert ["0", "3", "0,", "4,", "8"] in lines and ["3", "2", "3,", "7"] in lines  # program: tiles, ids


def test_a_solution_in_another_style_draws_no_problem(cli):
    """solutions/other_style/ (a while loop, the total summed from m_blocks, its own order of an
    expert's tiles): the same tiles, each by program tile % 4, and no problem."""
    out, ref = cli["other style"], cli["example"]
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.rstrip().endswith("No problems: every tile of every expert was done exactly once.")
    assert sorted(row[1:5] for row in tile_rows(out.stdout)) == sorted(row[1:5] for row in tile_rows(ref.stdout))
    assert [row[5] for row in tile_rows(out.stdout)] == [str(t % 4) for t in range(10)]


def test_a_block_not_cut_at_the_experts_end_mixes_rows(cli):
    out = cli["uncut"]
    assert out.returncode == 1, out.stderr[-3000:]
    assert ["4", "1", "2", "0", "32..47", "0"] in [line.split() for line in out.stdout.splitlines()]
    text = " ".join(out.stdout.split())
    for tile, expert, rows in ((4, 1, "32..47"), (6, 2, "37..52")):
        assert (
            f"tile {tile} (expert {expert}) covers rows {rows}, across an expert's end: it mixes two experts' rows"
            in text
        )
    assert "tile 0 (" not in text  # a full m-block inside its expert is no problem


def test_a_loop_every_program_starts_at_zero(cli):
    out = cli["from zero"]
    assert out.returncode == 1, out.stderr[-3000:]
    text = " ".join(out.stdout.split())
    assert "tiles 0, 4, 8 were done more than once" in text  # 4 programs with a stride of 4, each from 0
    assert "tiles 1-3, 5-7, 9 were never done" in text
    assert "4x, last 3" in text


def test_the_stub_says_not_written_yet(cli):
    out = cli["stub"]
    assert out.returncode == 1 and out.stdout == ""
    first = re.search(r'NotImplementedError\("(T\d\.1 check_routing_inputs[^"]*)"', pristine_stub(LESSON)).group(1)
    assert (
        " ".join(out.stderr.split()) == f"not written yet: {first} {MEANWHILE}"
    )  # route is the first thing the tool runs


# ------------------------------------------------------------------------------------------------
# In this process: the checks on a made-up trace, and the picture
# ------------------------------------------------------------------------------------------------
def made_up(trace, counts=(5, 0, 9), programs=2):
    """A Schedule of counts over BLOCK_M = 4, N = BLOCK_N = 16 (one n-block), with this trace."""
    counts = list(counts)
    return Schedule(
        histogram=counts,
        counts=counts,
        offsets=[sum(counts[: e + 1]) for e in range(len(counts))],
        sorted_slots=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
        slot_experts=[0] * 5 + [2] * 9,
        m_blocks=[2, 0, 3],
        tile_ends=[2, 2, 5],
        trace=[tuple(t) for t in trace] + [(0,) * 7] * 3,
        n=16,
        block_m=4,
        block_n=16,
        programs=programs,
    )


RIGHT = [
    (1, 0, 0, 0, 0, 4, 0),
    (1, 0, 1, 0, 4, 5, 1),
    (1, 2, 0, 0, 5, 9, 0),
    (1, 2, 1, 0, 9, 13, 1),
    (1, 2, 2, 0, 13, 14, 0),
]


@pytest.mark.usefixtures("english")
def test_the_checks_on_a_made_up_trace():
    assert made_up(RIGHT).problems() == []
    wrong = list(RIGHT)
    wrong[1] = (1, 0, 1, 0, 4, 8, 1)  # expert 0's last m-block runs on into expert 2's rows
    wrong[3] = (2, 2, 1, 0, 9, 13, 1)  # done twice
    wrong[4] = (0, 0, 0, 0, 0, 0, 0)  # never
    problems = made_up(wrong).problems()
    assert problems == [
        "tile 3 was done more than once",
        "tile 4 was never done",
        "tile 1 (expert 0) covers rows 4..7, across an expert's end: it mixes two experts' rows",
        "1 place (expert, m-block, n-block) got no tile, (2, 2, 0) for one",
    ]
    routed = made_up(RIGHT)
    routed.counts = [5, 1, 8]
    assert routed.route_problems()[0] == "route's counts are [5, 1, 8]; the routing gives the experts [5, 0, 9] rows"


def test_ranges():
    assert groups_check.ranges([8, 0, 1, 2, 5, 7]) == "0-2, 5, 7-8" and groups_check.ranges([]) == "-"


def test_the_picture_is_written_and_the_same_twice(tmp_path):
    from tools.study.groups_picture import draw

    wrong = list(RIGHT)
    wrong[3] = (2, 2, 1, 0, 9, 13, 1)
    for name in ("a.png", "b.png"):
        draw(made_up(wrong), tmp_path / name)
    first = (tmp_path / "a.png").read_bytes()
    assert first.startswith(b"\x89PNG") and first == (tmp_path / "b.png").read_bytes()
    assert b"Software" not in first and b"matplotlib" not in first
