"""T5.2: k_block_loop's sum that is the sum of another run of k-blocks, named by the run it is.

A loop one k-block off at one end and loads all one BLOCK_K off give the same sum where the run ends at K's last
k-block (k-blocks past K read as zeros): test_k_block_loop's first case, 0..2 of K's three, is such a run.  There
the loop is run again, on k-blocks 3..5 of eight, where every mistake known here sums another run, and the cause
is named where that run is one mistake's alone (hunt16: range(kb_begin + 1, kb_end) and range(1, kb_end) were
told 'a loop one k-block off at one end and loads that are all one BLOCK_K further on (or back) each give that
sum')."""

import torch

from course.messages import fail

from .common import T5
from support import rel_err

LOOP = ("循环写成 range(kb_begin, kb_end)", "loop over range(kb_begin, kb_end)")

# What gives the sum of another run of k-blocks, said where it alone gives it: {why: (zh, en)}.  The four ends of a
# loop one off each say which end, then LOOP (the words make check names cause kb-range by).
RANGE_CAUSES = {
    "begins-late": (
        f"循环晚了一个 k-block 才开始（kb_begin + 1），第 kb_begin 个 k-block 没有加进来；{LOOP[0]}",
        f"the loop starts one k-block late (kb_begin + 1), so k-block kb_begin is never added; {LOOP[1]}",
    ),
    "begins-early": (
        f"循环早了一个 k-block 开始（kb_begin - 1）；{LOOP[0]}",
        f"the loop starts one k-block early (kb_begin - 1); {LOOP[1]}",
    ),
    "ends-early": (
        f"循环在 kb_end - 1 就停了，第 kb_end - 1 个 k-block 没有加进来；{LOOP[0]}",
        f"the loop stops at kb_end - 1, so k-block kb_end - 1 is never added; {LOOP[1]}",
    ),
    "ends-late": (
        f"循环多走了一个 k-block，一直到 kb_end；{LOOP[0]}",
        f"the loop runs one k-block further, through kb_end; {LOOP[1]}",
    ),
    "from-one": (
        "循环从第 1 个 k-block 开始，不是从 kb_begin：range(1, kb_end) 在 kb_begin 为 0 时漏掉第 0 个 k-block，"
        f"kb_begin 大于 1 时又多加了前面的；{LOOP[0]}",
        "the loop starts at k-block 1, not at kb_begin: range(1, kb_end) leaves k-block 0 out where kb_begin is 0, "
        f"and adds the k-blocks before kb_begin where it is past 1; {LOOP[1]}",
    ),
    "moved": (
        "整体挪了一个 k-block：每次 load 的偏移都差了一个 BLOCK_K，第 kb 个 k-block 从第 kb * BLOCK_K 列开始",
        "the run moved by one k-block: every load's offset is one BLOCK_K off; k-block kb starts at column "
        "kb * BLOCK_K",
    ),
    # a loop over range(kb_end - kb_begin) and offsets taken from the run's start, (kb - kb_begin) * BLOCK_K, load
    # the same boxes: the words say both (learner37: the second was told it was the first)
    "from-zero": (
        "k-block 从 0 数起，不是从 kb_begin：循环写成 range(kb_end - kb_begin)，或者偏移从 run 的起点算"
        "（(kb - kb_begin) * BLOCK_K），都是这个和；循环是 range(kb_begin, kb_end)，第 kb 个 k-block 从第 "
        "kb * BLOCK_K 列开始",
        "the k-blocks were counted from 0, not from kb_begin: a loop over range(kb_end - kb_begin), or offsets "
        "taken from the run's start ((kb - kb_begin) * BLOCK_K), gives that sum; the loop is range(kb_begin, "
        "kb_end), and k-block kb starts at column kb * BLOCK_K",
    ),
    "last": (
        "只有最后一个 k-block 留了下来：tl.dot(a, b, acc) 才把乘积加到 acc 上，"
        "acc = tl.dot(a, b) 每个 k-block 都从头算",
        "only the last k-block's product is left: tl.dot(a, b, acc) adds the product to acc, while acc = "
        "tl.dot(a, b) starts again at every k-block",
    ),
}
# ... and where another gives it too (the loop's four ends, and its start at 1, in the same words)
ONE_END = ("循环的一端差一个", "a loop one k-block off at one end")
RANGE_WAYS = {
    "begins-late": ONE_END,
    "begins-early": ONE_END,
    "ends-early": ONE_END,
    "ends-late": ONE_END,
    "from-one": ("从第 1 个 k-block 开始的循环", "a loop that starts at k-block 1"),
    "moved": ("每次 load 的偏移都多（或少）一个 BLOCK_K", "loads that are all one BLOCK_K further on (or back)"),
    "from-zero": ("从 0 数起的 k-block", "k-blocks counted from 0"),
    "last": ("acc = tl.dot(a, b) 只留下最后一个 k-block", "an acc = tl.dot(a, b) that keeps the last k-block alone"),
}
# The run asked for when the first one cannot tell: k-blocks 3..5 of eight, where each mistake sums another run.
AGAIN = (3, 6, 8)


def runs_of(kb_begin, kb_end):
    """{why: (lo, hi)}: the run of k-blocks each known mistake sums in place of kb_begin..kb_end-1."""
    return {
        "begins-late": (kb_begin + 1, kb_end),
        "begins-early": (kb_begin - 1, kb_end),
        "ends-early": (kb_begin, kb_end - 1),
        "ends-late": (kb_begin, kb_end + 1),
        "from-one": (1, kb_end),
        "moved": (kb_begin + 1, kb_end + 1),
        "moved-back": (kb_begin - 1, kb_end - 1),
        "from-zero": (0, kb_end - kb_begin),
        "last": (kb_end - 1, kb_end),
    }


def another_range(acc, a, b, K, bk, kb_begin, kb_end, tol):
    """{why: (lo, hi)} of the known mistakes whose sum acc is (within tol), the run each sums clipped to K."""
    blocks = -(-K // bk)
    found = {}
    for why, (lo, hi) in runs_of(kb_begin, kb_end).items():
        why = "moved" if why == "moved-back" else why
        lo, hi = max(lo, 0), min(hi, blocks)  # k-blocks past either end of K read as zeros
        span = slice(lo * bk, min(hi * bk, K))
        if (
            lo < hi
            and (lo, hi) != (kb_begin, kb_end)
            and rel_err(acc, a[:, span].double() @ b[span, :].double()) <= tol
        ):
            found.setdefault(why, (lo, hi))
    return found


def fail_if_another_range(acc, a, b, K, bk, kb_begin, kb_end, tol, case, again=None):
    """Fail where acc is the sum of another run of k-blocks (runs_of).  Where more than one mistake gives this sum,
    again(lo, hi, blocks) -> (acc, a, b, K, case) runs the loop once more on k-blocks AGAIN, and the cause is named
    where one of those mistakes alone gives that run's sum; else each is said, none as the cause."""
    found = another_range(acc, a, b, K, bk, kb_begin, kb_end, tol)
    if not found:
        return
    lo, hi = next(iter(found.values()))
    said = [
        f"{case}：累加器是第 {lo}..{hi - 1} 个 k-block 的和，应当是第 {kb_begin}..{kb_end - 1} 个",
        f"{case}: the accumulator holds the sum of k-blocks {lo}..{hi - 1}, not {kb_begin}..{kb_end - 1}",
    ]
    if len(found) > 1 and again is not None:
        acc2, a2, b2, K2, case2 = again(*AGAIN)
        found2 = another_range(acc2, a2, b2, K2, bk, AGAIN[0], AGAIN[1], tol)
        if len(found2) == 1 and next(iter(found2)) in found:
            ((why, (lo2, hi2)),) = found2.items()
            said[0] += f"；{case2}：是第 {lo2}..{hi2 - 1} 个的和，应当是第 {AGAIN[0]}..{AGAIN[1] - 1} 个"
            said[1] += f"; {case2}: it holds the sum of {lo2}..{hi2 - 1}, not {AGAIN[0]}..{AGAIN[1] - 1}"
            found = {why: (lo, hi)}
    if len(found) > 1 and len({RANGE_WAYS[k] for k in found}) == 1:  # two ends of the loop: which one is not told
        fail(T5, f"{said[0]}：{ONE_END[0]}；{LOOP[0]}", f"{said[1]}: {ONE_END[1]}; {LOOP[1]}", "3.1")
    if len(found) > 1:
        ways = list(dict.fromkeys(RANGE_WAYS[k] for k in found))
        fail(
            T5,
            f"{said[0]}：这里{'、'.join(zh for zh, _ in ways)}，结果都是这个和；循环是 range(kb_begin, kb_end)，"
            "第 kb 个 k-block 从第 kb * BLOCK_K 列开始，tl.dot(a, b, acc) 把乘积加到 acc 上",
            f"{said[1]}: here {', '.join(en for _, en in ways[:-1])} and {ways[-1][1]} each give that sum; the "
            "loop is range(kb_begin, kb_end), k-block kb starts at column kb * BLOCK_K, and tl.dot(a, b, acc) adds "
            "the product to acc",
            "3.1",
        )
    why = next(iter(found))
    fail(T5, f"{said[0]}：{RANGE_CAUSES[why][0]}", f"{said[1]}: {RANGE_CAUSES[why][1]}", "3.1")


def blocks_sum(a, b, K, bk, kbs):
    """float64 sum of the k-blocks numbered kbs, those past K read as zeros (TMA's fill)."""
    out = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64, device=a.device)
    for kb in (kb for kb in kbs if kb * bk < K):
        span = slice(kb * bk, min(kb * bk + bk, K))
        out += a[:, span].double() @ b[span, :].double()
    return out


def fail_if_numbers_times_block_k(acc, a, b, K, bk, kb_begin, kb_end, tol, case, again):
    """Fail where acc is the sum of k-blocks kb * BLOCK_K for kb in kb_begin..kb_end-1 (every k-block's number taken
    times BLOCK_K: a loop over k in elements, range(kb_begin * BLOCK_K, kb_end * BLOCK_K, BLOCK_K), whose kb is then
    put at kb * BLOCK_K) and the loop run again on k-blocks 1..2 of 2 * BLOCK_K + 2, where those are k-blocks BLOCK_K
    and 2 * BLOCK_K, sums those too.  Most of them lie past K in the test's own case (only k-block 0 is summed where
    kb_begin is 0: a loop that stops after its first k-block gives that too), hence the run again."""
    kbs = [kb * bk for kb in range(kb_begin, kb_end)]
    if rel_err(acc, blocks_sum(a, b, K, bk, kbs)) > tol:
        return
    acc2, a2, b2, K2, case2 = again(1, 3, 2 * bk + 2)
    if rel_err(acc2, blocks_sum(a2, b2, K2, bk, [bk, 2 * bk])) > tol:
        return
    fail(
        T5,
        f"{case}：累加器是第 {kbs} 个 k-block 的和（越过 K 的读作 0），应当是第 {kb_begin}..{kb_end - 1} 个；{case2}："
        f"是第 {bk}、{2 * bk} 个的和，应当是第 1、2 个：每个 k-block 的号都乘了 BLOCK_K（比如循环按元素数 k，"
        "range(kb_begin * BLOCK_K, kb_end * BLOCK_K, BLOCK_K)，kb 又在 kb * BLOCK_K 处读）；"
        "kb 是 k-block 的号，从 kb_begin 数到 kb_end - 1，第 kb 个从第 kb * BLOCK_K 列开始",
        f"{case}: the accumulator holds the sum of k-blocks {kbs} (those past K read as 0), not {kb_begin}.."
        f"{kb_end - 1}; {case2}: it holds the sum of {bk} and {2 * bk}, not 1 and 2: each k-block's number was "
        "taken times BLOCK_K (a loop counting k in elements, range(kb_begin * BLOCK_K, kb_end * BLOCK_K, BLOCK_K), "
        "whose kb is then read at kb * BLOCK_K, say); kb is a k-block's number, kb_begin up to kb_end - 1, and "
        "k-block kb starts at column kb * BLOCK_K",
        "3.1",
    )
