"""What each program of a recorded stream-K launch (course/interpreter_order.py's Run) read of A and wrote
of C, against what its run gives it: the k-blocks of its own run alone, and C's tiles it owns alone.

Numbers cannot tell these apart on a CPU: an owner that sums its whole tile itself (the others' partials
added and thrown away, or never used) gives the right C, and so does a program that stores a segment's
partial into C before the owner stores the whole tile over it, in the interpreter's order.  On a GPU the
first does the work of the tile twice, and the second leaves C holding a partial whenever the owner's
store lands first.  Both checks read the run's record: the addresses of each program's loads and stores.
"""

from course.messages import fail
from course.tile_order import grouped_order

from .common import T5
from .stream_k_cases import sk_owner, sk_runs


def _cells(t, lo, hi):
    """(row, column) of the lowest and highest address of an access inside the 2-D tensor t, or None."""
    size, base = t.element_size(), t.data_ptr()
    end = base + t.numel() * size  # t is contiguous in these tests
    if not (base <= lo and hi < end):
        return None
    first, last = (lo - base) // size, (hi - base) // size
    return divmod(first, t.stride(0)), divmod(last, t.stride(0))


def check_reads_and_stores(events, a, c, block, k_blocks, group_m, progs, case, redone=None):
    """Each program read only A's k-blocks of its own run, and C's tiles were stored by their owners
    alone.  All tiles are stream-K's (mode "sk"); block: (BLOCK_M, BLOCK_N, BLOCK_K).  redone(), where
    given, is asked where a program read outside its run: the stream-K tiles the data-parallel pass
    did too (stream_k_cases.data_parallel_below), named as the cause where there are some."""
    bm, bn, bk = block
    num_pid_m, num_pid_n = -(-c.shape[0] // bm), -(-c.shape[1] // bn)
    tiles = num_pid_m * num_pid_n
    total = tiles * k_blocks
    runs = sk_runs(total, progs)
    for p in sorted(events):
        begin, end = runs[p]
        own = {it % k_blocks for it in range(begin, end)}
        read = set()
        for e in events[p]:
            where = _cells(a, e.lo, e.hi) if e.kind == "load" else None
            if where is not None:
                read |= set(range(where[0][1] // bk, where[1][1] // bk + 1))
        extra = sorted(read - own)
        again = redone() if extra and redone is not None else []
        if again:
            fail(
                T5,
                f"{case}：程序 {p} 读了 A 的第 {extra} 个 k-block，在它的段（全局 k-block [{begin}, {end})）之外；"
                f"把 data_parallel_tiles 单独跑一遍，first_tile 设为 stream-K tile 的个数，它做了 tile {again}："
                "整块算的那一趟把 stream-K 已经做完的 tile 又做了一遍。它的循环要从 first_tile + pid 开始",
                f"{case}: program {p} read A's k-blocks {extra}, outside its run (global k-blocks [{begin}, {end})); "
                f"data_parallel_tiles run alone, with first_tile the number of stream-K tiles, did tiles "
                f"{again}: the data-parallel pass did again the tiles stream-K had done. Its loop starts at "
                "first_tile + pid",
                "2.2",
                "4.3",
            )
        if extra:
            fail(
                T5,
                f"{case}：程序 {p} 的段是全局 k-block [{begin}, {end})，也就是各 tile 的第 {sorted(own)} 个 k-block，"
                f"它却还读了 A 的第 {extra} 个 k-block（按列数，每块 BLOCK_K={bk}）：这些属于别的程序的段。"
                "每个程序只读、只加自己那一段，其余的段由别的程序作为 partial 发布，owner 把它们加上来，不自己重算",
                f"{case}: program {p}'s run is global k-blocks [{begin}, {end}), that is k-blocks {sorted(own)} of "
                f"their tiles, yet it also read A's k-blocks {extra} (by column, BLOCK_K={bk} each), which lie in "
                "other programs' runs. Each program reads and sums its own run alone; the other segments are published "
                "as partials by their programs, and the owner adds those, it does not sum them again itself",
                "4.1",
                "4.2",
            )
    owner = {}
    for t, (pid_m, pid_n) in enumerate(grouped_order(num_pid_m, num_pid_n, group_m)):
        owner[pid_m, pid_n] = sk_owner(t, k_blocks, total, progs)
    stored = {}
    for p in sorted(events):
        for e in events[p]:
            where = _cells(c, e.lo, e.hi) if e.kind == "store" else None
            if where is not None:
                stored.setdefault((where[0][0] // bm, where[0][1] // bn), set()).add(p)
    for tile, programs in sorted(stored.items()):
        others = sorted(programs - {owner.get(tile)})
        if others:
            fail(
                T5,
                f"{case}：C 的 tile {tile}（pid_m, pid_n）由程序 {sorted(programs)} 存过；它的 owner 是程序 "
                f"{owner.get(tile)}（持有它最后一个 k-block 的程序），只有 owner 在加完 partial 之后存这个 tile。"
                f"程序 {others} 只持有它的一段，只能把那一段作为 partial 发布：在 GPU 上谁的存储后落地没有定数，"
                "C 里就可能留下一段的 partial",
                f"{case}: C's tile {tile} (pid_m, pid_n) was stored by programs {sorted(programs)}; its owner is "
                f"program {owner.get(tile)} (the one holding its last k-block), and the owner alone stores the tile, "
                f"after adding the partials. Programs {others} hold a segment of it only, which they publish as a "
                "partial: on a GPU either store may land last, and C may be left holding a segment's partial",
                "4.2",
            )
