"""T6.2: the tile schedule over ragged groups, and what its kernels read: their own tensors,
nothing before the offsets."""

import pytest
import torch
import triton

from course.i18n import cells, say
from course.messages import fail

from .accesses import Accesses, check_inside, offsets_after_poison
from .common import T6, TRACE_INTS
from .schedule_checks import check_schedule, past_total_words, run_schedule, spare_tile_ends
from .schedules import (
    expected_tiles,
    m_blocks_of_row_ends,
    one_grid_m,
    summed_ends_words,
    too_many_column_blocks,
    upper_bound,
)
from .tile_counts import check_tile_counts
from bounds import AddressWatch
from support import DEVICE

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T6.2 the tile schedule over ragged groups
# ================================================================================================
SCHEDULE_CASES = [  # (rows per expert, BLOCK_M, BLOCK_N, N, programs, GROUP_M)
    ([5, 0, 9], 4, 16, 32, 3, 2),  # §3's picture
    ([0, 0, 0, 7], 4, 16, 16, 2, 1),  # empty experts first
    ([0, 0, 0], 4, 16, 48, 3, 2),  # nothing at all
    ([33], 16, 16, 40, 3, 4),  # every row on one expert; N not a multiple of BLOCK_N
    ([1], 16, 16, 16, 3, 1),  # one row
    ([16, 32, 0, 48, 0], 16, 16, 32, 5, 2),  # multiples of BLOCK_M
    ([3, 17, 1, 0, 30, 2, 0, 5, 12], 8, 16, 24, 4, 2),
]


@pytest.mark.t6_2
def test_tile_counts_and_places_alone(probes):
    """expert_tile_counts and locate_tile, without the loop: each global tile's expert, and every
    tile of an expert exactly once."""
    # 8: a multiple of BLOCK_M; 12: more m-blocks than blocks along N, so that locate_tile's places with pid_m
    # and pid_n swapped are never every tile once where they are not swapped
    counts, bm, bn, n = [5, 0, 8, 1, 12, 0], 4, 16, 32
    num_pid_n = triton.cdiv(n, bn)
    want_m = [triton.cdiv(c, bm) for c in counts]
    want_ends = torch.tensor(want_m).mul(num_pid_n).cumsum(0).tolist()
    tiles = want_ends[-1]
    cnt = torch.tensor(counts, dtype=torch.int32, device=DEVICE)
    e_block = probes.e_block(len(counts))
    found = torch.full((3 * tiles + len(counts) + e_block,), -1, dtype=torch.int32, device=DEVICE)
    probes.locate_probe[(tiles,)](cnt, found, len(counts), num_pid_n, bm, 2, e_block)
    found = found.cpu().tolist()
    m_blocks, ends = found[3 * tiles : 3 * tiles + len(counts)], found[3 * tiles + len(counts) :]
    ends, spare = ends[: len(counts)], ends[len(counts) :]  # spare: tile_ends' lanes past the experts
    case = say(
        zh=f"每个专家的行数 {counts}，BLOCK_M={bm}，N 方向 {num_pid_n} 块",
        en=f"rows per expert {counts}, BLOCK_M={bm}, {num_pid_n} blocks along N",
    )
    check_tile_counts(case, counts, bm, num_pid_n, want_m, want_ends, m_blocks, ends, spare)
    want = expected_tiles(counts, bm, bn, n)
    places = [tuple(found[3 * t : 3 * t + 3]) for t in range(tiles)]
    turned = sorted((e, pn, pm) for e, pm, pn in places)  # each place with pid_m and pid_n the other way round
    if sorted(places) != sorted(want) and turned == sorted(want):
        t = next(t for t, place in enumerate(places) if place not in want)
        fail(
            T6,
            f"{case}：locate_tile 给出的位置不对（例如全局 tile {t} 得到 {places[t]}），可是把每个位置的 pid_m 和 "
            "pid_n 对调以后，正好是每个专家的每个 tile 各一次：pid_m 和 pid_n 反了。tile_coords(tile, num_pid_m, "
            "num_pid_n, GROUP_M) 先要 M 方向的块数（这个专家的 m_blocks），返回的是 (pid_m, pid_n)",
            f"{case}: locate_tile's places are wrong (global tile {t} got {places[t]}, for one), yet with pid_m and "
            "pid_n swapped in each they are every tile of every expert once: pid_m and pid_n come out the other way "
            "round.  tile_coords(tile, num_pid_m, num_pid_n, GROUP_M) takes the blocks along M (the expert's "
            "m_blocks) first, and returns (pid_m, pid_n)",
            "3.3",
        )
    owners = [sum(end <= t for end in want_ends) for t in range(tiles)]
    local = [t - want_ends[e] + want_m[e] * num_pid_n for t, e in enumerate(owners)]  # its index in its expert
    big = max(range(len(counts)), key=lambda e: want_m[e])
    of_big = {local[t]: place[1:] for t, place in enumerate(places) if owners[t] == big}
    if (
        sorted(places) != sorted(want)
        and [p[0] for p in places] == owners
        and sorted(p for p in places if p[0] == big) == sorted(p for p in want if p[0] == big)
        and all(of_big.get(local[t]) == place[1:] for t, place in enumerate(places))
    ):
        fail(
            T6,
            f"{case}：每个专家的第 i 个 tile 都得到了最大的专家（{big}，{want_m[big]} 个 m 块）的第 i 个 tile 的位置，"
            f"小的专家因此落到了自己的块之外：给 tile_coords 的是最大的 m_blocks，而不是这个专家自己的 "
            "m_blocks[e]",
            f"{case}: each expert's tile i got the place the largest expert's tile i got (expert {big}, "
            f"{want_m[big]} m-blocks), so a smaller expert's tiles fell outside its blocks: tile_coords was given the "
            "largest m_blocks, not the expert's own, m_blocks[e]",
            "3.3",
        )
    grid_m = one_grid_m(places, local, want_m, num_pid_n, 2) if [p[0] for p in places] == owners else None
    if sorted(places) != sorted(want) and grid_m is not None:
        total = "，正是所有专家的 m 块数之和" if grid_m == sum(want_m) else ""
        fail(
            T6,
            f"{case}：每个专家的第 i 个 tile 得到的位置，正是 T4 的分组顺序在 {grid_m} 个 m 块的网格里给序号 i 的位置"
            f"{total}：给 tile_coords 的是所有专家共用的一个块数，而不是这个专家自己的 m_blocks[e]",
            f"{case}: each expert's tile i got the place T4's grouped order gives index i in a grid of {grid_m} "
            "m-blocks"
            + (", all the experts' m-blocks together" if grid_m == sum(want_m) else "")
            + ": tile_coords was given one block count for every expert, not the expert's own, m_blocks[e]",
            "3.3",
        )
    for t, (e, pm, pn) in enumerate(places):  # the right expert, a place outside its blocks
        owner = owners[t]
        if e == owner and (pm < 0 or pn < 0):
            fail(
                T6,
                f"{case}：全局 tile {t} 属于专家 {e}，locate_tile 给出的位置 (pid_m={pm}, pid_n={pn}) 小于 0，"
                "这是序号小于 0 时 tile_coords 给出的，所以它拿到的是这些以外的序号："
                "从 tile_id 减去的第一个 tile 比这个 tile 还靠后；专家 "
                f"{e} 的第一个 tile 是 tile_ends[e] - m_blocks[e] * num_pid_n = {t - local[t]}，"
                "即它前面各专家按各自的 m 块数算出的 tile 之和",
                f"{case}: global tile {t} is expert {e}'s, yet locate_tile gave it (pid_m={pm}, pid_n={pn}), below 0, "
                "as tile_coords gives for an index below 0, so it was given an index outside them: the first tile "
                "taken off tile_id lies past this tile; "
                f"expert {e}'s first tile is tile_ends[e] - m_blocks[e] * num_pid_n = {t - local[t]}, the tiles of "
                "the experts before it, each by its own m-blocks",
                "3.3",
            )
        if e == owner and not (0 <= pm < want_m[e] and 0 <= pn < num_pid_n):
            fail(
                T6,
                f"{case}：全局 tile {t} 属于专家 {e}，locate_tile 给出的位置 (pid_m={pm}, pid_n={pn}) 却在它的 "
                f"{want_m[e]} x {num_pid_n} 个块之外：tile_coords 把 0 .. m_blocks[e] * num_pid_n - 1 的每个序号都放在"
                "给它的块里，所以它拿到的是这些以外的序号（tile 在专家内的序号是 tile_id 减去专家的第一个 tile，"
                "tile_ends[e] - m_blocks[e] * num_pid_n），或者不是这个专家的块数",
                f"{case}: global tile {t} is expert {e}'s, yet locate_tile gave it (pid_m={pm}, pid_n={pn}), outside "
                f"the expert's {want_m[e]} x {num_pid_n} blocks: tile_coords places each index 0 .. m_blocks[e] * "
                "num_pid_n - 1 inside the blocks it is given, so it was given an index outside them (a tile's index "
                "within its expert is tile_id minus the expert's first tile, tile_ends[e] - m_blocks[e] * num_pid_n), "
                "or block counts other than the expert's",
                "3.3",
            )
        if e != owner or (e, pm, pn) not in want:
            low = [v for v in spare if v < tiles]  # below the total: an end that tile ids can pass
            empty = not low and 0 <= e < len(counts) and counts[e] == 0  # an expert with no tiles at all
            # each tile's expert the count of the ends strictly below it: an expert's first tile goes to the one before
            strict = not low and [p[0] for p in places] == [sum(end < g for end in want_ends) for g in range(tiles)]
            fail(
                T6,
                f"{case}：全局 tile {t} 属于专家 {owner}，locate_tile 给出 (专家 {e}, pid_m={pm}, pid_n={pn})"
                + (
                    f"；expert_tile_counts 的 tile_ends 在专家之后的 lane（E_BLOCK 多出来的）是 {spare}，"
                    f"不是 docstring 要的总数 {tiles}：数\"不超过 tile 号的结尾有几个\"的 locate_tile 会把它们也数进去"
                    if low
                    else ""
                )
                + (
                    f"；专家 {e} 没有行，一个 tile 也没有（它的 tile_ends 和前一个专家的相同）："
                    "tile 属于 tile_ends 大于它的第一个专家，空专家永远不是"
                    if empty
                    else ""
                )
                + (
                    "；每个 tile 的专家号都正好是 tile_ends 里严格小于 tile 号的个数：一个专家的第一个 tile 号等于"
                    "前一个专家的 tile_ends，于是被算给了前一个专家；专家号要数不大于 tile 号的那些"
                    "（tile_ends <= tile_id）"
                    if strict
                    else ""
                ),
                f"{case}: global tile {t} is expert {owner}'s; locate_tile gave (expert {e}, pid_m={pm}, pid_n={pn})"
                + (
                    f"; expert_tile_counts' tile_ends hold {spare} in the lanes past the experts (E_BLOCK's spare "
                    f"ones), not the total {tiles} the docstring asks for: a locate_tile that counts the ends not "
                    "above the tile id counts these too"
                    if low
                    else ""
                )
                + (
                    f"; expert {e} has no rows, so no tiles at all (its tile_ends equal the expert's before it): "
                    "a tile is the first expert's whose tile_ends is above the tile id, never an empty expert's"
                    if empty
                    else ""
                )
                + (
                    "; each tile's expert is exactly the count of tile_ends strictly below the tile id: an expert's "
                    "first tile id equals the tile_ends of the expert before it, so it went to that expert; count the "
                    "ends not above the tile id (tile_ends <= tile_id)"
                    if strict
                    else ""
                ),
                "3.3",
            )
    if len(set(places)) != len(places):
        fail(
            T6,
            f"{case}：locate_tile 把两个全局 tile 放到了同一个位置：{places}",
            f"{case}: locate_tile put two global tiles at one place: {places}",
            "3.3",
        )


@pytest.mark.t6_2
def test_every_tile_of_every_expert_once(probes, monkeypatch):
    """Over many distributions: each tile of each expert exactly once, by program tile % programs,
    on its expert's rows only; no tile id past the total touched.  On the interpreter the addresses
    are watched: a loop far past the total would write past the trace and crash the run."""
    cases = SCHEDULE_CASES + [  # and two random ones, from the test's seed
        ([int(c) for c in torch.randint(0, 20, (int(torch.randint(1, 9, (1,))),))], 8, 16, 32, 3, 2) for _ in range(2)
    ]
    accesses = Accesses()  # a read outside (offsets[num_experts], say) is named before the rows it gave
    watch = AddressWatch(probes, monkeypatch, ("schedule_probe",), seen=accesses)
    for counts, bm, bn, n, progs, group_m in cases:
        accesses.log.clear()
        accesses.kernels.clear()
        traces = []
        rows, offs = run_schedule(probes, counts, bm, bn, n, progs, group_m, traces)
        case = say(
            zh=f"每个专家的行数 {counts}，BLOCK_M={bm}，N={n}，BLOCK_N={bn}，{progs} 个程序",
            en=f"rows per expert {counts}, BLOCK_M={bm}, N={n}, BLOCK_N={bn}, {progs} programs",
        )
        written = sum(lanes["write"] for lanes in watch.outside.values())
        wide = too_many_column_blocks(rows, counts, n, bn, bm) if written else None  # the total grown with num_pid_n
        if wide:
            fail(T6, f"{case}：{wide[0]}", f"{case}: {wide[1]}", "3.3")
        ends = m_blocks_of_row_ends(rows, counts, bm, bn, n) if written else None  # the total grown with m_blocks
        if ends:
            fail(T6, f"{case}：{ends[0]}", f"{case}: {ends[1]}", "3.3")
        below = accesses.writes_before(traces[0]) if written else 0  # record-only: a tile id below 0
        if below:
            fail(
                T6,
                f"{case}：做了小于 0 的 tile 号（{below} 个单元写在了 trace 之前，这里拦下了）：循环的起点小于 0；"
                "程序 p 的第一个 tile 就是 p 本身，tl.program_id(0)，没有 tile 可做的程序根本不进循环",
                f"{case}: tile ids below 0 were done ({cells(below)} written before the trace; stopped here, not "
                "made): the loop started below 0; program p's first tile is p itself, tl.program_id(0), and a program "
                "with no tile to do never enters the loop",
                "3.4",
            )
        if written:  # record-only: the one store is the trace's, at the tile id, so the id was past the bound
            bound = upper_bound(counts, bm, bn, n)
            last = accesses.furthest_write(traces[0]) // TRACE_INTS  # the largest tile id done
            summed = summed_ends_words(last, counts, bm, bn, n, probes.e_block(len(counts)))
            fail(
                T6,
                f"{case}：一共只有 {len(expected_tiles(counts, bm, bn, n))} 个 tile，tile 号却超过了 §3.4 的上界 "
                f"{bound}（trace 只给这么多 tile 留了位置，{written} 个单元写到了它外面，这里拦下了）"
                + (summed[0] or "：循环要停在设备上读出的总数"),
                f"{case}: there are {len(expected_tiles(counts, bm, bn, n))} tiles, yet tile ids past §3.4's bound "
                f"{bound} were done ({cells(written)} written past the trace, which has room for that many tiles; "
                "stopped here, not made)" + (summed[1] or ": the loop must stop at the total read on the device"),
                "3.4",
            )
        # a read outside the tensors, every tile done below the total (tiles past it read past the offsets too,
        # and check_schedule names them): the rows such a read gave are no expert's
        past = any(row[0] for row in rows[len(expected_tiles(counts, bm, bn, n)) :])
        if any(lanes["read"] for lanes in watch.outside.values()) and not past:
            check_inside(
                watch,
                accesses,
                offs,
                case,
                say(zh="只记录模式下的 grouped_tiles", en="grouped_tiles (record-only)"),
                "3.2",
            )
        check_schedule(probes, rows, counts, bm, bn, n, progs, case)


@pytest.mark.t6_2
def test_schedule_reads_only_counts_and_offsets(probes, monkeypatch):
    """grouped_tiles, record-only, reads counts and offsets and writes the trace, nothing else: on
    the interpreter each access is watched; the offsets follow poison, which a GPU would read."""
    accesses = Accesses()
    watch = AddressWatch(probes, monkeypatch, ("schedule_probe",), seen=accesses)
    for counts, bm, bn, n, progs, group_m in (SCHEDULE_CASES[0], SCHEDULE_CASES[-1]):
        cnt = torch.tensor(counts, dtype=torch.int32, device=DEVICE)
        offs = offsets_after_poison(cnt.cumsum(0).int())
        trace = torch.zeros(upper_bound(counts, bm, bn, n) * TRACE_INTS, dtype=torch.int32, device=DEVICE)
        accesses.log.clear()
        probes.schedule_probe[(progs,)](
            cnt, offs, trace, n, len(counts), progs, 1, bm, bn, group_m, probes.e_block(len(counts))
        )
        case = say(
            zh=f"每个专家的行数 {counts}，BLOCK_M={bm}，N={n}，BLOCK_N={bn}，{progs} 个程序",
            en=f"rows per expert {counts}, BLOCK_M={bm}, N={n}, BLOCK_N={bn}, {progs} programs",
        )
        spare = probes.e_block(len(counts)) - len(counts)  # lanes of E_BLOCK past the experts
        if watch.outside and spare and accesses.reads_just_after(cnt, spare):
            fail(
                T6,
                f"{case}：只记录模式下的 grouped_tiles 读了 counts 末尾之后的单元（这里拦下了，没有真的读）："
                f"counts 只有 {len(counts)} 个单元，E_BLOCK 里多出来的 lane 要用 num_experts 遮掉（它们算 0）",
                f"{case}: grouped_tiles (record-only) read cells just past the end of counts (stopped here, not "
                f"made): counts has {cells(len(counts))}, and the lanes of E_BLOCK past num_experts are masked off "
                "(they count 0)",
                "3.3",
            )
        rows = [tuple(r) for r in trace.view(-1, TRACE_INTS).cpu().tolist()]
        total = len(expected_tiles(counts, bm, bn, n))
        past = [tile for tile, row in enumerate(rows) if tile >= total and row[0]]
        if past or accesses.writes_past_end(trace):  # before the reads: a tile past the total has no expert
            zh, en, named = past_total_words(total, spare_tile_ends(probes, counts, bm, bn, n), counts, bm)
            fail(
                T6,
                f"{case}：一共只有 {total} 个 tile，比它大的 tile 号却也被做了"
                + (f"（例如 {past[0]}）" if past else "（写到了 trace 之后，这里拦下了）")
                + "：这样的 tile 不属于任何专家"
                + zh.replace("：", "；", 1),
                f"{case}: there are {total} tiles, yet tile ids past them were done too"
                + (f" ({past[0]}, for one)" if past else " (written past the trace; stopped here, not made)")
                + ": such a tile belongs to no expert"
                + en.replace(": ", "; ", 1),
                "3.3" if named else "3.4",
            )
        check_inside(
            watch, accesses, offs, case, say(zh="只记录模式下的 grouped_tiles", en="grouped_tiles (record-only)"), "3.2"
        )
        check_schedule(probes, rows, counts, bm, bn, n, progs, case)
