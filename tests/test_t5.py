"""Lesson T5's suite: one section per step, each marked so that `make test STEP=T5.2` runs it alone.

The tile loop (T5.1) and the stream-K split (T5.3) are counted through a trace: the kernel adds,
per tile, its epilogues and its k-blocks, and writes which program finished it and where T4's
grouped order put it.  Products are checked against float64 with A, B and C inside NaN (or
sentinel) padding, so a read or a write outside them shows.  T5 imports the learner's own T4
(tile_coords, bias_and_activation): a T4 body not written yet fails these checks as "not written yet".
"""

import math
import os
import re

import pytest
import torch
import triton

from course.i18n import say
from course.interpreter_spin import ProgramWaitsForever
from course.messages import fail
from course.messages import read as where_to_read
from course.registry import lesson
from course.tile_order import grouped_order

from gpu_compile import check_compiles_for_hopper
from support import ACC_RTOL, DEVICE, DTYPES, INTERPRETING, OUT_RTOL, descriptor, padded, random, rel_err

T5 = lesson("T5")

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's

TRACE_INTS = 5  # per tile: epilogues, k-blocks, program that finished it, pid_m, pid_n


@pytest.fixture(scope="session")
def t5(graded_module):
    return graded_module(T5)


@pytest.fixture(scope="session")
def probes(t5):
    from course.lessons import t5_probes  # its kernels call the graded module's functions, so it loads after `t5`

    return t5_probes


def cfg(t5, bm=32, bn=32, bk=32, group_m=4, subtile=1, mode="dp", flatten=False):
    return t5.Config(bm, bn, bk, group_m, 4, 2, subtile, flatten, mode)


def new_trace(tiles):
    return torch.zeros(tiles * TRACE_INTS, dtype=torch.int32, device=DEVICE)


def trace_rows(trace):
    return [tuple(r) for r in trace.view(-1, TRACE_INTS).cpu().tolist()]


def no_tile_past(rows, tiles, case):
    """rows[:tiles], after checking that the rows past them (a guard: tile ids the problem lacks) are untouched."""
    past = [t for t, row in enumerate(rows) if t >= tiles and any(row[:2])]
    if past:
        fail(
            T5,
            f"{case}：只有 {tiles} 个 tile（编号 0..{tiles - 1}），却做了编号 {past} 的 tile："
            "循环要停在 num_tiles 之前",
            f"{case}: there are {tiles} tiles (ids 0..{tiles - 1}), yet tile ids {past} were done: the loop must "
            "stop before num_tiles",
            "2.2",
        )
    return rows[:tiles]


def check_trace(rows, num_pid_m, num_pid_n, group_m, k_blocks, case, step_section, owner=None, done=None):
    """Every tile in `done` (default: all) finished exactly once, with all its k-blocks, at the tile
    T4's grouped order gives it, by the program owner(tile) when given; every other tile untouched."""
    order = grouped_order(num_pid_m, num_pid_n, group_m)
    done = range(len(rows)) if done is None else done
    for tile, (epilogues, kbs, prog, pm, pn) in enumerate(rows):
        if tile not in done:
            if epilogues or kbs:
                fail(
                    T5,
                    f"{case}：tile {tile} 不归这段代码管，却被做了（epilogue {epilogues} 次，k-block {kbs} 个）",
                    f"{case}: tile {tile} is not this loop's, yet it was done ({epilogues} epilogues, {kbs} k-blocks)",
                    step_section,
                )
            continue
        if epilogues != 1:
            fail(
                T5,
                f"{case}：tile {tile} 的 epilogue 跑了 {epilogues} 次，应当恰好 1 次"
                + ("（0 次：有的 tile 没人做；多次：步长或起点错了）" if epilogues != 1 else ""),
                f"{case}: tile {tile} had {epilogues} epilogues, exactly 1 expected "
                "(0: no program took it; more: a wrong start or stride)",
                step_section,
            )
        if kbs != k_blocks:
            fail(
                T5,
                f"{case}：tile {tile} 一共算了 {kbs} 个 k-block，应当是 {k_blocks} 个",
                f"{case}: tile {tile} summed {kbs} k-blocks, {k_blocks} expected",
                step_section,
            )
        if (pm, pn) != order[tile]:
            # name a cause only when the place is one a known mistake gives
            row_major = all((m, n) == divmod(t, num_pid_n) for t, (_, _, _, m, n) in enumerate(rows) if t in done)
            swapped = all((n, m) == order[t] for t, (_, _, _, m, n) in enumerate(rows) if t in done)
            fail(
                T5,
                f"{case}：tile {tile} 被算在 ({pm}, {pn})，按 T4 的分组顺序应当是 {order[tile]}"
                + ("：pid_m 和 pid_n 拿反了" if swapped else "")
                + ("：每个 tile 都按行优先拆开了，没有经过 tile_coords(tile_id, ...)" if row_major else ""),
                f"{case}: tile {tile} was computed at ({pm}, {pn}); T4's grouped order puts it at {order[tile]}"
                + (": pid_m and pid_n are the other way round" if swapped else "")
                + (
                    ": every tile was split row-major, not passed through tile_coords(tile_id, ...)"
                    if row_major
                    else ""
                ),
                step_section,
            )
        if owner is not None and prog != owner(tile):
            fail(
                T5,
                f"{case}：tile {tile} 由程序 {prog} 收尾，应当是程序 {owner(tile)}",
                f"{case}: tile {tile} was finished by program {prog}, program {owner(tile)} expected",
                step_section,
            )


# ================================================================================================
# T5.1 the persistent tile loop
# ================================================================================================
@pytest.mark.t5_1
@pytest.mark.parametrize("tiles, sms, want", [(1, 132, 1), (64, 132, 64), (132, 132, 132), (1376, 132, 132), (7, 3, 3)])
def test_persistent_grid(t5, tiles, sms, want):
    got = t5.persistent_grid(tiles, sms)
    if got != want:
        fail(
            T5,
            f"{tiles} 个 tile、{sms} 个 SM：应当启动 {want} 个常驻程序，得到 {got}",
            f"{tiles} tiles on {sms} SMs: {want} persistent programs expected, got {got}",
            "2.2",
        )


LOOP_CASES = [  # (num_pid_m, num_pid_n, GROUP_M, programs, first_tile, k_blocks)
    (4, 3, 2, 3, 0, 4),
    (5, 5, 4, 3, 0, 2),
    (1, 7, 8, 2, 0, 3),
    (7, 1, 3, 5, 0, 1),
    (3, 3, 2, 9, 0, 2),  # one tile per program
    (6, 4, 4, 7, 5, 3),  # the first five tiles belong to stream-K
]


@pytest.mark.t5_1
@pytest.mark.parametrize("flatten", [False, True], ids=["plain", "flatten"])
def test_every_tile_once_over_many_grids(probes, flatten):
    """Every tile exactly once, by program (tile - first_tile) % NUM_PROGS, in grouped order."""
    cases = LOOP_CASES + [  # and three random ones, from the test's seed
        tuple(int(x) for x in torch.randint(1, 8, (2,)))
        + (2 ** int(torch.randint(0, 3, (1,))), int(torch.randint(1, 12, (1,))), 0, int(torch.randint(1, 5, (1,))))
        for _ in range(3)
    ]
    cases = cases if not flatten else cases[::2]  # flatten changes how the loop compiles, not where it goes
    for num_pid_m, num_pid_n, group_m, progs, first, k_blocks in cases:
        tiles = num_pid_m * num_pid_n
        # rows for tile ids num_tiles .. 2 * num_tiles + progs - 1 too: a loop that runs past num_tiles
        # counts there (and not in memory beyond the trace, which the interpreter would crash on)
        trace = new_trace(2 * tiles + progs)
        probes.tile_loop_probe[(progs,)](
            trace, 32 * k_blocks - 5, first, tiles, num_pid_m, num_pid_n, progs, 32, group_m, flatten
        )
        case = say(
            zh=f"{num_pid_m} x {num_pid_n} 个 tile，GROUP_M={group_m}，{progs} 个程序，first_tile={first}",
            en=f"{num_pid_m} x {num_pid_n} tiles, GROUP_M={group_m}, {progs} programs, first_tile={first}",
        )
        check_trace(
            no_tile_past(trace_rows(trace), tiles, case),
            num_pid_m,
            num_pid_n,
            group_m,
            k_blocks,
            case,
            "2.2",
            owner=lambda t, f=first, p=progs: (t - f) % p,
            done=range(first, tiles),
        )


@pytest.mark.t5_1
def test_a_program_does_several_tiles(probes):
    """3 programs, 12 tiles: each program finishes 4 tiles, not 1 (one tile per program is T4)."""
    trace = new_trace(2 * 12 + 3)  # guard rows past the 12 tiles, as in test_every_tile_once_over_many_grids
    probes.tile_loop_probe[(3,)](trace, 64, 0, 12, 4, 3, 3, 32, 2, False)
    rows = no_tile_past(trace_rows(trace), 12, say(zh="12 个 tile、3 个程序", en="12 tiles, 3 programs"))
    per_program = [sum(1 for r in rows if r[0] and r[2] == p) for p in range(3)]
    if per_program != [4, 4, 4]:
        fail(
            T5,
            f"12 个 tile、3 个程序：每个程序应当做 4 个 tile，实际是 {per_program}："
            "循环从 first_tile + pid 开始，步长 NUM_PROGS",
            f"12 tiles, 3 programs: each program must finish 4 tiles, got {per_program}: start the loop at "
            "first_tile + pid and step by NUM_PROGS",
            "2.2",
        )


# ================================================================================================
# T5.2 TMA tensor descriptors
# ================================================================================================
def unaligned(rows, cols, dtype, off_bytes=4):
    """A row-major tensor whose base is off_bytes past a 16-byte boundary."""
    flat = torch.zeros(rows * cols + 16, dtype=dtype, device=DEVICE)
    off = off_bytes // flat.element_size()
    return flat[off : off + rows * cols].view(rows, cols)


RULE_CASES = [  # (what, tensor maker, words one of which the message must hold)
    (
        "b.t() of a row-major (64, 48)",
        lambda: torch.zeros(64, 48, dtype=torch.float16, device=DEVICE).t(),
        ("contiguous", "stride 1", "stride(1)", "连续"),
    ),
    ("fp16 (8, 7): rows of 14 bytes", lambda: torch.zeros(8, 7, dtype=torch.float16, device=DEVICE), ("16",)),
    (
        "every other column",
        lambda: torch.zeros(8, 64, dtype=torch.float32, device=DEVICE)[:, ::2],
        ("contiguous", "stride 1", "stride(1)", "连续"),
    ),
    ("base 4 bytes past 16", lambda: unaligned(8, 32, torch.float16), ("align", "base", "address", "对齐", "地址")),
    # 8 bytes off: a check against 8 bytes, not 16, passes the 4-byte case and lets this one through
    (
        "fp16 base 8 bytes past 16",
        lambda: unaligned(8, 32, torch.float16, 8),
        ("align", "base", "address", "对齐", "地址"),
    ),
    (
        "fp32 base 8 bytes past 16",
        lambda: unaligned(4, 8, torch.float32, 8),
        ("align", "base", "address", "对齐", "地址"),
    ),
    # rows of 72 bytes: a multiple of 8, and of 16 only if the size of an element is taken as 4, not 2
    ("fp16 (1, 7): one row of 14 bytes", lambda: torch.zeros(1, 7, dtype=torch.float16, device=DEVICE), ("16",)),
    ("fp16 (8, 36): rows of 72 bytes", lambda: torch.zeros(8, 36, dtype=torch.float16, device=DEVICE), ("16",)),
    # one column, but 2 elements from one to the next: the descriptor still wants stride(1) = 1
    (
        "one column of every other",
        lambda: torch.zeros(8, 16, dtype=torch.float16, device=DEVICE)[:, ::2][:, :1],
        ("contiguous", "stride 1", "stride(1)", "连续"),
    ),
]  # the rule's key word, as §3.2 lists them, in English (any case) or Chinese


@pytest.mark.t5_2
def test_tma_problem_accepts_legal_tensors(t5):
    for what, t in [
        ("fp16 (64, 48)", torch.zeros(64, 48, dtype=torch.float16, device=DEVICE)),
        ("fp32 (5, 4)", torch.zeros(5, 4, dtype=torch.float32, device=DEVICE)),
        ("a padded view", padded(9, 24, torch.float16)[0]),
    ]:
        problem = t5.tma_problem(t, "x")
        if problem is not None:
            fail(
                T5,
                f"{what}（stride {tuple(t.stride())}）满足 TMA 的三条规矩，tma_problem 却说：{problem}",
                f"{what} (strides {tuple(t.stride())}) keeps TMA's three rules, yet tma_problem says: {problem}",
                "3.2",
            )


@pytest.mark.t5_2
@pytest.mark.parametrize("case", RULE_CASES, ids=lambda c: c[0])
def test_tma_problem_names_the_tensor_and_the_rule(t5, case):
    what, make, words = case
    t = make()
    problem = t5.tma_problem(t, "tensor_q")
    if problem is None:
        fail(
            T5,
            f"{what}（stride {tuple(t.stride())}）违反 TMA 的规矩，tma_problem 却返回 None",
            f"{what} (strides {tuple(t.stride())}) breaks a TMA rule, yet tma_problem returned None",
            "3.2",
        )
    if "tensor_q" not in problem or not any(w in problem.lower() for w in words):
        fail(
            T5,
            f"{what}：说明里要有张量名 tensor_q 和违反的规矩（含 {' / '.join(words)} 之一），得到 {problem!r}",
            f"{what}: the message must name the tensor (tensor_q) and the rule (one of {' / '.join(words)}), "
            f"got {problem!r}",
            "3.2",
        )


@pytest.mark.t5_2
def test_tma_ready_reads_b_t_k_major_without_a_copy(t5):
    """nn.Linear keeps W as (N, K): x @ W.t() must not copy W, in either mode."""
    a, w = random((40, 64), torch.float16), random((24, 64), torch.float16)
    for fallback in (True, False):
        a2, b2, kmajor = t5.tma_ready(a, w.t(), fallback)
        if not kmajor or b2.data_ptr() != w.data_ptr() or tuple(b2.shape) != (24, 64):
            fail(
                T5,
                f"b = W.t()，W 是行主序的 (24, 64)：应当按 K-major 直接读 W（b_kmajor=True，返回的 b 就是 W，"
                f"不复制）；得到 b_kmajor={kmajor}，shape {tuple(b2.shape)}",
                f"b = W.t() with W a row-major (24, 64): read W K-major as it is (b_kmajor=True, the b returned "
                f"is W itself, no copy); got b_kmajor={kmajor}, shape {tuple(b2.shape)}",
                "3.2",
            )
        if a2.data_ptr() != a.data_ptr():
            fail(T5, "a 本来就合规，不该复制", "a keeps the rules already: it must not be copied", "3.2")


@pytest.mark.t5_2
def test_tma_ready_leaves_legal_views_alone(t5):
    """Views whose rows are padded (a slice of wider rows) keep TMA's rules: read as they are, not copied."""
    a, b = padded(20, 24, torch.float16)[0], padded(24, 40, torch.float16)[0]
    w = padded(40, 24, torch.float16)[0]  # b = w.t(): a padded W, read K-major as it is
    for fallback in (True, False):
        _, b2, kmajor = t5.tma_ready(a, w.t(), fallback)
        if not kmajor or b2.data_ptr() != w.data_ptr() or b2.stride() != w.stride():
            fail(
                T5,
                f"b = W.t()，W 是 stride {tuple(w.stride())} 的视图（行有填充），"
                f"满足 TMA 的规矩（fallback={fallback}）："
                f"应当按 K-major 直接读 W，不复制；得到 b_kmajor={kmajor}、stride {tuple(b2.stride())}"
                + ("、另一块内存（复制了）" if b2.data_ptr() != w.data_ptr() else ""),
                f"b = W.t() with W a view with strides {tuple(w.stride())} (padded rows) that keeps TMA's rules "
                f"(fallback={fallback}): read W K-major as it is, no copy; got b_kmajor={kmajor}, strides "
                f"{tuple(b2.stride())}" + (", other memory (a copy)" if b2.data_ptr() != w.data_ptr() else ""),
                "3.2",
            )
        a2, b2, kmajor = t5.tma_ready(a, b, fallback)
        for name, got, given in (("a", a2, a), ("b", b2, b)):
            if kmajor or got.data_ptr() != given.data_ptr() or got.stride() != given.stride():
                fail(
                    T5,
                    f"{name} 是 stride {tuple(given.stride())} 的视图，满足 TMA 的规矩（fallback={fallback}）："
                    f"应当原样返回，不复制；得到 stride {tuple(got.stride())}、b_kmajor={kmajor}"
                    + ("、另一块内存" if got.data_ptr() != given.data_ptr() else ""),
                    f"{name} is a view with strides {tuple(given.stride())} that keeps TMA's rules "
                    f"(fallback={fallback}): return it as it is, no copy; got strides {tuple(got.stride())}, "
                    f"b_kmajor={kmajor}" + (", other memory" if got.data_ptr() != given.data_ptr() else ""),
                    "3.2",
                )


# The rule's key words for tma_ready's error (§3.2 names them for tma_problem, whose text it may reuse):
CONTIGUOUS = ("contiguous", "stride", "column-major", "transpos", "连续", "步长")
ROWS_16 = ("16",)
RULE_OF_CASE = {  # test_tma_ready_copies_or_refuses's cases: the rule each breaks
    "fp16 with odd K = 33": ROWS_16,
    "fp16 with odd N = 21": ROWS_16,
    "column-major a": CONTIGUOUS,
    "b = W.t(), W fp16 (48, 45)": CONTIGUOUS + ROWS_16,  # b breaks rule 1, and W = b.t() rule 2
}


def names_operand(message, x):
    """Whether message names operand x as a token of its own ("b:", 'b', "rows of b", "张量 b"; not "bias").
    For a it cannot tell the English article from the name, so it holds for most English sentences."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(x)}(?![A-Za-z0-9_])", message) is not None


@pytest.mark.t5_2
@pytest.mark.parametrize(
    "what, make_a, make_b, bad",
    [
        (
            "fp16 with odd K = 33",
            lambda: random((20, 33), torch.float16),
            lambda: random((33, 16), torch.float16),
            "a",
        ),
        (
            "fp16 with odd N = 21",
            lambda: random((20, 32), torch.float16),
            lambda: random((32, 21), torch.float16),
            "b",
        ),
        (
            "column-major a",
            lambda: random((48, 20), torch.float16).t(),
            lambda: random((48, 16), torch.float16),
            "a",
        ),
        # b = W.t() with W an fp16 (48, 45): column-major, but W's rows are 90 bytes apart, so W itself
        # breaks rule 2 and cannot be read K-major either: b is copied (a, a padded view, keeps the rules)
        (
            "b = W.t(), W fp16 (48, 45)",
            lambda: padded(20, 45, torch.float16)[0],
            lambda: random((48, 45), torch.float16).t(),
            "b",
        ),
    ],
)
def test_tma_ready_copies_or_refuses(t5, what, make_a, make_b, bad):
    """Both outcomes: by default an aligned copy (same values, rules kept); with fallback=False a
    ValueError naming the tensor that breaks a rule, and the rule."""
    a, b = make_a(), make_b()
    a2, b2, kmajor = t5.tma_ready(a, b, True)
    # read K-major, the b returned is the (N, K) tensor the descriptor is built on: it keeps the rules too
    for name, got, want, read in (("a", a2, a, a2), ("b", b2.t() if kmajor else b2, b, b2)):
        problem = t5.tma_problem(read, name)
        if problem is not None:
            fail(
                T5,
                f"{what}：tma_ready 返回的 {name}"
                + ("（按 K-major 读的 (N, K) 张量，b_kmajor=True）" if name == "b" and kmajor else "")
                + f" 仍然违反规矩：{problem}"
                + ("。只有 b.t() 本身合规时才能按 K-major 读" if name == "b" and kmajor else ""),
                f"{what}: the {name} tma_ready returns"
                + (" (the (N, K) tensor read K-major, b_kmajor=True)" if name == "b" and kmajor else "")
                + f" still breaks a rule: {problem}"
                + (". Read b K-major only when b.t() itself keeps the rules" if name == "b" and kmajor else ""),
                "3.2",
            )
        if not torch.equal(got, want):
            fail(
                T5,
                f"{what}：tma_ready 返回的 {name} 数值变了",
                f"{what}: the {name} tma_ready returns holds other values",
                "3.2",
            )
    try:
        t5.tma_ready(a, b, False)
    except ValueError as e:
        if not names_operand(str(e), bad):
            fail(
                T5,
                f"{what}：ValueError 要写出违规的张量 {bad}（比如 “{bad}: ...”），得到 {e}",
                f"{what}: the ValueError must name {bad} (as in \"{bad}: ...\"), got {e}",
                "3.2",
            )
        rule = RULE_OF_CASE[what]
        if not any(w in str(e).lower() for w in rule):
            fail(
                T5,
                f"{what}：ValueError 要写出违反的规矩（含 {' / '.join(rule)} 之一），得到 {e}",
                f"{what}: the ValueError must name the rule broken (one of {' / '.join(rule)}), got {e}",
                "3.2",
            )
        return
    fail(
        T5,
        f"{what}：fallback=False 时应当抛 ValueError",
        f"{what}: with fallback=False it must raise ValueError",
        "3.2",
    )


@pytest.mark.t5_2
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize(
    "M, N, K, kb_begin, kb_end, kmajor",
    # the last two stop short of K's last k-block: the sum must too
    [
        (45, 37, 83, 0, 3, False),
        (32, 32, 96, 1, 3, False),
        (17, 50, 70, 0, 3, True),
        (40, 48, 160, 1, 3, False),
        (24, 40, 200, 2, 5, True),
    ],
)
def test_k_block_loop(probes, dtype, M, N, K, kb_begin, kb_end, kmajor):
    """A and B sit inside NaN; their descriptors' shapes end at M, N and K, so the boxes that stick
    out must come back as zeros, not as the NaN beside them."""
    bm = bn = bk = 32
    a, _ = padded(M, K, dtype)
    b_store, _ = padded(N, K, dtype) if kmajor else padded(K, N, dtype)
    b = b_store.t() if kmajor else b_store
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    acc = torch.full((grid[0] * bm, grid[1] * bn), -7.0, device=DEVICE)
    probes.k_block_loop_probe[grid](
        descriptor(a, [bm, bk]),
        descriptor(b_store, [bn, bk] if kmajor else [bk, bn]),
        acc,
        acc.stride(0),
        kb_begin,
        kb_end,
        bm,
        bn,
        bk,
        kmajor,
    )
    case = say(
        zh=f"M={M} N={N} K={K}，第 {kb_begin}..{kb_end - 1} 个 k-block，{dtype}{'，B 为 K-major' if kmajor else ''}",
        en=f"M={M} N={N} K={K}, k-blocks {kb_begin}..{kb_end - 1}, {dtype}{', B K-major' if kmajor else ''}",
    )
    if acc.isnan().any():
        fail(
            T5,
            f"{case}：累加器里有 NaN：读到了张量外面（这里是 NaN）。用描述符 load，不要用指针",
            f"{case}: NaN in the accumulator, so a load read outside A or B (NaN there): load through the "
            "descriptors, not through pointers",
            "3.1",
        )
    ks = slice(kb_begin * bk, min(kb_end * bk, K))
    ref = a[:, ks].double() @ b[ks, :].double()
    err = rel_err(acc[:M, :N], ref)
    if err > ACC_RTOL[dtype]:
        fail(
            T5,
            f"{case}：相对误差 {err:.2e} > {ACC_RTOL[dtype]:.0e}：只加 kb_begin..kb_end-1 这几个 k-block，"
            "偏移是 kb * BLOCK_K" + ("；K-major 时 box 是 [BLOCK_N, BLOCK_K]，load 后 .T" if kmajor else ""),
            f"{case}: relative error {err:.2e} > {ACC_RTOL[dtype]:.0e}: add k-blocks kb_begin..kb_end-1 only, at "
            "offset kb * BLOCK_K" + ("; K-major, the box is [BLOCK_N, BLOCK_K], .T after the load" if kmajor else ""),
            "3.1",
        )


@pytest.mark.t5_2
def test_make_descriptors_boxes(t5):
    """Each descriptor spans its tensor, and its box is what the kernel moves: A [BLOCK_M, BLOCK_K], B
    [BLOCK_K, BLOCK_N] or, K-major, [BLOCK_N, BLOCK_K] (k_block_loop loads boxes of B^T then), C
    [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE].  The three block sizes differ, so a box with two of them
    swapped shows here; with equal ones (the products' tests) it would go through unseen."""
    bm, bn, bk, subtile = 16, 64, 32, 2
    M, N, K = 40, 96, 80
    for kmajor in (False, True):
        a = padded(M, K, torch.float16)[0]
        b = padded(N, K, torch.float16)[0] if kmajor else padded(K, N, torch.float16)[0]
        c = padded(M, N, torch.float16)[0]
        got = t5.make_descriptors(a, b, c, kmajor, bm, bn, bk, subtile)
        want = {
            "a_desc": (a, [bm, bk]),
            "b_desc": (b, [bn, bk] if kmajor else [bk, bn]),
            "c_desc": (c, [bm, bn // subtile]),
        }
        blocks = f"BLOCK_M={bm} BLOCK_N={bn} BLOCK_K={bk} EPILOGUE_SUBTILE={subtile}"
        case = say(
            zh=f"make_descriptors，{blocks}，"
            + ("B 为 K-major，b 的形状是 (N, K)" if kmajor else "B 为行主序，b 是 (K, N)"),
            en=f"make_descriptors, {blocks}, " + ("B K-major, b is (N, K)" if kmajor else "B row-major, b is (K, N)"),
        )
        for desc, (name, (t, box)) in zip(got, want.items(), strict=True):
            transposed = name == "b_desc" and kmajor
            if list(desc.block_shape) != box:
                fail(
                    T5,
                    f"{case}：{name} 的 box 是 {list(desc.block_shape)}，应当是 {box}"
                    + ("（K-major 时读的是 Bᵀ，box 是 [BLOCK_N, BLOCK_K]）" if transposed else ""),
                    f"{case}: {name}'s box is {list(desc.block_shape)}, {box} expected"
                    + (" (K-major, it reads B^T: the box is [BLOCK_N, BLOCK_K])" if transposed else ""),
                    "3.1",
                )
            if list(desc.shape) != list(t.shape):
                fail(
                    T5,
                    f"{case}：{name} 的形状是 {list(desc.shape)}，应当是张量自己的 {list(t.shape)}",
                    f"{case}: {name}'s shape is {list(desc.shape)}, the tensor's own {list(t.shape)} expected",
                    "3.1",
                )


def run_store_tile(probes, M, N, dtype, subtile, bias=None, activation="none", bm=32, bn=32, acc=None):
    """C inside sentinel padding, written by store_tile; returns (c, buf, before, acc)."""
    c, buf = padded(M, N, dtype, fill=-1234.0, values=False)
    before = buf.clone()
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    acc = 3 * torch.randn(grid[0] * bm, grid[1] * bn, device=DEVICE) if acc is None else acc
    bias_arg = acc if bias is None else bias
    probes.store_tile_probe[grid](
        acc,
        acc.stride(0),
        descriptor(c, [bm, bn // subtile]),
        bias_arg,
        N,
        0 if bias is None else bias.stride(0),
        bm,
        bn,
        subtile,
        bias is not None,
        activation,
    )
    return c, buf, before, acc


def check_stored(c, buf, before, want, case, section):
    inside = torch.zeros(buf.shape, dtype=torch.bool, device=DEVICE)
    inside.as_strided(c.shape, c.stride(), c.storage_offset()).fill_(True)
    stray = ((buf != before) & ~inside).sum().item()
    if stray:
        fail(
            T5,
            f"{case}：C 外面有 {stray} 个格子被写了：存储要经过 c_desc，越界部分由它裁掉",
            f"{case}: {stray} cells outside C were written: store through c_desc, which clips what sticks out",
            section,
        )
    unwritten = (c == -1234.0).sum().item()
    if unwritten:
        fail(T5, f"{case}：C 有 {unwritten} 个格子没写", f"{case}: {unwritten} cells of C were never written", section)
    if not torch.equal(c, want):
        fail(
            T5,
            f"{case}：C 有 {(c != want).sum().item()} 个格子不等于 acc 转成 {c.dtype} 的值",
            f"{case}: {(c != want).sum().item()} cells of C differ from acc cast to {c.dtype}",
            section,
        )


@pytest.mark.t5_2
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
# N in whole 16-byte chunks (48, 72): a TMA store writes whole chunks, so a row ending mid-chunk is
# written past its end on the GPU (§3.3); the ragged edges here are the tiles sticking out of C.
@pytest.mark.parametrize("M, N", [(32, 32), (37, 48), (5, 72)])
def test_store_tile(probes, dtype, M, N):
    c, buf, before, acc = run_store_tile(probes, M, N, dtype, 1)
    check_stored(c, buf, before, acc[:M, :N].to(dtype), f"C {M}x{N} {dtype}", "3.3")


def epilogue_candidates(acc, bias, M, N, bm, bn, activation):
    """What store_tile's epilogue would give with each mistake the whole-tile epilogue has been seen to
    make, as {cause: C}: the bias left out, the activation left out, the bias indexed by pid_m."""
    act = gelu if activation == "gelu" else (lambda x: x)
    rows = torch.arange(M, device=DEVICE)[:, None]
    cols = torch.arange(N, device=DEVICE)[None, :]
    by_pid_m = (rows // bm) * bn + cols % bn  # the bias column pid_m * BLOCK_N + j instead of pid_n * BLOCK_N + j
    bias_m = torch.where(by_pid_m < N, bias[by_pid_m.clamp(max=N - 1)], 0.0)
    found = {"no-bias": act(acc), "bias-by-pid-m": act(acc + bias_m)}
    if activation != "none":
        found["no-activation"] = acc + bias[None, :]
    return found


EPILOGUE_CAUSES = {
    "no-bias": ("bias 没有加上", "the bias was not added"),
    "no-activation": ("没有做 activation", "the activation was not applied"),
    "bias-by-pid-m": (
        "bias 是按 pid_m 取的列，应当按 pid_n",
        "the bias columns were taken at pid_m * BLOCK_N, not pid_n * BLOCK_N",
    ),
}


def check_epilogue(c, acc, bias, M, N, activation, case, section, bm=32, bn=32):
    """C against act(acc + bias); on a miss, name the mistake whose result C is, if it is one of them."""
    want = acc + bias[None, :]
    want = gelu(want) if activation == "gelu" else want
    err = rel_err(c, want)
    if not c.isnan().any() and err <= 1e-5:
        return
    found = [k for k, v in epilogue_candidates(acc, bias, M, N, bm, bn, activation).items() if rel_err(c, v) <= 1e-5]
    fail(
        T5,
        f"{case}：相对误差 {err:.1e}" + "".join(f"：{EPILOGUE_CAUSES[k][0]}" for k in found),
        f"{case}: relative error {err:.1e}" + "".join(f": {EPILOGUE_CAUSES[k][1]}" for k in found),
        section,
    )


@pytest.mark.t5_2
@pytest.mark.parametrize("activation", ["none", "gelu"])
def test_store_tile_bias_and_activation(probes, activation):
    """The whole-tile epilogue (EPILOGUE_SUBTILE = 1, the interpreter's and most tuned configs) adds the
    bias of its own columns and applies the activation.  2 x 3 tiles: pid_m and pid_n differ in most
    of them; the bias, read with stride 2, is NaN between and around its values."""
    M, N = 40, 72
    bias = padded(1, 2 * N, torch.float32)[0][0, ::2]
    c, buf, before, acc = run_store_tile(probes, M, N, torch.float32, 1, bias=bias, activation=activation)
    case = say(
        zh=f"C {M}x{N}，整块 epilogue（EPILOGUE_SUBTILE=1），bias 步长 2，activation={activation}",
        en=f"C {M}x{N}, whole-tile epilogue (EPILOGUE_SUBTILE=1), bias with stride 2, activation={activation}",
    )
    check_epilogue(c, acc[:M, :N], bias, M, N, activation, case, "3.3")
    check_stored(c, buf, before, c, case, "3.3")


@pytest.mark.parametrize("subtile", [pytest.param(1, marks=pytest.mark.t5_2), pytest.param(2, marks=pytest.mark.t5_4)])
def test_store_tile_rounds_once_after_the_bias(probes, subtile):
    """fp16 C, sums near 1000 and a bias of -1000: act(acc + bias) is taken on the float32 sum and
    rounded to C's dtype once, at the store.  Rounded to fp16 first (its step is 0.5 at 1000), the
    small results that remain would be off by up to 0.25."""
    M, N = 32, 64
    acc = 1000 + 0.3 * torch.randn(M, N, device=DEVICE)
    bias = torch.full((N,), -1000.0, dtype=torch.float16, device=DEVICE)
    c, _, _, _ = run_store_tile(probes, M, N, torch.float16, subtile, bias=bias, acc=acc)
    want = (acc - 1000).to(torch.float16)
    err = rel_err(c, want)
    if err > 2e-3:
        early = rel_err(c, (acc.to(torch.float16).float() - 1000).to(torch.float16)) <= 2e-3
        fail(
            T5,
            f"C {M}x{N} fp16，EPILOGUE_SUBTILE={subtile}，和约 1000、bias 为 -1000：相对误差 {err:.1e}"
            + ("：和在加 bias 之前就转成了 fp16；应当在 float32 里加 bias、做激活，存储时只转一次" if early else ""),
            f"C {M}x{N} fp16, EPILOGUE_SUBTILE={subtile}, sums near 1000 and a bias of -1000: relative error "
            f"{err:.1e}"
            + (
                ": the sum was cast to fp16 before the bias was added; add the bias and apply the activation in "
                "float32, and cast once, at the store"
                if early
                else ""
            ),
            "3.3" if subtile == 1 else "5",
        )


@pytest.mark.t5_2
@pytest.mark.parametrize("mode", ["dp", "swap"])
def test_matmul_whole_tile_with_bias_and_gelu(t5, mode):
    """The whole kernel with EPILOGUE_SUBTILE = 1, bias and GELU: data-parallel tiles, or the
    turned-around tiles of a decode step (§6.3); 2 x 3 tiles of 32 (of 16 x 32 for swap)."""
    M, N, K = 45, 70, 96
    a, b = padded(M, K, torch.float16)[0], padded(K, N, torch.float16)[0]
    bias = padded(1, 2 * N, torch.float16)[0][0, ::2]
    case = f"{M}x{K} @ {K}x{N} fp16, EPILOGUE_SUBTILE=1, mode={mode}, bias + GELU"
    c = run_matmul(t5, case, "3.3", a, b, bias=bias, activation="gelu", config=cfg(t5, mode=mode), num_programs=3)
    ref = torch.nn.functional.gelu(a.double() @ b.double() + bias.double())
    err = rel_err(c, ref)
    if c.isnan().any() or err > OUT_RTOL[torch.float16]:
        fail(
            T5,
            f"{M}x{K} @ {K}x{N} fp16，EPILOGUE_SUBTILE=1，mode={mode}，bias + GELU：相对误差 {err:.2e}",
            f"{M}x{K} @ {K}x{N} fp16, EPILOGUE_SUBTILE=1, mode={mode}, bias + GELU: relative error {err:.2e}",
            "3.3",
        )


def crash_site(exc):
    """(frame, innermost exception) of a crash: the deepest frame in TensorDescriptor or in the
    lessons' files (mine/ or solutions/) along the exception's chain, else the deepest of all."""
    import traceback

    ours = ("tensor_descriptor.py", "t5_persistent.py", "t4_matmul.py")
    site, inner, seen = None, exc, set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames = traceback.extract_tb(exc.__traceback__)
        chosen = [f for f in frames if f.filename.endswith(ours)] or frames
        if chosen:
            site, inner = chosen[-1], exc
        exc = exc.__cause__ or exc.__context__
    return site, inner


def run_matmul(t5, case, section, *args, **kwargs):
    """t5.matmul; a crash inside TensorDescriptor or inside the kernel becomes a failure that says
    what broke, where, and what to read.  A body not written yet still fails as one."""
    from triton.runtime.errors import InterpreterError

    try:
        return t5.matmul(*args, **kwargs)
    except (AssertionError, InterpreterError, triton.CompilationError) as e:
        site, inner = crash_site(e)
        said = str(inner).strip().splitlines()[0] if str(inner).strip() else type(inner).__name__
        if "NotImplementedError" in repr(e) or site is None:
            raise
        where = f"{os.path.basename(site.filename)} line {site.lineno} ({site.name})"
        if isinstance(inner, ProgramWaitsForever):  # a wait nothing can end, named by course/interpreter_spin.py
            fail(T5, f"{case}：在 {where}，{said}", f"{case}: at {where}, {said}", "4.2")
        if site.filename.endswith(os.path.join("tools", "tensor_descriptor.py")):
            fail(
                T5,
                f"{case}：TensorDescriptor 不接受传给它的张量（{said}）：make_descriptors 用的 a、b 和 C 都要满足 "
                "TMA 的规矩，tma_ready 要把违规的操作数换成 aligned_copy()",
                f"{case}: TensorDescriptor refused a tensor ({said}): every tensor make_descriptors builds a "
                "descriptor on must keep TMA's rules, so tma_ready must replace an operand that breaks one "
                "with aligned_copy()",
                "3.2",
            )
        fail(
            T5,
            f"{case}：matmul 在 {where} 崩溃了：{said}。这里用的是你的描述符（box 见 make_descriptors）和你的函数",
            f"{case}: matmul crashed at {where}: {said}. The kernel there runs on your descriptors (their boxes "
            "come from make_descriptors) and calls your functions",
            section,
        )


def product_case(t5, M, N, K, dtype, layout, progs, config, trace=True):
    """matmul into a padded C; A and B inside NaN.  Returns (c, a, b, trace rows)."""
    a, _ = padded(M, K, dtype)
    b, _ = padded(K, N, dtype)
    if layout == "b = W.t()":
        b = padded(N, K, dtype)[0].t()
    elif layout == "column-major a":
        a = padded(K, M, dtype)[0].t()
    out, _ = padded(M, N, dtype)
    tiles = triton.cdiv(M, config.BLOCK_M) * triton.cdiv(N, config.BLOCK_N)
    # guard rows past the tiles: a loop running past num_tiles counts there, not beyond the trace
    tr = new_trace(2 * tiles + progs * config.occupancy) if trace else None
    blocks = f"{config.BLOCK_M}x{config.BLOCK_N}x{config.BLOCK_K}"
    case = f"{M}x{K} @ {K}x{N} {dtype}, {layout}, mode={config.mode}, BLOCK {blocks}"
    c = run_matmul(t5, case, "3.1", a, b, config=config, num_programs=progs, out=out, trace=tr)
    return c, a, b, (no_tile_past(trace_rows(tr), tiles, case) if trace else None)


def check_product(c, a, b, dtype, case, section):
    if not isinstance(c, torch.Tensor) or tuple(c.shape) != (a.shape[0], b.shape[1]):
        fail(T5, f"{case}：结果形状不对", f"{case}: the result has the wrong shape", section)
    if c.isnan().any():
        fail(
            T5,
            f"{case}：C 里有 {c.isnan().sum().item()} 个 NaN：有 tile 没写，或读到了 A、B 外面",
            f"{case}: {c.isnan().sum().item()} NaN in C: a tile was never written, or a load read outside A or B",
            section,
        )
    err = rel_err(c, a.double() @ b.double())
    if err > OUT_RTOL[dtype]:
        fail(
            T5,
            f"{case}：相对误差 {err:.2e} > {OUT_RTOL[dtype]:.1e}",
            f"{case}: relative error {err:.2e} > {OUT_RTOL[dtype]:.1e}",
            section,
        )


@pytest.mark.t5_2
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["row-major", "b = W.t()", "column-major a"])
@pytest.mark.parametrize("M, N, K, progs", [(45, 37, 83, 3), (64, 96, 64, 2), (100, 40, 33, 5)])
def test_matmul_data_parallel(t5, dtype, layout, M, N, K, progs):
    """The persistent data-parallel kernel end to end: every tile once, the product right."""
    config = cfg(t5)
    c, a, b, rows = product_case(t5, M, N, K, dtype, layout, progs, config)
    case = f"{M}x{K} @ {K}x{N} {dtype}, {layout}, {progs} programs"
    check_product(c, a, b, dtype, case, "3")
    check_trace(rows, triton.cdiv(M, 32), triton.cdiv(N, 32), 4, triton.cdiv(K, 32), case, "2.2")


@pytest.mark.t5_2
def test_two_programs_per_sm(t5):
    """Config.occupancy = 2 plans two programs per SM: with 3 "SMs", 6 programs share the 20 tiles,
    program p finishing tiles p, p + 6, ...; every tile once, the product right (§2.1)."""
    M, N, K = 150, 100, 64
    config = t5.Config(32, 32, 32, 4, 4, 2, 1, False, "dp", 2)
    c, a, b, rows = product_case(t5, M, N, K, torch.float16, "row-major", 3, config)
    case = say(
        zh=f"{M}x{K} @ {K}x{N} fp16，每个 SM 两个程序，3 个 SM",
        en=f"{M}x{K} @ {K}x{N} fp16, two programs per SM, 3 SMs",
    )
    check_product(c, a, b, torch.float16, case, "2.1")
    check_trace(rows, 5, 4, 4, 2, case, "2.2", owner=lambda tile: tile % 6)


@pytest.mark.t5_2
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("layout", ["row-major", "b = W.t()"])
@pytest.mark.parametrize("M, N, K, progs", [(1, 70, 45, 3), (16, 96, 64, 2), (40, 37, 83, 3)])
def test_decode_turned_around(t5, dtype, layout, M, N, K, progs):
    """mode "swap" (§6.3): the kernel given for a decode step sums each tile as B^T A^T on your
    descriptors, T4's order and your store_tile: every tile once, the product right."""
    config = t5.Config(16, 32, 32, 2, 4, 2, 1, False, "swap")
    c, a, b, rows = product_case(t5, M, N, K, dtype, layout, progs, config)
    case = f"{M}x{K} @ {K}x{N} {dtype}, {layout}, mode swap, {progs} programs"
    check_product(c, a, b, dtype, case, "6.3")
    check_trace(rows, triton.cdiv(M, 16), triton.cdiv(N, 32), 2, triton.cdiv(K, 32), case, "6.3")


@pytest.mark.t5_2
def test_matmul_refuses_or_copies_both_ways(t5):
    """fp16 with odd K: by default a copy and the right product; with tma_fallback=False a ValueError
    that names a and the rule."""
    a, b = random((20, 33), torch.float16), random((33, 24), torch.float16)
    check_product(t5.matmul(a, b, config=cfg(t5)), a, b, torch.float16, "fp16 K = 33", "3.2")
    try:
        t5.matmul(a, b, config=cfg(t5), tma_fallback=False)
    except ValueError as e:
        if "a" not in str(e) or "16" not in str(e):
            fail(
                T5,
                f"ValueError 要写出张量 a 和 16 字节的规矩，得到 {e}",
                f"the ValueError must name a and the 16-byte rule, got {e}",
                "3.2",
            )
        return
    fail(
        T5,
        "fp16、K = 33、tma_fallback=False：应当抛 ValueError",
        "fp16, K = 33, tma_fallback=False: expected a ValueError",
        "3.2",
    )


@pytest.mark.t5_2
@pytest.mark.parametrize("M, N, K", [(6, 5, 0), (40, 33, 0)])
def test_empty_k_gives_zeros(t5, M, N, K):
    case = f"{M}x{K} @ {K}x{N}"
    c = run_matmul(t5, case, "3.1", random((M, K), torch.float16), random((K, N), torch.float16), config=cfg(t5))
    if tuple(c.shape) != (M, N) or not torch.equal(c, torch.zeros_like(c)):
        fail(T5, f"{M}x{K} @ {K}x{N}：应当是 ({M}, {N}) 的全零", f"{M}x{K} @ {K}x{N}: expected ({M}, {N}) zeros", "3.1")


# ================================================================================================
# T5.3 stream-K with a deterministic fix-up
# ================================================================================================
@pytest.mark.t5_3
@pytest.mark.parametrize("total, progs", [(12, 3), (13, 3), (7, 7), (20, 6), (5, 8), (100, 9)])
def test_sk_runs_cover_every_k_block_once(probes, total, progs):
    runs = torch.full((2 * progs,), -1, dtype=torch.int32, device=DEVICE)
    owners = torch.full((total,), -1, dtype=torch.int32, device=DEVICE)
    probes.sk_run_probe[(progs,)](runs, owners, total, progs)
    got = [tuple(r) for r in runs.view(-1, 2).cpu().tolist()]
    base, extra = divmod(total, progs)
    want, at = [], 0
    for p in range(progs):
        want.append((at, at + base + (p < extra)))
        at = want[-1][1]
    if got != want:
        fail(
            T5,
            f"{total} 个 k-block 分给 {progs} 个程序：各段应当首尾相接"
            + (f"、前 {extra} 段多一个" if extra else f"、每段 {base} 个")
            + f"：期望 {want}，得到 {got}",
            f"{total} k-blocks over {progs} programs: the runs lie end to end, "
            + (f"the first {extra} one k-block longer" if extra else f"{base} each")
            + f": expected {want}, got {got}",
            "4.1",
        )
    want_owner = [p for p, (lo, hi) in enumerate(want) for _ in range(lo, hi)]
    if owners.cpu().tolist() != want_owner:
        fail(
            T5,
            f"sk_program_of 和 sk_run 对不上：k-block 的归属期望 {want_owner}，得到 {owners.cpu().tolist()}",
            f"sk_program_of disagrees with sk_run: expected owners {want_owner}, got {owners.cpu().tolist()}",
            "4.1",
        )


def sk_owner(tile, k_blocks, total, progs):
    """The program holding the tile's last k-block."""
    base, extra = divmod(total, progs)
    it = (tile + 1) * k_blocks - 1
    big = extra * (base + 1)
    return it // (base + 1) if it < big else extra + (it - big) // base


SK_CASES = [  # (num_pid_m, num_pid_n, k_blocks, sk_tiles, programs)
    (2, 2, 5, 4, 3),
    (3, 2, 4, 6, 4),
    (1, 3, 7, 3, 5),
    (4, 4, 3, 5, 3),  # hybrid: 5 stream-K tiles, the rest left to the data-parallel loop
    (2, 3, 1, 6, 4),
    (3, 3, 6, 9, 9),
]


def sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs):
    return say(
        zh=f"{num_pid_m} x {num_pid_n} 个 tile，每个 {k_blocks} 个 k-block，{sk_tiles} 个走 stream-K，{progs} 个程序",
        en=f"{num_pid_m} x {num_pid_n} tiles, {k_blocks} k-blocks each, {sk_tiles} stream-K tiles, {progs} programs",
    )


@pytest.mark.t5_3
def test_stream_k_every_tile_once(probes):
    """Count-only: every stream-K tile gets all its k-blocks and one epilogue, by the program that
    holds its last k-block; no other tile is touched; every flag is back at 0 at the end."""
    cases = SK_CASES + [
        (
            int(torch.randint(1, 5, (1,))),
            int(torch.randint(1, 5, (1,))),
            int(torch.randint(1, 9, (1,))),
            0,
            int(torch.randint(2, 10, (1,))),
        )
        for _ in range(3)
    ]
    for num_pid_m, num_pid_n, k_blocks, sk_tiles, progs in cases:
        tiles = num_pid_m * num_pid_n
        sk_tiles = sk_tiles or tiles
        progs = min(progs, sk_tiles * k_blocks)
        trace = new_trace(tiles)
        partials = torch.zeros(progs * 16 * 16, device=DEVICE)
        flags = torch.zeros(progs, dtype=torch.int32, device=DEVICE)
        probes.stream_k_probe[(progs,)](
            trace, partials, flags, 32 * k_blocks - 3, sk_tiles, num_pid_m, num_pid_n, progs, 32, 2
        )
        case = sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs)
        total = sk_tiles * k_blocks
        check_trace(
            trace_rows(trace),
            num_pid_m,
            num_pid_n,
            2,
            k_blocks,
            case,
            "4.2",
            owner=lambda t, kb=k_blocks, tot=total, p=progs: sk_owner(t, kb, tot, p),
            done=range(sk_tiles),
        )
        if flags.any():
            # every publisher's flag still at 1, and no other: whatever the owners did with the partials
            # (this run counts, it does not add), none put a flag back
            base, extra = divmod(total, progs)
            ends = [(p + 1) * base + min(p + 1, extra) for p in range(progs)]
            published = [int(p < total and ends[p] % k_blocks != 0) for p in range(progs)]
            left_up = flags.cpu().tolist() == published
            fail(
                T5,
                f"{case}：结束时还有 flag 没归零 {flags.cpu().tolist()}"
                + (
                    "：发布过 partial 的程序的 flag 都还是 1，没有一个被 owner 放回 0（owner 等的是不是这些程序？"
                    "见 sk_program_of）"
                    if left_up
                    else ""
                ),
                f"{case}: flags left raised {flags.cpu().tolist()}"
                + (
                    ": every publisher's flag is still 1, none was put back to 0 by an owner (does each owner wait "
                    "on these programs? sk_program_of)"
                    if left_up
                    else ""
                ),
                "4.2",
            )


@pytest.mark.t5_3
@pytest.mark.parametrize(
    "tiles, k_blocks, sms, mode, want",
    [
        (64, 8, 132, "auto", (64, 132)),  # one thin wave (< half): all stream-K
        (100, 8, 132, "auto", (0, 100)),  # one wave at least half full: data-parallel
        (264, 8, 132, "auto", (0, 132)),  # whole waves
        (300, 8, 132, "auto", (168, 132)),  # a thin last wave merged with one full wave
        (400, 8, 132, "auto", (136, 132)),  # 3 waves and 4 tiles: the 4 and one wave go to stream-K
        (10, 1, 132, "auto", (0, 10)),  # one k-block: nothing to split
        (10, 4, 132, "sk", (10, 40)),  # no more programs than k-blocks
        (10, 4, 132, "dp", (0, 10)),
        (66, 8, 132, "auto", (0, 66)),  # exactly half full: data-parallel (an even SM count shows >= from >)
        (65, 8, 132, "auto", (65, 132)),  # one tile under half: stream-K
        (7, 8, 3, "auto", (4, 3)),  # an odd SM count: 1 tile is under half of 3 (a floored half would say 1 >= 1)
        (8, 8, 3, "auto", (0, 3)),  # 2 of 3 is over half: data-parallel
    ],
)
def test_stream_k_split(t5, tiles, k_blocks, sms, mode, want):
    got = tuple(t5.stream_k_split(tiles, k_blocks, sms, mode))
    if got != want:
        fail(
            T5,
            f"{tiles} 个 tile、每个 {k_blocks} 个 k-block、{sms} 个 SM、mode={mode}："
            f"期望 (sk_tiles, programs) = {want}，得到 {got}",
            f"{tiles} tiles of {k_blocks} k-blocks on {sms} SMs, mode={mode}: expected (sk_tiles, programs) = "
            f"{want}, got {got}",
            "4.3",
        )


@pytest.mark.t5_3
@pytest.mark.parametrize(
    "dtype, mode, M, N, K, progs",
    [
        (torch.float16, "sk", 45, 37, 160, 3),
        (torch.float32, "sk", 45, 37, 160, 3),
        (torch.float16, "sk", 64, 64, 130, 3),
        (torch.float16, "auto", 96, 33, 200, 5),
        (torch.float32, "auto", 64, 64, 130, 2),
        (torch.float16, "auto", 100, 70, 96, 4),
        (torch.float16, "tail", 128, 160, 96, 7),  # 20 tiles on 7: a last wave of 6, and one of 7, by stream-K
        (torch.float16, "split", 64, 40, 256, 9),  # split-K: 4 tiles, each cut in two along K, on 8 programs
    ]
    # On a GPU also tiles shared by 8 programs each (4 and 6 tiles, long K): with one or two programs
    # per tile a sum in no fixed order can still come out the same every run.
    + (
        []
        if INTERPRETING
        else [
            (torch.bfloat16, "sk", 300, 200, 1000, 7),
            (torch.float16, "auto", 512, 300, 4000, 11),
            (torch.float32, "sk", 64, 64, 4096, 32),
            (torch.float16, "sk", 64, 96, 8192, 48),
            (torch.float16, "split", 100, 64, 8192, 40),
        ]
    ),
    ids=str,
)
def test_stream_k_products_are_right_and_bitwise_repeatable(t5, dtype, mode, M, N, K, progs):
    config = cfg(t5, mode=mode)
    c, a, b, rows = product_case(t5, M, N, K, dtype, "row-major", progs, config)
    case = f"{M}x{K} @ {K}x{N} {dtype}, mode={mode}, {progs} programs"
    check_product(c, a, b, dtype, case, "4.2")
    check_trace(rows, triton.cdiv(M, 32), triton.cdiv(N, 32), 4, triton.cdiv(K, 32), case, "4.2")
    for run in range(1 if INTERPRETING else 20):  # the interpreter runs programs in order; a GPU does not
        again = t5.matmul(a, b, config=config, num_programs=progs)
        if not torch.equal(
            again.view(torch.int32 if dtype == torch.float32 else torch.int16),
            c.view(torch.int32 if dtype == torch.float32 else torch.int16),
        ):
            fail(
                T5,
                f"{case}：第 {run + 2} 次运行的结果和第 1 次不是同样的比特：partial 要按固定顺序相加，不用浮点 atomic",
                f"{case}: run {run + 2} differs in its bits from run 1: add the partials in a fixed order, "
                "with no float atomics",
                "4.2",
            )
    sk_tiles, programs = t5.stream_k_plan(triton.cdiv(M, 32) * triton.cdiv(N, 32), triton.cdiv(K, 32), progs, mode)
    if sk_tiles:
        flags = t5.workspace(a.device, programs, 32, 32)[1]
        if flags.any():
            fail(
                T5,
                f"{case}：kernel 结束后 workspace 的 flag 没有归零：{flags.cpu().tolist()}",
                f"{case}: the workspace's flags are not back at 0 after the kernel: {flags.cpu().tolist()}",
                "4.2",
            )


# The fix-up's two halves alone, then as a pair run in other program orders (§4.2).  On the CPU the
# interpreter runs programs one after another in id order, so every flag is up before anyone
# waits: course/interpreter_order.py runs them cooperatively in a chosen order instead, and records
# what each program did, for the checks numbers cannot make on a CPU (barrier, release, acquire).
FIX_BM, FIX_BN = (16, 16) if INTERPRETING else (64, 64)  # larger on a GPU: a partial takes longer to store


def spread_tiles(n, bm=FIX_BM, bn=FIX_BN):
    """n float32 tiles whose values span seven orders of magnitude: added in another order, their
    sum comes out with other bits in many cells."""
    scale = 10.0 ** torch.randint(-3, 4, (n, bm, bn), device=DEVICE)
    return (torch.randn(n, bm, bn, device=DEVICE) * scale).contiguous()


def in_order_sum(acc, partials, first, last):
    """acc + partials[first] + ... + partials[last - 1], added in that order in float32."""
    for p in range(first, last):
        acc = acc + partials[p]
    return acc


@pytest.mark.t5_3
def test_sk_publish_partial_alone(probes):
    """Each of 4 programs publishes its tile: its slot holds the tile, its flag is 1; the slot past
    the last program's is never written."""
    n = 4
    src = spread_tiles(n)
    partials = torch.full((n + 1, FIX_BM, FIX_BN), float("nan"), device=DEVICE)
    flags = torch.zeros(n + 1, dtype=torch.int32, device=DEVICE)
    probes.publish_probe[(n,)](src, partials, flags, FIX_BM, FIX_BN)
    for p in range(n):
        wrong = (partials[p] != src[p]).sum().item()
        if wrong:
            # the same values in another order: the tile stored in another layout than §4.2's row-major slot
            moved = torch.equal(partials[p].flatten().sort().values, src[p].flatten().sort().values)
            fail(
                T5,
                f"sk_publish_partial：程序 {p} 的槽（第 {p} 个 {FIX_BM}x{FIX_BN} 块）"
                f"有 {wrong} 个格子不等于它的 partial"
                + ("：值都在，只是顺序不同。槽里的 tile 要按行主序放（§4.2），测试和 owner 都这样读" if moved else ""),
                f"sk_publish_partial: {wrong} cells of program {p}'s slot (the {p}-th {FIX_BM}x{FIX_BN} tile "
                "of the workspace) differ from its partial"
                + (
                    ": the values are all there, in another order. A slot holds the tile row-major (§4.2), and "
                    "the tests read it so"
                    if moved
                    else ""
                ),
                "4.2",
            )
    if not partials[n].isnan().all():
        fail(
            T5,
            f"sk_publish_partial：{n} 个程序发布，第 {n} 个槽（没有程序的）被写了",
            f"sk_publish_partial: {n} programs published, yet slot {n} (no program's) was written",
            "4.2",
        )
    if flags.cpu().tolist() != [1] * n + [0]:
        fail(
            T5,
            f"sk_publish_partial：发布之后 flag 应当是 {[1] * n + [0]}（每个程序把自己的 flag 置为 1），"
            f"得到 {flags.cpu().tolist()}",
            f"sk_publish_partial: after publishing, flags {[1] * n + [0]} expected (each program raises its "
            f"own flag to 1), got {flags.cpu().tolist()}",
            "4.2",
        )


@pytest.mark.t5_3
def test_sk_collect_partials_alone(probes):
    """Program 6 owns a tile whose other segments are programs 2..5's: it adds their partials onto
    its acc in that order, each flag put back to 0; flags outside 2..5 (other tiles') untouched."""
    n, first, pid = 8, 2, 6
    acc, partials = spread_tiles(1)[0], spread_tiles(n)
    flags = torch.ones(n, dtype=torch.int32, device=DEVICE)
    out = torch.full_like(acc, float("nan"))
    probes.collect_probe[(1,)](acc, partials, flags, out, first, pid, FIX_BM, FIX_BN)
    want = in_order_sum(acc, partials, first, pid)
    if not torch.equal(out, want):
        backwards = in_order_sum(acc, partials.flip(0), n - pid, n - first)
        fail(
            T5,
            f"sk_collect_partials(first_pid={first}, pid={pid})：{(out != want).sum().item()} 个格子（共 "
            f"{out.numel()}）不等于 acc + 程序 {first}..{pid - 1} 的 partial 按这个顺序逐个相加"
            + ("：这是倒着加的结果" if torch.equal(out, backwards) else "")
            + "（每个槽里的 tile 按行主序放，§4.2）",
            f"sk_collect_partials(first_pid={first}, pid={pid}): {(out != want).sum().item()} of {out.numel()} "
            f"cells differ from acc + the partials of programs {first}..{pid - 1}, added one by one in that order"
            + (": this is their sum added backwards" if torch.equal(out, backwards) else "")
            + " (each slot holds its tile row-major, §4.2)",
            "4.2",
        )
    want_flags = [0 if first <= p < pid else 1 for p in range(n)]
    if flags.cpu().tolist() != want_flags:
        fail(
            T5,
            f"sk_collect_partials(first_pid={first}, pid={pid})：结束时 flag 是 {flags.cpu().tolist()}，"
            f"应当是 {want_flags}：加过的 partial 的 flag 放回 0，别的程序的不碰",
            f"sk_collect_partials(first_pid={first}, pid={pid}): flags {flags.cpu().tolist()} at the end, "
            f"{want_flags} expected: the flags of the partials added go back to 0, no other flag changes",
            "4.2",
        )


def pair_case(n):
    """Inputs of publish_collect_probe: n tiles, a workspace of NaN, flags down, out of NaN; the sum wanted."""
    src = spread_tiles(n)
    partials = torch.full((n, FIX_BM, FIX_BN), float("nan"), device=DEVICE)
    flags = torch.zeros(n, dtype=torch.int32, device=DEVICE)
    out = torch.full((FIX_BM, FIX_BN), float("nan"), device=DEVICE)
    return src, partials, flags, out, in_order_sum(src[n - 1], src, 0, n - 1)


def check_pair(out, flags, want, case, wanted):
    """The owner's sum against `want`, bit for bit; wanted: (zh, en) words for what want is."""
    if out.isnan().any():
        fail(
            T5,
            f"{case}：结果里有 {out.isnan().sum().item()} 个 NaN：owner 读到了还没写进来的 partial"
            "（workspace 事先填的是 NaN）",
            f"{case}: {out.isnan().sum().item()} NaN in the result: the owner read a partial before that partial "
            "was written (the workspace was filled with NaN)",
            "4.2",
        )
    if not torch.equal(out, want):
        fail(
            T5,
            f"{case}：结果有 {(out != want).sum().item()} 个格子和{wanted[0]}不是同样的比特",
            f"{case}: {(out != want).sum().item()} cells of the result differ in their bits from {wanted[1]}",
            "4.2",
        )
    if flags.any():
        fail(
            T5,
            f"{case}：结束时 flag 是 {flags.cpu().tolist()}，应当全是 0",
            f"{case}: flags {flags.cpu().tolist()} at the end, all 0 expected",
            "4.2",
        )


ORDERS = ["reversed", "shuffled"]


def in_order(order, launch):
    """launch() with the interpreter running its programs in `order`, taking turns (§4.2); programs
    that wait for each other for good fail with a message instead of hanging."""
    from course.interpreter_order import ProgramsStuck, programs_run

    try:
        with programs_run(order):
            return launch()
    except ProgramsStuck as e:
        fail(
            T5,
            f"程序按 {order} 的顺序轮流运行时互相等个不停（{e}）：有程序在等一面永远没人举的旗",
            f"with the programs run in turns in the order {order}, they waited on each other for good ({e}): "
            "a program waits for a flag that nobody raises",
            "4.2",
        )


IN_ORDER = ("按程序号顺序把 partial 加起来的结果", "the partials added in program order")


@pytest.mark.t5_3
@pytest.mark.parametrize("order", ORDERS if INTERPRETING else ["GPU, 500 launches"])
def test_fix_up_waits_and_adds_in_program_order(probes, order):
    """Programs 0..5 publish, program 6 collects.  On the CPU the programs run in this order, taking
    turns at each atomic: the owner can be first, and flags can come up in any order.  On a GPU, 500
    launches with the workspace filled with NaN before each.  Either way the owner's sum must be the
    partials added in program order, bit for bit, with no NaN."""
    n = 7
    src, partials, flags, out, want = pair_case(n)
    if INTERPRETING:
        from course.interpreter_order import orders

        chosen = orders(n, int(torch.randint(0, 2**31, (1,))))[order]
        in_order(chosen, lambda: probes.publish_collect_probe[(n,)](src, partials, flags, out, FIX_BM, FIX_BN))
        case = say(
            zh=f"程序 0..{n - 2} 发布、程序 {n - 1} 收集，按 {chosen} 的顺序轮流运行",
            en=f"programs 0..{n - 2} publish, program {n - 1} collects, run in turns in the order {chosen}",
        )
        check_pair(out, flags, want, case, IN_ORDER)
        return
    for launch in range(500):
        partials.fill_(float("nan"))
        out.fill_(float("nan"))
        probes.publish_collect_probe[(n,)](src, partials, flags, out, FIX_BM, FIX_BN)
        case = say(zh=f"第 {launch + 1} 次启动（共 500 次）", en=f"launch {launch + 1} of 500")
        check_pair(out, flags, want, f"{n} programs, {case}", IN_ORDER)


@pytest.mark.t5_3
@pytest.mark.skipif(not INTERPRETING, reason="CPU only: the order of the interpreter's programs")
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("M, N, K, progs", [(32, 32, 320, 5), (64, 64, 160, 6)])
def test_stream_k_in_any_program_order(t5, order, M, N, K, progs):
    """The whole kernel, all stream-K, in float32, with the workspace filled with NaN: run in id
    order, then reversed or shuffled (course/interpreter_order.py); the same bits every time."""
    from course.interpreter_order import orders

    config = cfg(t5, mode="sk")
    a, b = random((M, K), torch.float32), random((K, N), torch.float32)
    partials = t5.workspace(a.device, progs, 32, 32)[0]
    partials.fill_(float("nan"))
    first = t5.matmul(a, b, config=config, num_programs=progs)
    chosen = orders(progs, int(torch.randint(0, 2**31, (1,))))[order]
    partials.fill_(float("nan"))
    again = in_order(chosen, lambda: t5.matmul(a, b, config=config, num_programs=progs))
    case = say(
        zh=f"{M}x{K} @ {K}x{N} fp32，全部 stream-K，{progs} 个程序按 {chosen} 的顺序轮流运行",
        en=f"{M}x{K} @ {K}x{N} fp32, all stream-K, {progs} programs run in turns in the order {chosen}",
    )
    check_product(first, a, b, torch.float32, case, "4.2")
    check_pair(
        again, t5.workspace(a.device, progs, 32, 32)[1], first, case, ("按程序号顺序运行时", "the run in id order")
    )


def sk_share(tile, k_blocks, run):
    """How many of the tile's k-blocks lie in the run [begin, end)."""
    return max(0, min(run[1], (tile + 1) * k_blocks) - max(run[0], tile * k_blocks))


@pytest.mark.t5_3
@pytest.mark.skipif(not INTERPRETING, reason="CPU only: the interpreter tells which program did what")
def test_each_stream_k_program_sums_its_own_run(probes):
    """Count-only, with each program's trace updates recorded: program p sums exactly the k-blocks
    of its run (sk_run), tile by tile, and no others.  The trace alone cannot tell this from an
    owner that sums its whole tile itself: the tile's total is the same."""
    from course.interpreter_order import programs_run

    for num_pid_m, num_pid_n, k_blocks, sk_tiles, progs in SK_CASES:
        tiles = num_pid_m * num_pid_n
        trace = new_trace(tiles)
        partials = torch.zeros(progs * 16 * 16, device=DEVICE)
        flags = torch.zeros(progs, dtype=torch.int32, device=DEVICE)
        with programs_run(range(progs)) as run:
            probes.stream_k_probe[(progs,)](
                trace, partials, flags, 32 * k_blocks - 3, sk_tiles, num_pid_m, num_pid_n, progs, 32, 2
            )
        got = {}  # (program, tile): k-blocks summed
        for p, events in run.events.items():
            for e in events:
                offset = (e.lo - trace.data_ptr()) // 4
                if e.kind == "atomic" and e.lo == e.hi and 0 <= offset < trace.numel() and offset % TRACE_INTS == 1:
                    got[p, offset // TRACE_INTS] = got.get((p, offset // TRACE_INTS), 0) + sum(e.values)
        total = sk_tiles * k_blocks
        base, extra = divmod(total, progs)
        runs = [(p * base + min(p, extra), (p + 1) * base + min(p + 1, extra)) for p in range(progs)]
        shown = [f"[{lo}, {hi})" for lo, hi in runs]
        want = {(p, t): sk_share(t, k_blocks, runs[p]) for p in range(progs) for t in range(sk_tiles)}
        want = {key: n for key, n in want.items() if n}
        got = {key: n for key, n in got.items() if n}
        if got == want:
            continue
        owners_alone = (
            all(got.get((sk_owner(t, k_blocks, total, progs), t)) == k_blocks for t in range(sk_tiles))
            and len(got) == sk_tiles
        )
        case = sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs)
        (p, t), n = next((key, n) for key, n in sorted(got.items() | want.items()) if got.get(key) != want.get(key))
        fail(
            T5,
            f"{case}：程序 {p} 在 tile {t} 上算了 {got.get((p, t), 0)} 个 k-block，它的段 {shown[p]} 里"
            f"只有 {want.get((p, t), 0)} 个是这个 tile 的"
            + (
                "：每个 tile 都由 owner 自己把全部 k-block 算完了。每个程序只算自己那一段，别的段交给 partial"
                if owners_alone
                else ""
            ),
            f"{case}: program {p} summed {got.get((p, t), 0)} k-blocks of tile {t}; its run {shown[p]} holds "
            f"{want.get((p, t), 0)} of that tile's"
            + (
                ": every tile's owner summed all its k-blocks itself. Each program sums its own run only, and "
                "the other segments come as partials"
                if owners_alone
                else ""
            ),
            "4.1",
        )


def memory_order_problems(events, partial_slot, flag_at, publishers, owner):
    """The fix-up's structure in the interpreter's record, as (zh, en) sentences, one per kind of
    problem with the programs it was seen in: each publisher stores its partial, then a barrier, then
    a release atomic on its flag; the owner reads each flag with an acquire atomic before it loads
    that partial."""
    seen = {}  # (zh, en) with {who} and {sem} left open: [(program, sem), ...]

    def saw(zh, en, p, sem=None):
        seen.setdefault((zh, en), []).append((p, sem))

    for p in publishers:
        mine = events[p]
        stores = [i for i, e in enumerate(mine) if e.kind == "store" and partial_slot(e) == p]
        raised = [i for i, e in enumerate(mine) if e.kind == "atomic" and flag_at(e) == p]
        if not stores or not raised:
            saw("程序 {who} 没有存 partial 或没有举 flag", "{who}: no partial stored or no flag raised", p)
            continue
        if raised[0] < stores[-1]:
            saw("程序 {who} 先举 flag 后存 partial", "{who}: flag was raised before the partial is stored", p)
        elif not any(e.kind == "barrier" for e in mine[stores[-1] : raised[0]]):
            saw(
                "程序 {who} 存 partial 和举 flag 之间没有 tl.debug_barrier()",
                "{who}: no tl.debug_barrier() between storing the partial and raising the flag",
                p,
            )
        if mine[raised[0]].sem not in ("release", "acq_rel"):
            saw(
                '程序 {who} 举 flag 用的是 sem="{sem}"，不是 release 语义',
                '{who}: flag raised with sem="{sem}", without release semantics',
                p,
                mine[raised[0]].sem,
            )
        if mine[raised[0]].scope == "cta":
            saw(
                '程序 {who} 举 flag 用的是 scope="cta"：只对自己这个程序可见，owner 是另一个程序（用默认的 "gpu"）',
                '{who}: flag raised with scope="cta", which reaches only its own program; the owner is another '
                'program (leave the default, "gpu")',
                p,
            )
    mine = events[owner]
    for p in publishers:
        loads = [i for i, e in enumerate(mine) if e.kind == "load" and partial_slot(e) == p]
        reads = [i for i, e in enumerate(mine) if e.kind == "atomic" and flag_at(e) == p and loads and i < loads[0]]
        if loads and not reads:
            saw(
                "owner 读程序 {who} 的 partial 之前没有用原子操作等它的 flag",
                "the owner loads the partial of {who} without first waiting for its flag with an atomic",
                p,
            )
        elif loads and not any(mine[i].sem in ("acquire", "acq_rel") for i in reads):
            saw(
                'owner 等程序 {who} 的 flag 用的是 sem="{sem}"，不是 acquire 语义',
                'the owner waits for the flag of {who} with sem="{sem}", without acquire semantics',
                p,
                mine[reads[-1]].sem,
            )
        elif loads and any(mine[i].scope == "cta" and mine[i].sem in ("acquire", "acq_rel") for i in reads):
            saw(
                'owner 等程序 {who} 的 flag 用的是 scope="cta"：看不到别的程序的写（用默认的 "gpu"）',
                'the owner waits for the flag of {who} with scope="cta", which does not see other programs\' '
                'writes (leave the default, "gpu")',
                p,
            )
    said = []
    for (zh, en), where in seen.items():
        ids = ", ".join(str(p) for p, _ in where)
        who_en = f"program{'s' if len(where) > 1 else ''} {ids}"
        said.append((zh.format(who=ids, sem=where[0][1]), en.format(who=who_en, sem=where[0][1])))
    return said


def ttir_problems(ttir, role):
    """The same structure in a compiled probe's TTIR (GPU): publish_probe stores, then a barrier
    (gpu.barrier; ttg.barrier in newer Triton), then a release atomic; collect_probe reads its flags
    with an acquire atomic before its last load."""
    lines = ttir.splitlines()
    at = {op: [i for i, line in enumerate(lines) if op in line] for op in ("tt.store", "tt.load")}
    at["barrier"] = [i for i, line in enumerate(lines) if "gpu.barrier" in line or "ttg.barrier" in line]
    atomics = [(i, line) for i, line in enumerate(lines) if "tt.atomic_rmw" in line or "tt.atomic_cas" in line]
    problems = []
    if role == "publish":
        if not at["tt.store"] or not atomics:
            return [("publish_probe 里没有 store 或没有原子操作", "publish_probe has no store or no atomic")]
        if atomics[0][0] < at["tt.store"][-1]:
            problems.append(("先举 flag 后存 partial", "the flag was raised before the partial is stored"))
        elif not any(at["tt.store"][-1] < i < atomics[0][0] for i in at["barrier"]):
            problems.append(
                (
                    "存 partial 和举 flag 之间没有 tl.debug_barrier()",
                    "no tl.debug_barrier() between storing the partial and raising the flag",
                )
            )
        if not any(s in atomics[0][1] for s in (" release,", " acq_rel,")):
            problems.append(("举 flag 的原子操作不是 release 语义", "the flag is raised without release semantics"))
        if " cta," in atomics[0][1]:
            problems.append(('举 flag 用的是 scope="cta"', 'the flag is raised with scope="cta"'))
    else:
        waits = [i for i, line in atomics if " acquire," in line or " acq_rel," in line]
        if any(" cta," in line for i, line in atomics if i in waits):
            problems.append(('等 flag 用的是 scope="cta"', 'the flag is awaited with scope="cta"'))
        if not waits or not at["tt.load"] or waits[0] > at["tt.load"][-1]:
            problems.append(
                (
                    "读 partial 之前没有原子操作等 flag，或者等的不是 acquire 语义",
                    "no atomic waits for a flag before a partial is read, or it waits without acquire semantics",
                )
            )
    return problems


@pytest.mark.t5_3
def test_publish_and_collect_memory_order(probes):
    """What numbers cannot show on a CPU and show only sometimes on a GPU: the partial is stored, then a
    barrier, then the flag goes up with release semantics; the owner waits with acquire semantics
    before it reads a partial.  On the CPU from the interpreter's record of each program; on a GPU
    from the compiled kernels' TTIR."""
    n = 4
    src, partials, flags, out, _ = pair_case(n)
    if INTERPRETING:
        from course.interpreter_order import programs_run

        slot_bytes = FIX_BM * FIX_BN * 4

        def partial_slot(e):
            slot = (e.lo - partials.data_ptr()) // slot_bytes
            return slot if 0 <= e.lo - partials.data_ptr() < n * slot_bytes else None

        def flag_at(e):
            return (e.lo - flags.data_ptr()) // 4 if 0 <= e.lo - flags.data_ptr() < 4 * n else None

        with programs_run(range(n)) as run:
            probes.publish_collect_probe[(n,)](src, partials, flags, out, FIX_BM, FIX_BN)
        problems = memory_order_problems(run.events, partial_slot, flag_at, range(n - 1), n - 1)
    else:
        publish = probes.publish_probe[(n,)](src, partials, flags, FIX_BM, FIX_BN)
        collect = probes.collect_probe[(1,)](src[0], partials, flags, out, 0, n, FIX_BM, FIX_BN)
        problems = ttir_problems(publish.asm["ttir"], "publish") + ttir_problems(collect.asm["ttir"], "collect")
    if problems:
        fail(
            T5,
            "sk_publish_partial / sk_collect_partials 的内存顺序：" + "；".join(zh for zh, _ in problems),
            "sk_publish_partial / sk_collect_partials, memory order: " + "; ".join(en for _, en in problems),
            "4.2",
        )


# ================================================================================================
# T5.4 (advanced) epilogue subtiling, with T4's fused bias and GELU
# ================================================================================================
def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


@pytest.mark.t5_4
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
# whole 16-byte chunks, as in test_store_tile; N = 56 ends inside the second tile's right half
@pytest.mark.parametrize("M, N", [(32, 64), (37, 48), (5, 72), (37, 56)])
def test_store_tile_subtiled(probes, dtype, M, N):
    c, buf, before, acc = run_store_tile(probes, M, N, dtype, 2)
    check_stored(c, buf, before, acc[:M, :N].to(dtype), f"C {M}x{N} {dtype}, EPILOGUE_SUBTILE=2", "5")


@pytest.mark.t5_4
@pytest.mark.parametrize("activation", ["none", "gelu"])
def test_store_tile_subtiled_bias_per_half(probes, activation):
    """Each half adds its own columns of the bias: the right half's start at BLOCK_N // 2."""
    M, N = 37, 45
    bias = padded(1, 2 * N, torch.float32)[0][0, ::2]  # stride 2, NaN between and around
    c, buf, before, acc = run_store_tile(probes, M, N, torch.float32, 2, bias=bias, activation=activation)
    want = halves_with_bias(acc[:M, :N], bias, 32, lambda n: 2 * n, lambda n: 2 * n + 1, activation)
    err = rel_err(c, want)
    if c.isnan().any() or err > 1e-5:
        seen = {
            k: rel_err(c, halves_with_bias(acc[:M, :N], bias, 32, left, right, activation)) <= 1e-5
            for k, (left, right) in HALF_MISTAKES.items()
        }
        fail(
            T5,
            f"C {M}x{N}，子块 epilogue，bias 步长 2，activation={activation}：相对误差 {err:.1e}"
            + "".join(f"：{HALF_CAUSES[k][0]}" for k, hit in seen.items() if hit),
            f"C {M}x{N}, subtiled epilogue, bias with stride 2, activation={activation}: relative error {err:.1e}"
            + "".join(f": {HALF_CAUSES[k][1]}" for k, hit in seen.items() if hit),
            "5",
        )


def halves_with_bias(acc, bias, bn, left, right, activation):
    """act(acc + bias) with each half-tile's bias read as T4 reads a tile's: half number left(pid_n)
    or right(pid_n), BLOCK_N // 2 wide, columns past N adding 0."""
    M, N = acc.shape
    cols = torch.arange(N, device=DEVICE)
    half = bn // 2
    tile, side, j = cols // bn, (cols % bn) // half, cols % half
    number = torch.where(side == 0, left(tile), right(tile))
    at = number * half + j
    b = torch.where(at < N, bias[at.clamp(max=N - 1)], 0.0)
    out = acc + b[None, :]
    return gelu(out) if activation == "gelu" else out


HALF_MISTAKES = {
    "right-half-bias": (lambda n: 2 * n, lambda n: n),
    "left-half-bias": (lambda n: n, lambda n: 2 * n + 1),
}
HALF_CAUSES = {
    "right-half-bias": (
        "右半块的 bias 从第 pid_n * BLOCK_N + BLOCK_N // 2 列开始",
        "the right half's bias starts at column pid_n * BLOCK_N + BLOCK_N // 2",
    ),
    "left-half-bias": (
        "左半块的 bias 从第 pid_n * BLOCK_N 列开始（半块编号 2 * pid_n）",
        "the left half's bias starts at column pid_n * BLOCK_N (half number 2 * pid_n)",
    ),
}


@pytest.mark.t5_4
@pytest.mark.parametrize("mode", ["dp", "sk", "swap"])
def test_matmul_subtiled_with_bias_and_gelu(t5, mode):
    """The whole kernel with EPILOGUE_SUBTILE = 2: data-parallel tiles, stream-K owners, or the
    turned-around tiles of a decode step (§6.3)."""
    M, N, K = 45, 70, 96
    a, b = padded(M, K, torch.float16)[0], padded(K, N, torch.float16)[0]
    bias = padded(1, 2 * N, torch.float16)[0][0, ::2]
    case = f"{M}x{K} @ {K}x{N} fp16, EPILOGUE_SUBTILE=2, mode={mode}, bias + GELU"
    c = run_matmul(
        t5, case, "5", a, b, bias=bias, activation="gelu", config=cfg(t5, subtile=2, mode=mode), num_programs=3
    )
    ref = torch.nn.functional.gelu(a.double() @ b.double() + bias.double())
    err = rel_err(c, ref)
    if c.isnan().any() or err > OUT_RTOL[torch.float16]:
        fail(
            T5,
            f"{M}x{K} @ {K}x{N} fp16，EPILOGUE_SUBTILE=2，mode={mode}，bias + GELU：相对误差 {err:.2e}",
            f"{M}x{K} @ {K}x{N} fp16, EPILOGUE_SUBTILE=2, mode={mode}, bias + GELU: relative error {err:.2e}",
            "5",
        )


@pytest.mark.t5_4
@pytest.mark.skipif(INTERPRETING, reason="GPU only: shared memory and the H200 config exist only when compiled")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_h200_config_fits_only_subtiled(t5, dtype):
    """128x256x64 with 4 stages needs 229,408 B of shared memory with the sub-tiled epilogue (the
    C staging buffer halves) and does not fit in 232,448 B without it (NOTES of 2026-11-30)."""
    M = N = K = 2048
    a, b = random((M, K), dtype), random((K, N), dtype)
    c = t5.matmul(a, b, config=t5.Config(128, 256, 64, 8, 8, 4, 2, True, "dp"))
    err = rel_err(c, a.double() @ b.double())
    if err > OUT_RTOL[dtype]:
        fail(
            T5,
            f"2048³ {dtype}，128x256x64/s4/子块 2：相对误差 {err:.2e}",
            f"2048³ {dtype}, 128x256x64/s4/subtile 2: relative error {err:.2e}",
            "5",
        )


@pytest.mark.t5_4
@pytest.mark.skipif(INTERPRETING, reason="GPU only: programmatic dependent launch exists only on a real GPU")
@pytest.mark.parametrize("M, N, K", [(16, 4096, 4096), (512, 512, 512), (1000, 1000, 1000)])
def test_products_launched_early_wait_for_their_inputs(t5, M, N, K):
    """§6.4: a short product launches during the kernel before it and waits before touching memory.
    In one CUDA graph, rounds of a chain whose products each read what the one before wrote, with
    every output filled with NaN before each round: a product that read its input before it was
    written reads NaN, and one that wrote before the fills were done is overwritten with NaN."""
    if not t5.launches_early(torch.device("cuda")):
        pytest.skip("a GPU older than Hopper (compute capability 9.0) has no programmatic dependent launch")
    if not t5.pick_config(M, N, K, torch.float16).pdl:
        fail(T5, f"pick_config({M}, {N}, {K}) 没有 pdl", f"pick_config({M}, {N}, {K}) has no pdl", "6.4")
    torch.manual_seed(0)
    a, b, b2 = random((M, K), torch.float16), random((K, N), torch.float16) / 8, random((N, N), torch.float16) / 8
    outs = [torch.empty((M, N), device=DEVICE, dtype=torch.float16) for _ in range(3)]
    chain = [(a, b, outs[0]), (outs[0], b2, outs[1]), (outs[1], b2, outs[2])]
    for x, y, c in chain:
        t5.matmul(x, y, out=c)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(10):
            for _, _, c in chain:
                c.fill_(float("nan"))
            for x, y, c in chain:
                t5.matmul(x, y, out=c)
    graph.replay()
    torch.cuda.synchronize()
    for i, (x, y, c) in enumerate(chain):
        err = rel_err(c, x.double() @ y.double())
        if c.isnan().any() or not err <= OUT_RTOL[torch.float16]:
            fail(
                T5,
                f"{M}x{N}x{K}，链上第 {i + 1} 个乘积：{c.isnan().sum().item()} 个 NaN，相对误差 {err:.2e}",
                f"{M}x{N}x{K}, product {i + 1} of the chain: {c.isnan().sum().item()} NaN, relative error {err:.2e}",
                "6.4",
            )


@pytest.mark.t5_4
@pytest.mark.skipif(INTERPRETING, reason="GPU only: the tuned configs are the H200's")
def test_every_tuned_config_is_right(t5):
    """Each distinct config of TUNED (§6) compiles and computes right, at a shape with ragged edges
    that gives every program several tiles (5 SMs: a partial last wave, for mode "tail"); its own
    shape is what make bench times."""
    for cfg in dict.fromkeys(t5.TUNED.values()):
        M, N, K = 2 * cfg.BLOCK_M + 40, 3 * cfg.BLOCK_N + 24, 5 * cfg.BLOCK_K + 16
        for dtype in (torch.float16, torch.bfloat16):
            a, b = random((M, K), dtype), random((K, N), dtype)
            err = rel_err(t5.matmul(a, b, config=cfg, num_programs=5), a.double() @ b.double())
            if not err <= OUT_RTOL[dtype]:
                fail(
                    T5,
                    f"{cfg}，{M}x{N}x{K} {dtype}：相对误差 {err:.2e}",
                    f"{cfg}, {M}x{N}x{K} {dtype}: relative error {err:.2e}",
                    "6",
                )


# ================================================================================================
# T5.3 (GPU) stream-K on several streams and inside CUDA graphs: the workspace is never shared by
# two launches that can overlap (issue 18: two streams sharing one hung the process)
# ================================================================================================
def finished_within(event, seconds):
    """True once the GPU has passed `event`; False if it has not after `seconds` (a kernel spinning
    on a flag never gets there): the test fails instead of hanging the suite."""
    import time  # here, not at the top: this block is kept apart from the rest of the file

    deadline = time.monotonic() + seconds
    while not event.query():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def all_stream_k(t5, programs):
    """Every tile by stream-K over `programs` programs: the most fix-up traffic per launch."""
    return t5.Config(128, 128, 64, 8, 4, 3, 1, False, "sk"), programs


@pytest.mark.t5_3
@pytest.mark.skipif(INTERPRETING, reason="GPU only: the interpreter has one stream and runs programs one at a time")
def test_stream_k_on_two_streams_at_once(t5):
    """Two streams multiply side by side, all stream-K on 40 programs each (so both kernels are resident
    at once), 150 rounds: every product equals, bit for bit, the one computed alone, and nothing hangs."""
    config, programs = all_stream_k(t5, 40)
    size, rounds = 2304, 150
    streams = [torch.cuda.Stream() for _ in range(2)]
    inputs = [(random((size, size), torch.float16), random((size, size), torch.float16)) for _ in streams]
    alone = [t5.matmul(a, b, config=config, num_programs=programs) for a, b in inputs]
    outs = [torch.empty_like(c) for c in alone]
    wrong = [torch.zeros((), dtype=torch.int64, device=DEVICE) for _ in streams]
    torch.cuda.synchronize()
    for _ in range(rounds):
        for stream, (a, b), c, ref, bad in zip(streams, inputs, outs, alone, wrong, strict=True):
            with torch.cuda.stream(stream):
                t5.matmul(a, b, config=config, num_programs=programs, out=c)
                bad += (c != ref).sum()  # counted on the stream, no synchronization between rounds
    done = [torch.cuda.Event() for _ in streams]
    for event, stream in zip(done, streams, strict=True):
        event.record(stream)
    for i, event in enumerate(done):
        if not finished_within(event, 60):
            fail(
                T5,
                f"两个 stream 同时做 stream-K（{size}³，{programs} 个 program）：stream {i} 60 秒后仍未完成",
                f"two streams running stream-K at once ({size}³, {programs} programs): stream {i} has not "
                "finished after 60 s",
                "4.2",
            )
    counts = [int(bad) for bad in wrong]
    if any(counts):
        fail(
            T5,
            f"两个 stream 同时做 stream-K（{size}³，{rounds} 轮）：与单独计算不同的元素数 {counts}",
            f"two streams running stream-K at once ({size}³, {rounds} rounds): elements that differ from the "
            f"product computed alone, per stream: {counts}",
            "4.2",
        )


@pytest.mark.t5_3
@pytest.mark.skipif(INTERPRETING, reason="GPU only: CUDA graphs need a GPU")
def test_products_in_a_cuda_graph_are_right_on_every_replay(t5):
    """matmul captured in a CUDA graph (stream-K, data-parallel, a decode step, B = W.t()), replayed on
    new inputs copied in, three times, while the same stream-K products run eagerly on another stream."""
    config, programs = all_stream_k(t5, 40)
    cases = [  # (M, N, K, layout, matmul options)
        (1000, 1200, 1500, "row-major", dict(config=config, num_programs=programs)),
        (1000, 1200, 1500, "b = W.t()", dict(config=config, num_programs=programs)),
        (777, 1024, 2048, "row-major", {}),
        (16, 1024, 2048, "b = W.t()", {}),
    ]
    static = []
    for M, N, K, layout, options in cases:
        a = random((M, K), torch.float16)
        b = random((N, K), torch.float16).t() if layout == "b = W.t()" else random((K, N), torch.float16)
        c = torch.empty((M, N), device=DEVICE, dtype=torch.float16)
        t5.matmul(a, b, out=c, **options)  # compile outside the capture
        static.append((a, b, c, options))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for a, b, c, options in static:
            t5.matmul(a, b, out=c, **options)
    side = torch.cuda.Stream()
    eager_a, eager_b = random((1000, 1500), torch.float16), random((1500, 1200), torch.float16)
    eager_ref = t5.matmul(eager_a, eager_b, config=config, num_programs=programs)
    eager_bad = torch.zeros((), dtype=torch.int64, device=DEVICE)
    for replay in range(3):
        for a, b, c, _ in static:
            a.copy_(random(a.shape, torch.float16))
            b.copy_(random(b.shape, torch.float16))
            c.fill_(float("nan"))
        side.wait_stream(torch.cuda.current_stream())
        graph.replay()
        with torch.cuda.stream(side):
            for _ in range(20):
                eager_bad += (t5.matmul(eager_a, eager_b, config=config, num_programs=programs) != eager_ref).sum()
        done = torch.cuda.Event()
        done.record()
        side_done = torch.cuda.Event()
        side_done.record(side)
        if not (finished_within(done, 60) and finished_within(side_done, 60)):
            fail(
                T5,
                f"CUDA graph 第 {replay + 1} 次重放（另一个 stream 上同时做 stream-K）60 秒后仍未完成",
                f"replay {replay + 1} of the CUDA graph (stream-K running eagerly on another stream) has not "
                "finished after 60 s",
                "4.2",
            )
        for (M, N, K, layout, _), (a, b, c, _) in zip(cases, static, strict=True):
            err = rel_err(c, a.double() @ b.double())
            if c.isnan().any() or not err <= OUT_RTOL[torch.float16]:
                fail(
                    T5,
                    f"CUDA graph 第 {replay + 1} 次重放，{M}x{N}x{K} {layout}：{c.isnan().sum().item()} 个 NaN，"
                    f"相对误差 {err:.2e}",
                    f"replay {replay + 1} of the CUDA graph, {M}x{N}x{K} {layout}: {c.isnan().sum().item()} NaN, "
                    f"relative error {err:.2e}",
                    "4.2",
                )
    if int(eager_bad):
        fail(
            T5,
            f"CUDA graph 重放时另一个 stream 上的 stream-K 乘积有 {int(eager_bad)} 个元素与单独计算不同",
            f"stream-K products on another stream during the replays: {int(eager_bad)} elements differ from "
            "the product computed alone",
            "4.2",
        )


@pytest.mark.t5_2
@pytest.mark.skipif(INTERPRETING, reason="GPU only: on a GPU a later call of the same kind launches from a plan")
def test_a_later_call_of_the_same_kind_is_right_on_new_tensors(t5):
    """matmul keeps a plan per kind of call (content/t5.perf.md §2): a later call whose operands have
    the same shapes, strides and dtypes, at other addresses, must give what a first call gives, bit for
    bit: activations at 20 addresses (more than the plan keeps tensor maps for), weights at 3."""
    config, programs = all_stream_k(t5, 40)
    cases = [  # (M, N, K, layout, matmul options)
        (640, 768, 1024, "row-major", {}),
        (640, 768, 1024, "b = W.t()", {}),
        (333, 520, 1000, "row-major", dict(activation="gelu", bias=True)),
        (1000, 1200, 1500, "b = W.t()", dict(config=config, num_programs=programs)),
        (16, 1024, 2048, "b = W.t()", {}),
    ]
    for M, N, K, layout, options in cases:
        weights = [
            random((N, K), torch.float16).t() if layout == "b = W.t()" else random((K, N), torch.float16)
            for _ in range(3)
        ]
        bias = random((N,), torch.float16) if options.pop("bias", False) else None
        calls = [(random((M, K), torch.float16), weights[i % 3]) for i in range(20)]
        first = []
        for a, b in calls:
            t5._plans.clear()  # each of these is a first call
            first.append(t5.matmul(a, b, bias=bias, **options))
        differ = 0
        for _ in range(2):
            for (a, b), want in zip(calls, first, strict=True):
                differ += int((t5.matmul(a, b, bias=bias, **options) != want).sum())
        if differ:
            fail(
                T5,
                f"{M}x{N}x{K} {layout}：同一类调用的后续调用（新地址的张量）与第一次调用的结果有 {differ} 个元素不同",
                f"{M}x{N}x{K} {layout}: later calls of the same kind (tensors at other addresses) differ from "
                f"a first call's product in {differ} elements",
                "3.2",
            )


# ================================================================================================
# The kernel as a Hopper GPU compiles it (CPU): what the interpreter lets through and a GPU refuses
# ================================================================================================
def t5_variant(kmajor, **constexprs):
    """One compile of t5_kernel with 64x128x64 tiles: the constexprs, and B's box for its layout."""
    base = dict(
        BLOCK_M=64,
        BLOCK_N=128,
        BLOCK_K=64,
        GROUP_M=8,
        EPILOGUE_SUBTILE=1,
        B_KMAJOR=kmajor,
        HAS_BIAS=True,
        ACTIVATION="gelu",
        FLATTEN=False,
        USE_SK=False,
        SWAP_AB=False,
        TRACE=0,
        PDL=False,
    )
    sub = constexprs.get("EPILOGUE_SUBTILE", 1)
    return dict(
        constexprs=base | constexprs,
        signature={
            "b_desc": "tensordesc<fp16[128, 64]>" if kmajor else "tensordesc<fp16[64, 128]>",
            "c_desc": f"tensordesc<fp16[64, {128 // sub}]>",
        },
    )


T5_SIGNATURE = {
    "a_desc": "tensordesc<fp16[64, 64]>",
    "bias_ptr": "*fp16",
    "partials_ptr": "*fp32",
    "flags_ptr": "*i32",
    "trace_ptr": "*i32",
    **{name: "i32" for name in ("M", "N", "K", "stride_bias", "sk_tiles", "NUM_PROGS")},
}
HOPPER_VARIANTS = {  # step: the compiles that take in that step's code (constexpr branches prune the rest)
    "T5.2": [t5_variant(False), t5_variant(True)],
    "T5.3": [t5_variant(False, USE_SK=True), t5_variant(True, USE_SK=True)],
    "T5.4": [t5_variant(False, USE_SK=True, EPILOGUE_SUBTILE=2)],
}
ON_THE_GPU = "on a GPU every kernel of the suite is compiled for real"


@pytest.mark.t5_2
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason=ON_THE_GPU)
def test_the_kernel_compiles_for_a_hopper_gpu(t5):
    check_compiles_for_hopper("T5.2", "t5_kernel", T5_SIGNATURE, HOPPER_VARIANTS, where_to_read("T5.2", "3.1"))


@pytest.mark.t5_3
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason=ON_THE_GPU)
def test_the_stream_k_kernel_compiles_for_a_hopper_gpu(t5):
    check_compiles_for_hopper("T5.3", "t5_kernel", T5_SIGNATURE, HOPPER_VARIANTS, where_to_read("T5.3", "4.2"))


@pytest.mark.t5_4
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason=ON_THE_GPU)
def test_the_subtiled_kernel_compiles_for_a_hopper_gpu(t5):
    check_compiles_for_hopper("T5.4", "t5_kernel", T5_SIGNATURE, HOPPER_VARIANTS, where_to_read("T5.4", "5"))
