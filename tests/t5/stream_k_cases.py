"""Lesson T5's stream-K cases, which its stream-K and fix-up test files share: who owns a tile, the
cases' shapes and words, and the partial tiles the fix-up sums; and a known wrong stream-K product."""

import torch

from course.i18n import say

from support import DEVICE, INTERPRETING


def sk_runs(total, progs):
    """[(begin, end)] of each program's run of global k-blocks: as even as can be, the first total % progs
    runs one longer, end to end."""
    base, extra = divmod(total, progs)
    return [(p * base + min(p, extra), (p + 1) * base + min(p + 1, extra)) for p in range(progs)]


def sk_holder(it, total, progs):
    """The program whose run holds global k-block it."""
    base, extra = divmod(total, progs)
    big = extra * (base + 1)
    return it // (base + 1) if it < big else extra + (it - big) // base


def from_tile_begin(k_blocks, sk_tiles, progs):
    """[k-blocks counted per tile] when every segment starts at its tile's first k-block (it_begin = tile_begin, not
    max(tile_begin, run_begin)): a run that begins inside a tile sums that tile's k-blocks before the run too."""
    counts = [0] * sk_tiles
    for lo, hi in sk_runs(sk_tiles * k_blocks, progs):
        for tile in range(lo // k_blocks, -(-hi // k_blocks)) if hi > lo else ():
            counts[tile] += min(hi, (tile + 1) * k_blocks) - tile * k_blocks
    return counts


def one_segment_per_run(k_blocks, sk_tiles, progs, cut_at_tile):
    """[k-blocks counted per tile] when each run is summed as one segment, counted on the tile of its last k-block:
    it_begin = run_begin (cut_at_tile False), or tl.minimum(tile_begin, run_begin) (True: a run inside one tile then
    starts at that tile's first k-block), where tl.maximum belongs (hunt16)."""
    counts = [0] * sk_tiles
    for lo, hi in sk_runs(sk_tiles * k_blocks, progs):
        if hi > lo:
            tile = (hi - 1) // k_blocks
            counts[tile] += hi - (min(tile * k_blocks, lo) if cut_at_tile else lo)
    return counts


def fail_if_whole_runs(summed, k_blocks, sk_tiles, progs, case):
    """Fail where the k-blocks counted per tile are those of one_segment_per_run, naming it_begin's form where
    only one of the two gives them."""
    from course.i18n import count
    from course.messages import fail

    from .common import T5

    if summed == [k_blocks] * sk_tiles:
        return
    forms = [
        form
        for form, cut in (("run_begin", False), ("tl.minimum(tile_begin, run_begin)", True))
        if summed == one_segment_per_run(k_blocks, sk_tiles, progs, cut)
    ]
    if not forms:
        return
    tile = next(t for t, kbs in enumerate(summed) if kbs != k_blocks)
    form = forms[0] if len(forms) == 1 else "run_begin（或 tl.minimum(tile_begin, run_begin)，这里一样）"
    form_en = forms[0] if len(forms) == 1 else "run_begin (or tl.minimum(tile_begin, run_begin), the same here)"
    fail(
        T5,
        f"{case}：tile {tile} 一共算了 {summed[tile]} 个 k-block，应当是 {k_blocks} 个"
        f"：每个 tile 算的个数正好是 it_begin = {form} 的结果：每段 run 整个当成了一个 segment，全记在它最后一个 "
        "k-block 所在的 tile 上，没有在 tile 的第一个 k-block 处断开；一段从 it_begin = tl.maximum(tile_begin, "
        "run_begin) 起",
        f"{case}: tile {tile} summed {count(summed[tile], 'k-block')}, {k_blocks} expected"
        f": every tile's count is what it_begin = {form_en} gives: each run was summed whole as one segment, all "
        "counted on the tile of its last k-block, never cut at a tile's first k-block; a segment starts at "
        "it_begin = tl.maximum(tile_begin, run_begin)",
        "4.2",
    )


def walked(k_blocks, sk_tiles, runs, owns):
    """(epilogues, k-blocks) per stream-K tile of a right walk (each run from its end back, cut at tile starts) over
    `runs`, a segment finishing its tile where owns(it_end, tile_begin, k_blocks) says so."""
    epilogues, kbs = [0] * sk_tiles, [0] * sk_tiles
    for lo, hi in runs:
        it_end = hi
        while it_end > lo:
            tile = (it_end - 1) // k_blocks
            if tile >= sk_tiles:
                return None  # a run past the stream-K tiles: no count here to compare
            it_begin = max(tile * k_blocks, lo)
            kbs[tile] += it_end - it_begin
            epilogues[tile] += bool(owns(it_end, tile * k_blocks, k_blocks))
            it_end = it_begin
    return epilogues, kbs


# Walks a learner may write, told by the epilogues and k-blocks each gives per tile (hunt16: both were told 'tile 0
# had 0 epilogues' alone): (runs of (total, progs), the owner test of (it_end, tile_begin, k_blocks), zh, en).
OTHER_WALKS = (
    (
        lambda total, k_blocks, progs: sk_runs(total // k_blocks, progs),
        lambda it_end, tile_begin, k_blocks: it_end == tile_begin + k_blocks,
        "每个 tile 的 epilogue 和 k-block 个数正好是各段一共只分了 sk_tiles 个 k-block 的结果（sk_run(pid, sk_tiles, "
        "NUM_PROGS)）：分给各程序的是全部 k-block，total = sk_tiles * tl.cdiv(K, BLOCK_K)，不是 tile 数",
        "every tile's epilogues and k-blocks are what runs over sk_tiles k-blocks in all give (sk_run(pid, sk_tiles, "
        "NUM_PROGS)): the runs share out all the k-blocks, total = sk_tiles * tl.cdiv(K, BLOCK_K), not the tiles",
    ),
    (
        lambda total, k_blocks, progs: sk_runs(total, progs),
        lambda it_end, tile_begin, k_blocks: it_end == tile_begin + k_blocks - 1,
        "每个 tile 的 epilogue 次数正好是把 owner 判成 it_end == tile_begin + k_blocks - 1 的结果：段的终点 it_end "
        "不含在段内，持有 tile 最后一个 k-block 的那一段 it_end == tile_begin + k_blocks",
        "every tile's epilogues are what an owner test of it_end == tile_begin + k_blocks - 1 gives: a segment's "
        "it_end is past its last k-block, so the segment holding the tile's last k-block has it_end == tile_begin + "
        "k_blocks",
    ),
)


# ... and one whose every segment runs the epilogue, the publishers' too (hunt16)
OTHER_WALKS += (
    (
        lambda total, k_blocks, progs: sk_runs(total, progs),
        lambda it_end, tile_begin, k_blocks: True,
        "每个 tile 的 epilogue 次数正好是每一段都跑 finish_tile 的结果，发布 partial 的段也跑了：只有 owner "
        "（it_end == tile_begin + k_blocks 的那一段）收尾，其余的段发布 partial 就停",
        "every tile's epilogues are what a walk gives in which every segment runs finish_tile, the publishing ones "
        "too: only the owner (the segment with it_end == tile_begin + k_blocks) finishes a tile; any other segment "
        "publishes its partial and stops there",
    ),
)


def other_walk_words(rows, k_blocks, sk_tiles, progs, probes=None, case=""):
    """(zh, en) of the one OTHER_WALKS whose epilogues and k-blocks per stream-K tile are the rows given; else, with
    probes, of a walk with BLOCK_K for k_blocks (sk_block_k.py, which launches once more); or None."""
    seen = ([r[0] for r in rows[:sk_tiles]], [r[1] for r in rows[:sk_tiles]])
    total = sk_tiles * k_blocks
    right = walked(k_blocks, sk_tiles, sk_runs(total, progs), lambda e, b, kb: e == b + kb)
    said = []
    for runs, owns, zh, en in OTHER_WALKS:
        got = walked(k_blocks, sk_tiles, runs(total, k_blocks, progs), owns)
        if got is not None and got != right and got == seen:
            said.append((zh, en))
    if not said and probes is not None:
        from .sk_block_k import block_k_walk_words

        return block_k_walk_words(rows, k_blocks, sk_tiles, progs, probes, case)
    return said[0] if len(said) == 1 else None


def sk_owner(tile, k_blocks, total, progs):
    """The program holding the tile's last k-block."""
    return sk_holder((tile + 1) * k_blocks - 1, total, progs)


SK_CASES = [  # (num_pid_m, num_pid_n, k_blocks, sk_tiles, programs)
    (2, 2, 5, 4, 3),
    (3, 2, 4, 6, 4),
    (1, 3, 7, 3, 5),
    (4, 4, 3, 5, 3),  # hybrid: 5 stream-K tiles, the rest left to the data-parallel loop
    (2, 3, 1, 6, 4),
    (3, 3, 6, 9, 9),
]


def sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs):
    return say(
        zh=f"{num_pid_m} x {num_pid_n} 个 tile，每个 {k_blocks} 个 k-block，{sk_tiles} 个走 stream-K，{progs} 个程序",
        en=f"{num_pid_m} x {num_pid_n} tiles, {k_blocks} k-blocks each, {sk_tiles} stream-K tiles, {progs} programs",
    )


# The tiles of the fix-up's checks (test_fix_up.py, test_fix_up_memory_order.py).
FIX_BM, FIX_BN = (16, 16) if INTERPRETING else (64, 64)  # larger on a GPU: a partial takes longer to store


def spread_tiles(n, bm=FIX_BM, bn=FIX_BN):
    """n float32 tiles whose values span seven orders of magnitude: added in another order, their
    sum comes out with other bits in many cells."""
    scale = 10.0 ** torch.randint(-3, 4, (n, bm, bn), device=DEVICE)
    return (torch.randn(n, bm, bn, device=DEVICE) * scale).contiguous()


def in_order_sum(acc, partials, first, last):
    """acc + partials[first] + ... + partials[last - 1], added in that order in float32."""
    for p in range(first, last):
        acc = acc + partials[p]
    return acc


def pair_case(n):
    """Inputs of publish_collect_probe: n tiles, a workspace of NaN, flags down, out of NaN; the sum wanted."""
    src = spread_tiles(n)
    partials = torch.full((n, FIX_BM, FIX_BN), float("nan"), device=DEVICE)
    flags = torch.zeros(n, dtype=torch.int32, device=DEVICE)
    out = torch.full((FIX_BM, FIX_BN), float("nan"), device=DEVICE)
    return src, partials, flags, out, in_order_sum(src[n - 1], src, 0, n - 1)


def recorded_count_run(probes, case):
    """stream_k_probe's count-only run of one SK_CASES case with each program's memory operations
    recorded, programs in id order (course/interpreter_order.py; CPU only): (the events by program,
    the flags' base address)."""
    from course.interpreter_order import programs_run

    from .common import new_trace

    num_pid_m, num_pid_n, k_blocks, sk_tiles, progs = case
    trace = new_trace(num_pid_m * num_pid_n)
    partials = torch.zeros(progs * 16 * 16, device=DEVICE)
    flags = torch.zeros(progs, dtype=torch.int32, device=DEVICE)
    with programs_run(range(progs)) as run:
        probes.stream_k_probe[(progs,)](
            trace, partials, flags, 32 * k_blocks - 3, sk_tiles, num_pid_m, num_pid_n, progs, 32, 2
        )
    return run.events, flags.data_ptr()


def fail_if_segments_counted_globally(c, a, b, sk_tiles, tiles, group_m, tol, case):
    """Fail, naming k_segment's k-block numbers, where C is right on the first stream-K tile and on the
    data-parallel ones, and zeros on every other stream-K tile: what stream_k_tiles gives when it hands
    k_segment the run's own numbers (it_begin, it_end), counted over all the stream-K tiles, which are
    past K (TMA reads zeros there) for every tile but the first.  tiles: (BLOCK_M, BLOCK_N, rows, cols)."""
    from course.messages import fail
    from course.tile_order import grouped_order

    from .common import T5
    from support import rel_err

    bm, bn, rows, cols = tiles
    if sk_tiles < 2:
        return
    want = a.double() @ b.double()
    for pid_m, pid_n in grouped_order(rows, cols, group_m)[1:sk_tiles]:
        want[pid_m * bm : (pid_m + 1) * bm, pid_n * bn : (pid_n + 1) * bn] = 0
    if rel_err(c, want) > tol:
        return
    fail(
        T5,
        f"{case}：第一个 stream-K tile 和整块算的 tile 都对，其余 {sk_tiles - 1} 个 stream-K tile 全是 0："
        "stream_k_tiles 交给 k_segment 的 k-block 编号若是从整段 stream-K 的开头数的（it_begin, it_end），"
        "就正是这样：除了第一个 tile，这些编号都在 K 之外，TMA 在那里只读到 0。要从这个 tile 的第一个 k-block "
        "数起：it_begin - tile_begin, it_end - tile_begin",
        f"{case}: the first stream-K tile and the data-parallel ones are right, the other {sk_tiles - 1} "
        "stream-K tiles all zeros: what k_segment gives when stream_k_tiles hands it k-block numbers counted over "
        "all the stream-K tiles (it_begin, it_end), past K for every tile but the first (TMA reads zeros there). "
        "Count them from the tile's first k-block: it_begin - tile_begin, it_end - tile_begin",
        "4.2",
    )


def fail_if_owners_alone(c, a, b, plan, k_blocks, tiles, group_m, tol, case, flags=None):
    """Fail where C is right on the data-parallel tiles and holds, on each stream-K tile, its owner's
    own k-blocks alone: no partial of the programs before the owner reached the result (published
    as zeros, say, or collected into an acc the epilogue never took).  plan: (sk_tiles, programs);
    tiles: (BLOCK_M, BLOCK_N, BLOCK_K, rows, cols); flags: the workspace's flags after the kernel."""
    from course.messages import fail
    from course.tile_order import grouped_order

    from .common import T5
    from support import rel_err

    (sk_tiles, programs), (bm, bn, bk, rows, cols) = plan, tiles
    total = sk_tiles * k_blocks
    runs = sk_runs(total, max(programs, 1))
    want, shared = a.double() @ b.double(), 0
    for t, (pid_m, pid_n) in enumerate(grouped_order(rows, cols, group_m)[:sk_tiles]):
        owner = sk_owner(t, k_blocks, total, programs)
        first = max(t * k_blocks, runs[owner][0]) - t * k_blocks  # the owner's first k-block
        shared += first > 0
        ks = slice(first * bk, k_blocks * bk)
        want[pid_m * bm : (pid_m + 1) * bm, pid_n * bn : (pid_n + 1) * bn] = (
            a[pid_m * bm : (pid_m + 1) * bm, ks].double() @ b[ks, pid_n * bn : (pid_n + 1) * bn].double()
        )
    if not shared or rel_err(c, want) > tol:
        return
    up = [p for p, f in enumerate(flags.cpu().tolist()) if f] if flags is not None else []
    why = (  # flags still raised: those partials were published, and no owner put their flags back
        (
            f"；程序 {up} 的 flag 在 kernel 结束后还举着，没有 owner 把它们放回 0：owner 要等的是从 "
            "sk_program_of(这个 tile 的第一个 k-block) 到 pid - 1 的程序",
            f"; the flags of programs {up} are still raised after the kernel, and no owner put them back to 0: an "
            "owner waits on the programs from sk_program_of(its tile's first k-block) to pid - 1",
        )
        if up
        else (
            "。发布的要是那一段的 acc，owner 做 epilogue 用的要是 sk_collect_partials 返回的 acc",
            ". A publisher publishes its segment's acc, and the owner's epilogue takes the acc that "
            "sk_collect_partials returns",
        )
    )
    fail(
        T5,
        f"{case}：整块算的 tile 都对，{shared} 个由几个程序分着算的 stream-K tile 里却只有 owner 自己那一段的和："
        "owner 之前那些程序的 partial 一个也没进结果" + why[0],
        f"{case}: the data-parallel tiles are right, yet the {shared} stream-K tiles shared by several programs "
        "hold their owner's own segment alone: not one partial of the programs before the owner reached the "
        "result" + why[1],
        "4.2",
    )


def collect_order_slip(out, acc, partials, first, pid):
    """(zh, en) words, for fail's two messages, for a collect that adds the right partials the wrong way
    round the owner's acc: acc left out (the sum started from zeros), or the partials summed first and acc
    added to their sum last; ("", "") when out is neither."""
    alone = in_order_sum(torch.zeros_like(acc), partials, first, pid)
    if torch.equal(out, alone):
        return (
            f"：这是程序 {first}..{pid - 1} 的 partial 之和，owner 自己的 acc 没加上：从传进来的 acc 开始加",
            f": this is the sum of programs {first}..{pid - 1}'s partials alone, the owner's own acc left out: "
            "add onto the acc passed in",
        )
    if torch.equal(out, acc + alone):
        return (
            "：这是先把 partial 加成一个和、最后才加上 acc 的结果：要从 acc 开始，按顺序逐个加上每个 partial",
            ": this is the partials summed first and acc added to their sum last: start from acc and add each "
            "partial onto it, in order",
        )
    return "", ""


def slot_of_another(partials, src, p, n):
    """(zh, en) words where program p's slot holds another program's partial, and more where every other slot of
    the n programs' was never written (all NaN still): they all stored into slot p; ("", "") otherwise."""
    other = next((q for q in range(n) if q != p and torch.equal(partials[p], src[q])), None)
    if other is None:
        return "", ""
    rest = [q for q in range(n) if q != p]
    shared = all(partials[q].isnan().all() for q in rest)
    return (
        f"：槽里是程序 {other} 的 partial"
        + (f"，其余程序的槽 {rest} 一个也没写：{n} 个程序都存进了第 {p} 个槽，后存的盖掉先存的" if shared else "")
        + "；程序 p 的槽从 partials_ptr + p * BLOCK_M * BLOCK_N 开始，p 是发布它的程序的 pid",
        f": it holds program {other}'s partial"
        + (
            f", and the other programs' slots {rest} were never written: all {n} programs stored into slot {p}, each "
            "over the one before"
            if shared
            else ""
        )
        + "; program p's slot starts at partials_ptr + p * BLOCK_M * BLOCK_N, p the publishing program's pid",
    )


def data_parallel_below(probes, sk_tiles, grid, k_blocks, programs):
    """The tiles below first_tile = sk_tiles that data_parallel_tiles, run alone (the tile loop's probe, count-only,
    GROUP_M 4, BLOCK_K 32), finished: none where its loop starts at first_tile."""
    from .common import new_trace, trace_rows

    tiles = grid[0] * grid[1]
    trace = new_trace(2 * tiles + programs)
    probes.tile_loop_probe[(programs,)](trace, 32 * k_blocks, sk_tiles, tiles, *grid, programs, 32, 4, False)
    return [t for t, row in enumerate(trace_rows(trace)[:sk_tiles]) if row[0] or row[1]]


def fail_if_data_parallel_redoes(probes, rows, plan, grid, k_blocks, case):
    """Fail, naming data_parallel_tiles, where a stream-K tile of the whole kernel's trace (rows) had more than
    one epilogue and data_parallel_tiles, run alone with first_tile = sk_tiles (the tile loop's probe, count-only),
    does tiles below first_tile: the data-parallel pass did the stream-K tiles again.  plan: (sk_tiles, programs);
    grid: (num_pid_m, num_pid_n); GROUP_M 4, BLOCK_K 32, as the products' config."""
    from course.messages import fail

    from .common import T5

    sk_tiles, programs = plan
    again = [t for t in range(min(sk_tiles, len(rows))) if rows[t][0] > 1]
    if not again or not programs:
        return
    below = data_parallel_below(probes, sk_tiles, grid, k_blocks, programs)
    if not below:
        return
    fail(
        T5,
        f"{case}：stream-K 的 tile {again} 各跑了不止一次 epilogue；把 data_parallel_tiles 单独跑一遍，"
        f"first_tile = {sk_tiles}（stream-K tile 的个数），它也做了 first_tile 之前的 tile {below}："
        "整块算的那一趟把 stream-K 已经做完的 tile 又做了一遍。它的循环要从 first_tile + pid 开始",
        f"{case}: the stream-K tiles {again} each had more than one epilogue; data_parallel_tiles run alone with "
        f"first_tile = {sk_tiles} (the number of stream-K tiles) also did tiles {below}, below first_tile: the "
        "data-parallel pass did again the tiles stream-K had done. Its loop starts at first_tile + pid",
        "2.2",
        "4.3",
    )
