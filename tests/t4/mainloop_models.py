"""What some wrong mainloops compute, as float64 products, for test_mainloop to name the mistake that
gives exactly its result (no test here: a helper of tests/t4/test_mainloop.py)."""

import torch
import triton

from course.i18n import say

from support import rel_err


def first_block_only(a, b, bk):
    """What a loop that never moves its pointers computes: K-block 0 again and again."""
    out = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64, device=a.device)
    for k in range(0, a.shape[1], bk):
        width = min(bk, a.shape[1] - k)
        out += a[:, :width].double() @ b[:width, :].double()
    return out


def last_block_only(a, b, bk):
    """What a loop that sets acc to each k-block's product, rather than adding it, returns: the last
    k-block's product alone (its tail past K masked to zeros)."""
    last = (triton.cdiv(a.shape[1], bk) - 1) * bk
    return a[:, last:].double() @ b[last:, :].double()


def last_block_words(steps):
    """The hint for a result that is last_block_only's, after `steps` k-steps."""
    return say(
        zh=f"结果正好等于最后一个 k 块（共 {steps} 个）单独的乘积：每一步都用这一块的乘积换掉了 acc，"
        f"而不是加到 acc 上。累加写成 acc = tl.dot(a, b, acc)（或 acc += tl.dot(a, b)）",
        en=f"it is exactly the last k-block's product alone (of {steps}): each step replaced acc with its "
        f"block's product instead of adding it to acc. Accumulate with acc = tl.dot(a, b, acc) (or acc += "
        f"tl.dot(a, b))",
    )


class Restrided:
    """A tensor's shape, storage offset and device with other strides, for a simulated loop that reads only
    these: what a pointer block built with the two strides swapped addresses."""

    def __init__(self, t, strides):
        self.shape, self.device, self.strides, self.offset = t.shape, t.device, strides, t.storage_offset()

    def stride(self, dim=None):
        return self.strides if dim is None else self.strides[dim]

    def storage_offset(self):
        return self.offset


def swapped_block_words(operand):
    """The hint for a loop whose pointer block for `operand` ("A" or "B") has its two strides swapped."""
    if operand == "A":
        return say(
            zh="结果正好等于 A 的指针块把两个 stride 对调了：行号乘了 stride_ak、k 乘了 stride_am。"
            "A 的块是 offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak",
            en="it is exactly what the loop gives with A's pointer block built on its two strides swapped: the rows "
            "times stride_ak, k times stride_am. A's block is offs_m[:, None] * stride_am + offs_k[None, :] * "
            "stride_ak",
        )
    return say(
        zh="结果正好等于 B 的指针块把两个 stride 对调了：k 乘了 stride_bn、列号乘了 stride_bk。"
        "B 的块是 offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn",
        en="it is exactly what the loop gives with B's pointer block built on its two strides swapped: k times "
        "stride_bn, the columns times stride_bk. B's block is offs_k[:, None] * stride_bk + offs_n[None, :] * "
        "stride_bn",
    )


def leading_blocks_only(acc, a, b, bk, rtol):
    """j where acc is the product over k-blocks 0 .. j-1 alone, the later ones adding nothing (1 <= j and
    j k-blocks short of K), else None."""
    K = a.shape[1]
    for j in range(1, triton.cdiv(K, bk)):
        if rel_err(acc, a[:, : j * bk].double() @ b[: j * bk].double()) < rtol:
            return j
    return None


def k_mask_by_other_block(acc, a, b, blocks, rtol):
    """The name, BLOCK_M or BLOCK_N, where acc is the loop's product with its K mask's bound shrinking by that
    block size a step, offs_k < K - k * BLOCK_N say, where the blocks move BLOCK_K; else None.  Only a size above
    BLOCK_K (one below reads past K, which the NaN padding tells first), and only where that mask leaves a k-block
    in part: whole k-blocks alone are also what a loop that stops early sums (leading_blocks_only's words)."""
    bk, K = blocks[2], a.shape[1]
    ad, bd = a.double(), b.double()
    for name, size in (("BLOCK_M", blocks[0]), ("BLOCK_N", blocks[1])):
        if size <= bk:
            continue
        lanes = [max(0, min(bk, K - k * size)) for k in range(triton.cdiv(K, bk))]
        if all(n in (0, bk) for n in lanes[:-1]):
            continue
        model = sum(ad[:, k * bk : k * bk + n] @ bd[k * bk : k * bk + n] for k, n in enumerate(lanes))
        if rel_err(acc, model) < rtol and rel_err(model, ad @ bd) > rtol:
            return name
    return None


def k_mask_words(name):
    return say(
        zh=f"结果正好是 K 掩码的界每一步减去 {name}（offs_k < K - k * {name}）的样子：指针块每一步前移的是 BLOCK_K，"
        "第 k 步还剩 K - k * BLOCK_K 个 k，掩码拿 offs_k 和它比",
        en=f"it is exactly the loop with the K mask's bound shrinking by {name} a step (offs_k < K - k * {name}): "
        "the blocks move BLOCK_K a step, so K - k * BLOCK_K k are left at step k, and the mask compares offs_k "
        "with that",
    )


def tiles_offset_by_other_block(acc, a, b, bm, bn, rtol):
    """Say "columns" where acc is the product with tile pid_n's columns taken from pid_n * BLOCK_M on,
    "rows" where tile pid_m's rows are taken from pid_m * BLOCK_N on (the other block size: right only
    where BLOCK_M = BLOCK_N), else None; what lies past C is loaded as the masks leave it, zeros."""
    if bm == bn:
        return None
    full = a.double() @ b.double()
    M, N = full.shape
    cols = torch.tensor([j // bn * bm + j % bn for j in range(N)])
    by_cols = torch.where(cols < N, full[:, cols.clamp(max=N - 1)], torch.zeros(()).double())
    if rel_err(acc, by_cols) < rtol:
        return "columns"
    rows = torch.tensor([i // bm * bn + i % bm for i in range(M)])
    by_rows = torch.where((rows < M)[:, None], full[rows.clamp(max=M - 1)], torch.zeros(()).double())
    if rel_err(acc, by_rows) < rtol:
        return "rows"
    return None


def other_block_words(off):
    """The hint for what tiles_offset_by_other_block found ("columns" or "rows")."""
    if off == "columns":
        return say(
            zh="结果正好是第 pid_n 个 tile 的列从 pid_n * BLOCK_M 取起：列偏移是 pid_n * BLOCK_N",
            en="it is exactly tile pid_n's columns taken from pid_n * BLOCK_M on: the columns' offset is "
            "pid_n * BLOCK_N",
        )
    return say(
        zh="结果正好是第 pid_m 个 tile 的行从 pid_m * BLOCK_N 取起：行偏移是 pid_m * BLOCK_M",
        en="it is exactly tile pid_m's rows taken from pid_m * BLOCK_N on: the rows' offset is pid_m * BLOCK_M",
    )


def tiles_on_the_other_pid(acc, a, b, bm, bn, rtol):
    """Say "columns" where acc is the product with tile (pid_m, pid_n)'s columns taken from pid_m * BLOCK_N on
    (offs_n built on pid_m), "rows" where its rows are taken from pid_n * BLOCK_M on (offs_m built on pid_n),
    else None; what lies past A or B is loaded as the masks leave it, zeros."""
    full = a.double() @ b.double()
    M, N = full.shape
    i, j = torch.arange(M, device=full.device)[:, None], torch.arange(N, device=full.device)[None, :]
    cols = (i // bm * bn + j % bn).expand(M, N)
    if rel_err(acc, full.gather(1, cols.clamp(max=N - 1)).where(cols < N, 0.0)) < rtol:
        return "columns"
    rows = (j // bn * bm + i % bm).expand(M, N)
    if rel_err(acc, full.gather(0, rows.clamp(max=M - 1)).where(rows < M, 0.0)) < rtol:
        return "rows"
    return None


def other_pid_words(which, also=None):
    """(sections, hint) for what tiles_on_the_other_pid found; `also`, the words of another mistake that gives the
    very same result on this case (a mask against the other size), said beside it as the other possibility."""
    words = (
        say(
            zh="结果正好是 offs_n 用 pid_m 算出来的样子（tile 的列从 pid_m * BLOCK_N 起）：列偏移是 pid_n * BLOCK_N",
            en="it is exactly what offs_n built on pid_m gives (the tile's columns from pid_m * BLOCK_N on): the "
            "columns' offset is pid_n * BLOCK_N",
        )
        if which == "columns"
        else say(
            zh="结果正好是 offs_m 用 pid_n 算出来的样子（tile 的行从 pid_n * BLOCK_M 起）：行偏移是 pid_m * BLOCK_M",
            en="it is exactly what offs_m built on pid_n gives (the tile's rows from pid_n * BLOCK_M on): the rows' "
            "offset is pid_m * BLOCK_M",
        )
    )
    if also is None:
        return ("3",), words
    return ("3", "4.1"), say(
        zh=f"这个用例分不清两种错误：{words}；或者{also}",
        en=f"two mistakes give this case's result: {words}; or {also}",
    )


def tiles_unscaled(acc, a, b, bm, bn, rtol):
    """Say "rows" where acc is the product with tile pid_m's rows taken from pid_m on (offs_m = pid_m + tl.arange,
    without * BLOCK_M), "columns" where tile pid_n's columns are taken from pid_n on, "both" where both are; what
    lies past A or B is loaded as the masks leave it, zeros.  One offset alone is tried first: on a case of one
    tile along a dimension, that dimension's offset is right either way, and the words name only what shows."""
    full = a.double() @ b.double()
    M, N = full.shape
    i, j = torch.arange(M, device=full.device), torch.arange(N, device=full.device)
    rows, cols = i // bm + i % bm, j // bn + j % bn
    for which, r, c in (("rows", rows, j), ("columns", i, cols), ("both", rows, cols)):
        model = full[r.clamp(max=M - 1)][:, c.clamp(max=N - 1)].where((r < M)[:, None] & (c < N)[None, :], 0.0)
        if rel_err(acc, model) < rtol:
            return which
    return None


def unscaled_words(which):
    """The hint for what tiles_unscaled found."""
    if which == "rows":
        return say(
            zh="结果正好是第 pid_m 个 tile 的行从 pid_m 取起（offs_m = pid_m + tl.arange(0, BLOCK_M)，少乘了 "
            "BLOCK_M）：行偏移是 pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
            en="it is exactly tile pid_m's rows taken from pid_m on (offs_m = pid_m + tl.arange(0, BLOCK_M), without "
            "* BLOCK_M): the rows' offset is pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        )
    if which == "columns":
        return say(
            zh="结果正好是第 pid_n 个 tile 的列从 pid_n 取起（offs_n = pid_n + tl.arange(0, BLOCK_N)，少乘了 "
            "BLOCK_N）：列偏移是 pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            en="it is exactly tile pid_n's columns taken from pid_n on (offs_n = pid_n + tl.arange(0, BLOCK_N), "
            "without * BLOCK_N): the columns' offset is pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        )
    return say(
        zh="结果正好是 tile (pid_m, pid_n) 的行从 pid_m、列从 pid_n 取起（offs_m、offs_n 都少乘了 BLOCK_M、"
        "BLOCK_N）：偏移是 pid_m * BLOCK_M + tl.arange(0, BLOCK_M) 和 pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        en="it is exactly tile (pid_m, pid_n)'s rows taken from pid_m on and its columns from pid_n on (offs_m and "
        "offs_n without * BLOCK_M and * BLOCK_N): the offsets are pid_m * BLOCK_M + tl.arange(0, BLOCK_M) and "
        "pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
    )


def is_the_model(acc, model, err):
    """Whether acc is what a model of a wrong loop computes: as close to it as a right loop comes to
    the exact product (1e-5), and at least 4 times closer to it than to the exact product (err)."""
    return rel_err(acc, model) <= min(1e-5, err / 4)


def blockwise(a, b, bk, round_partials, to_half=lambda t: t.half().double()):
    """What two wrong loops compute, in float64: each K-block's product rounded to fp16 before it
    is added (round_partials), or every running sum rounded to fp16 (an fp16 accumulator); to_half
    rounds a float32 tensor to fp16 (to nearest; toward_zero for a cast with rounding "rtz")."""
    out = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64, device=a.device)
    for k in range(0, a.shape[1], bk):
        part = a[:, k : k + bk].float() @ b[k : k + bk, :].float()
        out = out + to_half(part) if round_partials else to_half(out.float() + part)
    return out


def toward_zero(x, dtype=torch.float16):
    """x rounded to dtype toward zero, as a cast with fp_downcast_rounding="rtz" rounds a float32, in float64:
    the value of dtype nearest x where that is no further from 0 than x, else the next one toward 0."""
    x = x.float()
    y = x.to(dtype)
    over = y.float().abs() > x.abs()  # y != 0 there, so its magnitude's bits can go one step down
    return torch.where(over, (y.view(torch.int16) - 1).view(dtype), y).double()


def rounded_toward_zero(acc, a, b, bk, err):
    """The word "partials" where acc is each K-block's product cast to fp16 toward zero before it is added, "operands"
    where it is float32 A and B so cast before they are multiplied (by is_the_model); None otherwise."""
    if is_the_model(acc, blockwise(a, b, bk, round_partials=True, to_half=toward_zero), err):
        return "partials"
    if a.dtype == torch.float32 and is_the_model(acc, toward_zero(a) @ toward_zero(b), err):
        return "operands"
    return None


def toward_zero_words(found):
    """The hint for what rounded_toward_zero found."""
    if found == "partials":
        return say(
            zh="结果和「每个 k 块的 tl.dot(a, b) 向零舍入成 fp16（fp_downcast_rounding=\"rtz\"）再累加」一致："
            "乘积保持 float32，不做类型转换就加进 acc",
            en="it is each k-block's tl.dot(a, b) cut to fp16 and rounded toward zero (fp_downcast_rounding=\"rtz\") "
            "before it is added: keep the product float32 and add it into acc without a cast",
        )
    return say(
        zh="结果和「A、B 先向零舍入成 fp16（fp_downcast_rounding=\"rtz\"）再交给 tl.dot」一致：float32 的输入原样"
        "交给 tl.dot，不要先 .to(tl.float16)",
        en="it is A and B cut to fp16 and rounded toward zero (fp_downcast_rounding=\"rtz\") before tl.dot: hand "
        "tl.dot the float32 blocks as they are loaded, without a .to(tl.float16)",
    )


def wrapped_k(a, b, bk):
    """What a loop whose k offsets wrap at K (offs_k = tl.arange(0, BLOCK_K) % K) computes, in float64, where
    0 < K < BLOCK_K: lane j reads k = j % K, inside A and B and under the K mask, so each k is added once for
    every lane that lands on it.  None where K >= BLOCK_K: there every lane keeps its own k (the right loop)."""
    K = a.shape[1]
    if not 0 < K < bk:
        return None
    times = torch.bincount(torch.arange(bk) % K, minlength=K).double().to(a.device)
    return (a.double() * times) @ b.double()


def wrapped_k_words(K, bk):
    """The hint for a result that is wrapped_k's."""
    return say(
        zh=f"结果正好是每个 k 被加了「落到它上面的 lane 数」次：K = {K} 比 BLOCK_K = {bk} 小，k 偏移取了 % K，"
        f"K 之外的 lane 绕回来又读了一遍前面的 k，掩码挡不住它们。offs_k 就是 tl.arange(0, BLOCK_K)，"
        f"K 之外的 lane 由掩码 offs_k < K - k * BLOCK_K 关掉",
        en=f"it is exactly the product with each k added once for every lane that lands on it: K = {K} is less "
        f"than BLOCK_K = {bk}, and the k offsets were taken % K, so the lanes past K wrap around and read the "
        f"first k's again, where the mask cannot stop them. offs_k is tl.arange(0, BLOCK_K); the mask offs_k < "
        f"K - k * BLOCK_K turns the lanes past K off",
    )


def turned_block(a, b, blocks, got, rtol):
    """The letter "A" or "B" where got is what the loop gives with that operand's pointer block built the other
    way round, A's [BLOCK_K, BLOCK_M] (offs_k down its rows, offs_m along its columns) or B's [BLOCK_N, BLOCK_K],
    so that each of its tiles enters tl.dot transposed (an element outside the tensor read as 0).  tl.dot takes
    such a block only where those two block sizes are equal: tried there alone.  None otherwise."""
    bm, bn, bk = blocks
    (M, K), N = a.shape, b.shape[1]
    tm, tn, steps = triton.cdiv(M, bm), triton.cdiv(N, bn), triton.cdiv(K, bk)
    pa = torch.zeros(tm * bm, steps * bk, dtype=torch.float64, device=a.device)
    pb = torch.zeros(steps * bk, tn * bn, dtype=torch.float64, device=a.device)
    pa[:M, :K], pb[:K, :N] = a.double(), b.double()
    for operand, size in (("A", bm), ("B", bn)):
        if size != bk:
            continue
        out = torch.zeros(tm * bm, tn * bn, dtype=torch.float64, device=a.device)
        for k in range(0, steps * bk, bk):
            a_blk, b_blk = pa[:, k : k + bk], pb[k : k + bk, :]
            if operand == "A":  # each m-tile's [BLOCK_M, BLOCK_K] square, transposed
                a_blk = a_blk.reshape(tm, bm, bk).transpose(1, 2).reshape(tm * bm, bk)
            else:  # each n-tile's [BLOCK_K, BLOCK_N] square, transposed
                b_blk = b_blk.reshape(bk, tn, bn).permute(2, 1, 0).reshape(bn, tn * bk)
            out += a_blk @ b_blk
        if rel_err(got, out[:M, :N]) < rtol:
            return operand
    return None


def turned_block_words(operand):
    """The hint for what turned_block found."""
    if operand == "A":
        return say(
            zh="结果正好等于 A 的指针块建反了，成了 [BLOCK_K, BLOCK_M]（offs_k 沿行、offs_m 沿列）：每个 A 的 tile "
            "都被转置着交给了 tl.dot，这里 BLOCK_M = BLOCK_K，它才收下。A 的块是 offs_m[:, None] * stride_am + "
            "offs_k[None, :] * stride_ak，[BLOCK_M, BLOCK_K]",
            en="it is exactly what the loop gives with A's pointer block built the other way round, [BLOCK_K, "
            "BLOCK_M] (offs_k down its rows, offs_m along its columns): each tile of A enters tl.dot transposed, "
            "which tl.dot takes only because BLOCK_M = BLOCK_K here. A's block is offs_m[:, None] * stride_am + "
            "offs_k[None, :] * stride_ak, [BLOCK_M, BLOCK_K]",
        )
    return say(
        zh="结果正好等于 B 的指针块建反了，成了 [BLOCK_N, BLOCK_K]（offs_n 沿行、offs_k 沿列）：每个 B 的 tile "
        "都被转置着交给了 tl.dot，这里 BLOCK_N = BLOCK_K，它才收下。B 的块是 offs_k[:, None] * stride_bk + "
        "offs_n[None, :] * stride_bn，[BLOCK_K, BLOCK_N]",
        en="it is exactly what the loop gives with B's pointer block built the other way round, [BLOCK_N, "
        "BLOCK_K] (offs_n down its rows, offs_k along its columns): each tile of B enters tl.dot transposed, "
        "which tl.dot takes only because BLOCK_N = BLOCK_K here. B's block is offs_k[:, None] * stride_bk + "
        "offs_n[None, :] * stride_bn, [BLOCK_K, BLOCK_N]",
    )


def acc_added_twice(a, b, bk):
    """What acc += tl.dot(a, b, acc) computes, in float64: tl.dot already adds acc, so each step doubles the sum so
    far before adding its k-block's product (hunt36).  None where K is one k-block: that loop is right there."""
    if a.shape[1] <= bk:
        return None
    out = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64, device=a.device)
    for k in range(0, a.shape[1], bk):
        out = 2 * out + a[:, k : k + bk].double() @ b[k : k + bk, :].double()
    return out


ACC_ADDED_TWICE_WORDS = say(
    zh="结果正好是 acc += tl.dot(a, b, acc)：tl.dot 的第三个参数已经把 acc 加进去了，再 += 就让之前的和每步翻一倍。"
    "写 acc = tl.dot(a, b, acc)，或者 acc += tl.dot(a, b)",
    en="it is exactly acc += tl.dot(a, b, acc): tl.dot's third argument already adds acc, so the += doubles the sum "
    "so far at every step. Write acc = tl.dot(a, b, acc), or acc += tl.dot(a, b)",
)


def named_by_value(acc, a, b, blocks, err, rtol):
    """(sections, hint) for test_mainloop's relative error where acc is the product one of these models gives:
    k offsets wrapped at K, a pointer block built the other way round, a cast to fp16 toward zero, acc added
    twice; else None."""
    bk = blocks[2]
    if (twice := acc_added_twice(a, b, bk)) is not None and rel_err(acc, twice) < rtol:
        return ("4",), ACC_ADDED_TWICE_WORDS
    if (wrapped := wrapped_k(a, b, bk)) is not None and rel_err(acc, wrapped) < rtol:
        return ("4.1",), wrapped_k_words(a.shape[1], bk)
    if turned := turned_block(a, b, blocks, acc, rtol):
        return ("3",), turned_block_words(turned)
    if rounded := rounded_toward_zero(acc, a, b, bk, err):
        return ("4.2",), toward_zero_words(rounded)
    return None
