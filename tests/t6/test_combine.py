"""T6.3: the combine of the top-k rows: float32 sums in slot order, with the routing weights (the same call
twice, and the programs in other orders: test_combine_runs.py)."""

from dataclasses import replace

import pytest
import torch
import triton

from course.i18n import agree, cells, say
from course.messages import fail

from .combine_sums import fail_if_columns_from_block_number, sums_seen
from .common import OUT_RTOL, T6, by_slot_found, make_ids, reference, watched_call
from support import DEVICE, INTERPRETING, UNWRITTEN, rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


def watch_float_atomics(monkeypatch):
    """On the interpreter, the dtype of each float atomic read-modify-write from now on (a list that
    fills as they run); elsewhere an empty list."""
    float_atomics = []
    if INTERPRETING:
        from triton.runtime import interpreter

        builder = interpreter.interpreter_builder
        rmw = builder.create_atomic_rmw

        def watched_rmw(op, ptr, val, mask, sem, scope):
            if val.data.dtype.kind == "f":
                float_atomics.append(str(val.data.dtype))
            return rmw(op, ptr, val, mask, sem, scope)

        monkeypatch.setattr(builder, "create_atomic_rmw", watched_rmw, raising=False)
    return float_atomics


def fail_on_float_atomics(float_atomics):
    if float_atomics:
        fail(
            T6,
            f"combine 里用了 {len(float_atomics)} 次浮点 atomic_add（{float_atomics[0]}）：§4.4 不许用浮点 atomic，"
            "因为几个程序往同一格里加时，谁先谁后每次可能不同，结果的位也就可能不同"
            "（一个程序自己按 j 的顺序加也一样不许）；先按 slot 写出每一行，再按 j 的顺序加起来",
            f"the combine used {len(float_atomics)} float atomic adds ({float_atomics[0]}): §4.4 allows no float "
            "atomics, since where programs add into one cell their order may differ from run to run, and so may "
            "the bits (one program adding in j order is refused the same); write each row at its slot, then add "
            "them in j order",
            "4.4",
        )


@pytest.mark.t6_3
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
def test_combine_topk_sums_in_float32_in_slot_order(t6, monkeypatch, dtype):
    """combine_topk alone, bit for bit: each token's top_k rows summed in float32 in the order j = 0,
    1, ..., rounded once to the output's dtype (§4.4).  Values of magnitudes 1e-3 to 1e3, so another
    order or a narrower sum changes the last bits of some cells.  tl.sum promises no order (a GPU's
    is a tree); the interpreter's adds row after row, which down the top_k is j's own order, so here
    it is made to add the other way round: a combine left to tl.sum shows on the CPU too."""
    if INTERPRETING:
        import numpy as np
        from triton.runtime import interpreter

        def last_first(self, input):
            flipped = np.flip(input.handle.data, axis=self.axis)
            return self.to_tensor(np.add.reduce(flipped, axis=self.axis, keepdims=self.keep_dims), input.dtype)

        monkeypatch.setattr(interpreter.ReduceOps, "sum", last_first, raising=False)
    tokens, top_k, N, block_n = 6, 4, 40, 32
    scale = 10.0 ** torch.randint(-3, 4, (tokens * top_k, N), device=DEVICE).float()
    by_slot = torch.randn(tokens * top_k, N, device=DEVICE) * scale
    guarded = torch.full((tokens + 2, N), UNWRITTEN, device=DEVICE, dtype=dtype)  # a row each side of out
    out = guarded[1:-1]
    stores = StoreWatch(monkeypatch, guarded) if INTERPRETING else None
    float_atomics = watch_float_atomics(monkeypatch)
    t6.combine_topk[(tokens, triton.cdiv(N, block_n))](by_slot, out, N, top_k, block_n)
    fail_on_float_atomics(float_atomics)
    if stores is not None:
        stores.on = False
        check_each_program_writes_its_own_cells(stores, out, N, block_n)
    want = torch.zeros(tokens, N, device=DEVICE)
    for j in range(top_k):
        want = want + by_slot[j::top_k]
    summed, want = want, want.to(dtype)
    differ = out != want
    never = differ & (out == UNWRITTEN)  # cells no program of combine_topk stored
    if never.any():
        cols = sorted({int(c) for c in never.nonzero()[:, 1]})
        fail(
            T6,
            f"combine_topk，{dtype}：{int(never.sum())} 个单元还是测试预先填的哨兵值 {UNWRITTEN}，没有程序存过它们"
            f"（第 {cols[0]}..{cols[-1]} 列里）：程序 (t, c) 存 token t 这一行的第 c * BLOCK_N 列起、N 之前的列",
            f"combine_topk, {dtype}: {cells(int(never.sum()))} still hold the sentinel the test filled out with "
            f"({UNWRITTEN}), stored by no program (in columns {cols[0]}..{cols[-1]}): program (t, c) stores token "
            "t's row from column c * BLOCK_N, up to N",
            "4.4",
        )
    if differ.any():
        t, n = (int(v) for v in differ.nonzero()[0])
        backwards = torch.zeros(tokens, N, device=DEVICE)
        for j in reversed(range(top_k)):
            backwards = backwards + by_slot[j::top_k]
        reversed_order = torch.equal(out, backwards.to(dtype))  # what tl.sum gives here, made to add last first
        narrow = torch.zeros(tokens, N, device=DEVICE, dtype=dtype)
        for j in range(top_k):
            narrow = narrow + by_slot[j::top_k].to(dtype)  # each row and each partial sum rounded to dtype
        in_dtype = dtype != torch.float32 and torch.equal(out, narrow)
        kept = torch.zeros(tokens, N, device=DEVICE)
        for j in range(top_k):
            kept = (kept + by_slot[j::top_k]).to(dtype).float()  # float32 rows into an accumulator of dtype
        acc_in_dtype = dtype != torch.float32 and not in_dtype and torch.equal(out, kept.to(dtype))
        # each float32 row rounded to dtype as it is loaded, then summed in float32 and rounded once
        rounded_rows = sum(by_slot[j::top_k].to(dtype).float() for j in range(top_k)).to(dtype)
        rows_in_dtype = dtype != torch.float32 and not (in_dtype or acc_in_dtype) and torch.equal(out, rounded_rows)
        # The slot j the result equals the sum without, bit for bit (a loop stopped one short, say).
        left_out = next((j for j in range(top_k) if torch.equal(out, without_slot(by_slot, top_k, j).to(dtype))), None)
        # the first `first` rows alone, 1 < first < top_k - 1 (a loop over a top_k of its own, 2 say)
        heads = [sum(by_slot[j::top_k] for j in range(m)).to(dtype) for m in range(2, top_k - 1)]
        first = next((m + 2 for m, head in enumerate(heads) if torch.equal(out, head)), None)
        mean = torch.equal(out, (summed / top_k).to(dtype))  # the rows averaged: the weights scale them already
        twice = by_slot[0::top_k].clone()  # row j = 0 added twice: an accumulator started from it, then every row
        for j in range(top_k):
            twice = twice + by_slot[j::top_k]
        twice = torch.equal(out, twice.to(dtype))
        # the buffer read as [top_k, T, N], token t's row j at j * T + t (it is [T, top_k, N])
        j_major = torch.equal(out, sum(by_slot[j * tokens : (j + 1) * tokens] for j in range(top_k)).to(dtype))
        size = sum(by_slot[j::top_k].abs() for j in range(top_k))  # what a rounding error scales with
        far = bool(((out.float() - want.float()).abs() > 1e-2 * size + 1e-3).any())
        seen = sums_seen(out, by_slot, tokens, top_k, dtype, block_n)  # rows t + j, j in another order, pitch
        if seen:
            fail(
                T6,
                f"combine_topk，{dtype}：{int(differ.sum())} 个单元不对：{seen[0]}",
                f"combine_topk, {dtype}: {cells(int(differ.sum()))} wrong: {seen[1]}",
                "4.4",
            )
        if j_major:
            fail(
                T6,
                f"combine_topk，{dtype}：{int(differ.sum())} 个单元不对：它们逐位等于 by_slot 第 j * T + t 行之和，"
                f"即把缓冲区当成了 [top_k, T, N]；它是 [T, top_k, N]，token t 的第 j 行在 t * {top_k} + j",
                f"combine_topk, {dtype}: {cells(int(differ.sum()))} wrong: they are, bit for bit, the sums of rows "
                f"j * T + t of by_slot, the buffer read as [top_k, T, N]; it is [T, top_k, N], token t's row j at "
                f"t * {top_k} + j",
                "4.4",
            )
        if in_dtype or acc_in_dtype or rows_in_dtype or far or left_out is not None or twice:
            fail(
                T6,
                f"combine_topk，{dtype}：{int(differ.sum())} 个单元不对；例如 token {t} 第 {n} 列："
                f"{out[t, n].item()!r}，应为 {want[t, n].item()!r}"
                + (
                    f"。它们逐位等于在 {dtype} 里相加的和（每一行、每一个部分和都舍入成 {dtype}）：要在 float32 里加，"
                    "最后只舍入一次"
                    if in_dtype
                    else f"。它们逐位等于把 float32 的行加进一个 {dtype} 的累加器（每加一行，和就舍入成 {dtype} "
                    "一次）：累加器要用 float32，最后只舍入一次"
                    if acc_in_dtype
                    else f"。它们逐位等于先把每一行 float32 舍入成 {dtype} 再相加的和：by_slot 的行要以 float32 加进"
                    "float32 的累加器，最后只舍入一次"
                    if rows_in_dtype
                    else f"。它们逐位等于这 {top_k} 行的平均（和再除以 top_k）：每一行已经乘过路由权重，"
                    "合并只把它们加起来"
                    if mean
                    else f"。它们逐位等于漏掉了 j = {left_out} 的和（by_slot 第 t * {top_k} + {left_out} 行"
                    f"没有加进去）：token t 的和是 j = 0..{top_k - 1} 全部 {top_k} 行之和"
                    if left_out is not None
                    else "。它们逐位等于把 j = 0 那一行加了两次的和（累加器从这一行起步，循环又从 j = 0 加起）："
                    "累加器要从 0 开始"
                    if twice
                    else f"。它们逐位等于只加了前 {first} 行（j = 0..{first - 1}）的和：循环要走满 TOP_K = {top_k} 行，"
                    "不是某个固定的数"
                    if first
                    else f"，差得远超舍入误差：token t 的和是 by_slot 第 t * {top_k} + j 行（j = 0..{top_k - 1}）之和，"
                    "看看加的是不是这几行"
                ),
                f"combine_topk, {dtype}: {cells(int(differ.sum()))} wrong; token {t}, column {n}, for one: "
                f"{out[t, n].item()!r}, expected {want[t, n].item()!r}"
                + (
                    f". They are, bit for bit, the sum in {dtype} (each row and each partial sum rounded to {dtype}): "
                    "add in float32, and round once at the end"
                    if in_dtype
                    else f". They are, bit for bit, the float32 rows added into an accumulator of {dtype} (the sum "
                    f"rounded to {dtype} after every row): keep the accumulator in float32, and round once at the end"
                    if acc_in_dtype
                    else f". They are, bit for bit, the sum of the rows each rounded to {dtype} first: add by_slot's "
                    "float32 rows as they are into a float32 accumulator, and round once at the end"
                    if rows_in_dtype
                    else f". They are, bit for bit, the mean of the {top_k} rows (their sum divided by top_k): each "
                    "row is scaled by its routing weight already, and the combine adds them alone"
                    if mean
                    else f". They are, bit for bit, the sum that leaves out j = {left_out} (row t * {top_k} + "
                    f"{left_out} of by_slot never added): token t's sum is that of all {top_k} rows, j = 0..{top_k - 1}"
                    if left_out is not None
                    else ". They are, bit for bit, the sum with row j = 0 added twice (an accumulator started from "
                    "that row, and the loop added it again from j = 0): start the accumulator at 0"
                    if twice
                    else f". They are, bit for bit, the sum of the first {first} rows alone (j = 0..{first - 1}): the "
                    f"loop runs over all TOP_K = {top_k} rows, not a number of its own"
                    if first
                    else f", off by far more than a rounding: token t's sum is that of rows t * {top_k} + j of "
                    f"by_slot (j = 0..{top_k - 1}); check which rows are added"
                ),
                "4.4",
            )
        fail(
            T6,
            f"combine_topk，{dtype}：{int(differ.sum())} 个单元和"
            f"\"float32 里按 j = 0..{top_k - 1} 依次相加、最后舍入一次\"不是逐位相同；"
            f"例如 token {t} 第 {n} 列：{out[t, n].item()!r}，应为 {want[t, n].item()!r}"
            + (
                f"。它们逐位等于按 j = {top_k - 1}..0 倒着加的和（倒着跑的循环；或者 tl.sum 这样的归约："
                "它不保证相加的顺序，在 CPU 上这个测试让它从最后一行加起）：要按 j 的顺序一行一行地加"
                if reversed_order
                else ""
            ),
            f"combine_topk, {dtype}: {cells(int(differ.sum()))} {agree(int(differ.sum()), 'is', 'are')} not bit "
            f"for bit the float32 sum in the order "
            f"j = 0..{top_k - 1}, rounded once; token {t}, column {n}, for one: {out[t, n].item()!r}, expected "
            f"{want[t, n].item()!r}"
            + (
                f". They are, bit for bit, the sum in the order j = {top_k - 1}..0 (a loop run backwards; or a "
                "reduction such as tl.sum, which promises no order, and which this test makes add the last row first "
                "on the CPU): add the rows one by one in j order"
                if reversed_order
                else ""
            ),
            "4.4",
        )


def without_slot(by_slot, top_k, left_out):
    """Each token's float32 sum in j order of its by-slot rows but row j = left_out."""
    tokens = by_slot.shape[0] // top_k
    total = torch.zeros(tokens, by_slot.shape[1], device=by_slot.device)
    for j in range(top_k):
        if j != left_out:
            total = total + by_slot[j::top_k]
    return total


class StoreWatch:
    """On the interpreter, the cells of `guarded` each program (x, y) stores to, as indices from its
    first cell: {(x, y): numpy array}.  A store outside guarded is recorded as such and not made."""

    def __init__(self, monkeypatch, guarded):
        import numpy as np
        from triton.runtime import interpreter

        self.by_program, self.outside, self.on = {}, 0, True
        builder = interpreter.interpreter_builder
        store, size = builder.create_masked_store, guarded.element_size()
        first, end = guarded.data_ptr(), guarded.data_ptr() + guarded.numel() * size

        def watched(ptrs, value, mask, *rest, **named):
            if not self.on:
                return store(ptrs, value, mask, *rest, **named)
            addresses = np.asarray(ptrs.data).astype(np.int64)
            lanes = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
            inside = (addresses >= first) & (addresses + size <= end)
            self.outside += int((lanes & ~inside).sum())
            pid = tuple(builder.grid_idx[:2])
            done = self.by_program.get(pid, np.zeros(0, dtype=np.int64))
            self.by_program[pid] = np.concatenate([done, (addresses[lanes & inside] - first) // size])
            return store(ptrs, value, interpreter.TensorHandle(lanes & inside, mask.dtype), *rest, **named)

        monkeypatch.setattr(builder, "create_masked_store", watched, raising=False)


def check_each_program_writes_its_own_cells(stores, out, N, block_n):
    """Program (t, c) of combine_topk stores row t of out, columns c*block_n up to N, and nothing else
    (out has a guard row each side, cell 0 of the record being the first guard's first).  Here the
    programs run one after another, so a stray store into the next token's row is written over by
    that token's program; on a GPU they run at once, and whichever store comes last stays."""
    strays = {}
    for (t, c), written in stores.by_program.items():
        own_row = written - (t + 1) * N  # the column within token t's row
        ok = (own_row >= c * block_n) & (own_row < min(N, (c + 1) * block_n))
        if (~ok).any():
            strays[(t, c)] = own_row[~ok]
    if not strays and not stores.outside:
        return
    (t, c), cols = next(iter(strays.items())) if strays else ((None, None), None)
    total = sum(len(v) for v in strays.values()) + stores.outside
    past_n = cols is not None and bool((cols >= N).all()) and bool((cols < (c + 1) * block_n).all())
    fail_if_columns_from_block_number(stores, N, block_n, (t, c), cols)
    if past_n:
        fail(
            T6,
            f"combine_topk 有 {len(strays)} 个程序写了自己的列块之外的单元（共 {total} 个）；例如程序 (t={t}, "
            f"列块 {c}) 写了 token {t} 这一行越过了第 N - 1 列（N={N}）的第 {int(cols.min())}..{int(cols.max())} 列，"
            f"它们落在下一个 token 的行里（最后一个 token 则落在 out 之外）。这里程序一个接一个地跑，下一个 token "
            "的程序后来又把它们写对了；在 GPU 上程序同时跑，谁最后写谁算数：store 的掩码要是 cols < N",
            f"combine_topk: {len(strays)} programs wrote cells outside their own column block ({cells(total)} in "
            f"all); program (t={t}, column block {c}), for one, wrote columns {int(cols.min())}..{int(cols.max())} "
            f"of token {t}'s row, past column N - 1 (N={N}), which land in the next token's row (past out's last "
            "row for the last token). Here the programs run one after another and the next token's program wrote "
            "them over; on a GPU they run at once and the last store wins: mask the store with cols < N",
            "4.4",
        )
    fail(
        T6,
        f"combine_topk 写了 {total} 个不该它写的单元：程序 (t, 列块 c) 只写 out 的第 t 行、第 c*BLOCK_N 列起"
        f"到 N={N} 为止的那些列"
        + (f"；例如程序 (t={t}, 列块 {c}) 写到了本行的第 {int(cols[0])} 列" if cols is not None else "")
        + (f"；{stores.outside} 个写在 out 前后各一行之外（这里拦下了，没有真的写）" if stores.outside else ""),
        f"combine_topk wrote {cells(total)} it should not: program (t, column block c) writes row t of out, "
        f"columns c*BLOCK_N up to N={N}, alone"
        + (
            f"; program (t={t}, column block {c}), for one, wrote column {int(cols[0])} counted from its own row's "
            "first"
            if cols is not None
            else ""
        )
        + (
            f"; {cells(stores.outside)} beyond a row either side of out (stopped here, not made)"
            if stores.outside
            else ""
        ),
        "4.4",
    )


def read_as_contiguous(t6, x, w, r, weights, want, combine, config):
    """The name of the one input among x and topk_weights (transposed views) that, made contiguous
    alone, makes the same call right: grouped_matmul reads it as if contiguous.  None where neither does."""
    right = []
    for name, args in (("x", (x.contiguous(), weights)), ("topk_weights", (x, weights.contiguous()))):
        try:
            out = t6.grouped_matmul(args[0], w, r, args[1], combine=combine, config=config)
        except (ValueError, TypeError, RuntimeError):
            continue  # refused or broken another way: no evidence either way
        if rel_err(out, want) <= OUT_RTOL[torch.float16]:
            right.append(name)
    return right[0] if len(right) == 1 else None


@pytest.mark.t6_3
@pytest.mark.parametrize("combine", [False, True], ids=["sorted", "combined"])
@pytest.mark.case_words(id_zh={"sorted": "按排好的顺序写", "combined": "合并"})
def test_routing_weights_and_the_combine(t6, monkeypatch, combine):
    tokens, top_k, experts, K, N = 33, 3, 6, 32, 40
    ids = make_ids("skewed", tokens, top_k, experts)
    # x and the weights transposed views (x's stride along K is T, not 1): valid input, read through its strides.
    x = torch.randn(K, tokens, device=DEVICE).half().t()
    w = (torch.randn(experts, N, K, device=DEVICE) / K**0.5).half()
    weights = torch.rand(top_k, tokens, device=DEVICE).t()
    r = t6.route(ids, experts)
    case = say(
        zh=f"{tokens} 个 token，top_k={top_k}，带路由权重；x 和 topk_weights 是转置的视图（列主序）",
        en=f"{tokens} tokens, top_k={top_k}, routing weights; x and topk_weights transposed views (column-major)",
    )
    seen = {}
    # on the CPU two k-boxes of 16 (the interpreter's config has one of 32 here): a k-box's offset into the
    # transposed x is (k0 + cols) * stride_xk, which the first box alone cannot tell from k0 + cols * stride_xk
    config = replace(t6.CONFIGS["interpret"], BLOCK_K=16) if INTERPRETING else None
    out = watched_call(t6, monkeypatch, case, "4.3", x, w, r, weights, seen=seen, combine=combine, config=config)
    want = reference(x, w, ids, weights, combine=combine)
    if tuple(out.shape) != tuple(want.shape):
        fail(
            T6,
            f"{case}：结果的形状应当是 {tuple(want.shape)}，得到 {tuple(out.shape)}",
            f"{case}: the result should have shape {tuple(want.shape)}, got {tuple(out.shape)}",
            "4.4",
        )
    err = rel_err(out, want)
    if err > OUT_RTOL[torch.float16]:
        unweighted = rel_err(out, reference(x, w, ids, None, combine=combine)) < OUT_RTOL[torch.float16]
        found = by_slot_found(seen["by_slot"], x, w, ids, weights, out) if combine and not unweighted else ("", "", 0)
        as_contiguous = (
            None if unweighted or found[2] else read_as_contiguous(t6, x, w, r, weights, want, combine, config)
        )
        if as_contiguous:
            name = as_contiguous
            fail(
                T6,
                f"{case}：和 float64 的结果差 {err:.2e}（相对）；同样的调用只把 {name} 换成连续的副本，结果就对了："
                f"grouped_matmul 把 {name} 当成连续的来读，没有用它的 stride",
                f"{case}: off from float64 by {err:.2e} (relative); the same call with only {name} made contiguous is "
                f"right: grouped_matmul reads {name} as if it were contiguous, not through its strides",
                "4.1" if name == "x" else "4.3",
            )
        fail(
            T6,
            f"{case}：和 float64 的结果差 {err:.2e}（相对）" + ("：结果没有乘路由权重" if unweighted else found[0]),
            f"{case}: off from float64 by {err:.2e} (relative)"
            + (": the routing weights were not applied" if unweighted else found[1]),
            "4.4" if combine else "4.3",
        )
    # Nothing of the caller's is changed, a NaN included (an in-place nan_to_num_ or clamp_ of the
    # weights changes nothing else): watched_call compares the weights, bit for bit, after the call.
    weights[5, 1] = float("nan")
    watched_call(t6, monkeypatch, case, "4.3", x, w, r, weights, combine=combine)
