"""T6.2: the tile schedule over ragged groups, and what its kernels read: their own tensors,
nothing before the offsets."""

import pytest
import torch
import triton

from course.i18n import agree, cells, count, say
from course.messages import fail

from .accesses import Accesses, check_inside, offsets_after_poison
from .common import T6, TRACE_INTS
from .schedules import (
    expected_tiles,
    m_blocks_of_row_ends,
    padded_start,
    runs_per_program,
    too_many_column_blocks,
    upper_bound,
)
from .stray import UNDEFINED_INT
from bounds import AddressWatch
from support import DEVICE, loop_like

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


def spare_tile_ends(probes, counts, bm, bn, n):
    """expert_tile_counts' tile_ends in E_BLOCK's lanes past the experts (each the total, its docstring says),
    as locate_probe writes them: where a schedule ran past the total, its bound may have come from there."""
    cnt, e_block = torch.tensor(counts, dtype=torch.int32, device=DEVICE), probes.e_block(len(counts))
    found = torch.full((3 + len(counts) + e_block,), -1, dtype=torch.int32, device=DEVICE)
    probes.locate_probe[(1,)](cnt, found, len(counts), triton.cdiv(n, bn), bm, 2, e_block)
    return found[3 + 2 * len(counts) :].cpu().tolist()


def past_total_words(total, spare):
    """(zh, en, named) for tile ids done past the `total`: the spare lanes named (named true) where they are
    not the total (the bound tl.max(tile_ends) passes it then), else the rule the loop breaks."""
    if any(v != total for v in spare):
        return (
            f"：expert_tile_counts 的 tile_ends 在专家之后的 lane 是 {spare}，不是总数 {total}，"
            "循环的上界 tl.max(tile_ends) 就越过了真正的 tile 数：counts 在 num_experts 之后的 lane 要算 0",
            f": expert_tile_counts' tile_ends hold {spare} in E_BLOCK's lanes past the experts, not the total "
            f"{total}, so the loop's bound, tl.max(tile_ends), passes the real tiles: counts' lanes past "
            "num_experts count 0",
            True,
        )
    return "：循环要停在设备上读出的总数", ": the loop must stop at the total read on the device", False


def run_schedule(probes, counts, bm, bn, n, progs, group_m):
    cnt = torch.tensor(counts, dtype=torch.int32, device=DEVICE)
    offs = cnt.cumsum(0).int()
    trace = torch.zeros(max(1, upper_bound(counts, bm, bn, n)) * TRACE_INTS, dtype=torch.int32, device=DEVICE)
    probes.schedule_probe[(progs,)](
        cnt, offs, trace, n, len(counts), progs, 1, bm, bn, group_m, probes.e_block(len(counts))
    )
    return [tuple(r) for r in trace.view(-1, TRACE_INTS).cpu().tolist()]


def check_schedule(probes, rows, counts, bm, bn, n, progs, case):
    want = expected_tiles(counts, bm, bn, n)
    total = len(want)
    seen = {}
    epilogues = [row[0] for row in rows[:total]]
    loop = (
        loop_like(epilogues, {"tl.program_id(0)": range(progs), "0": [0] * progs}, progs)
        if set(epilogues) != {1} and not any(r[0] for r in rows[total:])
        else None
    )
    if loop:
        shown = ", ".join(f"{t}: {e}" for t, e in enumerate(epilogues[:8]))
        fail(
            T6,
            f"{case}：每个 tile 的 epilogue 次数（tile {shown}）正是一个从 {loop[0]} 开始、步长 {loop[1]} 的循环"
            "会做出来的：程序 p 做的是 tile p、p + NUM_PROGS、p + 2 * NUM_PROGS……",
            f"{case}: the epilogues per tile (tile {shown}) are those of a loop from {loop[0]} in steps of "
            f"{loop[1]}: program p does tiles p, p + NUM_PROGS, p + 2 * NUM_PROGS, ...",
            "3.4",
        )
    runs = runs_per_program(rows[:total], progs)
    if runs:
        shown = ", ".join(f"{p}: {a}..{b}" for p, (a, b) in list(runs.items())[:4])
        fail(
            T6,
            f"{case}：每个程序做的是一段连续的 tile（程序 {shown}），不是隔 NUM_PROGS 取一个："
            "程序 p 做的是 tile p、p + NUM_PROGS、p + 2 * NUM_PROGS……",
            f"{case}: each program did one contiguous run of tiles (program {shown}), not every NUM_PROGS-th tile: "
            "program p does tiles p, p + NUM_PROGS, p + 2 * NUM_PROGS, ...",
            "3.4",
        )
    for tile, (epilogues, e, pm, pn, begin, end, prog) in enumerate(rows):
        if tile >= total:
            if epilogues:
                zh, en, named = past_total_words(total, spare_tile_ends(probes, counts, bm, bn, n))
                fail(
                    T6,
                    f"{case}：一共只有 {total} 个 tile，tile 号 {tile} 却也被做了" + zh,
                    f"{case}: there are {total} tiles, yet tile id {tile} was done too" + en,
                    "3.3" if named else "3.4",
                )
            continue
        if epilogues == 0:
            # Whose fault: a tile after this one was done (the bound reaches past it), or none was.
            later = next((t for t in range(tile + 1, total) if rows[t][0]), None)
            if later is not None:
                fail(
                    T6,
                    f"{case}：tile {tile} 的 epilogue 跑了 0 次，应当恰好 1 次，而它后面的 tile {later} 做了："
                    "tile 总数和循环的上界都够得着它，所以是循环的起点或步长跳过了它：程序 p 做的是 tile p、"
                    "p + NUM_PROGS、p + 2 * NUM_PROGS……",
                    f"{case}: tile {tile} had 0 epilogues, exactly 1 expected, yet tile {later} after it was done: the "
                    "tile count and the loop's bound reach past it, so the loop's start or step skips it: program p "
                    "does tiles p, p + NUM_PROGS, p + 2 * NUM_PROGS, ...",
                    "3.4",
                )
            # Too few column blocks: the tiles done are exactly those of fewer blocks along N than N needs
            n_blocks, done_n = -(-n // bn), {rows[t][3] for t in range(total) if rows[t][0]}
            done = sum(1 for t in range(total) if rows[t][0])
            fewer = bool(done_n) and max(done_n) + 1 < n_blocks
            if fewer and done == sum(-(-int(c) // bm) for c in counts) * (max(done_n) + 1):
                fail(
                    T6,
                    f"{case}：tile {tile} 的 epilogue 跑了 0 次，它后面的 tile 也都没人做；做了的 tile 的 pid_n 最大是 "
                    f"{max(done_n)}，而 N = {n} 要 cdiv(N, BLOCK_N) = {n_blocks} 个列块：num_pid_n 少算了"
                    "（比如 N // BLOCK_N），每个专家的 tile 就少了，总数也跟着少了",
                    f"{case}: tile {tile} had 0 epilogues, and no tile after it was done either; the tiles done have "
                    f"pid_n up to {max(done_n)}, where N = {n} needs cdiv(N, BLOCK_N) = {n_blocks} column blocks: "
                    "num_pid_n came out too small (N // BLOCK_N, say), and with it each expert's tiles and the total",
                    "3.3",
                )
            fail(
                T6,
                f"{case}：tile {tile} 的 epilogue 跑了 0 次，应当恰好 1 次，它后面的 tile 也都没人做：循环在它之前"
                "就停了，比如 tile 总数（§3.3）或循环的上界（§3.4）太小",
                f"{case}: tile {tile} had 0 epilogues, exactly 1 expected, and no tile after it was done either: the "
                "loop stops before it, with a tile count (§3.3) or a loop bound (§3.4) too small, say",
                "3.3",
                "3.4",
            )
        if epilogues != 1:
            fail(
                T6,
                f"{case}：tile {tile} 的 epilogue 跑了 {epilogues} 次，应当恰好 1 次",
                f"{case}: tile {tile} had {epilogues} epilogues, exactly 1 expected",
                "3.4",
            )
        if prog != tile % progs:
            fail(
                T6,
                f"{case}：tile {tile} 由程序 {prog} 做了，{progs} 个常驻程序里应当是程序 {tile % progs}",
                f"{case}: tile {tile} was done by program {prog}; of {progs} persistent programs, program "
                f"{tile % progs} should",
                "3.4",
            )
        key = (e, pm, pn)
        if key not in want:
            fail(
                T6,
                f"{case}：tile {tile} 被放在专家 {e} 的 (pid_m={pm}, pid_n={pn})，这个专家没有这个 tile",
                f"{case}: tile {tile} was placed at expert {e}, (pid_m={pm}, pid_n={pn}), which that expert does "
                "not have",
                "3.3",
            )
        if key in seen:
            fail(
                T6,
                f"{case}：tile {seen[key]} 和 tile {tile} 做的是同一个 (专家 {e}, pid_m={pm}, pid_n={pn})",
                f"{case}: tiles {seen[key]} and {tile} both did (expert {e}, pid_m={pm}, pid_n={pn})",
                "3.3",
            )
        seen[key] = tile
        if begin == want[key][0] and end > begin + bm:
            fail(
                T6,
                f"{case}：专家 {e} 的 tile (pid_m={pm}) 从排好序的第 {begin} 行开始，这没错，但它的 row_end 是 {end}，"
                f"超过了 row_begin + BLOCK_M = {begin + bm}：传给 finish_tile 的 row_end 最多是 row_begin + BLOCK_M"
                "（一个 tile 至多 BLOCK_M 行；专家先结束时就是专家的末行）",
                f"{case}: expert {e}'s tile (pid_m={pm}) starts at sorted row {begin}, as it should, but its row_end "
                f"is {end}, past row_begin + BLOCK_M = {begin + bm}: the row_end passed to finish_tile must be at most "
                "row_begin + BLOCK_M (a tile has at most BLOCK_M rows; the expert's end where that comes first)",
                "3.2",
            )
        if (begin, end) != want[key]:
            a, b = want[key]
            mixes = end > b and any(b <= s < end for s in (sum(counts[: x + 1]) for x in range(len(counts))))
            pad_zh, pad_en = ("", "") if mixes else padded_start(counts, e, pm, bm, begin, a)
            fail(
                T6,
                f"{case}：专家 {e} 的 tile (pid_m={pm}) 算的是排好序的第 {begin}..{end - 1} 行，应当是 {a}..{b - 1}"
                + ("：它越过了这个专家的最后一行，混进了下一个专家的行" if mixes else pad_zh),
                f"{case}: expert {e}'s tile (pid_m={pm}) covers sorted rows {begin}..{end - 1}, rows {a}..{b - 1} "
                "expected" + (": it runs past the expert's last row into the next expert's" if mixes else pad_en),
                "3.2",
            )
    missing = sorted(set(want) - set(seen))
    if missing:
        fail(
            T6,
            f"{case}：{len(missing)} 个 tile 没人做，例如 (专家, pid_m, pid_n) = {missing[0]}",
            f"{case}: {count(len(missing), 'tile')} {agree(len(missing), 'was', 'were')} not done, "
            f"(expert, pid_m, pid_n) = {missing[0]} for one",
            "3.3",
        )


@pytest.mark.t6_2
def test_tile_counts_and_places_alone(probes):
    """expert_tile_counts and locate_tile, without the loop: each global tile's expert, and every
    tile of an expert exactly once."""
    counts, bm, bn, n = [5, 0, 9, 1, 0], 4, 16, 32
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
    if m_blocks != want_m or ends != want_ends:
        starts = m_blocks == want_m and ends == [end - m * num_pid_n for end, m in zip(want_ends, want_m, strict=True)]
        plus_one = m_blocks == [c // bm + 1 for c in counts]  # counts // BLOCK_M + 1: an m-block for the empty
        fail(
            T6,
            f"{case}：expert_tile_counts 应当给出 m_blocks {want_m}、tile_ends {want_ends}，得到 {m_blocks}、{ends}"
            + ("：这是每个专家的第一个 tile（不含自身的前缀和），不是 tile 的结尾" if starts else "")
            + (
                "：m_blocks 正是 counts // BLOCK_M + 1，没有行的专家也多了一个 M 块；要 cdiv(counts, BLOCK_M)"
                if plus_one
                else ""
            ),
            f"{case}: expert_tile_counts should give m_blocks {want_m} and tile_ends {want_ends}, got {m_blocks} "
            f"and {ends}"
            + (": these are each expert's first tile (an exclusive sum), not the ends" if starts else "")
            + (
                ": m_blocks is counts // BLOCK_M + 1, an m-block even for an expert with no rows; it is "
                "cdiv(counts, BLOCK_M)"
                if plus_one
                else ""
            ),
            "3.3",
        )
    # the spare lanes as counts' load leaves them where it has a mask and no other=0 (stray.py's UNDEFINED_INT)
    undefined = [tiles + (i + 1) * triton.cdiv(UNDEFINED_INT, bm) * num_pid_n for i in range(len(spare))]
    if spare and spare == undefined:
        fail(
            T6,
            f"{case}：expert_tile_counts 的 tile_ends 在专家之后的 lane 是 {spare}，不是总数 {tiles}：这些 lane 各算了 "
            f"{UNDEFINED_INT} 行，正是 T6 的测试在没有 other= 的掩码加载处读到的值。加载 counts 时给 other=0"
            "（不给时这些 lane 在 GPU 上是未定义的），不然总数 tl.max(tile_ends) 会超出真正的 tile 数",
            f"{case}: expert_tile_counts' tile_ends hold {spare} in the lanes past the experts, not the total {tiles}: "
            f"those lanes counted {UNDEFINED_INT} rows each, which is what the T6 tests read where a masked load has "
            "no other=.  Load counts with other=0 (without it those lanes are undefined on a GPU), or the total, "
            "tl.max(tile_ends), runs past the real tiles",
            "3.3",
        )
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
    for t, (e, pm, pn) in enumerate(places):
        owner = sum(end <= t for end in want_ends)
        if e != owner or (e, pm, pn) not in want:
            low = [v for v in spare if v < tiles]  # below the total: an end that tile ids can pass
            fail(
                T6,
                f"{case}：全局 tile {t} 属于专家 {owner}，locate_tile 给出 (专家 {e}, pid_m={pm}, pid_n={pn})"
                + (
                    f"；expert_tile_counts 的 tile_ends 在专家之后的 lane（E_BLOCK 多出来的）是 {spare}，"
                    f"不是 docstring 要的总数 {tiles}：数\"不超过 tile 号的结尾有几个\"的 locate_tile 会把它们也数进去"
                    if low
                    else ""
                ),
                f"{case}: global tile {t} is expert {owner}'s; locate_tile gave (expert {e}, pid_m={pm}, pid_n={pn})"
                + (
                    f"; expert_tile_counts' tile_ends hold {spare} in the lanes past the experts (E_BLOCK's spare "
                    f"ones), not the total {tiles} the docstring asks for: a locate_tile that counts the ends not "
                    "above the tile id counts these too"
                    if low
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
    watch = AddressWatch(probes, monkeypatch, ("schedule_probe",))  # reads: test_schedule_reads_only_...
    for counts, bm, bn, n, progs, group_m in cases:
        rows = run_schedule(probes, counts, bm, bn, n, progs, group_m)
        case = say(
            zh=f"每个专家的行数 {counts}，BLOCK_M={bm}，N={n}，BLOCK_N={bn}，{progs} 个程序",
            en=f"rows per expert {counts}, BLOCK_M={bm}, N={n}, BLOCK_N={bn}, {progs} programs",
        )
        written = sum(lanes["write"] for lanes in watch.outside.values())
        wide = too_many_column_blocks(rows, n, bn) if written else None  # the total grown with num_pid_n
        if wide:
            fail(T6, f"{case}：{wide[0]}", f"{case}: {wide[1]}", "3.3")
        ends = m_blocks_of_row_ends(rows, counts, bm, bn, n) if written else None  # the total grown with m_blocks
        if ends:
            fail(T6, f"{case}：{ends[0]}", f"{case}: {ends[1]}", "3.3")
        if written:  # record-only: the one store is the trace's, at the tile id, so the id was past the bound
            bound = upper_bound(counts, bm, bn, n)
            fail(
                T6,
                f"{case}：一共只有 {len(expected_tiles(counts, bm, bn, n))} 个 tile，tile 号却超过了 §3.4 的上界 "
                f"{bound}（trace 只给这么多 tile 留了位置，{written} 个单元写到了它外面，这里拦下了）："
                "循环要停在设备上读出的总数",
                f"{case}: there are {len(expected_tiles(counts, bm, bn, n))} tiles, yet tile ids past §3.4's bound "
                f"{bound} were done ({cells(written)} written past the trace, which has room for that many tiles; "
                "stopped here, not made): the loop must stop at the total read on the device",
                "3.4",
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
            zh, en, named = past_total_words(total, spare_tile_ends(probes, counts, bm, bn, n))
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
