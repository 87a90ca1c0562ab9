"""More shapes of a wrong stream-K split (T5.3), each named only where the result is exactly what that mistake
gives (zhlearner15b's walk, 2026-12-05): runs placed as if every run before were one k-block longer; owners worked
out as if every run had one length; the k-blocks of every tile shared out, not of the first sk_tiles; a full wave
sent to stream-K where the tiles fill whole waves; and programs that are what the learner's own, wrong,
persistent_grid gives (the split is not the cause then).  waits15 (2026-12-05): tl.maximum for sk_run's
tl.minimum, and tl.minimum for sk_program_of's tl.maximum, each the first failure of make test STEP=T5.3 with the
expected and the got lists alone."""

from course.messages import fail

from .common import T5


def begins_as_if_longer(got, total, progs):
    """(zh, en) where each run starts at pid * (total // NUM_PROGS + 1), its length right; else
    begin_by_maximum's words."""
    base, extra = divmod(total, progs)
    if got != [(p * (base + 1), p * (base + 1) + base + (p < extra)) for p in range(progs)]:
        return begin_by_maximum(got, total, progs)
    # with total % NUM_PROGS == 0, pid * base + tl.maximum(pid, extra) is pid * (base + 1) too (waits15)
    also = (
        (
            "（这里 total % NUM_PROGS 是 0，这也正是 pid * (total // NUM_PROGS) + max(pid, total % NUM_PROGS)："
            "用了 tl.maximum，应当是 tl.minimum）",
            " (total % NUM_PROGS is 0 here, so this is also pid * (total // NUM_PROGS) + max(pid, total % "
            "NUM_PROGS): tl.maximum where tl.minimum belongs)",
        )
        if extra == 0
        else ("", "")
    )
    return (
        "：每段都从 pid * (total // NUM_PROGS + 1) 开始，好像前面每一段都多一个 k-block；前面只有 "
        "min(pid, total % NUM_PROGS) 段多一个，begin 是 pid * (total // NUM_PROGS) + min(pid, total % NUM_PROGS)"
        + also[0],
        ": each run starts at pid * (total // NUM_PROGS + 1), as if every run before it were one k-block longer; "
        "only min(pid, total % NUM_PROGS) of them are, so begin is pid * (total // NUM_PROGS) + min(pid, "
        "total % NUM_PROGS)" + also[1],
    )


def begin_by_maximum(got, total, progs):
    """(zh, en) where each run starts at pid * (total // NUM_PROGS) + max(pid, total % NUM_PROGS), its length
    right (tl.maximum where sk_run's tl.minimum goes, waits15); else ("", "")."""
    base, extra = divmod(total, progs)
    begins = [p * base + max(p, extra) for p in range(progs)]
    if got != [(b, b + base + (p < extra)) for p, b in enumerate(begins)]:
        return base_by_cdiv(got, total, progs)
    return (
        "：每段的 begin 都是 pid * (total // NUM_PROGS) + max(pid, total % NUM_PROGS)，用了 tl.maximum，"
        "应当是 tl.minimum：前面多一个 k-block 的段最多 total % NUM_PROGS 个，所以加上的是两者中小的那个",
        ": each run begins at pid * (total // NUM_PROGS) + max(pid, total % NUM_PROGS), tl.maximum where "
        "tl.minimum belongs: at most total % NUM_PROGS runs before it are one k-block longer, so the smaller of "
        "the two is added",
    )


def base_by_cdiv(got, total, progs):
    """(zh, en) where the runs are sk_run's with base = cdiv(total, NUM_PROGS) for total // NUM_PROGS (hunt16: the
    expected and the got runs alone were said); else ("", "")."""
    base, extra = -(-total // progs), total % progs
    begins = [p * base + min(p, extra) for p in range(progs)]
    if extra == 0 or got != [(b, b + base + (p < extra)) for p, b in enumerate(begins)]:
        return "", ""
    return (
        f"：这是 base = cdiv(total, NUM_PROGS) = {base} 时 sk_run 给的段：每段的基本长度是 total // NUM_PROGS = "
        f"{total // progs}（向下取整），多出来的 total % NUM_PROGS 个再分给前几段各一个；"
        "向上取整的 base 把段铺过了 total",
        f": these are sk_run's runs with base = cdiv(total, NUM_PROGS) = {base}: a run's base length is total // "
        f"NUM_PROGS = {total // progs} (the floor), and the total % NUM_PROGS left over go one each to the first "
        "runs; a base rounded up lays the runs past total",
    )


def owners_as_if_one_length(got_owner, total, progs):
    """(zh, en) where the owners are it // L (or that, at most NUM_PROGS - 1) for L = total // NUM_PROGS + 1 or
    total // NUM_PROGS, the runs all taken as L long; else ("", "")."""
    base, extra = divmod(total, progs)
    for length, formula in ((base + 1, "total // NUM_PROGS + 1"), (base, "total // NUM_PROGS")):
        if length == 0:
            continue
        plain = [it // length for it in range(total)]
        if got_owner in (plain, [min(o, progs - 1) for o in plain]):
            actual = (
                (
                    f"实际上前 total % NUM_PROGS = {extra} 段各 {base + 1} 个，其余各 {base} 个，"
                    "所以 sk_program_of 要分两段算",
                    f"the first total % NUM_PROGS = {extra} runs are {base + 1} long and the others {base}, so "
                    "sk_program_of works in two parts",
                )
                if extra
                else (f"实际上每段都是 {base} 个", f"every run is {base} long")
            )
            return (
                f"：这是 it // ({formula}) = it // {length}，好像每段都是 {length} 个；{actual[0]}",
                f": it is it // ({formula}) = it // {length}, as if every run were {length} long; {actual[1]}",
            )
    return owners_by_minimum(got_owner, total, progs)


def owners_by_minimum(got_owner, total, progs):
    """(zh, en) where the owners past the longer runs are worked out with (it - big) // min(total // NUM_PROGS,
    1) (tl.minimum where sk_program_of's tl.maximum goes, waits15); else ("", "")."""
    base, extra = divmod(total, progs)
    big = extra * (base + 1)
    if base <= 1 or got_owner != [it // (base + 1) if it < big else extra + (it - big) for it in range(total)]:
        return owners_past_big(got_owner, total, progs)
    return (
        f"：长段之后的 k-block 用的是 (it - big) // min(total // NUM_PROGS, 1)，也就是除以 1：用了 tl.minimum，"
        f"应当是 tl.maximum(total // NUM_PROGS, 1)：除以段长 {base}，max 只是挡住段长为 0 时除以 0",
        f": past the longer runs the owners are (it - big) // min(total // NUM_PROGS, 1), a division by 1: "
        f"tl.minimum where tl.maximum(total // NUM_PROGS, 1) belongs, which divides by the run length {base} and "
        "only keeps a length of 0 from dividing by 0",
    )


def fail_if_split_over_all_tiles(rows, k_blocks, sk_tiles, progs, case):
    """Fail where the trace (5 ints a tile: epilogues, k-blocks, finisher, pid_m, pid_n) is that of stream_k_tiles
    sharing out the k-blocks of every tile, not of the first sk_tiles alone (total = num_pid_m * num_pid_n *
    k_blocks): each tile finished once, by the holder of its last k-block in runs cut over all of them."""
    from .stream_k_cases import sk_owner

    tiles = len(rows)
    if sk_tiles >= tiles:
        return
    total = tiles * k_blocks
    if any(r[0] != 1 or r[1] != k_blocks or r[2] != sk_owner(t, k_blocks, total, progs) for t, r in enumerate(rows)):
        return
    fail(
        T5,
        f"{case}：这正是把全部 {tiles} 个 tile 的 k-block 都排成一行、切给 {progs} 个程序的结果（total = num_pid_m * "
        f"num_pid_n * k_blocks），后面的 {tiles - sk_tiles} 个数据并行 tile 也被 stream-K 做了；只有前 sk_tiles 个 "
        "tile 走 stream-K：total = sk_tiles * k_blocks",
        f"{case}: it is what laying the k-blocks of all {tiles} tiles end to end and cutting them over {progs} "
        f"programs gives (total = num_pid_m * num_pid_n * k_blocks), so the {tiles - sk_tiles} data-parallel tiles "
        "after them were done by stream-K too; only the first sk_tiles tiles are stream-K's: total = sk_tiles * "
        "k_blocks",
        "4.1",
        "4.2",
    )


def empty_last_wave(tiles, sms, mode, want, got):
    """(zh, en) where mode auto gave stream-K the tiles of one full wave although the tiles fill whole waves
    exactly (tiles % num_sms == 0: no last wave at all, so no thin one); else ("", "")."""
    if mode != "auto" or tiles % sms or want[0] != 0 or tuple(got) != (sms, sms):
        return "", ""
    return (
        f"：{tiles} 个 tile 正好是 {tiles // sms} 个整波（{tiles} % {sms} = 0），根本没有最后那一薄波；"
        "stream-K 却拿走了一整波：最后一波是空的（rest == 0）时全部走数据并行",
        f": {tiles} tiles are exactly {tiles // sms} full waves ({tiles} % {sms} = 0): there is no thin last wave "
        "at all, yet stream-K took a full wave; with an empty last wave (rest == 0) every tile stays data-parallel",
    )


def grid_of_your_persistent_grid(t5, tiles, sms, want, got):
    """(zh, en) where no tile goes to stream-K and the programs are what the learner's own persistent_grid gives,
    which is not the right count: stream_k_split is right to call it, and persistent_grid (T5.1) is what is
    wrong; else ("", "")."""
    try:
        grid = t5.persistent_grid(tiles, sms)
    except (NotImplementedError, ArithmeticError, TypeError, ValueError):  # not written, or failing: T5.1 says so
        return "", ""
    if want[0] != 0 or tuple(got) != (0, grid) or grid == want[1]:
        return "", ""
    return (
        f"：{grid} 正是你的 persistent_grid({tiles}, {sms}) 返回的；stream_k_split 用它没错，错的是 persistent_grid"
        "（T5.1，test_persistent_grid 查它）：一个 SM 一个程序，但不超过 tile 数",
        f": {grid} is what your persistent_grid({tiles}, {sms}) returns; stream_k_split is right to use it, and "
        "persistent_grid is what is wrong (T5.1, test_persistent_grid checks it): one program per SM, never more "
        "than the tiles",
    )


def owners_past_big(got_owner, total, progs):
    """(zh, en) where the owners past the longer runs lack sk_program_of's extra + (the programs of the longer runs)
    or its - big (the k-blocks of the longer runs), hunt16: the expected and the got lists alone were said; else
    ("", "")."""
    base, extra = divmod(total, progs)
    big = extra * (base + 1)
    if base == 0 or extra == 0:
        return "", ""
    if got_owner == [it // (base + 1) if it < big else (it - big) // base for it in range(total)]:
        return (
            f"：长段之后的 k-block 算成了 (it - big) // {base}，没有加上 extra：那是从长段后面数的第几段，"
            f"前面还有 total % NUM_PROGS = {extra} 个长段的程序，owner 是 extra + (it - big) // base",
            f": past the longer runs the owners are (it - big) // {base}, without extra: that numbers the runs from "
            f"the first short one, while the first total % NUM_PROGS = {extra} programs hold the longer runs before "
            "it; the owner is extra + (it - big) // base",
        )
    if got_owner == [it // (base + 1) if it < big else extra + it // base for it in range(total)]:
        return (
            f"：长段之后的 k-block 算成了 extra + it // {base}，没有先减去 big：it 里还数着前面长段的 "
            f"big = {big} 个 k-block，owner 是 extra + (it - big) // base",
            f": past the longer runs the owners are extra + it // {base}, without taking big off first: it still "
            f"counts the big = {big} k-blocks of the longer runs; the owner is extra + (it - big) // base",
        )
    return "", ""
