"""Lesson T5's helpers that more than one of its test files uses: configs, the trace, the product checks."""

import math

import torch
import triton

from course.i18n import agree, count
from course.messages import fail
from course.registry import lesson
from course.tile_order import grouped_order

from .crashes import offsets_in_elements, run_matmul, tma_rule_broken  # noqa: F401 - test files import them from here
from .loop_counts import PAST_WHOLE_K, counted_under_pids, one_short, stops_short_by_first, tile_loop_like  # noqa: F401
from .shares import other_share_out
from .sk_counts import walked_by_one_words
from .stored import check_stored, even_odd_halves, fail_even_odd_halves, run_store_tile, unwritten_where  # noqa: F401
from .trace_tiles import EPILOGUES_OFF, epilogues_on_other_tiles, no_tile_past
from support import DEVICE, OUT_RTOL, padded, rel_err

T5 = lesson("T5")


TRACE_INTS = 5  # per tile: epilogues, k-blocks, program that finished it, pid_m, pid_n


def cfg(t5, bm=32, bn=32, bk=32, group_m=4, subtile=1, mode="dp", flatten=False):
    return t5.Config(bm, bn, bk, group_m, 4, 2, subtile, flatten, mode)


def new_trace(tiles):
    return torch.zeros(tiles * TRACE_INTS, dtype=torch.int32, device=DEVICE)


def trace_rows(trace):
    return [tuple(r) for r in trace.view(-1, TRACE_INTS).cpu().tolist()]


def check_trace(
    rows,
    num_pid_m,
    num_pid_n,
    group_m,
    k_blocks,
    case,
    step_section,
    owner=None,
    done=None,
    loop=None,
    floor=None,
    first=None,
    walk=None,
    whole_k=False,
    K=None,
):
    """Every tile in `done` (default: all) finished exactly once, with all its k-blocks, at the tile
    T4's grouped order gives it, by the program owner(tile) when given; every other tile untouched.
    loop: (programs, first_tile) of a loop over whole tiles, so that a wrong start or step can be named.
    floor: K // BLOCK_K where cdiv(K - 1, BLOCK_K) gives another count, so that one k-block short can be named.
    first: tile -> the program holding its first k-block (stream-K), so that owners taken from it can be named.
    walk: (k_blocks, sk_tiles, programs) of a stream-K launch, so that a walk of OTHER_WALKS can be named.
    whole_k: K is a whole number of k-blocks, so that K // BLOCK_K + 1 (one k-block past) can be named.
    K: the launch's K, so that every tile summing K k-blocks (k_blocks counted in K's elements) can be named."""
    order = grouped_order(num_pid_m, num_pid_n, group_m)
    done = range(len(rows)) if done is None else done
    if step_section != "4.2":  # a loop over whole tiles: one k_segment and one finish_tile per tile
        epilogues_on_other_tiles(rows, done, k_blocks, case, step_section)
    for tile, (epilogues, kbs, prog, pm, pn) in enumerate(rows):
        if tile not in done:
            if epilogues or kbs:
                # tiles before first_tile done: name the loop whose counts these are, where one is
                like = tile_loop_like([r[0] for r in rows], *loop) if loop else None
                fail(
                    T5,
                    f"{case}：tile {tile} 不归这段代码管，却被做了（epilogue {epilogues} 次，k-block {kbs} 个）"
                    + (
                        f"：这正是一个从 {like[0]} 开始、步长 {like[1]} 的循环的次数；要从 first_tile + pid 开始，"
                        "步长 NUM_PROGS"
                        if like
                        else ""
                    ),
                    f"{case}: tile {tile} is not this loop's, yet it was done "
                    f"({count(epilogues, 'epilogue')}, {count(kbs, 'k-block')})"
                    + (
                        f": the counts of a loop that starts at {like[0]} and steps by {like[1]}; start at "
                        "first_tile + pid and step by NUM_PROGS"
                        if like
                        else ""
                    ),
                    step_section,
                )
            continue
        if epilogues != 1:
            said = EPILOGUES_OFF["stream-K" if step_section == "4.2" else "loop"]
            from .stream_k_cases import other_walk_words

            other = other_walk_words(rows, *walk) if walk else None
            said = ("：" + other[0], ": " + other[1]) if other else said
            like = tile_loop_like([r[0] for r in rows], *loop) if loop else None
            if like:
                said = (
                    f"：这正是一个从 {like[0]} 开始、步长 {like[1]} 的循环的次数；"
                    "要从 first_tile + pid 开始，步长 NUM_PROGS",
                    f": the counts of a loop that starts at {like[0]} and steps by {like[1]}; start at "
                    "first_tile + pid and step by NUM_PROGS",
                )
            elif loop and stops_short_by_first([r[0] for r in rows], *loop):
                said = (
                    f"：这正是一个起点、步长都对，却停在 num_tiles - first_tile（{len(rows) - loop[1]}）的循环的次数，"
                    f"最后 {loop[1]} 个 tile 没人做；num_tiles 是 tile 号的终点（tile 号本身就从 first_tile 数起），"
                    "循环写成 tl.range(first_tile + pid, num_tiles, NUM_PROGS)",
                    f": the counts of a loop with the right start and step that stops at num_tiles - first_tile "
                    f"({len(rows) - loop[1]}), leaving the last {loop[1]} tiles undone; num_tiles is where the tile "
                    "numbers end (they count from first_tile already): "
                    "tl.range(first_tile + pid, num_tiles, NUM_PROGS)",
                )
            elif loop and one_short([r[0] for r in rows], *loop):
                said = (
                    f"：这正是一个起点、步长都对，却停在 num_tiles - 1 的循环的次数，最后一个 tile（{len(rows) - 1}）"
                    "没人做；tl.range 本来就不含终点，终点写 num_tiles："
                    "tl.range(first_tile + pid, num_tiles, NUM_PROGS)",
                    ": the counts of a loop with the right start and step that ends at num_tiles - 1, leaving the "
                    f"last tile ({len(rows) - 1}) undone; tl.range already leaves its end out, so the end is "
                    "num_tiles: tl.range(first_tile + pid, num_tiles, NUM_PROGS)",
                )
            fail(
                T5,
                f"{case}：tile {tile} 的 epilogue 跑了 {epilogues} 次，应当恰好 1 次{said[0]}",
                f"{case}: tile {tile} had {epilogues} epilogues, exactly 1 expected{said[1]}",
                step_section,
            )
        if kbs != k_blocks:
            # each program's k-blocks all counted on the tile numbered as the program: k_segment given its pid
            by_pid = loop is not None and counted_under_pids(rows, k_blocks, *loop, num_pid_m * num_pid_n)
            floored = floor is not None and all(rows[t][1] == floor for t in done)  # every tile one k-block short
            past = PAST_WHOLE_K if whole_k and all(rows[t][1] == k_blocks + 1 for t in done) else ("", "")
            # k_blocks = K, or tl.cdiv(K, BLOCK_K) * BLOCK_K (every probe and test here runs BLOCK_K = 32)
            elements = {K: f"K = {K}", k_blocks * 32: f"tl.cdiv(K, BLOCK_K) * BLOCK_K = {k_blocks * 32}"}
            said = next((w for n, w in elements.items() if all(rows[t][1] == n for t in done)), None)
            stepped = walk and walked_by_one_words(rows, *walk)  # a stream-K walk stepping back one k-block
            if stepped:
                past = ("：" + stepped[0], ": " + stepped[1])
            if K is not None and said:
                past = (
                    f"：每个 tile 都算了 {said} 个：k_blocks 数成了 K 的元素个数；一个 tile 的 k-block 是 "
                    f"tl.cdiv(K, BLOCK_K) = {k_blocks} 个",
                    f": every tile summed {said}: k_blocks was counted in K's elements; a tile has "
                    f"tl.cdiv(K, BLOCK_K) = {k_blocks} k-blocks",
                )
            fail(
                T5,
                f"{case}：tile {tile} 一共算了 {kbs} 个 k-block，应当是 {k_blocks} 个"
                + (
                    "：每个程序的 k-block 都记在了编号等于程序号的 tile 上：k_segment 拿到的是程序号，"
                    "要传这一轮的 tile_id"
                    if by_pid
                    else ""
                )
                + (
                    f"：每个 tile 都比 tl.cdiv(K, BLOCK_K) 少算了一个 k-block，只算了 {floor} 个：这是 K // BLOCK_K"
                    "（向下取整，丢掉了 K 末尾那个不满的 k-block）或 tl.cdiv(K, BLOCK_K) - 1 的个数，"
                    "这组用例分不出是哪一种；"
                    "一个 tile 的 k-block 是 0 .. tl.cdiv(K, BLOCK_K)"
                    if floored
                    else ""
                )
                + past[0],
                f"{case}: tile {tile} summed {count(kbs, 'k-block')}, {k_blocks} expected"
                + (
                    ": each program's k-blocks were all counted on the tile numbered as the program: k_segment was "
                    "given the program id; pass it this iteration's tile_id"
                    if by_pid
                    else ""
                )
                + (
                    f": every tile summed {floor}, one k-block fewer than tl.cdiv(K, BLOCK_K): the count of K "
                    "// BLOCK_K (the floor, which leaves the partial k-block at K's end out) or of "
                    "tl.cdiv(K, BLOCK_K) - 1, and these cases cannot tell which; a tile's k-blocks are 0 .. "
                    "tl.cdiv(K, BLOCK_K)"
                    if floored
                    else ""
                )
                + past[1],
                step_section,
                "2.3",  # a whole tile's k-blocks: 0 .. tl.cdiv(K, BLOCK_K)
            )
        if (pm, pn) != order[tile]:
            from .places import known_places  # a cause is named only where the places are those it gives

            said = known_places(rows, done, order, num_pid_n, group_m)
            either = (
                ("：这个网格分不出是哪一种：", ": this grid cannot tell which: ") if len(said) > 1 else ("：", ": ")
            )
            fail(
                T5,
                f"{case}：tile {tile} 被算在 ({pm}, {pn})，按 T4 的分组顺序应当是 {order[tile]}"
                + (either[0] + "；或者".join(zh for zh, _ in said) if said else ""),
                f"{case}: tile {tile} was computed at ({pm}, {pn}); T4's grouped order puts it at {order[tile]}"
                + (either[1] + "; or ".join(en for _, en in said) if said else ""),
                step_section,
            )
        if owner is not None and prog != owner(tile):
            # every tile finished by the program that holds its first k-block, not its last
            firsts = first is not None and all(rows[t][2] == first(t) for t in done)
            shared = other_share_out(rows, done, k_blocks, *loop) if loop and not firsts else None
            fail(
                T5,
                f"{case}：tile {tile} 由程序 {prog} 收尾，应当是程序 {owner(tile)}"
                + (
                    "：每个 tile 都由持有它第一个 k-block 的程序收尾；owner 是持有它最后一个 k-block 的程序"
                    "（it_end == tile_begin + k_blocks 的那一段），其余的段发布 partial"
                    if firsts
                    else (shared[0] if shared else "")
                ),
                f"{case}: tile {tile} was finished by program {prog}, program {owner(tile)} expected"
                + (
                    ": every tile was finished by the program holding its first k-block; the owner is the program "
                    "holding its last k-block (the segment with it_end == tile_begin + k_blocks), and every other "
                    "segment is published as a partial"
                    if firsts
                    else (shared[1] if shared else "")
                ),
                step_section,
            )


def product_case(t5, M, N, K, dtype, layout, progs, config, trace=True):
    """matmul into a padded C; A and B inside NaN.  Returns (c, a, b, trace rows)."""
    a, _ = padded(M, K, dtype)
    b, _ = padded(K, N, dtype)
    if layout == "b = W.t()":
        b = padded(N, K, dtype)[0].t()
    elif layout == "column-major a":
        a = padded(K, M, dtype)[0].t()
    out, _ = padded(M, N, dtype)
    tiles = triton.cdiv(M, config.BLOCK_M) * triton.cdiv(N, config.BLOCK_N)
    # guard rows past the tiles: a loop running past num_tiles counts there, not beyond the trace
    tr = new_trace(2 * tiles + progs * config.occupancy) if trace else None
    blocks = f"{config.BLOCK_M}x{config.BLOCK_N}x{config.BLOCK_K}"
    case = f"{M}x{K} @ {K}x{N} {dtype}, {layout}, mode={config.mode}, BLOCK {blocks}"
    c = run_matmul(t5, case, "3.1", a, b, config=config, num_programs=progs, out=out, trace=tr)
    stream_k = config.mode not in ("dp", "swap")
    if stream_k:  # the plan the launch used, from your stream_k_split: more stream-K tiles than tiles runs past them
        slots = (progs or t5.num_sms(a.device)) * config.occupancy
        plan = t5.stream_k_plan(tiles, triton.cdiv(K, config.BLOCK_K), slots, config.mode)
        if plan[0] > tiles:
            fail(
                T5,
                f"{case}：stream_k_split 给出的 (sk_tiles, programs) 是 {tuple(plan)}，可一共只有 {tiles} 个 tile："
                "sk_tiles 最多是 num_tiles（它返回 (sk_tiles, programs)）",
                f"{case}: stream_k_split gave (sk_tiles, programs) = {tuple(plan)}, yet there are {tiles} tiles: "
                "sk_tiles is at most num_tiles (it returns (sk_tiles, programs))",
                "4.3",
            )
    return c, a, b, (no_tile_past(trace_rows(tr), tiles, case, stream_k) if trace else None)


def check_product(c, a, b, dtype, case, section, tile=None):
    """C against float64; tile=(BLOCK_M, BLOCK_N): a wrong product also lists which tiles are off."""
    if not isinstance(c, torch.Tensor) or tuple(c.shape) != (a.shape[0], b.shape[1]):
        fail(T5, f"{case}：结果形状不对", f"{case}: the result has the wrong shape", section)
    if c.isnan().any():
        fail(
            T5,
            f"{case}：C 里有 {c.isnan().sum().item()} 个 NaN，A、B 里却没有：NaN 是从别处来的，比如有 tile 没写、"
            "读到了 A 或 B 外面，或者（stream-K）加上了 workspace 里没有哪次发布写过的格子",
            f"{case}: {c.isnan().sum().item()} NaN in C, where A and B hold none: they came from elsewhere, from a "
            "tile never written, a load outside A or B, or (stream-K) workspace cells that no publish wrote, say",
            section,
        )
    want = a.double() @ b.double()
    err = rel_err(c, want)
    if err > OUT_RTOL[dtype]:
        off, total = tiles_off(c, want, OUT_RTOL[dtype], tile) if tile else ([], 0)
        shown = ", ".join(map(str, off[:8])) + (" ..." if len(off) > 8 else "")
        fail(
            T5,
            f"{case}：相对误差 {err:.2e} > {OUT_RTOL[dtype]:.1e}"
            + (f"；{total} 个 tile 里错了 {len(off)} 个，(pid_m, pid_n)：{shown}" if off else ""),
            f"{case}: relative error {err:.2e} > {OUT_RTOL[dtype]:.1e}"
            + (
                f"; {len(off)} of the {total} tiles {agree(len(off), 'is', 'are')} off, (pid_m, pid_n): {shown}"
                if off
                else ""
            ),
            section,
        )


def tiles_off(c, want, tol, tile):
    """([(pid_m, pid_n) of each tile of C whose relative error passes tol], the number of tiles)."""
    bm, bn = tile
    rows, cols = triton.cdiv(c.shape[0], bm), triton.cdiv(c.shape[1], bn)
    off = [
        (m, n)
        for m in range(rows)
        for n in range(cols)
        if rel_err(c[m * bm : (m + 1) * bm, n * bn : (n + 1) * bn], want[m * bm : (m + 1) * bm, n * bn : (n + 1) * bn])
        > tol
    ]
    return off, rows * cols


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def ready(t5, a, b, fallback):
    """tma_ready(a, b, fallback), after checking that it returned the three values matmul unpacks and
    left the caller's a and b as they were (t.set_(aligned_copy(t)) would copy into the caller's tensor)."""

    def layout(t):
        return tuple(t.shape), t.stride(), t.storage_offset(), t.data_ptr()

    seen = {"a": layout(a), "b": layout(b)}
    got = three_values(t5.tma_ready(a, b, fallback))
    for name, t in (("a", a), ("b", b)):
        if layout(t) != seen[name]:
            was, now, moved = seen[name][:3], layout(t)[:3], seen[name][3] != t.data_ptr()
            fail(
                T5,
                f"tma_ready 改动了调用者的 {name}：（形状, 步长, 偏移）原来是 {was}，现在是 {now}"
                + ("，数据也换了地方" if moved else "")
                + "。副本要作为新张量返回，调用者的张量保持原样",
                f"tma_ready changed the caller's {name}: its (shape, strides, offset) were {was}, now {now}"
                + (", its data elsewhere" if moved else "")
                + ". Return a copy as a new tensor and leave the caller's as it was",
                "3.2",
            )
    return got


def three_values(got):
    """got, tma_ready's answer, as a tuple once it is seen to be three values: a tuple or a list, which
    matmul unpacks alike (`return ready + [kmajor]` is as right as `return a, b, kmajor`).  Another
    length, or None (a branch that returns nothing), fails naming what it was."""
    if not (isinstance(got, (tuple, list)) and len(got) == 3):
        shown = (
            f"{len(got)} values" if isinstance(got, (tuple, list)) else "None" if got is None else type(got).__name__
        )
        fail(
            T5,
            f"tma_ready 返回了 {shown}，应当返回三个值 (a, b, b_kmajor)：每个分支都要返回三个（matmul 就这样拆开）",
            f"tma_ready returned {shown}, not the three values (a, b, b_kmajor): every branch returns all three "
            "(matmul unpacks them so)",
            "3.2",
        )
    return tuple(got)
