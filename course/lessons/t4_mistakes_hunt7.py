"""Lesson T4's mutants of our own from the seventh hunt for unplanted mistakes (hunt7, 2026-12-04): each
was let through, or caught with a message that named no cause, until the check named with it was added or
mended.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of t4_mistakes.CAUSES, HUNT7_CAUSES here).  t4_mistakes.py gathers them last, and
their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT7_CAUSES = {
    "grid-cached-by-m": ("只按 M 缓存了", "was cached by M alone"),
    "load-without-other": ("有 mask 却没有 other=", "has a mask but no other="),
}

GRID = '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)\n'

HUNT7 = (
    mutant(
        "hunt7-grid-cached-by-m",
        "T4.4",
        "6.2",
        GRID,
        '    grid = globals().setdefault("_GRIDS", {}).setdefault(\n'
        '        M, (lambda n: lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),))(N)\n'
        "    )\n",
        "test_grid_follows_the_config",
        "grid-too-small+grid-cached-by-m",
        zh="matmul 把网格函数按 M 缓存起来：同样 M、更宽的 N 拿到的是上一次 N 的网格，右边的 tile 没人算；"
        "整个 T4.4 都放过了（hunt7）",
        en="matmul caches its grid function by M alone: a later call with the same M and a wider N gets the last "
        "N's grid, and the tiles on the right go uncomputed; the whole of T4.4 passed (hunt7)",
    ),
    mutant(
        "hunt7-a-load-without-other",
        "T4.2",
        "4.1",
        "(offs_k[None, :] < k_remaining), other=0.0)",
        "(offs_k[None, :] < k_remaining))",
        "test_mainloop_masked_lanes_have_other",
        "load-without-other",
        zh="mainloop 读 A 的 tl.load 有 mask 却没有 other=：解释器把被挡住的 lane 填 0，GPU 上 K 尾部的 lane 是任意值；"
        "整个 T4.2 都放过了（hunt7）",
        en="mainloop's load of A has a mask but no other=: the interpreter fills masked-off lanes with 0, a GPU "
        "leaves the K tail's lanes undefined; the whole of T4.2 passed (hunt7)",
    ),
    mutant(
        "hunt7-b-load-without-other",
        "T4.2",
        "4.1",
        "(offs_n[None, :] < N), other=0.0)",
        "(offs_n[None, :] < N))",
        "test_mainloop_masked_lanes_have_other",
        "load-without-other",
        zh="mainloop 读 B 的 tl.load 有 mask 却没有 other=：同上，整个 T4.2 都放过了（hunt7）",
        en="mainloop's load of B has a mask but no other=: as above, the whole of T4.2 passed (hunt7)",
    ),
)
