"""The tile schedule's checks that T6.2's tests share (test_tile_schedule.py): a schedule run through the
probe in record-only mode, and its trace against the tiles the counts give, each wrong pattern named."""

from collections import Counter

import torch
import triton

from course.i18n import agree, count
from course.messages import fail

from . import schedules
from .common import T6, TRACE_INTS
from .schedules import expected_tiles, padded_start, rows_words, runs_per_program, upper_bound
from support import DEVICE, loop_like


def spare_tile_ends(probes, counts, bm, bn, n):
    """(m_blocks of the experts, tile_ends in E_BLOCK's lanes past the experts (each the total, its docstring
    says)), as locate_probe writes them: where a schedule ran past the total, its bound may have come from there."""
    cnt, e_block = torch.tensor(counts, dtype=torch.int32, device=DEVICE), probes.e_block(len(counts))
    found = torch.full((3 + len(counts) + e_block,), -1, dtype=torch.int32, device=DEVICE)
    probes.locate_probe[(1,)](cnt, found, len(counts), triton.cdiv(n, bn), bm, 2, e_block)
    found = found.cpu().tolist()
    return found[3 : 3 + len(counts)], found[3 + 2 * len(counts) :]


def one_grid_words(counts, bm, num_pid_n, m_blocks, ends):
    """(zh, en) suffixes when m_blocks (and tile_ends from them) are those of one BLOCK_M grid laid across every
    expert's sorted rows: expert e's blocks are those of that grid its rows touch, cdiv(end, BLOCK_M) -
    start // BLOCK_M (0 for an expert with no rows); else ("", "")."""
    ends_rows = torch.tensor(counts).cumsum(0).tolist()
    grid = [-(-end // bm) - (end - c) // bm if c else 0 for c, end in zip(counts, ends_rows, strict=True)]
    if (
        m_blocks == [-(-c // bm) for c in counts]
        or m_blocks != grid
        or ends != torch.tensor(m_blocks).mul(num_pid_n).cumsum(0).tolist()
    ):
        return "", ""
    return (
        "：m_blocks 正是一张横跨所有专家的 BLOCK_M 网格上、各专家的行碰到的块数"
        "（cdiv(行尾, BLOCK_M) - 行首 // BLOCK_M）：每个专家的 M 块没有从它自己的第一行重新开始；"
        "要 cdiv(counts, BLOCK_M)，tile 从 offsets[e] - counts[e] 起",
        ": m_blocks are the blocks each expert's rows touch on one BLOCK_M grid laid across all the sorted rows "
        "(cdiv(row end, BLOCK_M) - first row // BLOCK_M): the m-blocks do not start afresh at each expert's first "
        "row; it is cdiv(counts, BLOCK_M), tiles starting at offsets[e] - counts[e]",
    )


def past_total_words(total, found, counts, bm):
    """(zh, en, named) for tile ids done past the `total`, found = spare_tile_ends(...): where the experts'
    m_blocks are right, the spare lanes named (named true) when they are not the total (the bound
    tl.max(tile_ends) passes it then); where m_blocks are counts // BLOCK_M + 1, that; else the rule the loop
    breaks."""
    m_blocks, spare = found
    want_m = [triton.cdiv(c, bm) for c in counts]
    if m_blocks != want_m and m_blocks == [c // bm + 1 for c in counts] and any(v != total for v in spare):
        return (
            f"：expert_tile_counts 的 m_blocks 是 {m_blocks}，正是 counts // BLOCK_M + 1：每个计数为 0 的 lane 都多了"
            f"一个 M 块，没有行的专家是这样，E_BLOCK 里专家之后的 lane 也是（tile_ends 在那里是 {spare}，不是总数 "
            f"{total}，循环的上界 tl.max(tile_ends) 就越过了真正的 tile 数）；要 cdiv(counts, BLOCK_M)",
            f": expert_tile_counts' m_blocks, {m_blocks}, is counts // BLOCK_M + 1: an m-block for every lane whose "
            f"count is 0, the experts with no rows and E_BLOCK's lanes past the experts alike (tile_ends hold {spare} "
            f"there, not the total {total}, so the loop's bound, tl.max(tile_ends), passes the real tiles); it is "
            "cdiv(counts, BLOCK_M)",
            True,
        )
    if m_blocks == want_m and any(v != total for v in spare):
        return (
            f"：expert_tile_counts 的 tile_ends 在专家之后的 lane 是 {spare}，不是总数 {total}，"
            "循环的上界 tl.max(tile_ends) 就越过了真正的 tile 数：counts 在 num_experts 之后的 lane 要算 0",
            f": expert_tile_counts' tile_ends hold {spare} in E_BLOCK's lanes past the experts, not the total "
            f"{total}, so the loop's bound, tl.max(tile_ends), passes the real tiles: counts' lanes past "
            "num_experts count 0",
            True,
        )
    return "：循环要停在设备上读出的总数", ": the loop must stop at the total read on the device", False


def bound_words(rows, counts, bm, bn, n, total):
    """(zh, en) where the largest tile id done is one below the row count (offsets[num_experts - 1]) or §3.4's
    upper bound, the host's count for the programs, not the tile total (both named where they are equal); None
    otherwise."""
    last = max(t for t, r in enumerate(rows) if r[0])
    bound, rows_total = upper_bound(counts, bm, bn, n), sum(counts)
    if last + 1 not in (bound, rows_total) or last + 1 == total:
        return None
    if bound == rows_total:
        return (
            f"：做了的最大 tile 号是 {last}，正好比 {bound} 少 1；这个用例里 {bound} 既是总行数"
            "（offsets[num_experts - 1]），也是 §3.4 的上界，分不清循环的上界是哪一个；两个都不是 tile 总数："
            "循环要停在 tl.max(tile_ends)",
            f": the largest tile id done is {last}, one below {bound}, which here is both the row count "
            "(offsets[num_experts - 1]) and §3.4's upper bound, so this case cannot tell which the loop stopped at; "
            "neither is the tile total: the loop stops at tl.max(tile_ends)",
        )
    if last + 1 == rows_total:
        return (
            f"：做了的最大 tile 号是 {last}，正好比总行数 {rows_total}（offsets[num_experts - 1]）少 1：循环的上界是"
            "行数，不是 tile 数；tile 总数是 tl.max(tile_ends)",
            f": the largest tile id done is {last}, one below the row count {rows_total} (offsets[num_experts - 1]): "
            "the loop's bound was the rows, not the tiles; the tile total is tl.max(tile_ends)",
        )
    return (
        f"：做了的最大 tile 号是 {last}，正好比 §3.4 的上界 {bound} 少 1：那是主机用来定程序数的上界，"
        "不是 tile 总数；循环要停在设备上读出的 tl.max(tile_ends)",
        f": the largest tile id done is {last}, one below §3.4's upper bound {bound}: that bound sizes the grid on "
        "the host, and is not the tile total; the loop stops at tl.max(tile_ends), read on the device",
    )


def run_schedule(probes, counts, bm, bn, n, progs, group_m, traces=None):
    """(the trace's rows, the offsets) of a record-only run (traces: a list the trace itself is appended to)."""
    cnt = torch.tensor(counts, dtype=torch.int32, device=DEVICE)
    offs = cnt.cumsum(0).int()
    trace = torch.zeros(max(1, upper_bound(counts, bm, bn, n)) * TRACE_INTS, dtype=torch.int32, device=DEVICE)
    try:
        probes.schedule_probe[(progs,)](
            cnt, offs, trace, n, len(counts), progs, 1, bm, bn, group_m, probes.e_block(len(counts))
        )
    except Exception as e:  # noqa: BLE001 - told here where it shows TRACE lost, else raised as it is
        computed = sorted(computing_frames(e))
        if not computed:
            raise
        fail(
            T6,
            f"这次只记录、不计算（TRACE=2，指针都是假的），grouped_tiles 却让 tile 去算了乘积：{', '.join(computed)} "
            f"跑了起来，出错 {type(e).__name__}。TRACE=2 时 tile_product 不读不算：grouped_tiles 要把 TRACE 原样传给 "
            "tile_product 和 finish_tile",
            f"a record-only run (TRACE=2, every pointer a dummy), yet grouped_tiles had its tiles computed: "
            f"{', '.join(computed)} ran, and raised {type(e).__name__}. With TRACE=2 tile_product reads and computes "
            "nothing: grouped_tiles passes TRACE on to tile_product and finish_tile as it is",
            "3.4",
        )
    if traces is not None:
        traces.append(trace)
    return [tuple(r) for r in trace.view(-1, TRACE_INTS).cpu().tolist()], offs


COMPUTING = ("gathered_rows", "gathered_product", "gate_up_product", "swiglu", "store_rows")


def computing_frames(error):
    """The graded functions that compute a tile's product (COMPUTING) the error's traceback went through: none
    runs in a record-only run (TRACE=2)."""
    import traceback

    from course import seam
    from course.errors import error_chain

    return {
        f.name
        for link in error_chain(error, suppressed=True)
        for f in traceback.extract_tb(link.__traceback__)
        if f.name in COMPUTING and seam.graded_file(f.filename)
    }


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
    local = Counter(pm * -(-n // bn) + pn for _, pm, pn in want)  # each tile's index within its expert
    if len(local) < total and Counter({t: r[0] for t, r in enumerate(rows) if r[0]}) == local:
        fail(
            T6,
            f"{case}：trace 里各 tile 的 epilogue 次数正是按每个 tile 在它专家里的序号记下的"
            "（pid_m * num_pid_n + pid_n，或 tile_id 减去专家的第一个 tile）："
            "交给 finish_tile 的要是全局的 tile 号 tile_id",
            f"{case}: the epilogues in the trace are those of each tile recorded at its index within its expert "
            "(pid_m * num_pid_n + pid_n, or tile_id less the expert's first tile): finish_tile takes the global tile "
            "id, tile_id",
            "3.3",
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
    done_by = [row[6] for row in rows[:total]]
    if all(row[0] == 1 for row in rows[:total]) and total > 1 and done_by != [t % progs for t in range(total)]:
        if done_by == [(total - 1 - t) % progs for t in range(total)]:  # handed out from the last tile down
            fail(
                T6,
                f"{case}：每个 tile 都做了一次，可程序 p 做的是 tile {total - 1} - p、{total - 1} - p - NUM_PROGS……："
                "tile 是从最后一个往前分的；程序 p 做的是 tile p、p + NUM_PROGS、p + 2 * NUM_PROGS……，从小到大",
                f"{case}: every tile was done once, yet program p did tiles {total - 1} - p, {total - 1} - p - "
                "NUM_PROGS, ...: the tiles were handed out from the last one down; program p does tiles p, "
                "p + NUM_PROGS, p + 2 * NUM_PROGS, ..., upwards",
                "3.4",
            )
    for tile, (epilogues, e, pm, pn, begin, end, prog) in enumerate(rows):
        if tile >= total:
            if epilogues:
                zh, en, named = past_total_words(total, spare_tile_ends(probes, counts, bm, bn, n), counts, bm)
                if not named:
                    zh, en = bound_words(rows, counts, bm, bn, n, total) or (zh, en)
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
            last_first = sum(-(-int(c) // bm) for c in counts[:-1]) * n_blocks  # the last expert's first tile
            if tile == last_first < total and all(rows[t][0] == 1 for t in range(tile)):
                fail(
                    T6,
                    f"{case}：前面各专家的 tile 都做了，最后一个专家（{len(counts) - 1}）的 tile 一个也没做："
                    "tile 总数里没有算上最后一个专家（比如加载 counts 的掩码少了一个专家，experts < num_experts - 1）",
                    f"{case}: every tile of the experts before the last was done, and none of the last expert's "
                    f"(expert {len(counts) - 1}): the total left the last expert out (a mask on counts' load one "
                    "expert short, experts < num_experts - 1, say)",
                    "3.3",
                )
            unsplit = -(-sum(int(c) for c in counts) // bm) * n_blocks  # the rows' m-blocks, not the experts'
            if tile == unsplit < total and all(rows[t][0] == 1 for t in range(tile)):
                fail(
                    T6,
                    f"{case}：正好做了前 {tile} 个 tile，这是把所有行当成一个组时的数目，cdiv(总行数 {sum(counts)}, "
                    f"BLOCK_M) * num_pid_n，而真正的总数是 {total}：循环的上界是从总行数算的；总数是每个专家各自"
                    "（m 块向上取整）的 tile 之和，tl.max(tile_ends)",
                    f"{case}: the first {tile} tiles alone were done, as many as all rows taken as one group give, "
                    f"cdiv(total rows {sum(counts)}, BLOCK_M) * num_pid_n, where the real total is {total}: the loop's "
                    "bound was worked out from the total row count; the total is the sum of each expert's own tiles "
                    "(its m-blocks rounded up), tl.max(tile_ends)",
                    "3.4",
                )
            m_sum = sum(-(-int(c) // bm) for c in counts)  # the experts' m-blocks, without num_pid_n
            if tile == m_sum < total and all(rows[t][0] == 1 for t in range(tile)):
                fail(
                    T6,
                    f"{case}：正好做了前 {tile} 个 tile，这是各专家 m 块数之和 sum(cdiv(counts, BLOCK_M))，"
                    f"而 tile 总数是 {total}：循环的上界数的是 m 块，不是 tile；"
                    f"每个 m 块有 num_pid_n = {n_blocks} 个 tile，总数是 tl.max(tile_ends)",
                    f"{case}: the first {tile} tiles alone were done, the experts' m-blocks summed, sum(cdiv(counts, "
                    f"BLOCK_M)), where the tiles number {total}: the loop's bound counted m-blocks, not tiles; each "
                    f"m-block has num_pid_n = {n_blocks} tiles, and the total is tl.max(tile_ends)",
                    "3.4",
                )
            if tile == total - 1 and all(rows[t][0] == 1 for t in range(tile)):
                fail(
                    T6,
                    f"{case}：除了最后一个 tile {tile}，{total} 个 tile 都做了：循环的上界比 tile 总数少了 1"
                    "（tl.range(起点, total, 步长) 本来就停在 total 之前，不要再减 1）",
                    f"{case}: every tile of the {total} but the last, tile {tile}, was done: the loop's bound stops "
                    "one tile short of the total (tl.range(start, total, step) stops before total by itself: take no "
                    "1 off)",
                    "3.4",
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
            if not mixes and not pad_en:
                pad_zh, pad_en = rows_words(counts, e, bm, begin, end, want[key])
            # every tile done starts at its expert's first row + pid_n * BLOCK_M, and some pid_n differs from pid_m
            done = [r for r in rows[:total] if r[0]]
            by_pid_n = any(r[3] != r[2] for r in done) and all(r[4] == sum(counts[: r[1]]) + r[3] * bm for r in done)
            # every tile done starts at its expert's first row, those of pid_m > 0 too
            at_first = any(r[2] > 0 for r in done) and all(r[4] == sum(counts[: r[1]]) for r in done)
            if not mixes and at_first:
                pad_zh, pad_en = (
                    "：每个 tile 都从它专家的行首开始，不管 pid_m 是几：算 row_begin 时漏了 pid_m * BLOCK_M"
                    "（row_begin = 行首 + pid_m * BLOCK_M）",
                    ": every tile starts at its expert's first row, whatever its pid_m: row_begin left out "
                    "pid_m * BLOCK_M (row_begin = the expert's first row + pid_m * BLOCK_M)",
                )
            if not mixes and by_pid_n and schedules.finish_pids_swapped(done, want, counts, bm):
                pad_zh, pad_en = schedules.FINISH_PIDS_SWAPPED
            elif not mixes and by_pid_n:
                pad_zh, pad_en = (
                    "：每个 tile 都从专家的行首 + pid_n * BLOCK_M 开始：算 row_begin 时用了 pid_n，而不是 pid_m"
                    "（row_begin = 行首 + pid_m * BLOCK_M）",
                    ": every tile starts at its expert's first row + pid_n * BLOCK_M: row_begin was worked out from "
                    "pid_n, not pid_m (row_begin = the expert's first row + pid_m * BLOCK_M)",
                )
            pad_zh, pad_en = schedules.block_n_words(done, counts, bm, bn) or (pad_zh, pad_en)
            span = schedules.span_words(begin, end)
            fail(
                T6,
                f"{case}：专家 {e} 的 tile (pid_m={pm}) 算的是{span[0]}，应当是 {a}..{b - 1}"
                + ("：它越过了这个专家的最后一行，混进了下一个专家的行" if mixes else pad_zh),
                f"{case}: expert {e}'s tile (pid_m={pm}) covers {span[1]}, rows {a}..{b - 1} "
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
