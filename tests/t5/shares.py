"""A loop over whole tiles that does every tile once, but shares them out among the programs otherwise
than §2.2's stride: check_trace (common.py) says so where it finds a tile finished by another program,
since C comes out right and the words 'expected program p' alone read as a wrong product."""


def other_share_out(rows, done, k_blocks, programs, first):
    """(Chinese, English) words for a trace whose tiles in `done` were each finished once with all their
    k-blocks by a program below `programs`: a run of consecutive tiles per program (each program's tiles
    one after another, the programs in order), or another share-out; None where some tile was not."""
    if not done or any(rows[t][0] != 1 or rows[t][1] != k_blocks or not 0 <= rows[t][2] < programs for t in done):
        return None
    owners = [rows[t][2] for t in done]
    runs = []  # (program, first tile, last tile) of each run of one program's tiles
    for tile, prog in zip(done, owners, strict=True):
        if runs and runs[-1][0] == prog:
            runs[-1] = (prog, runs[-1][1], tile)
        else:
            runs.append((prog, tile, tile))
    stride = (
        "§2.2 的循环是跨步的：程序 p 做 first_tile + p、first_tile + p + NUM_PROGS、……，同时在跑的 tile 在 T4 的分组"
        "顺序里挨在一起，共用 L2 里 A 的行和 B 的列：tl.range(first_tile + pid, num_tiles, NUM_PROGS)",
        "§2.2's loop strides: program p takes first_tile + p, first_tile + p + NUM_PROGS, ..., so that the tiles "
        "running at the same time are neighbours in T4's grouped order and share A's rows and B's columns in L2: "
        "tl.range(first_tile + pid, num_tiles, NUM_PROGS)",
    )
    if [p for p, _, _ in runs] == sorted({p for p, _, _ in runs}):
        shown = runs[:3]
        zh_runs = "；".join(f"程序 {p}：tile {a}..{b}" for p, a, b in shown) + ("；……" if len(runs) > 3 else "")
        en_runs = "; ".join(f"program {p}: tiles {a}..{b}" for p, a, b in shown) + ("; ..." if len(runs) > 3 else "")
        return (
            f"：每个 tile 都恰好做了一次，C 算得对，可每个程序做的是一段连续的 tile（{zh_runs}）；{stride[0]}",
            f": every tile was done once, so C comes out right, but each program took a run of consecutive tiles "
            f"({en_runs}); {stride[1]}",
        )
    return (
        f"：每个 tile 都恰好做了一次，C 算得对，只是分给程序的方式和 §2.2 的不同；{stride[0]}",
        f": every tile was done once, so C comes out right, but shared out among the programs otherwise than in "
        f"§2.2; {stride[1]}",
    )
