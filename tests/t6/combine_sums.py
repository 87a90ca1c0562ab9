"""The sums combine_topk's own test (test_combine.py) may meet, worked out on its inputs: other rows of by_slot
added, or the right rows in another order; each with the words naming it, said only where out is that sum bit
for bit.  And one placement of its stores: columns from the column block's number."""

from itertools import permutations

import torch

from course.i18n import agree
from course.messages import fail
from course.registry import lesson

T6 = lesson("T6")  # not from .common, which imports this module


def sums_seen(out, by_slot, tokens, top_k, dtype, block_n=None):
    """(zh, en) where out is, bit for bit, the float32 sum of rows t + j of by_slot (j = 0..top_k - 1: token t's
    number with j added, not t * top_k + j), or of token t's own rows in an order of j other than 0..top_k - 1 and
    its reverse (which the test names itself), rounded once to dtype, or token t's last row alone (top_k > 2), or
    (block_n given) the rows read block_n cells apart; or, with float32 out, the right sum rounded to fp16 or bf16
    on its way (a cast to a fixed dtype); else None."""
    pitch = pitch_seen(out, by_slot, tokens, top_k, dtype, block_n)
    if pitch:
        return pitch
    right = torch.zeros_like(by_slot[0::top_k])
    for j in range(top_k):
        right = right + by_slot[j::top_k]
    for narrow in (torch.float16, torch.bfloat16) if dtype == torch.float32 else ():
        if not torch.equal(out, right) and torch.equal(out, right.to(narrow).float()):
            name = str(narrow).removeprefix("torch.")
            return (
                f"它们逐位等于对的和舍入成 {name} 再存进 float32 的 out：结果在写回途中被转成了固定的 {name}；"
                "转成 out 自己的 dtype（out_ptr.dtype.element_ty）",
                f"they are, bit for bit, the right sum rounded to {name}, then stored in the float32 out: the result "
                f"was cast to a fixed {name} on its way; cast to out's own dtype (out_ptr.dtype.element_ty)",
            )
    # the last row alone, j = top_k - 1's: each turn replaced acc; with top_k = 2 it is also the sum that leaves out
    # j = 0 (left_out_seen's words), so only named from top_k = 3 on, where nothing else gives it (learner37)
    if top_k > 2 and torch.equal(out, by_slot[top_k - 1 :: top_k].to(dtype)):
        return (
            f"它们逐位等于 by_slot 第 t * {top_k} + {top_k - 1} 行本身，只有最后一个 j 的那一行："
            "循环每一轮都把 acc 换掉了（acc = ...，或者在循环里把 acc 置零），而不是加上去；"
            "acc 在循环之前置零一次，每一轮加一行",
            f"they are, bit for bit, row t * {top_k} + {top_k - 1} of by_slot alone, the last j's: each turn of the "
            "loop replaced acc (acc = ..., or acc set to zeros inside the loop) instead of adding to it; set acc to 0 "
            "once, before the loop, and add one row each turn",
        )
    if torch.equal(out, sum(by_slot[j : j + tokens] for j in range(top_k)).to(dtype)):
        return (
            f"它们逐位等于 by_slot 第 t + j 行之和（j = 0..{top_k - 1}）：token 号直接加上了 j；"
            f"token t 的第 j 行在 t * {top_k} + j（slot = t * top_k + j）",
            f"they are, bit for bit, the sums of rows t + j of by_slot (j = 0..{top_k - 1}): j added to the token's "
            f"number; token t's row j is at t * {top_k} + j (slot = t * top_k + j)",
        )
    for rows_of, zh, en in OTHER_ROWS:  # other rows, each token's (hunt16: t and j swapped, j left out)
        rows = [[rows_of(t, j, tokens, top_k) for j in range(top_k)] for t in range(tokens)]
        if max(max(r) for r in rows) >= by_slot.shape[0]:
            continue
        total = torch.zeros_like(by_slot[0::top_k])
        for j in range(top_k):
            total = total + by_slot[[r[j] for r in rows]]
        if torch.equal(out, total.to(dtype)):
            return zh.format(k=top_k, j=top_k - 1), en.format(k=top_k, j=top_k - 1)
    found = []  # every order of j whose sum out is, bit for bit: the inputs may not tell some apart
    for order in permutations(range(top_k)):
        total = torch.zeros_like(by_slot[0::top_k])
        for j in order:
            total = total + by_slot[j::top_k]
        if torch.equal(out, total.to(dtype)):
            found.append(order)
    if not found or tuple(range(top_k)) in found or tuple(reversed(range(top_k))) in found:
        return None
    said = ", ".join(str(j) for j in found[0])
    more = len(found) - 1
    return (
        f"它们逐位等于按 j = {said} 的顺序相加的和"
        + (f"（另有 {more} 种顺序给出同样的位）" if more else "")
        + f"：浮点加法的结果随顺序而变，要按 j = 0..{top_k - 1} 的顺序一行一行地加",
        f"they are, bit for bit, the sum in the order j = {said}"
        + (f" ({more} other {agree(more, 'order gives', 'orders give')} the same bits)" if more else "")
        + f": a float sum changes with its order; add the rows one by one in the order j = 0..{top_k - 1}",
    )


# Rows of by_slot a combine may add for token t in place of t * top_k + j: (row of (t, j, tokens, top_k), zh, en).
OTHER_ROWS = (
    (
        lambda t, j, tokens, top_k: j * top_k + t,
        "它们逐位等于 by_slot 第 j * {k} + t 行之和（j = 0..{j}）：t 和 j 在 t * top_k + j 里换了位置；"
        "token t 的第 j 行在 t * {k} + j",
        "they are, bit for bit, the sums of rows j * {k} + t of by_slot (j = 0..{j}): t and j swapped in "
        "t * top_k + j; token t's row j is at t * {k} + j",
    ),
    (
        lambda t, j, tokens, top_k: t * top_k,
        "它们逐位等于 by_slot 第 t * {k} 行加了 {k} 遍：地址里没有 j，每一轮读的都是 token t 的第 0 行；"
        "第 j 轮读第 t * {k} + j 行",
        "they are, bit for bit, row t * {k} of by_slot added {k} times: j is missing from the address, so every turn "
        "read token t's row 0; turn j reads row t * {k} + j",
    ),
)


def pitch_seen(out, by_slot, tokens, top_k, dtype, block_n):
    """(zh, en) where out is, bit for bit, the float32 sums of by_slot read with block_n cells for its row pitch, in
    the token's part of the address (t * top_k * block_n), in j's (j * block_n) or in both, not N (left37: BLOCK_N
    taken for the row pitch); else None.  A read that would leave by_slot is not worked out here (the stray-access
    checks name it)."""
    n = by_slot.shape[1]
    if block_n is None or block_n == n:
        return None
    t = torch.arange(tokens, device=by_slot.device)[:, None, None]
    j = torch.arange(top_k, device=by_slot.device)[None, :, None]
    cols = torch.arange(n, device=by_slot.device)[None, None, :]
    for token_pitch, j_pitch, where in (
        (block_n, block_n, "(t * TOP_K + j) * BLOCK_N"),
        (block_n, n, "t * TOP_K * BLOCK_N + j * N"),
        (n, block_n, "t * TOP_K * N + j * BLOCK_N"),
    ):
        at = t * top_k * token_pitch + j * j_pitch + cols
        if int(at.max()) >= by_slot.numel():
            continue
        read = by_slot.reshape(-1)[at]  # [tokens, top_k, n]: token t's row j as this address reads it
        total = torch.zeros_like(read[:, 0])
        for k in range(top_k):
            total = total + read[:, k]
        if torch.equal(out, total.to(dtype)):
            return (
                f"它们逐位等于在 {where} + cols 处读 by_slot 的和（BLOCK_N = {block_n}）：行距当成了 BLOCK_N；"
                f"by_slot 是 [T * top_k, N]，行与行相隔 N = {n} 个单元，token t 的第 j 行在 (t * TOP_K + j) * N + cols",
                f"they are, bit for bit, the sums of by_slot read at {where} + cols (BLOCK_N = {block_n}): the row "
                f"pitch taken as BLOCK_N; by_slot is [T * top_k, N], its rows N = {n} cells apart, token t's row j at "
                "(t * TOP_K + j) * N + cols",
            )
    return None


def left_out_seen(out, by_slot, top_k, dtype):
    """(zh, en) where out is, bit for bit, the float32 sum of token t's rows but one, j, rounded once to dtype
    (combine_topk's own test names it in its own words; the first check that meets a combine calls this); else
    None."""
    for left in range(top_k) if top_k > 1 else ():
        if torch.equal(out, sum(by_slot[j::top_k] for j in range(top_k) if j != left).to(dtype)):
            return (
                f"它们逐位等于漏掉了 j = {left} 的和（by_slot 第 t * {top_k} + {left} 行没有加进去）："
                f"token t 的和是 j = 0..{top_k - 1} 全部 {top_k} 行之和",
                f"they are, bit for bit, the sum that leaves out j = {left} (row t * {top_k} + {left} of by_slot never "
                f"added): token t's sum is that of all {top_k} rows, j = 0..{top_k - 1}",
            )
    return None


def fail_if_columns_from_block_number(stores, N, block_n, program, cols):
    """Fail where every program (t, c) of combine_topk stored columns c .. c + BLOCK_N - 1 of its row (cut at N), and
    nothing outside out: the column block's number taken for its first column.  stores: the test's record of each
    program's stores (element indices, cell 0 a guard row's first); program, cols: one program that strayed and the
    columns of its row it wrote outside its block."""
    if stores.outside or cols is None:
        return
    if not all(
        set((w - (t + 1) * N).tolist()) == set(range(c, min(N, c + block_n))) for (t, c), w in stores.by_program.items()
    ):
        return
    t, c = program
    fail(
        T6,
        f"combine_topk：每个程序 (t, 列块 c) 写的都是第 c..c + BLOCK_N - 1 列，例如程序 (t={t}, 列块 {c}) 写了第 "
        f"{int(cols.min())} 列起的那些：列块号 c 当成了第一列；它的列从 c * BLOCK_N 起（BLOCK_N={block_n}）",
        f"combine_topk: every program (t, column block c) wrote columns c .. c + BLOCK_N - 1; program (t={t}, column "
        f"block {c}), for one, wrote from column {int(cols.min())}: the column block's number c taken for its first "
        f"column; its columns start at c * BLOCK_N (BLOCK_N={block_n})",
        "4.4",
    )
