"""What test_epilogue says where every cell of C was written, but some from the wrong tile's columns or rows: the
store's offsets built on the other block size (no test here: a helper of test_epilogue.py)."""

import torch

from course.i18n import say


def store_on_other_block(c, acc, bm, bn):
    """ "columns" where C differs from acc and every column j of C holds the column of acc that some tile puts at j
    when it stores with offs_n = pid_n * BLOCK_M + tl.arange(0, BLOCK_N) (tile p's column t at p * BLOCK_M + t),
    "rows" the same for offs_m = pid_m * BLOCK_N + tl.arange(0, BLOCK_M); else None.  Any covering tile's line will
    do: where those tiles overlap, which one lands last is a race on a GPU."""
    M, N = c.shape
    if bm == bn or torch.equal(c, acc[:M, :N].to(c.dtype)):
        return None
    for which, step, width, tiles, size in (
        ("columns", bm, bn, acc.shape[1] // bn, N),
        ("rows", bn, bm, acc.shape[0] // bm, M),
    ):

        def held(j, k, which=which):  # C's line j is acc's line k, cast
            if which == "columns":
                return torch.equal(c[:, j], acc[:M, k].to(c.dtype))
            return torch.equal(c[j], acc[k, :N].to(c.dtype))

        covering = ([p * width + j - p * step for p in range(tiles) if 0 <= j - p * step < width] for j in range(size))
        if all(any(held(j, k) for k in sources) for j, sources in enumerate(covering)):
            return which
    return None


def store_on_other_block_words(which):
    if which == "columns":
        return say(
            zh="C 的每一列都是某个 tile 的 acc 的一列，可这些 tile 的列从 pid_n * BLOCK_M 起（offs_n = pid_n * BLOCK_M "
            "+ tl.arange(0, BLOCK_N)），彼此重叠或者错开：列偏移是 pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            en="every column of C holds a column of acc from a tile whose columns start at pid_n * BLOCK_M (offs_n = "
            "pid_n * BLOCK_M + tl.arange(0, BLOCK_N)), the tiles overlapping or apart: the columns' offset is pid_n * "
            "BLOCK_N + tl.arange(0, BLOCK_N)",
        )
    return say(
        zh="C 的每一行都是某个 tile 的 acc 的一行，可这些 tile 的行从 pid_m * BLOCK_N 起（offs_m = pid_m * BLOCK_N "
        "+ tl.arange(0, BLOCK_M)），彼此重叠或者错开：行偏移是 pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        en="every row of C holds a row of acc from a tile whose rows start at pid_m * BLOCK_N (offs_m = pid_m * "
        "BLOCK_N + tl.arange(0, BLOCK_M)), the tiles overlapping or apart: the rows' offset is pid_m * BLOCK_M + "
        "tl.arange(0, BLOCK_M)",
    )


def other_block_gaps(unwritten, grid, bm, bn):
    """ "rows" where the cells of C never written are exactly those a store with offs_m = pid_m * BLOCK_N +
    tl.arange(0, BLOCK_M) leaves (tile p's rows from p * BLOCK_N on: gaps between them where BLOCK_N > BLOCK_M,
    or past the last), "columns" the same for offs_n = pid_n * BLOCK_M + tl.arange(0, BLOCK_N); else None."""
    M, N = unwritten.shape
    if bm == bn:
        return None
    for which, step, width, tiles, size in (("rows", bn, bm, grid[0], M), ("columns", bm, bn, grid[1], N)):
        reached = torch.zeros(size, dtype=torch.bool, device=unwritten.device)
        for p in range(tiles):
            reached[p * step : p * step + width] = True
        reached = reached[:, None].expand(M, N) if which == "rows" else reached[None, :].expand(M, N)
        if not reached.all() and torch.equal(unwritten, ~reached):
            return which
    return None


def other_block_gaps_words(which):
    if which == "rows":
        return say(
            zh="：正好是 offs_m = pid_m * BLOCK_N + tl.arange(0, BLOCK_M) 写不到的行（每个 tile 的行从 pid_m * BLOCK_N "
            "起）：行偏移是 pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
            en=": exactly the rows a store with offs_m = pid_m * BLOCK_N + tl.arange(0, BLOCK_M) never reaches (each "
            "tile's rows from pid_m * BLOCK_N on): the rows' offset is pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        )
    return say(
        zh="：正好是 offs_n = pid_n * BLOCK_M + tl.arange(0, BLOCK_N) 写不到的列（每个 tile 的列从 pid_n * BLOCK_M "
        "起）：列偏移是 pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        en=": exactly the columns a store with offs_n = pid_n * BLOCK_M + tl.arange(0, BLOCK_N) never reaches (each "
        "tile's columns from pid_n * BLOCK_M on): the columns' offset is pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
    )
