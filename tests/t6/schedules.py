"""The tile schedule as the counts give it, worked out on the host for T6.2's tests (test_tile_schedule.py):
the tiles every expert has, the bound the host launches for, and a schedule in runs of consecutive ids."""

import triton


def upper_bound(counts, bm, bn, n):
    return (triton.cdiv(sum(counts), bm) + min(len(counts), sum(counts))) * triton.cdiv(n, bn)


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


def too_many_column_blocks(rows, n, bn):
    """(zh, en) where the tiles recorded (the trace's rows, within the bound) have a pid_n past the
    cdiv(N, BLOCK_N) column blocks N needs: num_pid_n came out too large; None otherwise."""
    n_blocks = -(-n // bn)
    done_n = [row[3] for row in rows if row[0]]
    if not done_n or max(done_n) < n_blocks:
        return None
    return (
        f"做了的 tile 里有 pid_n = {max(done_n)}，而 N = {n} 只要 cdiv(N, BLOCK_N) = {n_blocks} 个列块（pid_n 0.."
        f"{n_blocks - 1}）：num_pid_n 多算了（比如 N // BLOCK_N + 1），每个专家的 tile 就多了，总数也跟着多了",
        f"tiles were done with pid_n = {max(done_n)}, where N = {n} needs cdiv(N, BLOCK_N) = {n_blocks} column "
        f"blocks (pid_n 0..{n_blocks - 1}): num_pid_n came out too large (N // BLOCK_N + 1, say), and with it each "
        "expert's tiles and the total",
    )
