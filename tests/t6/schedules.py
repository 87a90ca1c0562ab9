"""The tile schedule as the counts give it, worked out on the host for T6.2's tests (test_tile_schedule.py):
the tiles every expert has, the bound the host launches for, and a schedule in runs of consecutive ids."""

import triton

from course.i18n import count


def upper_bound(counts, bm, bn, n):
    return (triton.cdiv(sum(counts), bm) + min(len(counts), sum(counts))) * triton.cdiv(n, bn)


def grouped_place(index, num_pid_m, num_pid_n, group_m):
    """(pid_m, pid_n) that T4's grouped order (T4 §2) gives tile `index` of a num_pid_m x num_pid_n grid."""
    in_group = group_m * num_pid_n
    first = index // in_group * group_m
    size = max(1, min(num_pid_m - first, group_m))
    return first + index % in_group % size, index % in_group // size


def one_grid_m(places, local, want_m, num_pid_n, group_m):
    """An m-block count M for which every tile's (pid_m, pid_n) is T4's grouped order of its index within its
    expert, local[t], in an M x num_pid_n grid, where M is not every expert's own (tile_coords handed one count
    for all the experts); else None."""
    fits = [
        m
        for m in range(1, 2 * sum(want_m) + 2)
        if any(w != m for w in want_m if w)
        and all(place[1:] == grouped_place(i, m, num_pid_n, group_m) for place, i in zip(places, local, strict=True))
    ]
    return sum(want_m) if sum(want_m) in fits else fits[0] if fits else None  # several may fit: the sum first


def expected_tiles(counts, bm, bn, n):
    """{(expert, pid_m, pid_n): (row_begin, row_end)} of every tile the counts give."""
    want, start = {}, 0
    for e, c in enumerate(counts):
        for pm in range(triton.cdiv(c, bm)):
            for pn in range(triton.cdiv(n, bn)):
                want[(e, pm, pn)] = (start + pm * bm, min(start + (pm + 1) * bm, start + c))
        start += c
    return want


def runs_per_program(rows, progs):
    """{program: (first tile, last tile)} where every tile was done once and each program's tiles are
    one run of consecutive ids, in program order, unlike the strided p, p + progs, ...; else None."""
    programs = [row[6] for row in rows]
    if any(row[0] != 1 for row in rows) or programs != sorted(programs):
        return None
    if programs == [tile % progs for tile in range(len(rows))]:
        return None
    runs = {}
    for tile, prog in enumerate(programs):
        runs[prog] = (runs.get(prog, (tile, tile))[0], tile)
    return runs


def too_many_column_blocks(rows, counts, n, bn, bm):
    """(zh, en) where the tiles recorded (the trace's rows, within the bound) have a pid_n past the
    cdiv(N, BLOCK_N) column blocks N needs: num_pid_n came out too large, named where the pid_n seen are
    those of cdiv(N, BLOCK_M) (BLOCK_M for BLOCK_N) or N // BLOCK_N + 1; None otherwise."""
    n_blocks = -(-n // bn)
    done_n = [row[3] for row in rows if row[0]]
    if not done_n or max(done_n) < n_blocks:
        return None

    def schedule_of(num_pid_n):  # whether each tile id below the bound was done, by the expert num_pid_n gives it
        ends, total = [], 0
        for c in counts:
            total += -(-c // bm) * num_pid_n
            ends.append(total)
        return all(
            row[0] and row[1] == sum(end <= t for end in ends) and row[3] < num_pid_n
            for t, row in enumerate(rows[: min(len(rows), total)])
        )

    how = (
        (
            "：num_pid_n 算成了 cdiv(N, BLOCK_M)，用了 BLOCK_M 而不是 BLOCK_N",
            ": num_pid_n was cdiv(N, BLOCK_M), BLOCK_M for BLOCK_N",
        )
        if -(-n // bm) != n_blocks and schedule_of(-(-n // bm))
        else ("：num_pid_n 算成了 N // BLOCK_N + 1", ": num_pid_n was N // BLOCK_N + 1")
        if schedule_of(n // bn + 1)
        else ("", "")
    )
    return (
        f"做了的 tile 里有 pid_n = {max(done_n)}，而 N = {n} 只要 cdiv(N, BLOCK_N) = {n_blocks} 个列块（pid_n 0.."
        f"{n_blocks - 1}）{how[0]}；num_pid_n 多算了，每个专家的 tile 就多了，总数也跟着多了",
        f"tiles were done with pid_n = {max(done_n)}, where N = {n} needs cdiv(N, BLOCK_N) = {n_blocks} column "
        f"blocks (pid_n 0..{n_blocks - 1}){how[1]}; num_pid_n came out too large, and with it each expert's tiles "
        "and the total",
    )


def m_blocks_of_row_ends(rows, counts, bm, bn, n):
    """(zh, en) where the tiles recorded (the trace's rows, within the bound) are, expert by expert, as many as
    m_blocks taken from each expert's row end (cdiv(offsets[e], BLOCK_M)) give below the bound, and not what
    its count gives: m_blocks came from offsets; None otherwise."""
    n_blocks, bound, first = -(-n // bn), len(rows), 0
    ends = [sum(counts[: e + 1]) for e in range(len(counts))]
    wrong = [0] * len(counts)  # each expert's tiles below the bound, m-blocks from its row end
    for e, end in enumerate(ends):
        tiles = -(-end // bm) * n_blocks
        wrong[e] = max(0, min(first + tiles, bound) - first)
        first += tiles
    done = [0] * len(counts)
    for row in rows:
        if row[0]:
            if not 0 <= row[1] < len(counts):
                return None
            done[row[1]] += 1
    right = [-(-c // bm) * n_blocks for c in counts]
    if done != wrong or done == right:
        return None
    e = next(e for e in range(len(counts)) if done[e] != right[e])
    return (
        f"专家 {e} 有 {counts[e]} 行，cdiv(count, BLOCK_M) 个 m 块共 {right[e]} 个 tile，做的却是 {done[e]} 个："
        "每个专家做的 tile 数正是用它的行尾 offsets[e] 算 m 块（cdiv(offsets[e], BLOCK_M)）会有的，"
        "总数也就大了：m_blocks 要从 counts 算",
        f"expert {e} has {counts[e]} rows, cdiv(count, BLOCK_M) m-blocks making {right[e]} tiles, yet {done[e]} were "
        "done: each expert's tiles done are those m-blocks taken from its row end, cdiv(offsets[e], BLOCK_M), would "
        "give, and the total grew with them: m_blocks come from counts",
    )


def padded_start(counts, e, pm, bm, begin, want):
    """(zh, en) where expert e's tile pid_m starts at `begin`, not `want`, and begin is where padding every
    expert's rows to a multiple of BLOCK_M would start it (the m-blocks of the experts before, times
    BLOCK_M); ("", "") otherwise."""
    if begin == want or begin != (sum(-(-c // bm) for c in counts[:e]) + pm) * bm:
        return "", ""
    return (
        "：它的起点正是把每个专家的行数补齐到 BLOCK_M 的倍数时的位置（前面各专家的 m 块数乘 BLOCK_M），"
        "而行并没有补齐（§3.1）：专家 e 的行从 offsets[e] - counts[e] 开始",
        ": it starts where padding each expert's rows to a multiple of BLOCK_M would put it (the m-blocks of the "
        "experts before, times BLOCK_M), and no rows are padded (§3.1): expert e's rows start at offsets[e] - "
        "counts[e]",
    )


def rows_words(counts, e, bm, begin, end, want):
    """(zh, en) where expert e's tile covers rows begin..end-1, not want = (a, b), as a row_begin without the
    expert's first row, a row_end cut at the expert's count or one row short, or a row_begin taken from the row
    end less the expert's m-blocks times BLOCK_M would make it; ("", "") otherwise."""
    (a, b), first = want, sum(counts[:e])
    if first and begin == a - first:
        return (
            f"：它的起点少了专家 {e} 的第一行 {first}：算 row_begin 时漏了专家的行首 offsets[e] - counts[e]"
            "（row_begin = 行首 + pid_m * BLOCK_M）",
            f": it starts {first} rows early, expert {e}'s first row: row_begin left out the expert's first row, "
            "offsets[e] - counts[e] (row_begin = that first row + pid_m * BLOCK_M)",
        )
    if counts[e] and begin == a + counts[e]:
        return (
            f"：它的起点多了专家 {e} 的行数 {counts[e]}：row_begin 从专家的行尾 offsets[e] 算起了，"
            "专家的第一行是 offsets[e] - counts[e]",
            f": it starts {counts[e]} rows late, expert {e}'s count: row_begin was taken from the expert's row end, "
            "offsets[e], where its first row is offsets[e] - counts[e]",
        )
    if begin == a and first and end == min(a + bm, counts[e]) and end != b:
        return (
            f"：它的 row_end 截在了专家的行数 counts[e] = {counts[e]}，而不是它的行尾 offsets[e] = {first + counts[e]}",
            f": its row_end was cut at the expert's count, counts[e] = {counts[e]}, not at its row end, offsets[e] = "
            f"{first + counts[e]}",
        )
    pad = -(-counts[e] // bm) * bm - counts[e]  # the rows expert e's last m-block leaves empty
    if pad and begin == a - pad:
        return (
            f"：它早了 {pad} 行，正是专家 {e} 最后一个 m 块空出的行数：row_begin 从专家的行尾减去 m 块数乘 BLOCK_M "
            "算起了，好像行补齐过；专家的第一行是 offsets[e] - counts[e]",
            f": it starts {pad} rows early, the rows expert {e}'s last m-block leaves empty: row_begin was taken as "
            "the expert's row end less its m-blocks times BLOCK_M, as if its rows were padded; its first row is "
            "offsets[e] - counts[e]",
        )
    if begin == a and end == b - 1:
        return (
            "：少了最后一行：row_end 是 tile 之后的第一行（不含），min(row_begin + BLOCK_M, offsets[e])，不要再减 1",
            ": its last row is missing: row_end is the first row past the tile (exclusive), min(row_begin + BLOCK_M, "
            "offsets[e]), with no 1 taken off",
        )
    pm = (a - first) // bm
    if first % bm and begin == (first // bm + pm) * bm:  # on one BLOCK_M grid across all the sorted rows
        early = begin < first  # then its first rows are the experts' before it
        return (
            f"：它的起点 {begin} 是把专家 {e} 的第一行 {first} 向下取整到 BLOCK_M 的倍数再加 pid_m * BLOCK_M："
            "m 块没有从专家的第一行重新开始，而是落在整个排序后行的 BLOCK_M 网格上"
            + (f"，于是前 {first - begin} 行是前面专家的" if early else "")
            + "；row_begin = offsets[e] - counts[e] + pid_m * BLOCK_M（§3.2）",
            f": it starts at {begin}, expert {e}'s first row {first} rounded down to a multiple of BLOCK_M, plus "
            "pid_m * BLOCK_M: its m-blocks do not start afresh at the expert's first row but lie on one BLOCK_M grid "
            "across all the sorted rows"
            + (f", so it begins with {count(first - begin, 'row')} of the experts before it" if early else "")
            + "; row_begin = offsets[e] - counts[e] + pid_m * BLOCK_M (§3.2)",
        )
    return "", ""


def summed_ends_words(last, counts, bm, bn, n, e_block):
    """(zh, en) where the largest tile id a schedule did, `last`, is one below the sum of tile_ends over all
    E_BLOCK lanes (each lane past the experts holds the total): the loop's bound was that sum, not the total;
    or one below the tiles of N for num_pid_n (each m-block N tiles): the column blocks given as N; ("", "")
    otherwise."""
    n_blocks, ends = triton.cdiv(n, bn), []
    m_sum = sum(triton.cdiv(c, bm) for c in counts)
    if n != n_blocks and last + 1 == m_sum * n:
        return (
            f"：做了的最大 tile 号是 {last}，正好比 {m_sum} 个 M 块 × N（{n}）= {m_sum * n} 少 1："
            f"tile_ends 是按每个 M 块 N 个 tile 累加的，num_pid_n 的位置上（比如交给 expert_tile_counts 的）传了 N，"
            f"不是列块数 cdiv(N, BLOCK_N) = {n_blocks}",
            f": the largest tile id done is {last}, one below {m_sum} m-blocks times N ({n}) = {m_sum * n}: "
            f"tile_ends were summed with N tiles per m-block, N passed where num_pid_n goes (to expert_tile_counts, "
            f"say), not the column blocks, cdiv(N, BLOCK_N) = {n_blocks}",
        )
    for c in counts:
        ends.append((ends[-1] if ends else 0) + triton.cdiv(c, bm) * n_blocks)
    total = ends[-1] if ends else 0
    summed = sum(ends) + (e_block - len(counts)) * total
    if last + 1 != summed or summed == total:
        return "", ""
    return (
        f"：做了的最大 tile 号是 {last}，正好比 tile_ends 全部 {e_block} 个 lane 的和 {summed} 少 1：循环的上界是"
        f" tile_ends 的和（tl.sum）；总数是 tile_ends 里最大的那个，也就是最后一个专家的那一格，{total}（tl.max）",
        f": the largest tile id done is {last}, one below the sum of all {e_block} lanes of tile_ends, {summed}: the "
        f"loop's bound was the sum of tile_ends (tl.sum); the total is the largest of them, the last expert's lane, "
        f"{total} (tl.max)",
    )


def finish_pids_swapped(done, want, counts, bm):
    """Whether the trace rows `done` hold each expert's tiles exactly once pid_m and pid_n are swapped (and not as
    they are), each starting at its expert's first row + the traced pid_n * BLOCK_M: the rows were worked out from
    the right pid_m, and grouped_tiles handed finish_tile the two the other way round."""
    if {(r[1], r[3], r[2]) for r in done} != set(want) or {(r[1], r[2], r[3]) for r in done} == set(want):
        return False
    return all(r[4] == sum(counts[: r[1]]) + r[3] * bm for r in done)


# The words for finish_pids_swapped (test_tile_schedule.py and test_tile_handoff.py say them)
FINISH_PIDS_SWAPPED = (
    "：把每个 tile 记下的 pid_m 和 pid_n 对调，正好是每个专家的每个 tile，行也对得上：row_begin 没算错，"
    "是交给 finish_tile 的 pid_m 和 pid_n 互换了位置（它的参数是 ..., expert, pid_m, pid_n, ...）",
    ": with each tile's recorded pid_m and pid_n swapped, the trace holds each expert's tiles exactly, rows and "
    "all: row_begin is right, and grouped_tiles handed finish_tile pid_m and pid_n the other way round (its "
    "arguments go ..., expert, pid_m, pid_n, ...)",
)


def block_n_words(done, counts, bm, bn):
    """(zh, en) where every tile in the trace rows `done` starts at its expert's first row + pid_m * BLOCK_N, some
    with pid_m > 0 and BLOCK_N unlike BLOCK_M: row_begin stepped by BLOCK_N; None otherwise."""
    if bn == bm or not any(r[2] for r in done) or any(r[4] != sum(counts[: r[1]]) + r[2] * bn for r in done):
        return None
    return (
        f"：每个 tile 都从专家的行首 + pid_m * BLOCK_N（{bn}）开始：算 row_begin 时用了 BLOCK_N，而不是 BLOCK_M"
        f"（{bm}）；M 块沿着行走，每块 BLOCK_M 行（row_begin = 行首 + pid_m * BLOCK_M）",
        f": every tile starts at its expert's first row + pid_m * BLOCK_N ({bn}): row_begin stepped by BLOCK_N, "
        f"not BLOCK_M ({bm}); the m-blocks go down the rows, BLOCK_M rows each (row_begin = the expert's first "
        "row + pid_m * BLOCK_M)",
    )


def span_words(begin, end):
    """(zh, en) of the sorted rows begin .. end - 1 a tile covers; where end <= begin, that it covers none."""
    if end > begin:
        return f"排好序的第 {begin}..{end - 1} 行", f"sorted rows {begin}..{end - 1}"
    return (
        f"空的一段（row_begin = {begin}，row_end = {end}，一行也没有）",
        f"no rows (row_begin = {begin}, row_end = {end})",
    )
