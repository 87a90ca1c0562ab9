"""The two coordinates of a box the other way round (T5.2): what k_block_loop sums when one of its
loads swaps them, and what store_tile leaves in C when its store does; and the tile loop's (T5.1)
sums taken at (pid_n, pid_m), which only the products of T5.2 show (T5.1's tests count, they do not
load).  A test names such a swap only when its result is the one worked out here, on the same inputs."""

import torch

from course.messages import fail

from .common import T5
from support import box, rel_err


def sums_with_a_load_swapped(a, b_store, kmajor, tiles, kb_begin, kb_end, bm, bn, bk):
    """{operand: acc} for k_block_loop's sums with A's load, or B's, given its coordinates the other way
    round; `tiles` is the probe's (rows, columns) of tiles, b_store the tensor b's descriptor holds."""
    found = {}
    # "A", "B": that load's coordinates the other way round; "A at off_n", "B at off_m": the other tile offset;
    # "A by BLOCK_M" and the like: that load's k offset kb times another block size than BLOCK_K
    by = [f"{op} by {name}" for op in "AB" for name in ("BLOCK_M", "BLOCK_N")]
    for swapped in ("A", "B", "A at off_n", "B at off_m", *by):
        acc = torch.zeros((tiles[0] * bm, tiles[1] * bn), dtype=torch.float64, device=a.device)
        for m in range(tiles[0]):
            for n in range(tiles[1]):
                off_m, off_n = m * bm, n * bn
                a_row = off_n if swapped == "A at off_n" else off_m
                b_col = off_m if swapped == "B at off_m" else off_n
                for kb in range(kb_begin, kb_end):
                    off_k = kb * bk
                    step = {"BLOCK_M": bm, "BLOCK_N": bn}.get(swapped.split(" by ")[-1], bk)
                    a_k = kb * step if swapped.startswith("A by") else off_k
                    a_box = box(a, off_k, off_m, bm, bk) if swapped == "A" else box(a, a_row, a_k, bm, bk)
                    if swapped.startswith("B by"):
                        off_k = kb * step
                    at = (b_col, off_k) if kmajor else (off_k, b_col)
                    if swapped == "B":
                        at = at[::-1]
                    b_box = box(b_store, *at, *((bn, bk) if kmajor else (bk, bn)))
                    acc[off_m : off_m + bm, off_n : off_n + bn] += a_box @ (b_box.T if kmajor else b_box)
        found[swapped] = acc
    return found


def fail_if_a_load_swapped(acc, a, b_store, kmajor, tiles, kb_begin, kb_end, blocks, tol, case, shape):
    """Fail, naming the load, where acc (float32, the probe's tiles cut to shape, (M, N)) is the sum
    that a load with its coordinates the other way round gives.  blocks: (BLOCK_M, BLOCK_N, BLOCK_K)."""
    right = {"A": "[off_m, off_k]", "B": "[off_n, off_k]" if kmajor else "[off_k, off_n]"}
    held = {"A": ("A (M, K)",) * 2, "B": ("Bᵀ (N, K)", "B^T (N, K)") if kmajor else ("B (K, N)",) * 2}
    sums = sums_with_a_load_swapped(a, b_store, kmajor, tiles, kb_begin, kb_end, *blocks)
    sums = {k: v[: shape[0], : shape[1]] for k, v in sums.items()}
    # named only where one swap alone gives acc, and gives more than zeros (as a loop summing nothing would)
    found = [k for k, v in sums.items() if v.any() and rel_err(acc, v) <= tol]
    for operand in found if len(found) == 1 else ():
        if " by " in operand:  # the k offset of one load kb times BLOCK_M or BLOCK_N
            mine, used = operand.split(" by ")
            fail(
                T5,
                f"{case}：累加器正是 {mine} 的 box 的 k 偏移写成 kb * {used} 时的和：第 kb 个 k-block 从 "
                f"kb * BLOCK_K 开始，{mine} 在 {right[mine]} 处载入，off_k = kb * BLOCK_K",
                f"{case}: the accumulator is the sum that {mine}'s boxes give with their k offset kb * {used}: "
                f"k-block kb starts at kb * BLOCK_K, so {mine} is loaded at {right[mine]} with off_k = kb * BLOCK_K",
                "3.1",
            )
        if " at " in operand:  # the tile offset of the other dimension: A's rows at off_n, or B's columns at off_m
            mine, used = operand.split(" at ")
            starts = {
                "A": ("A 的行从 off_m 起", "A's rows start at off_m"),
                "B": ("B 的列从 off_n 起", "B's columns start at off_n"),
            }
            fail(
                T5,
                f"{case}：累加器正是 {mine} 的 box 用 {used} 作 tile 偏移时的和：{starts[mine][0]}，"
                f"{mine} 在 {right[mine]} 处载入",
                f"{case}: the accumulator is the sum that {mine}'s boxes give with {used} as their tile offset: "
                f"{starts[mine][1]}, so {mine} is loaded at {right[mine]}",
                "3.1",
            )
        given = "[" + ", ".join(reversed(right[operand][1:-1].split(", "))) + "]"
        fail(
            T5,
            f"{case}：累加器正是 {operand} 的 box 按反过来的坐标载入（{given}）时的和：load 的坐标是描述符所持张量的 "
            f"[行, 列]，{held[operand][0]} 要在 {right[operand]} 处载入",
            f"{case}: the accumulator is the sum that {operand}'s boxes give when loaded with their coordinates the "
            f"other way round ({given}): a load's coordinates are [row, column] of the tensor its descriptor "
            f"holds, so {held[operand][1]} is loaded at {right[operand]}",
            "3.1",
        )


def stored_transposed(tiles, c, fill, bm, bn, subtile=1, turned=None, dropped=False):
    """What store_tile leaves in C (fill where nothing was written) when each part of tiles' tile
    (pid_m, pid_n), the whole tile or each of its `subtile` column slices, is stored with its
    coordinates the other way round ([col, row] for [row, col]), the store clipping it at C's edges;
    turned: the parts (0 the left half, 1 the right) so stored, the others where they belong (all).
    dropped: the turned parts not stored at all, which leaves the same C where their stores all fall
    outside it (a C of 5 rows, say): a swap is then no more likely than a store left out."""
    out = torch.full(c.shape, fill, dtype=c.dtype, device=c.device)
    rows, cols = c.shape
    width = bn // subtile
    for m in range(tiles.shape[0] // bm):
        for n in range(tiles.shape[1] // bn):
            for i in range(subtile):
                r, k = n * bn + i * width, m * bm  # the part's [row, col], [m * bm, n * bn + i * width], turned
                if turned is not None and i not in turned:
                    r, k = m * bm, n * bn + i * width
                elif dropped:
                    continue
                if r < rows and k < cols:
                    part = tiles[m * bm : (m + 1) * bm, n * bn + i * width : n * bn + (i + 1) * width]
                    part = part[: rows - r, : cols - k]
                    out[r : r + part.shape[0], k : k + part.shape[1]] = part.to(c.dtype)
    return out


def fail_if_store_swapped(c, want, tiles, fill, bm, bn, case, section, subtile=1):
    """Fail, naming the store, where C is not `want` but what stores with their coordinates the other
    way round leave there (tiles: the finished tiles, as wide as the grid; fill elsewhere)."""
    if torch.equal(c, want):
        return

    def left_by(turned=None):  # C as the turned parts stored turned, and whether a swap alone leaves it
        swapped = stored_transposed(tiles, c, fill, bm, bn, subtile, turned)
        return torch.equal(c, swapped) and not torch.equal(
            swapped, stored_transposed(tiles, c, fill, bm, bn, subtile, turned, dropped=True)
        )

    if left_by():
        what = ("每个 tile", "each tile") if subtile == 1 else ("每个 tile 的每一半", "each half of each tile")
        plus = "" if subtile == 1 else " (+ BLOCK_N // 2)"
        at, turned = f"[pid_m * BLOCK_M, pid_n * BLOCK_N{plus}]", f"[pid_n * BLOCK_N{plus}, pid_m * BLOCK_M]"
    else:  # one half alone turned: the other stored where it belongs
        halves = {
            0: (("每个 tile 的左半", "the left half of each tile"), ""),
            1: (("每个 tile 的右半", "the right half of each tile"), " + BLOCK_N // 2"),
        }
        one = [i for i in halves if subtile == 2 and left_by({i})]
        if len(one) != 1:
            return
        what, plus = halves[one[0]]
        at, turned = f"[pid_m * BLOCK_M, pid_n * BLOCK_N{plus}]", f"[pid_n * BLOCK_N{plus}, pid_m * BLOCK_M]"
    fail(
        T5,
        f"{case}：C 正是{what[0]}按反过来的坐标存储（{turned}）时的样子：store 的坐标是 C 的 [行, 列]，写成 {at}",
        f"{case}: C is what {what[1]} leaves when stored with its coordinates the other way round, at {turned}: a "
        f"store's coordinates are [row, column] of C, {at}",
        section,
    )


def sums_at_turned_tiles(a, b, bm, bn):
    """A @ B (float64, M x N) as the tiles give it when each tile's sum is taken at the other tile's
    coordinates: tile (pid_m, pid_n) holds rows pid_n * BLOCK_M .. of A times columns pid_m * BLOCK_N ..
    of B, the boxes reading zeros outside A and B."""
    (M, K), N = a.shape, b.shape[1]
    rows, cols = -(-M // bm), -(-N // bn)
    a_wide = torch.zeros((max(cols * bm, M), K), dtype=torch.float64, device=a.device)
    b_wide = torch.zeros((K, max(rows * bn, N)), dtype=torch.float64, device=b.device)
    a_wide[:M], b_wide[:, :N] = a.double(), b.double()
    out = torch.zeros((rows * bm, cols * bn), dtype=torch.float64, device=a.device)
    for m in range(rows):
        for n in range(cols):
            out[m * bm : (m + 1) * bm, n * bn : (n + 1) * bn] = (
                a_wide[n * bm : (n + 1) * bm] @ b_wide[:, m * bn : (m + 1) * bn]
            )
    return out[:M, :N]


def fail_if_sums_turned(c, a, b, bm, bn, finish, tol, case):
    """Fail, naming the tile loop's call of k_segment, where C is what the data-parallel tiles give
    when each tile's sum is taken at (pid_n, pid_m) and stored at (pid_m, pid_n); finish: the epilogue
    on the float64 sums (bias, activation)."""
    turned = finish(sums_at_turned_tiles(a, b, bm, bn))
    if rel_err(c, turned) > tol or rel_err(turned, finish(a.double() @ b.double())) <= tol:
        return
    fail(
        T5,
        f"{case}：C 正是每个 tile 的和在 (pid_n, pid_m) 处算、却存到 (pid_m, pid_n) 时的样子：data_parallel_tiles "
        "传给 k_segment 的要和传给 finish_tile 的一样，是 pid_m, pid_n（按这个顺序）。store_tile 把坐标反过来存"
        "（[pid_n * BLOCK_N, pid_m * BLOCK_M]）也得到这样的 C，这里分不出是哪一种：store_tile 的坐标是 "
        "[pid_m * BLOCK_M, pid_n * BLOCK_N]",
        f"{case}: C is what the tiles give when each one's sum is taken at (pid_n, pid_m) and stored at (pid_m, "
        "pid_n): data_parallel_tiles passes k_segment the same pid_m, pid_n as finish_tile, in that order. A "
        "store_tile that stores at the coordinates turned round ([pid_n * BLOCK_N, pid_m * BLOCK_M]) gives this C "
        "too, and this case cannot tell which: store_tile's coordinates are [pid_m * BLOCK_M, pid_n * BLOCK_N]",
        "2.2",
        "2.3",
        "3.3",
    )
