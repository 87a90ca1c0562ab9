"""Lesson T6's helpers that more than one of its test files uses: routings, tolerances, the watch on a launch."""

import os
import re

import torch

from course import ROOT, seam
from course.i18n import agree, cells, say
from course.messages import fail
from course.registry import lesson

from .combine_sums import left_out_seen, sums_seen
from .raised import fail_if_math_dtype_refused, fail_if_raised, raised_by  # noqa: F401 - tests import them from here
from support import (  # noqa: F401 - copies and changed_cells: tests import them from here
    DEVICE,
    INTERPRETING,
    UNWRITTEN,
    LaunchWatch,
    cells_changed,
    changed_cells,
    copies,
    refuse_products,
    rel_err,
)

T6 = lesson("T6")


# ||out - ref|| / ||ref|| with ref in float64: rounding to the dtype; tf32 on a GPU.  T6's own
# table: fp16 at 2e-3, where tests/support.py's OUT_RTOL, which T4 and T5 use, has 1.5e-3.
OUT_RTOL = {torch.float16: 2e-3, torch.bfloat16: 1.2e-2, torch.float32: 2e-3 if DEVICE == "cuda" else 1e-5}


TRACE_INTS = 7  # per tile: epilogues, expert, pid_m, pid_n, first row, row end, program


ROUTE_BLOCK = 128  # slots per routing program (§2.3)
SCAN_ROWS = 16  # block rows scan_counts sums at once (§2.3)


UNSET = -1  # what a new integer tensor holds in these tests: an index the routing never wrote


# ------------------------------------------------------------------------------------------------
# Routings: the distributions every step is checked over
# ------------------------------------------------------------------------------------------------
def make_ids(kind, tokens, top_k, experts):
    """topk_ids [tokens, top_k] (int64, as torch.topk gives them) of one kind of distribution."""
    if kind == "balanced":
        return torch.stack([torch.randperm(experts)[:top_k] for _ in range(tokens)]).to(DEVICE)
    if kind == "one expert":
        return torch.full((tokens, top_k), experts - 1, dtype=torch.int64, device=DEVICE)
    if kind == "empty experts":  # only experts 1 and 3 (and E-1) get rows
        few = torch.tensor([1, 3, experts - 1])
        return few[torch.randint(0, 3, (tokens, top_k))].to(DEVICE)
    if kind == "skewed":  # Zipf-like: expert e chosen with weight 1 / (e + 1)^1.5
        p = 1.0 / torch.arange(1, experts + 1, dtype=torch.float64) ** 1.5
        return torch.multinomial(p.expand(tokens, experts), top_k, replacement=False).to(DEVICE)
    raise ValueError(kind)


KIND_ZH = {"balanced": "均匀", "one expert": "全给一个专家", "empty experts": "有空专家", "skewed": "偏斜（Zipf）"}


# The same words in a case's label (make test's "which cases pass"), for a test parametrized by kind, tokens,
# top_k and experts: @pytest.mark.case_words(**ROUTING_WORDS)
ROUTING_WORDS = {
    "kind": lambda kind: say(zh=f"{KIND_ZH[kind]}的路由", en=f"{kind} routing"),
    "tokens": say(zh="{} 个 token", en="{} tokens"),
    "top_k": "top_k={}",
    "experts": say(zh="{} 个专家", en="{} experts"),
}


def case_name(kind, tokens, top_k, experts):
    return say(
        zh=f"{KIND_ZH[kind]}的路由，{tokens} 个 token，top_k={top_k}，{experts} 个专家",
        en=f"{kind} routing, {tokens} tokens, top_k={top_k}, {experts} experts",
    )


def watch_grouped(t6, monkeypatch):
    """A LaunchWatch (tests/support.py) on moe_kernel and combine_topk while grouped_matmul runs:
    each launch is recorded with its arguments; before it runs, its output (out_ptr) is filled with
    UNWRITTEN; torch's own products and T5's matmul fail while the watch is on."""
    kernels = {"moe_kernel": True, "combine_topk": True}
    watch = LaunchWatch(t6, monkeypatch, kernels, wrapper="grouped_matmul", out="out_ptr", shared_names=False)

    def refuse(what):
        def refused(*args, **kwargs):
            caller = graded_caller(t6, "grouped_matmul")
            fail(
                T6,  # pytest's Failed is no Exception: a learner's `except Exception` cannot swallow it
                f"{caller} 调用了 {what}：每个专家的乘积都必须由 moe_kernel 的一次启动算出来",
                f"{caller} called {what}: every expert's product must come from one launch of moe_kernel",
                "1.2",
            )

        return refused

    refuse_products(monkeypatch, refuse)
    t5 = seam.load(lesson("T5"))
    monkeypatch.setattr(t5, "matmul", refuse("T5 matmul"))
    if hasattr(t6, "matmul"):
        monkeypatch.setattr(t6, "matmul", refuse("T5 matmul"))
    return watch


def same_memory(x, y):
    return isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.data_ptr() == y.data_ptr()


def reference(x, w, ids, weights=None, combine=False, activation=None):
    """float64 loop: [T*top_k, N] in stable-sorted order, or [T, N] combined."""
    xd, wd = x.double().cpu(), w.double().cpu()
    tokens, top_k = ids.shape
    flat = ids.reshape(-1).cpu()
    rows = torch.zeros(tokens * top_k, wd.shape[1] // (2 if activation else 1), dtype=torch.float64)
    for s in range(tokens * top_k):
        h = wd[flat[s]] @ xd[s // top_k]
        if activation:
            gate, up = h.chunk(2)
            h = torch.nn.functional.silu(gate) * up
        rows[s] = h * (weights.reshape(-1)[s].double().cpu() if weights is not None else 1)
    if combine:
        return rows.view(tokens, top_k, -1).sum(1)
    return rows[torch.sort(flat, stable=True).indices]


def by_slot_found(by_slot, x, w, ids, weights, out):
    """With combine=True and a wrong result out: (zh, en, right) saying whether the float32 rows moe_kernel
    wrote by slot (watched_call's seen["by_slot"]) were right already (right: the fault is combine_topk's, and
    what out is, where combine_sums knows it)."""
    want = torch.empty(ids.numel(), w.shape[1], dtype=torch.float64)
    want[torch.sort(ids.reshape(-1).cpu(), stable=True).indices] = reference(x, w, ids, weights)
    err = rel_err(by_slot, want)
    if err <= OUT_RTOL[torch.float16]:
        out, by_slot, top_k = out.cpu(), by_slot.cpu(), ids.shape[1]
        sums = sums_seen(out, by_slot, ids.shape[0], top_k, out.dtype) or left_out_seen(out, by_slot, top_k, out.dtype)
        sums = sums or ("", "")
        return (
            f"；moe_kernel 按 slot 写下的 float32 行是对的（差 {err:.1e}）：错在 combine_topk 对它们的求和"
            + (f"：{sums[0]}" if sums[0] else ""),
            f"; the float32 rows moe_kernel wrote by slot are right (off by {err:.1e}): combine_topk's sum of them "
            "is not" + (f": {sums[1]}" if sums[1] else ""),
            True,
        )
    return (
        f"；moe_kernel 按 slot 写下的 float32 行已经差了 {err:.2e}（第 sorted_slots[i] 行放排好序的第 i 行）",
        f"; the float32 rows moe_kernel wrote by slot are off already, by {err:.2e} (row sorted_slots[i] holds sorted "
        "row i)",
        False,
    )


def watched_call(t6, monkeypatch, case, section, x, w, r, weights=None, seen=None, **kwargs):
    """grouped_matmul under watch_grouped: returns its result once the launch checks out.  seen (a
    dict): with combine, seen["by_slot"] is the buffer as moe_kernel left it."""
    watch = watch_grouped(t6, monkeypatch)
    given = {"x": x, "w": w, "topk_weights": weights}
    before = copies(given)
    refused = None
    try:
        out = t6.grouped_matmul(x, w, r, weights, **kwargs)
    except (ValueError, TypeError) as e:
        if not raised_in(e, t6, "check_expert_inputs"):
            raise  # from further in: the suite shows where
        refused = f"{type(e).__name__}: {str(e)[:200]}"
    monkeypatch.undo()
    if refused:
        fail(
            T6,
            f"{case}：这是合法的输入，check_expert_inputs 却拒绝了它：{refused}",
            f"{case}: valid input, yet check_expert_inputs refused it: {refused}",
            "4",
        )
    for name, differ in changed_cells(given, before).items():
        fail(
            T6,
            f"{case}：grouped_matmul 改动了调用者的 {name}（{differ} 个单元）：只读它，结果写进新的张量",
            f"{case}: grouped_matmul changed {cells(differ)} of the caller's {name}: read it only, and write the "
            "result to a new tensor",
            "4",
        )
    grouped = watch.of("moe_kernel")
    if len(grouped) != 1:
        fail(
            T6,
            f"{case}：grouped_matmul 启动了 {len(grouped)} 次 moe_kernel，应当恰好 1 次：一次启动做完所有专家",
            f"{case}: grouped_matmul launched moe_kernel {len(grouped)} times, exactly once expected: one launch "
            "does every expert",
            "1.2",
        )
    args, compiled = grouped[0].args, grouped[0].result
    if not same_memory(args.get("x_ptr"), x):
        fail(
            T6,
            f"{case}：moe_kernel 收到的 x_ptr 不是调用者的 x：按 sorted_slots 直接从 x 里 gather 行，不要拷贝",
            f"{case}: moe_kernel's x_ptr is not the caller's x: gather the rows from x itself through sorted_slots, "
            "no copy",
            "4.1",
        )
    base = getattr(args.get("w_desc"), "base", None)
    # rows of K elements not a multiple of 16 bytes (K = 33, say): TMA needs the given host's aligned copy
    if not same_memory(base, w) and w.shape[-1] * w.element_size() % 16 == 0:
        fail(
            T6,
            f"{case}：moe_kernel 的 w_desc 不是建在调用者的 w 上的（w 是连续的，不需要拷贝）",
            f"{case}: moe_kernel's w_desc does not describe the caller's w (a contiguous w needs no copy)",
            "4.2",
        )
    buffer, left = args["out_ptr"], grouped[0].left  # left: a copy taken as soon as moe_kernel ended
    # cells near the sentinel but not it: the sentinel plus a value (no product of the suite's inputs comes
    # within 100 of -1234), so moe_kernel added into the output where it should have stored: most of the
    # cells it wrote, as an add into it makes every one (a few alone are a product scaled by the sentinel,
    # read back as a weight, say)
    added = int((((left.double() - UNWRITTEN).abs() < 100) & (left != UNWRITTEN)).sum())
    if added and 2 * added > int((left != UNWRITTEN).sum()):
        fail(
            T6,
            f"{case}：moe_kernel 结束后，输出里有 {added} 个单元是测试预先填的哨兵值 {UNWRITTEN} 加上一个值："
            "moe_kernel 把结果加进了输出（tl.atomic_add，或 out 加 acc），而不是存进去：用 tl.store",
            f"{case}: after moe_kernel, {cells(added)} of the output hold the sentinel the test filled it with "
            f"({UNWRITTEN}) plus a value: moe_kernel added its results into the output (tl.atomic_add, or out plus "
            "acc) instead of storing them; tl.store them",
            "4.3",
        )
    if (left == UNWRITTEN).any():
        fail(
            T6,
            f"{case}：moe_kernel 结束后输出里还有 {int((left == UNWRITTEN).sum())} 个单元没写",
            f"{case}: {cells(int((left == UNWRITTEN).sum()))} of the output "
            f"{agree(int((left == UNWRITTEN).sum()), 'was', 'were')} not written by moe_kernel",
            "4.3",
        )
    if kwargs.get("combine"):
        check_combine_launch(watch, case, buffer, left, out)
        if seen is not None:
            seen["by_slot"] = left
    elif not (same_memory(out, buffer) and out.shape == buffer.shape):
        fail(
            T6,
            f"{case}：grouped_matmul 返回的不是 moe_kernel 写入的那个张量",
            f"{case}: grouped_matmul returned a tensor moe_kernel did not write into",
            "4.3",
        )
    elif cells_changed(out, left):
        fail(
            T6,
            f"{case}：moe_kernel 写完以后，grouped_matmul 又改了输出里的 {cells_changed(out, left)} 个单元："
            "返回的结果就是这次启动存下的",
            f"{case}: grouped_matmul changed {cells(cells_changed(out, left))} of the output after moe_kernel wrote "
            "them: the result is what the launch stored",
            "4.3",
        )
    if not INTERPRETING and "fadd" in str(getattr(compiled, "asm", {}).get("ttir", "")):
        fail(T6, f"{case}：moe_kernel 里有浮点 atomic_add", f"{case}: moe_kernel holds a float atomic_add", "4.4")
    return out


def raised_in(error, module, name):
    """Whether error was raised inside module's function `name` (a frame of its traceback)."""
    import traceback

    graded = os.path.realpath(getattr(module, "__file__", "") or "")
    frames = traceback.extract_tb(error.__traceback__)
    return any(os.path.realpath(f.filename) == graded and f.name == name for f in frames)


def pitch_of_rows(written, pitch):
    """pitch (an int other than N) where the cells written of a [T, N] result are exactly those that rows of N
    cells at a row pitch of `pitch` cover, t * pitch .. t * pitch + N - 1 (cut at the end); else None."""
    if not isinstance(pitch, int) or written.dim() != 2 or pitch <= 0 or pitch == written.shape[1]:
        return None
    tokens, n = written.shape
    at = (torch.arange(tokens)[:, None] * pitch + torch.arange(n)[None, :]).reshape(-1)
    covered = torch.zeros(tokens * n, dtype=torch.bool)
    covered[at[at < tokens * n]] = True
    return pitch if torch.equal(written.reshape(-1).cpu(), covered) else None


def check_combine_launch(watch, case, buffer, left, out):
    """With combine=True: one combine_topk, reading the float32 buffer moe_kernel wrote by slot, as
    that launch left it, and writing the result returned (§4.4)."""
    combines = watch.of("combine_topk")
    if len(combines) != 1:
        fail(
            T6,
            f"{case}：grouped_matmul(combine=True) 启动了 {len(combines)} 次 combine_topk，应当恰好 1 次：top_k 行的和"
            "由它算",
            f"{case}: grouped_matmul(combine=True) launched combine_topk {len(combines)} times, exactly once "
            "expected: it sums the top_k rows",
            "4.4",
        )
    args = combines[0].args
    if not same_memory(args.get("by_slot_ptr"), buffer):
        fail(
            T6,
            f"{case}：combine_topk 的 by_slot_ptr 不是 moe_kernel 按 slot 写入的那个缓冲区",
            f"{case}: combine_topk's by_slot_ptr is not the buffer moe_kernel wrote by slot",
            "4.4",
        )
    if buffer.dtype != torch.float32:
        fail(
            T6,
            f"{case}：moe_kernel 按 slot 写入的缓冲区是 {buffer.dtype}，应当是 float32：乘权重和求和都在 float32 里，"
            "最后只舍入一次",
            f"{case}: the buffer moe_kernel writes by slot is {buffer.dtype}, float32 expected: the weights and the "
            "sum stay in float32, rounded once at the end",
            "4.4",
        )
    if cells_changed(buffer, left):
        fail(
            T6,
            f"{case}：moe_kernel 写完以后，按 slot 的缓冲区又被改了 {cells_changed(buffer, left)} 个单元："
            "combine_topk 读的应当就是这次启动存下的",
            f"{case}: {cells(cells_changed(buffer, left))} of the by-slot buffer changed after moe_kernel wrote them: "
            "combine_topk reads what the launch stored",
            "4.4",
        )
    unwritten = int((combines[0].left == UNWRITTEN).sum()) if isinstance(combines[0].left, torch.Tensor) else 0
    if unwritten:
        rows = sorted({int(r) for r in (combines[0].left == UNWRITTEN).nonzero()[:, 0].tolist()})
        pitch = pitch_of_rows(combines[0].left != UNWRITTEN, args.get("BLOCK_N"))
        fail(
            T6,
            f"{case}：combine_topk 结束后结果里还有 {unwritten} 个单元没写（第 {rows[0]} 行起，共 {len(rows)} 行）："
            "程序 (t, 列块 c) 写结果的第 t 行、第 c*BLOCK_N 列起直到 N，t 是 tl.program_id(0)"
            + (
                f"；写了的单元正是第 t 行放在 t * BLOCK_N（{pitch}）处：结果的行距是 N，第 t 行在 t * N"
                if pitch
                else ""
            ),
            f"{case}: {cells(unwritten)} of the result {agree(unwritten, 'was', 'were')} not written by combine_topk "
            f"({len(rows)} rows, from row {rows[0]}): program (t, column block c) writes row t of the result, columns "
            "c*BLOCK_N up to N, with t = tl.program_id(0)"
            + (
                f"; the cells written are those of row t placed at t * BLOCK_N ({pitch}): the result's row pitch is N, "
                "row t at t * N"
                if pitch
                else ""
            ),
            "4.4",
        )
    if not (same_memory(out, args.get("out_ptr")) and out.shape == args["out_ptr"].shape):
        fail(
            T6,
            f"{case}：grouped_matmul(combine=True) 返回的不是 combine_topk 写入的那个张量",
            f"{case}: grouped_matmul(combine=True) returned a tensor combine_topk did not write into",
            "4.4",
        )
    if cells_changed(out, combines[0].left):
        fail(
            T6,
            f"{case}：combine_topk 写完以后，grouped_matmul 又改了结果里的 {cells_changed(out, combines[0].left)} "
            "个单元",
            f"{case}: grouped_matmul changed {cells(cells_changed(out, combines[0].left))} of the result after "
            "combine_topk wrote them",
            "4.4",
        )


def graded_code(t6):
    """The files whose code runs as the graded side's own: its file, and the given host it binds
    (given/t6_host.py: route, grouped_matmul), as realpaths."""
    files = {os.path.realpath(getattr(t6, "__file__", "") or "")}
    return files | {os.path.realpath(ROOT / path) for path in T6.given}


def graded_caller(t6, default):
    """The function of the graded code that made the call now refused: the nearest frame on the stack
    in the graded file or its given host (graded_code) with a name of its own (not a comprehension's);
    `default` where none is."""
    import sys

    graded = graded_code(t6)
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if os.path.realpath(code.co_filename) in graded and not code.co_name.startswith("<"):
            return code.co_name
        frame = frame.f_back
    return default


def names_one_of(message, names):
    """Whether message names one of names as a word of its own: "w" in "w is 2-D", not in "two rows".
    In either case: §1 writes the weights W, so "W has 4 experts" names w; route() returns a Routing,
    so "expected a Routing, got dict" names routing; and a sentence may start with a name ("Offsets ...")."""
    return any(
        re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message, re.IGNORECASE) for name in names
    )
