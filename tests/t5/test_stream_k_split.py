"""T5.3: the stream-K split: which program sums which k-blocks, every tile once, and the hybrid rule's
split (the fix-up's halves alone: test_fix_up_halves.py; the products: test_stream_k_products.py)."""

import pytest
import torch

from course.i18n import count
from course.messages import fail

from . import run_causes
from .common import T5, check_trace, new_trace, trace_rows
from .crashes import waits_told
from .flags_left_up import FLAGS_LEFT_UP, flags_read_by_others, some_flags_up_words
from .run_causes import begins_as_if_longer, empty_last_wave, owners_as_if_one_length
from .stream_k_cases import (
    SK_CASES,
    fail_if_whole_runs,
    from_tile_begin,
    sk_case,
    sk_holder,
    sk_owner,
    sk_runs,
)
from support import DEVICE

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T5.3 stream-K with a deterministic fix-up
# ================================================================================================
@pytest.mark.t5_3
@pytest.mark.parametrize("total, progs", [(12, 3), (13, 3), (7, 7), (20, 6), (5, 8), (100, 9)])
def test_sk_runs_cover_every_k_block_once(probes, total, progs):
    runs = torch.full((2 * progs,), -1, dtype=torch.int32, device=DEVICE)
    owners = torch.full((total,), -1, dtype=torch.int32, device=DEVICE)
    probes.sk_run_probe[(progs,)](runs, owners, total, progs)
    got = [tuple(r) for r in runs.view(-1, 2).cpu().tolist()]
    want = sk_runs(total, progs)
    base, extra = divmod(total, progs)  # the message's words: runs of base, the first extra one longer
    per = -(-total // progs)  # cdiv(total, NUM_PROGS): runs cut that long, the last ones short or empty
    if got != want:
        chunked = got == [(min(p * per, total), min(p * per + per, total)) for p in range(progs)]
        closed = got == [(lo, hi - 1) for lo, hi in want]  # each end the run's last k-block, not one past it
        # end = begin + base + (pid <= extra): program `extra` one k-block longer too, into the next run
        one_more = got == [(lo, lo + base + (p <= extra)) for p, (lo, _) in enumerate(want)]
        longer = begins_as_if_longer(got, total, progs)
        fail(
            T5,
            f"{total} 个 k-block 分给 {progs} 个程序：各段应当首尾相接"
            + (f"、前 {extra} 段多一个" if extra else f"、每段 {base} 个")
            + f"：期望 {want}，得到 {got}"
            + (
                f"：每段都切成 cdiv(total, NUM_PROGS) = {per} 个，短的都落在最后几个程序上：应当是前 total % NUM_PROGS "
                f"段各 {base + 1} 个，其余各 {base} 个"
                if chunked
                else "：每段的 end 都是段里最后一个 k-block（闭区间）；"
                "sk_run 返回半开区间 [begin, end)，end 是下一段的 begin"
                if closed
                else f"：这正是 end 里用 pid <= extra 的结果：程序 {extra}（pid == extra）的段也多了一个 k-block，"
                f"伸进了下一段；只有编号小于 extra 的程序多一个，条件是 pid < extra"
                if one_more
                else longer[0]
            ),
            f"{total} k-blocks over {progs} programs: the runs lie end to end, "
            + (
                ("the first run" if extra == 1 else f"the first {extra} runs") + " one k-block longer"
                if extra
                else f"{base} each"
            )
            + f": expected {want}, got {got}"
            + (
                f": every run was cut cdiv(total, NUM_PROGS) = {per} long, which leaves the short runs to the last "
                f"programs; the first total % NUM_PROGS runs get {base + 1} k-blocks, the others {base}"
                if chunked
                else ": each end is the run's last k-block (a closed range); "
                "sk_run returns the half-open [begin, end), end the next run's begin"
                if closed
                else f": it is what pid <= extra in the end gives: program {extra}'s run (pid == extra) got one more "
                f"k-block too, into the next run; only the programs below extra get one more, pid < extra"
                if one_more
                else longer[1]
            ),
            "4.1",
        )
    want_owner = [p for p, (lo, hi) in enumerate(want) for _ in range(lo, hi)]
    got_owner = owners.cpu().tolist()
    if got_owner != want_owner:
        by_cdiv = got_owner == [it // per for it in range(total)]  # as if every run were cdiv(total, NUM_PROGS) long
        one_length = ("", "") if by_cdiv else owners_as_if_one_length(got_owner, total, progs)
        fail(
            T5,
            f"sk_program_of 和 sk_run 对不上：k-block 的归属期望 {want_owner}，得到 {got_owner}"
            + (
                f"：这是 it // cdiv(total, NUM_PROGS)（{per}），好像每段都是 {per} 个；前 total % NUM_PROGS 段才"
                f"有 {base + 1} 个，其余只有 {base} 个"
                if by_cdiv
                else one_length[0]
            ),
            f"sk_program_of disagrees with sk_run: expected owners {want_owner}, got {got_owner}"
            + (
                f": it // cdiv(total, NUM_PROGS) ({per}), as if every run were {per} long; only the first "
                f"total % NUM_PROGS runs are {base + 1} long, the others {base}"
                if by_cdiv
                else one_length[1]
            ),
            "4.1",
        )


@pytest.mark.t5_3
def test_stream_k_every_tile_once(probes):
    """Count-only: every stream-K tile gets all its k-blocks and one epilogue, by the program that
    holds its last k-block; no other tile is touched; every flag is back at 0 at the end."""
    cases = SK_CASES + [
        (
            int(torch.randint(1, 5, (1,))),
            int(torch.randint(1, 5, (1,))),
            int(torch.randint(1, 9, (1,))),
            0,
            int(torch.randint(2, 10, (1,))),
        )
        for _ in range(3)
    ]
    for num_pid_m, num_pid_n, k_blocks, sk_tiles, progs in cases:
        tiles = num_pid_m * num_pid_n
        sk_tiles = sk_tiles or tiles
        progs = min(progs, sk_tiles * k_blocks)
        trace = new_trace(tiles)
        partials = torch.zeros(progs * 16 * 16, device=DEVICE)
        flags = torch.zeros(progs, dtype=torch.int32, device=DEVICE)
        case = sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs)
        with waits_told(case):  # an owner that waits on a flag no program raises
            probes.stream_k_probe[(progs,)](
                trace, partials, flags, 32 * k_blocks - 3, sk_tiles, num_pid_m, num_pid_n, progs, 32, 2
            )
        total = sk_tiles * k_blocks
        summed = [kbs for _, kbs, *_ in trace_rows(trace)[:sk_tiles]]
        if summed != [k_blocks] * sk_tiles and summed == from_tile_begin(k_blocks, sk_tiles, progs):
            tile = next(t for t, kbs in enumerate(summed) if kbs != k_blocks)
            fail(
                T5,
                f"{case}：tile {tile} 一共算了 {summed[tile]} 个 k-block，应当是 {k_blocks} 个：每个 tile 算的个数"
                "正好是每一段都从 tile 的第一个 k-block 算起（it_begin = tile_begin）的结果：从 tile 中间开始的段，"
                "把前面的程序持有的那些 k-block 又算了一遍；一段从 it_begin = max(tile_begin, run_begin) 起",
                f"{case}: tile {tile} summed {count(summed[tile], 'k-block')}, {k_blocks} expected: every tile's count "
                "is what segments that all start at their tile's first k-block give (it_begin = tile_begin): a run "
                "that begins inside a tile sums again the k-blocks the programs before it hold; a segment starts at "
                "it_begin = max(tile_begin, run_begin)",
                "4.2",
            )
        fail_if_whole_runs(summed, k_blocks, sk_tiles, progs, case)
        run_causes.fail_if_split_over_all_tiles(trace_rows(trace), k_blocks, sk_tiles, progs, case)
        check_trace(
            trace_rows(trace),
            num_pid_m,
            num_pid_n,
            2,
            k_blocks,
            case,
            "4.2",
            owner=lambda t, kb=k_blocks, tot=total, p=progs: sk_owner(t, kb, tot, p),
            done=range(sk_tiles),
            first=lambda t, kb=k_blocks, tot=total, p=progs: sk_holder(t * kb, tot, p),
            floor=k_blocks - 1,  # K // BLOCK_K: K is 32 * k_blocks - 3
            walk=(k_blocks, sk_tiles, progs, probes, case),  # probes: a walk's BLOCK_K told by another launch
            K=32 * k_blocks - 3,
        )
        if flags.any():
            # every publisher's flag still at 1, and no other: whatever the owners did with the partials
            # (this run counts, it does not add), none put a flag back
            ends = [end for _, end in sk_runs(total, progs)]
            published = [int(p < total and ends[p] % k_blocks != 0) for p in range(progs)]
            now = flags.cpu().tolist()
            left_up = now == published
            # some publishers' flags up, and no other: were those read by the owners that should wait on them?
            some_up = not left_up and all(f == 0 or (f == 1 and published[p]) for p, f in enumerate(now))
            shape = (num_pid_m, num_pid_n, k_blocks, sk_tiles, progs)
            each = flags_read_by_others(probes, shape, now) if left_up or some_up else None  # {program: read}
            read = None if each is None else True if all(each.values()) else False if not any(each.values()) else None
            said = FLAGS_LEFT_UP[read] if left_up else ("", "")
            if some_up and each is not None:
                said = some_flags_up_words([p for p in each if each[p]], [p for p in each if not each[p]])
            fail(
                T5,
                f"{case}：结束时还有 flag 没归零 {now}{said[0]}",
                f"{case}: flags left raised {now}{said[1]}",
                "4.2",
            )


@pytest.mark.t5_3
@pytest.mark.parametrize(
    "tiles, k_blocks, sms, mode, want",
    [
        (64, 8, 132, "auto", (64, 132)),  # one thin wave (< half): all stream-K
        (100, 8, 132, "auto", (0, 100)),  # one wave at least half full: data-parallel
        (264, 8, 132, "auto", (0, 132)),  # whole waves
        (300, 8, 132, "auto", (168, 132)),  # a thin last wave merged with one full wave
        (400, 8, 132, "auto", (136, 132)),  # 3 waves and 4 tiles: the 4 and one wave go to stream-K
        (10, 1, 132, "auto", (0, 10)),  # one k-block: nothing to split
        (10, 4, 132, "sk", (10, 40)),  # no more programs than k-blocks
        (10, 4, 132, "dp", (0, 10)),
        (66, 8, 132, "auto", (0, 66)),  # exactly half full: data-parallel (an even SM count shows >= from >)
        (65, 8, 132, "auto", (65, 132)),  # one tile under half: stream-K
        (7, 8, 3, "auto", (4, 3)),  # an odd SM count: 1 tile is under half of 3 (a floored half would say 1 >= 1)
        (8, 8, 3, "auto", (0, 3)),  # 2 of 3 is over half: data-parallel
        (10, 2, 132, "auto", (10, 20)),  # one thin wave of few k-blocks: no more programs than k-blocks here too
        (10, 1, 132, "sk", (0, 10)),  # one k-block: nothing to split, in mode sk too (the host's tail and split ask it)
    ],
)
def test_stream_k_split(t5, tiles, k_blocks, sms, mode, want):
    got = tuple(t5.stream_k_split(tiles, k_blocks, sms, mode))
    if got != want:
        blocks = want[0] * k_blocks
        # the right tiles, yet as many programs as SMs where the k-blocks are fewer: some runs would be empty
        too_many = got == (want[0], sms) and want[1] == blocks < sms
        # a thin wave with no full wave before it, "merged" with a full wave that is not there
        wave_added = tiles < sms and len(got) == 2 and got[0] == tiles + sms
        mine = run_causes.grid_of_your_persistent_grid(t5, tiles, sms, want, got)  # persistent_grid itself wrong (T5.1)
        # no stream-K, yet a program for each SM where the tiles are fewer: persistent_grid left out
        idle = want[0] == 0 and got == (0, sms) and tiles < sms and not mine[0]
        # tiles of one k-block split all the same, where the mode asked for stream-K
        one_block = k_blocks == 1 and mode != "dp" and len(got) == 2 and got[0] > 0
        # the thin last wave alone to stream-K, where one full wave should have gone with it
        last_alone = tiles > sms and want[0] == tiles % sms + sms and len(got) == 2 and got[0] == tiles % sms
        rest = tiles % sms
        # a last wave exactly half full given to stream-K: the half compared with >, not >=
        half_strict = want[0] == 0 and 2 * rest == sms and len(got) == 2 and got[0] > 0
        # a last wave under half kept data-parallel where the half was floored (1 of 3 against 3 // 2 = 1)
        half_floored = want[0] > 0 and 2 * rest < sms <= 2 * rest + 1 and len(got) == 2 and got[0] == 0
        # the right stream-K tiles on as many programs as tiles (at most the SMs): k-blocks are what is shared out
        per_tile = want[0] > 0 and got == (want[0], min(sms, want[0])) != want
        # mode auto giving every tile to stream-K where whole waves come before the two that go
        every_wave = mode == "auto" and 0 < want[0] < tiles and len(got) == 2 and got[0] == tiles
        empty = empty_last_wave(tiles, sms, mode, want, got)
        fail(
            T5,
            f"{tiles} 个 tile、每个 {k_blocks} 个 k-block、{sms} 个 SM、mode={mode}："
            f"期望 (sk_tiles, programs) = {want}，得到 {got}"
            + (
                f"：程序比 k-block 还多（{blocks} 个 k-block），有的程序一个 k-block 也分不到；stream-K 跑 "
                "min(num_sms, sk_tiles * k_blocks) 个程序"
                if too_many
                else ""
            )
            + (
                f"：stream-K 的 tile 比 tile 总数（{tiles}）还多：唯一的一波太薄时没有整波可以合进来，"
                "全部 tile 走 stream-K（sk_tiles = num_tiles），只有前面有整波时才把薄的最后一波和一整波合起来"
                if wave_added
                else ""
            )
            + (
                f"：不用 stream-K 时程序比 tile（{tiles} 个）还多，多出来的程序没有 tile 可做：程序数是 "
                "persistent_grid(num_tiles, num_sms)"
                if idle
                else ""
            )
            + (
                f"：每个 tile 只有一个 k-block，却有 {got[0]} 个 tile 走了 stream-K：只有一个 k-block 时没什么可分的，"
                "不管 mode 是什么都返回 (0, persistent_grid(num_tiles, num_sms))"
                if one_block
                else ""
            )
            + (
                f"：{got[0]} 正好是薄的最后一波（{tiles} % {sms}）本身，少了和它合在一起的一整波："
                f"前面有整波时，stream-K 拿最后一波加一整波，{tiles % sms} + {sms} = {want[0]} 个 tile"
                if last_alone
                else ""
            )
            + (
                f"：最后一波正好半满（{sms} 个 SM 里占了 {rest} 个），而至少半满的最后一波要留给数据并行："
                "比较用 2 * rest >= num_sms（>=，不是 >）"
                if half_strict
                else ""
            )
            + (
                f"：最后一波只有 {rest} 个 tile，不到 {sms} 的一半，却被当成了半满：一半被向下取整成了 "
                f"{sms} // 2 = {sms // 2}；比较用 2 * rest >= num_sms"
                if half_floored
                else ""
            )
            + (
                f"：程序数是 min(num_sms, sk_tiles) = {got[1]}，按 tile 数的；stream-K 分的是 k-block："
                "min(num_sms, sk_tiles * k_blocks) 个程序"
                if per_tile
                else ""
            )
            + (
                f"：{tiles} 个 tile 全走了 stream-K，连前面的整波也算进去了：mode auto 时整波留给数据并行，"
                f"只有薄的最后一波和一整波走 stream-K，{rest} + {sms} = {want[0]} 个 tile"
                if every_wave
                else ""
            )
            + empty[0]
            + mine[0],
            f"{tiles} tiles of {count(k_blocks, 'k-block')} on {sms} SMs, mode={mode}: expected (sk_tiles, programs) = "
            f"{want}, got {got}"
            + (
                f": more programs than k-blocks ({blocks}), so some programs get none; stream-K runs "
                "min(num_sms, sk_tiles * k_blocks) programs"
                if too_many
                else ""
            )
            + (
                f": more stream-K tiles than there are tiles ({tiles}): a single thin wave has no full wave to "
                "merge with, so every tile goes to stream-K (sk_tiles = num_tiles); a thin last wave is merged "
                "with one full wave only where a full wave comes before it"
                if wave_added
                else ""
            )
            + (
                f": no stream-K, yet more programs than tiles ({tiles}), so some programs have no tile: the "
                "programs are persistent_grid(num_tiles, num_sms)"
                if idle
                else ""
            )
            + (
                f": {got[0]} tiles of a single k-block each went to stream-K: with one k-block there is nothing to "
                "split, whatever the mode, so the answer is (0, persistent_grid(num_tiles, num_sms))"
                if one_block
                else ""
            )
            + (
                f": {got[0]} is the thin last wave alone ({tiles} % {sms}), without the full wave that goes with "
                f"it: where a full wave comes before it, stream-K takes the last wave and one full wave, "
                f"{tiles % sms} + {sms} = {want[0]} tiles"
                if last_alone
                else ""
            )
            + (
                f": the last wave is exactly half full ({rest} of {sms} SMs), and a last wave at least half full "
                "stays data-parallel: compare 2 * rest >= num_sms (>=, not >)"
                if half_strict
                else ""
            )
            + (
                f": the last wave, {count(rest, 'tile')}, is under half of {sms}, yet was taken as half full: the half "
                f"was floored to {sms} // 2 = {sms // 2}; compare 2 * rest >= num_sms"
                if half_floored
                else ""
            )
            + (
                f": the programs are min(num_sms, sk_tiles) = {got[1]}, a count of tiles; stream-K shares out "
                "k-blocks: min(num_sms, sk_tiles * k_blocks) programs"
                if per_tile
                else ""
            )
            + (
                f": all {tiles} tiles went to stream-K, the whole waves before the last two included: in mode auto "
                f"whole waves stay data-parallel, and only the thin last wave and one full wave go to stream-K, "
                f"{rest} + {sms} = {want[0]} tiles"
                if every_wave
                else ""
            )
            + empty[1]
            + mine[1],
            "4.3",
        )


# The fix-up's two halves alone (§4.2), before the whole kernel's products: a slot or an order they get
# wrong is named here, where the products would only be off.


@pytest.mark.t5_3
def test_stream_k_split_answers_every_call_afresh(t5):
    """The same tiles, SMs and mode with other k_blocks, one call after another: each answer is that call's
    own (an answer kept from an earlier call under a key without k_blocks, say, would come back here)."""
    calls = [  # (tiles, k_blocks, sms, mode, want): 11 tiles on 100 SMs, one thin wave, so stream-K
        (11, 2, 100, "sk", (11, 22)),
        (11, 4, 100, "sk", (11, 44)),
        (11, 20, 100, "sk", (11, 100)),
        (11, 1, 100, "auto", (0, 11)),
        (11, 3, 100, "auto", (11, 33)),
        (11, 5, 100, "auto", (11, 55)),
    ]
    answered = {}  # (mode, k_blocks) -> the right answer, for the calls made so far
    for tiles, k_blocks, sms, mode, want in calls:
        got = tuple(t5.stream_k_split(tiles, k_blocks, sms, mode))
        if got != want:
            kept = [kb for (m, kb), was in answered.items() if m == mode and was == got]
            if kept:
                fail(
                    T5,
                    f"{tiles} 个 tile、每个 {k_blocks} 个 k-block、{sms} 个 SM、mode={mode}：期望 {want}，得到 {got}，"
                    f"正是前面一次调用（k_blocks={kept[0]}，tile、SM 和 mode 都一样）的答案：答案也取决于 k_blocks，"
                    "别在两次调用之间留下答案",
                    f"{tiles} tiles of {count(k_blocks, 'k-block')} on {sms} SMs, mode={mode}: expected {want}, got "
                    f"{got}, the "
                    f"answer of an earlier call with k_blocks={kept[0]} (the same tiles, SMs and mode): the answer "
                    "depends on k_blocks too; keep no answers between calls",
                    "4.3",
                )
            fail(
                T5,
                f"{tiles} 个 tile、每个 {k_blocks} 个 k-block、{sms} 个 SM、mode={mode}：期望 {want}，得到 {got}",
                f"{tiles} tiles of {count(k_blocks, 'k-block')} on {sms} SMs, mode={mode}: expected {want}, got {got}",
                "4.3",
            )
        answered[(mode, k_blocks)] = want
