"""T5.1: the persistent tile loop: its grid, and every tile done once by some program, over many grids."""

import pytest
import torch
import triton

from course.i18n import agree, count, say
from course.messages import fail, stub_report

from .common import T5, check_trace, epilogues_on_other_tiles, new_trace, no_tile_past, tile_loop_like, trace_rows
from .k_segments import fail_if_k_blocks_from_one
from .loop_ir import flattened_loops

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T5.1 the persistent tile loop
# ================================================================================================
@pytest.mark.t5_1
@pytest.mark.parametrize("tiles, sms, want", [(1, 132, 1), (64, 132, 64), (132, 132, 132), (1376, 132, 132), (7, 3, 3)])
def test_persistent_grid(t5, tiles, sms, want):
    got = t5.persistent_grid(tiles, sms)
    if got != want:
        # the number of waves, asked again where it differs from every other count (1376 tiles: 11 waves)
        waves = got == triton.cdiv(tiles, sms) and t5.persistent_grid(1376, 132) == 11
        formula = ("", "") if waves else grid_formula(t5)
        fail(
            T5,
            f"{tiles} 个 tile、{sms} 个 SM：应当启动 {want} 个常驻程序，得到 {got}"
            + (
                "：这是波数 cdiv(num_tiles, num_sms)（1376 个 tile、132 个 SM 时也得到 11），不是程序数；"
                "一个 SM 一个程序，不超过 tile 数"
                if waves
                else formula[0]
            ),
            f"{count(tiles, 'tile')} on {sms} SMs: {count(want, 'persistent program')} expected, got {got}"
            + (
                ": the number of waves, cdiv(num_tiles, num_sms) (1376 tiles on 132 SMs give 11 too), not of "
                "programs; one program per SM, no more than there are tiles"
                if waves
                else formula[1]
            ),
            "2.2",
        )


# Counts that persistent_grid may give in place of min(num_sms, num_tiles), each named where it is what the
# learner's function returns at every one of GRID_PROBES (chosen so that no two of them agree everywhere).
GRID_PROBES = [(1, 132), (64, 132), (132, 132), (1376, 132), (7, 3), (5, 8)]
GRID_FORMULAS = [
    (
        lambda t, s: s,
        "num_sms，没有和 tile 数取最小值：tile 比 SM 少时，多出来的程序无事可做",
        "num_sms, not capped at the number of tiles: where the tiles are fewer, the extra programs have nothing to do",
    ),
    (
        lambda t, s: t,
        "num_tiles：一个 tile 一个程序，就不是常驻的了",
        "num_tiles: one program per tile is not persistent",
    ),
    (lambda t, s: max(t, s), "max(num_sms, num_tiles)：这里要的是 min", "max(num_sms, num_tiles): min belongs there"),
    (lambda t, s: min(t, s) + 1, "min(num_sms, num_tiles) + 1：多了一个", "min(num_sms, num_tiles) + 1: one too many"),
    (lambda t, s: min(t, s) - 1, "min(num_sms, num_tiles) - 1：少了一个", "min(num_sms, num_tiles) - 1: one too few"),
] + [  # left37: a grid capped at one program per k tiles (learner37's plant, k = 2, was told the counts alone)
    (
        lambda t, s, k=k: min(s, triton.cdiv(t, k)),
        f"min(num_sms, cdiv(num_tiles, {k}))：程序数被封顶在 tile 数的几分之一（每 {k} 个 tile 一个）；"
        "tile 少于 SM 时每个 tile 都该有自己的程序，常驻的网格只受 SM 数和 tile 数限制",
        f"min(num_sms, cdiv(num_tiles, {k})): the grid capped at a fraction of the tiles (one program per {k}); "
        "where the tiles are fewer than the SMs each tile gets a program of its own, a persistent grid is capped by "
        "the SMs and the tiles alone",
    )
    for k in (2, 3, 4)
]


def grid_formula(t5):
    """(zh, en) naming what persistent_grid computes where it is one of GRID_FORMULAS at every probe, else ("", "")."""
    try:
        said = [t5.persistent_grid(t, s) for t, s in GRID_PROBES]
    except Exception:  # noqa: BLE001 - a function that fails on a probe is told by its own case
        return "", ""
    for formula, zh, en in GRID_FORMULAS:
        if said == [formula(t, s) for t, s in GRID_PROBES]:
            return (
                f"：你的 persistent_grid 在每个试探点上都返回 {zh}",
                f": at every probe your persistent_grid returns {en}",
            )
    return "", ""


LOOP_CASES = [  # (num_pid_m, num_pid_n, GROUP_M, programs, first_tile, k_blocks)
    (4, 3, 2, 3, 0, 4),
    (5, 5, 4, 3, 0, 2),
    (1, 7, 8, 2, 0, 3),
    (7, 1, 3, 5, 0, 1),
    (3, 3, 2, 9, 0, 2),  # one tile per program
    (6, 4, 4, 7, 5, 3),  # the first five tiles belong to stream-K
]


@pytest.mark.t5_1
@pytest.mark.parametrize("flatten", [False, True], ids=["plain", "flatten"])
@pytest.mark.case_words(id_zh={"plain": "不展平", "flatten": "展平（flatten）"})
def test_every_tile_once_over_many_grids(t5, probes, flatten):
    """Every tile exactly once, by program (tile - first_tile) % NUM_PROGS, in grouped order."""
    cases = LOOP_CASES + [  # and three random ones, from the test's seed
        tuple(int(x) for x in torch.randint(1, 8, (2,)))
        + (2 ** int(torch.randint(0, 3, (1,))), int(torch.randint(1, 12, (1,))), 0, int(torch.randint(1, 5, (1,))))
        for _ in range(3)
    ]
    # flatten changes how the loop compiles, not where it goes: half the cases, and the one with a
    # first_tile > 0, else a loop that ignores first_tile fails "every case with plain" and passes flatten
    cases = cases if not flatten else cases[::2] + [LOOP_CASES[-1]]
    for i, (num_pid_m, num_pid_n, group_m, progs, first, k_blocks) in enumerate(cases):
        tiles = num_pid_m * num_pid_n
        # K's last k-block 27 columns wide, or (every other case) 1: a count of tl.cdiv(K - 1, BLOCK_K) is one short
        K = 32 * k_blocks - (31 if i % 2 else 5)
        # rows for tile ids num_tiles .. 2 * num_tiles + progs - 1 too: a loop that runs past num_tiles
        # counts there (and not in memory beyond the trace, which the interpreter would crash on)
        trace = new_trace(2 * tiles + progs)
        probes.tile_loop_probe[(progs,)](trace, K, first, tiles, num_pid_m, num_pid_n, progs, 32, group_m, flatten)
        case = say(
            zh=f"{num_pid_m} x {num_pid_n} 个 tile，GROUP_M={group_m}，{progs} 个程序，first_tile={first}",
            en=f"{num_pid_m} x {num_pid_n} tiles, GROUP_M={group_m}, {progs} programs, first_tile={first}",
        )
        fail_if_chunked(trace_rows(trace), tiles, progs, first, case)
        fail_if_counted_from_first(trace_rows(trace), tiles, first, k_blocks, case)
        if k_blocks > 1 and all(r[:2] == (1, k_blocks - 1) for r in trace_rows(trace)[first:tiles]):

            def launch(a=(K, first, tiles, num_pid_m, num_pid_n, progs, 32, group_m, flatten)):  # the same again
                probes.tile_loop_probe[(a[5],)](new_trace(2 * a[2] + a[5]), *a)

            fail_if_k_blocks_from_one(t5, launch, k_blocks, case)
        check_trace(
            no_tile_past(trace_rows(trace), tiles, case),
            num_pid_m,
            num_pid_n,
            group_m,
            k_blocks,
            case,
            "2.2",
            owner=lambda t, f=first, p=progs: (t - f) % p,
            done=range(first, tiles),
            loop=(progs, first),
            floor=K // 32 if K // 32 != (K + 30) // 32 else None,  # a floor, where cdiv(K - 1, 32) differs from it
            K=K,
        )


def fail_if_counted_from_first(rows, tiles, first, k_blocks, case):
    """Fail where tiles first_tile .. num_tiles - 1 each had one epilogue and no k-blocks, and the k-blocks of the same
    number of tiles were counted from tile 0 on, k_blocks each: k_segment handed tile_id - first_tile (the trace
    counts a tile's k-blocks at the number k_segment is given), where finish_tile had tile_id (left37)."""
    if first == 0:
        return
    epilogues = [int(first <= t < tiles) for t in range(len(rows))]
    counted = [k_blocks * int(t < tiles - first) for t in range(len(rows))]
    if [r[0] for r in rows] != epilogues or [r[1] for r in rows] != counted:
        return
    fail(
        T5,
        f"{case}：tile {first}..{tiles - 1} 各做了一次收尾，k-block 却记在了 tile 0..{tiles - first - 1} 上"
        f"（每个 {k_blocks} 个）：k_segment 拿到的是 tile_id - first_tile；"
        "k_segment 和 finish_tile 都要拿 tile 自己的号 tile_id（trace 按它记账），first_tile 只是循环的起点",
        f"{case}: tiles {first}..{tiles - 1} had one epilogue each, yet their k-blocks were counted on tiles "
        f"0..{tiles - first - 1} ({k_blocks} each): k_segment was handed tile_id - first_tile; k_segment and "
        "finish_tile both take the tile's own number, tile_id (the trace counts by it), and first_tile is only where "
        "the loop starts",
        "2.2",
    )


def fail_if_chunked(rows, tiles, progs, first, case):
    """Fail where every tile was done once, but program p did a contiguous run of cdiv(num_tiles - first_tile,
    NUM_PROGS) tiles instead of first_tile + p, + NUM_PROGS, ...: the tiles running at one time are then far apart
    in the grouped order, so the L2 reuse of T4 §2 is lost (zhlearner15b's walk: only 'tile 1 finished by
    program 0' was said)."""
    per = -(-(tiles - first) // progs)
    chunked = [(t - first) // per for t in range(first, tiles)]
    if progs < 2 or chunked == [(t - first) % progs for t in range(first, tiles)]:
        return
    if [r[0] for r in rows[first:tiles]] != [1] * (tiles - first) or [r[2] for r in rows[first:tiles]] != chunked:
        return
    fail(
        T5,
        f"{case}：每个 tile 都做了一次，可程序 p 做的是连在一起的 {per} 个 tile（first_tile + p * {per} 起）："
        "同一时刻在跑的 tile 在分组顺序里隔得很远，T4 §2 的 L2 复用就没了；程序 p 依次做 first_tile + p、"
        "first_tile + p + NUM_PROGS……",
        f"{case}: every tile was done once, but program p did a run of {per} adjacent tiles (from first_tile + "
        f"p * {per}): the tiles running at one time are far apart in the grouped order, so T4 §2's L2 reuse is "
        "lost; program p does first_tile + p, first_tile + p + NUM_PROGS, ...",
        "2.2",
    )


@pytest.mark.t5_1
def test_a_program_does_several_tiles(probes):
    """3 programs, 12 tiles: each program finishes 4 tiles, not 1 (one tile per program is T4)."""
    trace = new_trace(2 * 12 + 3)  # guard rows past the 12 tiles, as in test_every_tile_once_over_many_grids
    probes.tile_loop_probe[(3,)](trace, 64, 0, 12, 4, 3, 3, 32, 2, False)
    case = say(zh="12 个 tile、3 个程序", en="12 tiles, 3 programs")
    rows = no_tile_past(trace_rows(trace), 12, case)
    epilogues_on_other_tiles(rows, range(12), 2, case, "2.2")  # K = 64 in k-blocks of 32
    per_program = [sum(1 for r in rows if r[0] and r[2] == p) for p in range(3)]
    missing = [t for t in range(12) if not rows[t][0]]
    if missing and missing == list(range(12 - len(missing), 12)) and sum(per_program) == 12 - len(missing):
        fail(  # only the last tiles left out: the loop stops early, its start and stride may be right
            T5,
            f"12 个 tile、3 个程序：tile {missing} 没有程序做，每个程序做了 {per_program} 个：循环要一直走到 "
            "num_tiles（不含）",
            f"12 tiles, 3 programs: no program did tile {missing}, the programs finished {per_program}: the loop "
            "runs up to num_tiles (exclusive)",
            "2.2",
        )
    if per_program != [4, 4, 4]:
        like = tile_loop_like([r[0] for r in rows[:12]], 3, 0)  # the one wrong loop whose epilogues these are
        fail(
            T5,
            f"12 个 tile、3 个程序：每个程序应当做 4 个 tile，实际是 {per_program}"
            + (f"；这正是一个从 {like[0]} 开始、步长 {like[1]} 的循环给每个 tile 的 epilogue 次数" if like else "")
            + "：循环从 first_tile + pid 开始，步长 NUM_PROGS",
            f"12 tiles, 3 programs: each program must finish 4 tiles, got {per_program}"
            + (
                f"; the epilogues per tile are the counts of a loop that starts at {like[0]} and steps by {like[1]}"
                if like
                else ""
            )
            + ": start the loop at first_tile + pid and step by NUM_PROGS",
            "2.2",
        )
    summed = sorted({rows[t][1] for t in range(12)})
    if summed != [2]:  # K = 64 is two whole k-blocks of 32, a K the other cases of the loop never have
        fail(
            T5,
            f"12 个 tile、3 个程序，K = 64、k-block 宽 32：tile 算的 k-block 数是 {summed}，应当都是 2"
            + (
                "：K 正好是整数个 k-block 时，K // BLOCK_K + 1 多数了一个；k_blocks = tl.cdiv(K, BLOCK_K)"
                if summed == [3]
                else ""
            ),
            f"12 tiles, 3 programs, K = 64 in k-blocks of 32: the tiles summed {summed} k-blocks, 2 each expected"
            + (
                "; where K is a whole number of k-blocks, K // BLOCK_K + 1 counts one past them: k_blocks = "
                "tl.cdiv(K, BLOCK_K)"
                if summed == [3]
                else ""
            ),
            "2.2",
        )


@pytest.mark.t5_1
def test_the_tile_loop_passes_flatten_on(t5):
    """FLATTEN reaches the tile loop's tl.range as flatten=FLATTEN (§2.2; most of the H200's tuned
    configs set it).  The interpreter ignores it, so it is read from the kernel's Triton IR: with
    FLATTEN=True exactly one loop carries tt.flatten, with FLATTEN=False none."""
    found = flattened_loops()
    for flatten, (kind, said) in found.items():
        if kind == "stub":
            pytest.fail(stub_report(said), pytrace=False)
        if kind == "error":
            fail(
                T5,
                f"用 FLATTEN={flatten} 生成 t5_kernel 的 Triton IR 时出错：{said}",
                f"making t5_kernel's Triton IR with FLATTEN={flatten} failed: {said}",
                "2.2",
            )
    off, on = found[False][1], found[True][1]
    if on != 1 or off != 0:
        fail(
            T5,
            f"FLATTEN=True 时 IR 里有 {on} 个带 flatten 的循环，FLATTEN=False 时有 {off} 个，应当是 1 个和 0 个："
            "tile 循环写成 tl.range(..., flatten=FLATTEN)，把 FLATTEN 原样传下去"
            + ("（现在没有传：解释器不管 flatten，别的检查看不出来）" if on == 0 and off == 0 else ""),
            f"with FLATTEN=True {on} {agree(on, 'loop', 'loops')} of the IR {agree(on, 'carries', 'carry')} "
            f"flatten, with FLATTEN=False {off}; 1 and 0 expected: "
            "the tile loop is tl.range(..., flatten=FLATTEN), FLATTEN passed on as it is"
            + (
                " (it is not passed now: the interpreter ignores flatten, so no other check sees it)"
                if on == 0 and off == 0
                else ""
            ),
            "2.2",
        )
