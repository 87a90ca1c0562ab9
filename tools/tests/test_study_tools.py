"""The study tools tell the truth: tile_order.py shows the order tile_coords really computes,
smem.py's bytes are the hand-computed ones, l2sim.py reproduces §2's 5 against 4 panels and
behaves sanely on real shapes, and every picture comes out the same twice.

The tools that load the graded file run as the learner runs them, in fresh processes (COMMANDS),
in English; those called in this process are given English too (the `english` fixture), and each
tool's Chinese is checked on its own.
"""

import re
from types import SimpleNamespace

import pytest

from course import ROOT, hardware
from course.i18n import display_width, has_cjk
from course.registry import lesson
from tools.core.repo import pristine_stub, scratch_repo
from tools.study import common as study
from tools.study import l2sim, smem, tile_order

MEANWHILE = "(meanwhile, --solution shows the reference's)"  # a stub's message, wrapped to 100 columns

T4 = lesson("T4")

pytestmark = pytest.mark.usefixtures("english")

# The command lines run as a learner runs them, each in a fresh process.  Each spends seconds
# importing torch, so the `cli` fixture starts them all at once (conftest.py's run_cli):
# (argv, in the stub copy?, SOLUTION).
COMMANDS = {
    "order": (["-m", "tools.study.tile_order", "7", "5", "3", "--wave", "4", "--solution"], False, "1"),
    "order on the stub": (["-m", "tools.study.tile_order"], True, "0"),
    "smem": (["-m", "tools.study.smem", "--solution", "--format", "markdown"], False, "1"),
    "smem on the stub": (["-m", "tools.study.smem"], True, "0"),
}


@pytest.fixture(scope="module")
def cli(run_cli):
    """{name: CompletedProcess} of COMMANDS; the stub ones run in a scratch copy of the repo whose
    mine/t4_matmul.py is the committed, untouched stub, whatever mine/ holds now."""
    with scratch_repo({T4: pristine_stub(T4)}) as stub_repo:
        return run_cli(
            {
                name: (argv, stub_repo if on_stub else ROOT, dict(SOLUTION=side))
                for name, (argv, on_stub, side) in COMMANDS.items()
            }
        )


def pid_of(m, n, num_pid_m, num_pid_n, group_m):
    """The oracle, built the other way round from the kernel: the pid that computes tile (m, n).

    Groups of group_m rows come one after another; inside a group of `rows` rows, column n starts
    at pid n * rows, and rows count down the column."""
    first = m // group_m * group_m
    rows = min(group_m, num_pid_m - first)
    return first * num_pid_n + n * rows + (m - first)


def oracle_grid(num_pid_m, num_pid_n, group_m):
    return [[pid_of(m, n, num_pid_m, num_pid_n, group_m) for n in range(num_pid_n)] for m in range(num_pid_m)]


GRIDS = [(4, 4, 2), (7, 5, 3), (5, 3, 2), (1, 6, 8), (6, 1, 4), (9, 7, 4), (13, 3, 8), (3, 11, 1)]


# ------------------------------------------------------------------------------------------------
# tile_order.py
# ------------------------------------------------------------------------------------------------
def parse_text_maps(stdout):
    """The two side-by-side maps of tile_order's text output, first-wave brackets dropped."""
    lines = stdout.split("\n\n")[0].splitlines()[1:]
    numbers = [[int(x) for x in re.findall(r"\d+", line)] for line in lines]
    half = len(numbers[0]) // 2
    return [row[:half] for row in numbers], [row[half:] for row in numbers]


def test_tile_order_runs_the_reference_through_the_kernel(cli):
    out = cli["order"]
    assert out.returncode == 0, out.stderr[-2000:]
    row_major, grouped = parse_text_maps(out.stdout)
    assert row_major == oracle_grid(7, 5, 1)
    assert grouped == oracle_grid(7, 5, 3)  # 7 = 3 + 3 + 1: the last group is short
    assert "[0]  [3]" in out.stdout.splitlines()[1]  # pids 0 and 3 are in the first wave of 4
    assert "GROUP_M = 3 (grouped):   3 row-panels of A and 2 column-panels of B" in out.stdout


def test_tile_order_on_the_stub_prints_its_message_and_exits_1(cli):
    out = cli["order on the stub"]
    stub_line = re.search(r'NotImplementedError\("(T4\.1 tile_coords[^"]*)"', pristine_stub(T4)).group(1)
    assert out.returncode == 1, out.stdout + out.stderr
    assert " ".join(out.stderr.split()) == f"not written yet: {stub_line} {MEANWHILE}"
    assert out.stdout == ""
    assert all(display_width(line) <= 100 for line in out.stderr.splitlines()), out.stderr


def test_tile_order_markdown_marks_the_first_wave():
    maps = [(g, oracle_grid(4, 4, g)) for g in (1, 2)]
    text = tile_order.as_markdown(maps, wave=4)
    assert "| pid_m = 0 | **0** | **1** | **2** | **3** |" in text  # row-major: the whole first row
    assert "| pid_m = 1 | **1** | **3** | 5 | 7 |" in text  # grouped: a 2 x 2 square
    assert list(tile_order.wave_footprints(maps, 4)) == [(1, 1, 4), (2, 2, 2)]


def test_tile_order_marks_missing_and_repeated_tiles():
    grid = tile_order.pid_grid([(0, 0), (0, 0), (1, 1)], 2, 2)  # pid 1 repeats pid 0's tile
    assert [[tile_order.label(p) for p in row] for row in grid] == [["!", "?"], ["?", "2"]]


def test_tile_order_names_the_pids_whose_tile_is_off_the_grid():
    coords = [(0, 0), (0, 3), (1, 0), (-1, 2)]  # pids 1 and 3 land outside a 2 x 3 grid
    assert tile_order.off_grid(coords, 2, 3) == [(1, (0, 3)), (3, (-1, 2))]
    assert tile_order.off_grid(coords[:1] + coords[2:3], 2, 3) == []


def test_tile_order_picture_is_written_and_the_same_twice(tmp_path):
    maps = [(g, oracle_grid(5, 3, g)) for g in (1, 2)]
    for name in ("a.png", "b.png"):
        tile_order.draw(maps, 4, tmp_path / name)
    first = (tmp_path / "a.png").read_bytes()
    assert first.startswith(b"\x89PNG") and first == (tmp_path / "b.png").read_bytes()
    assert b"Software" not in first and b"matplotlib" not in first  # no version in the metadata


# ------------------------------------------------------------------------------------------------
# smem.py
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "blocks, dtype, by_hand",
    [
        ((128, 256, 64, 3), "fp16", 3 * (128 * 64 + 64 * 256) * 2),  # 147,456
        ((64, 32, 32, 5), "bf16", 30_720),
        ((128, 128, 32, 4), "fp32", 131_072),
        ((128, 256, 64, 3), "fp32", 294_912),
    ],
)
def test_smem_bytes_by_hand(blocks, dtype, by_hand):
    assert smem.shared_memory(*blocks, smem.BYTES_PER_ELEMENT[dtype]) == by_hand
    bm, bn, bk, stages = blocks
    cfg = SimpleNamespace(kwargs=dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8), num_stages=stages)
    assert hardware.smem_bytes(cfg, smem.BYTES_PER_ELEMENT[dtype]) == by_hand  # what tests/t4/ uses


def test_smem_limits_at_the_edge():
    assert hardware.H100_SMEM == 232_448
    assert smem.fits(65_536) == {"T4": True, "RTX 4090": True, "A100": True, "H100/H200": True}
    assert smem.fits(65_537) == {"T4": False, "RTX 4090": True, "A100": True, "H100/H200": True}
    assert smem.fits(166_913) == {"T4": False, "RTX 4090": False, "A100": False, "H100/H200": True}
    assert not any(smem.fits(232_449).values())


def test_smem_single_config(capsys):
    smem.main(["--config", "128", "256", "64", "3", "--dtype", "fp32", "--format", "markdown"])
    assert capsys.readouterr().out.splitlines()[2] == "| 128 | 256 | 64 | 3 | 294,912 | no | no | no | no |"


def test_smem_on_the_reference_configs(cli):
    out = cli["smem"]
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [line.strip("| ").split(" | ") for line in out.stdout.splitlines()[2:]]
    assert rows, out.stdout
    limits = [65_536, 101_376, 166_912, 232_448]
    for bm, bn, bk, stages, nbytes, *gpus in rows:
        by_hand = int(stages) * (int(bm) * int(bk) + int(bk) * int(bn)) * 2
        assert nbytes == f"{by_hand:,}"
        assert gpus == ["yes" if by_hand <= limit else "no" for limit in limits]


def test_smem_on_the_stub_says_configs_are_empty(cli):
    out = cli["smem on the stub"]
    assert out.returncode == 1 and out.stderr.startswith("not written yet: AUTOTUNE_CONFIGS is empty")
    assert "Traceback" not in out.stderr


# ------------------------------------------------------------------------------------------------
# l2sim.py
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("num_pid_m, num_pid_n, group_m", GRIDS)
def test_l2sim_order_is_the_grouped_order(num_pid_m, num_pid_n, group_m):
    for m, row in enumerate(oracle_grid(num_pid_m, num_pid_n, group_m)):
        for n, pid in enumerate(row):
            assert l2sim.tile_of(pid, num_pid_m, num_pid_n, group_m) == (m, n)


def test_l2sim_example_is_5_panels_against_4(capsys):
    assert l2sim.example_panels(1) == (1, 4)
    assert l2sim.example_panels(2) == (2, 2)
    l2sim.main(["--example"])
    out = capsys.readouterr().out
    assert "reads from DRAM:" in out.splitlines()[0]
    assert "1 row-panel of A + 4 column-panels of B = 5\n" in out
    assert "2 row-panels of A + 2 column-panels of B = 4\n" in out
    assert max(len(line) for line in out.splitlines()) <= 80  # a terminal's width


def test_l2sim_example_picture_is_written_and_the_same_twice(tmp_path):
    for name in ("a.png", "b.png"):
        l2sim.main(["--example", "--png", str(tmp_path / name)])
    first = (tmp_path / "a.png").read_bytes()
    assert first.startswith(b"\x89PNG") and first == (tmp_path / "b.png").read_bytes()


FP16 = 2
BIG = (8192, 8192, 8192, (128, 256, 64))


def test_l2sim_row_major_8192_by_hand():
    """16 waves of 132 programs, each wave all 32 B column-panels (4 MiB each), and no wave's
    panels (5 x 2 + 32 x 4 MiB) fit in 50 MiB, so nothing survives from one wave to the next."""
    t = l2sim.simulate(*BIG, FP16, group_m=1)
    assert t.b_bytes == 16 * 32 * 8192 * 256 * FP16
    assert t.a_bytes == (5 * 15 + 3) * 128 * 8192 * FP16  # 15 waves span 5 rows, the last (68 pids) 3


def test_l2sim_a_huge_l2_reads_everything_once_and_a_tiny_one_never_reuses_across_steps():
    M, N, K, blocks = 1000, 700, 300, (64, 128, 32)  # edge tiles in every dimension
    minimum = (M * K + K * N) * FP16
    for g in (1, 2, 4):
        assert l2sim.simulate(M, N, K, blocks, FP16, g, sms=8, l2_bytes=10**12).dram_bytes == minimum
        tiny = l2sim.simulate(M, N, K, blocks, FP16, g, sms=8, l2_bytes=1)
        waves = [[l2sim.tile_of(p, 16, 6, g) for p in range(s, min(s + 8, 96))] for s in range(0, 96, 8)]
        by_hand = sum(min(64, M - 64 * m) * K for w in waves for m in {m for m, _ in w}) + sum(
            min(128, N - 128 * n) * K for w in waves for n in {n for _, n in w}
        )
        assert tiny.dram_bytes == by_hand * FP16


@pytest.mark.parametrize("M, N, K", [(8192, 8192, 8192), (16384, 16384, 4096)])
def test_l2sim_grouping_cuts_dram_traffic_on_big_shapes(M, N, K):
    minimum = (M * K + K * N) * FP16
    t = {g: l2sim.simulate(M, N, K, (128, 256, 64), FP16, g) for g in (1, 8, 16)}
    for traffic in t.values():
        assert minimum <= traffic.dram_bytes <= traffic.requested_bytes
    assert t[16].dram_bytes < t[8].dram_bytes < t[1].dram_bytes
    assert t[1].dram_bytes > 4 * minimum  # row-major rereads B's panels every wave


def test_l2sim_table_puts_a_measurement_beside_the_model(capsys):
    l2sim.main(
        ["2048", "2048", "1024", "--group-m", "1", "8", "--measured-dram-gb", "0.5", "0.25", "--format", "markdown"]
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("| measured (GB) | model / measured |")
    assert lines[2].startswith("| 1 |") and "| 0.50 |" in lines[2] and "| 0.25 |" in lines[3]
    with pytest.raises(SystemExit):
        l2sim.main(["--group-m", "1", "8", "--measured-dram-gb", "0.5"])  # one number per GROUP_M


# ------------------------------------------------------------------------------------------------
# Both languages: COURSE_LANG, else --lang (an explainer's generated block pins it)
# ------------------------------------------------------------------------------------------------
def test_tile_order_speaks_chinese_with_its_columns_aligned(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    maps = [(g, oracle_grid(5, 3, g)) for g in (1, 2)]
    lines = tile_order.as_text(maps, wave=4).splitlines()
    # the grouped map starts 6 columns after the widest line of the other, as a terminal counts
    # columns: each Chinese character takes two
    assert lines[0] == "GROUP_M = 1（行优先）      GROUP_M = 2（分组）"
    assert lines[1] == "  [0]  [1]  [2]              [0]  [2]    4"
    assert display_width("GROUP_M = 1（行优先）      ") == len("  [0]  [1]  [2]            ")
    assert "  GROUP_M = 1（行优先）：A 的 2 个行块和 B 的 3 个列块" in lines
    assert "  GROUP_M = 2（分组）：  A 的 2 个行块和 B 的 2 个列块" in lines
    assert "| GROUP_M = 2（分组） | pid_n = 0 | pid_n = 1 | pid_n = 2 |" in tile_order.as_markdown(maps, wave=4)


def test_l2sim_and_smem_take_lang(capsys):
    l2sim.main(["1024", "1024", "1024", "--group-m", "1", "--measured-dram-gb", "1", "--format", "markdown"])
    assert capsys.readouterr().out.startswith("| GROUP_M | A from DRAM (GB) |")  # COURSE_LANG=en
    l2sim.main(
        ["1024", "1024", "1024", "--group-m", "1", "--measured-dram-gb", "1", "--lang", "zh", "--format", "markdown"]
    )
    heads = capsys.readouterr().out.splitlines()[0].strip("| ").split(" | ")
    assert heads[1:] == [
        "A 的 DRAM 读取量（GB）",
        "B 的 DRAM 读取量（GB）",
        "A + B（GB）",
        "是下限的几倍",
        "复用倍数",
        "实测（GB）",
        "模型 / 实测",
    ]
    smem.main(["--config", "128", "256", "64", "3", "--lang", "zh"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("共享内存 = num_stages * (BLOCK_M*BLOCK_K + BLOCK_K*BLOCK_N) * 2 B（fp16）")
    assert lines[-1].split() == ["128", "256", "64", "3", "147,456", "放不下", "放不下", "放得下", "放得下"]
    assert [display_width(line) for line in lines[-2:]] == [display_width(lines[-2])] * 2  # aligned


def test_l2sim_example_in_chinese(capsys):
    l2sim.main(["--example", "--lang", "zh"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "4 x 4 的 tile 网格上同时运行 4 个程序，第一波从显存读的块："
    assert lines[1] == "  行优先（GROUP_M = 1）：  A 的 1 个行块 + B 的 4 个列块 = 5 个块"
    assert lines[2] == "  分组（GROUP_M = 2）：    A 的 2 个行块 + B 的 2 个列块 = 4 个块"


def test_an_error_of_the_learners_line_is_said_as_make_test_says_it(capsys, english):
    """Not Triton's forty-line traceback: what raised it and the learner's line, as the grader says it."""
    code = compile("\n\ndef tile_coords():\n    return pid_m.foo\n", str(ROOT / "mine" / T4.file), "exec")
    space = {}
    exec(code, space)
    try:
        space["tile_coords"]()
    except NameError as e:
        with pytest.raises(SystemExit) as stopped:
            study.stop_if_stub(e)
    said = capsys.readouterr().err
    assert stopped.value.code == 1 and f"raised at mine/{T4.file} line 4" in said and "Traceback" not in said, said


@pytest.mark.parametrize("tool", [tile_order, l2sim, smem])
def test_a_bad_argument_is_refused_naming_the_make_command(tool, lang, capsys):
    with pytest.raises(SystemExit) as stopped:
        tool.main(["--no-such-flag"])
    said = capsys.readouterr().err
    assert stopped.value.code == 2 and "ARGS=--help" in said and "make " in said, said
    assert has_cjk(said) == (lang == "zh"), said
