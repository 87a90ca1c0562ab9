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
