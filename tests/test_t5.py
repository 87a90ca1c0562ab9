"""Lesson T5's suite: one section per step, each marked so that `make test STEP=T5.2` runs it alone.

The tile loop (T5.1) and the stream-K split (T5.3) are counted through a trace: the kernel adds,
per tile, its epilogues and its k-blocks, and writes which program finished it and where T4's
grouped order put it.  Products are checked against float64 with A, B and C inside NaN (or
sentinel) padding, so a read or a write outside them shows.  T5 imports the learner's own T4
(tile_coords, bias_and_activation): a T4 body not written yet fails these checks as "not written yet".
"""

import math
import os

import pytest
import torch
import triton

from course.i18n import say
from course.registry import T5
from course.tile_order import grouped_order

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's

INTERPRETING = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETING else "cuda"
# bf16 only on a GPU: the interpreter's tl.dot multiplies bf16 bit patterns (triton issue 11584).
DTYPES = [torch.float16, torch.float32] + ([] if INTERPRETING else [torch.bfloat16])
# ||C - ref|| / ||ref|| with ref in float64: rounding C to its dtype (see T4's suite); tf32 on a GPU.
OUT_RTOL = {torch.float16: 1.5e-3, torch.bfloat16: 1.2e-2, torch.float32: 2e-3 if DEVICE == "cuda" else 1e-5}
ACC_RTOL = {torch.float16: 1e-5, torch.float32: 2e-3 if DEVICE == "cuda" else 1e-5}
TRACE_INTS = 5  # per tile: epilogues, k-blocks, program that finished it, pid_m, pid_n


@pytest.fixture(scope="session")
def t5(graded_module):
    return graded_module(T5)


@pytest.fixture(scope="session")
def probes(t5):
    from course import t5_probes  # its kernels call the graded module's functions, so it loads after `t5`

    return t5_probes


def fail(zh, en, section):
    """Fail in the learner's language, naming the subsection of content/t5.md to read."""
    read = say(
        zh=f"详见 content/t5.md §{section}（English: content/t5.en.md）",
        en=f"read content/t5.en.md §{section} (Chinese: content/t5.md)",
    )
    pytest.fail(f"{say(zh=zh, en=en)}; {read}", pytrace=False)


def rel_err(out, ref):
    out, ref = out.double().cpu(), ref.double().cpu()
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def random(shape, dtype):
    return torch.randn(shape, dtype=torch.float32, device=DEVICE).to(dtype)


PAD_ROWS, PAD_COLS = 8, 16  # 16 elements: 32 or 64 bytes, so a view's base stays 16-byte aligned


def padded(rows, cols, dtype, fill=float("nan"), values=True):
    """A TMA-legal (rows, cols) view inside a larger buffer of `fill`: its row pitch is a multiple of
    16 elements, so the view keeps every TMA rule while whatever surrounds it is poison."""
    width = -(-(cols + 2 * PAD_COLS) // 16) * 16
    buf = torch.full((rows + 2 * PAD_ROWS, width), fill, dtype=dtype, device=DEVICE)
    view = buf[PAD_ROWS : PAD_ROWS + rows, PAD_COLS : PAD_COLS + cols]
    if values:
        view.copy_(random((rows, cols), dtype))
    return view, buf


def cfg(t5, bm=32, bn=32, bk=32, group_m=4, subtile=1, mode="dp", flatten=False):
    return t5.Config(bm, bn, bk, group_m, 4, 2, subtile, flatten, mode)


def new_trace(tiles):
    return torch.zeros(tiles * TRACE_INTS, dtype=torch.int32, device=DEVICE)


def trace_rows(trace):
    return [tuple(r) for r in trace.view(-1, TRACE_INTS).cpu().tolist()]


def check_trace(rows, num_pid_m, num_pid_n, group_m, k_blocks, case, step_section, owner=None, done=None):
    """Every tile in `done` (default: all) finished exactly once, with all its k-blocks, at the tile
    T4's grouped order gives it, by the program owner(tile) when given; every other tile untouched."""
    order = grouped_order(num_pid_m, num_pid_n, group_m)
    done = range(len(rows)) if done is None else done
    for tile, (epilogues, kbs, prog, pm, pn) in enumerate(rows):
        if tile not in done:
            if epilogues or kbs:
                fail(
                    f"{case}：tile {tile} 不归这段代码管，却被做了（epilogue {epilogues} 次，k-block {kbs} 个）",
                    f"{case}: tile {tile} is not this loop's, yet it was done ({epilogues} epilogues, {kbs} k-blocks)",
                    step_section,
                )
            continue
        if epilogues != 1:
            fail(
                f"{case}：tile {tile} 的 epilogue 跑了 {epilogues} 次，应当恰好 1 次"
                + ("（0 次：有的 tile 没人做；多次：步长或起点错了）" if epilogues != 1 else ""),
                f"{case}: tile {tile} had {epilogues} epilogues, exactly 1 expected "
                "(0: no program took it; more: a wrong start or stride)",
                step_section,
            )
        if kbs != k_blocks:
            fail(
                f"{case}：tile {tile} 一共算了 {kbs} 个 k-block，应当是 {k_blocks} 个",
                f"{case}: tile {tile} summed {kbs} k-blocks, {k_blocks} expected",
                step_section,
            )
        if (pm, pn) != order[tile]:
            fail(
                f"{case}：tile {tile} 被算在 ({pm}, {pn})，按 T4 的分组顺序应当是 {order[tile]}："
                "用 tile_coords(tile_id, ...)",
                f"{case}: tile {tile} was computed at ({pm}, {pn}); T4's grouped order puts it at {order[tile]}: "
                "use tile_coords(tile_id, ...)",
                step_section,
            )
        if owner is not None and prog != owner(tile):
            fail(
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
        trace = new_trace(tiles)
        probes.tile_loop_probe[(progs,)](
            trace, 32 * k_blocks - 5, first, tiles, num_pid_m, num_pid_n, progs, 32, group_m, flatten
        )
        case = say(
            zh=f"{num_pid_m} x {num_pid_n} 个 tile，GROUP_M={group_m}，{progs} 个程序，first_tile={first}",
            en=f"{num_pid_m} x {num_pid_n} tiles, GROUP_M={group_m}, {progs} programs, first_tile={first}",
        )
        check_trace(
            trace_rows(trace),
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
    trace = new_trace(12)
    probes.tile_loop_probe[(3,)](trace, 64, 0, 12, 4, 3, 3, 32, 2, False)
    per_program = [sum(1 for r in trace_rows(trace) if r[0] and r[2] == p) for p in range(3)]
    if per_program != [4, 4, 4]:
        fail(
            f"12 个 tile、3 个程序：每个程序应当做 4 个 tile，实际是 {per_program}："
            "循环从 first_tile + pid 开始，步长 NUM_PROGS",
            f"12 tiles, 3 programs: each program must finish 4 tiles, got {per_program}: start the loop at "
            "first_tile + pid and step by NUM_PROGS",
            "2.2",
        )


# ================================================================================================
# T5.2 TMA tensor descriptors
# ================================================================================================
def unaligned(rows, cols, dtype):
    """A row-major tensor whose base is 2 elements past a 16-byte boundary."""
    flat = torch.zeros(rows * cols + 16, dtype=dtype, device=DEVICE)
    return flat[2 : 2 + rows * cols].view(rows, cols)


RULE_CASES = [  # (what, tensor maker, words one of which the message must hold)
    (
        "b.t() of a row-major (64, 48)",
        lambda: torch.zeros(64, 48, dtype=torch.float16, device=DEVICE).t(),
        ("contiguous", "stride 1", "stride(1)"),
    ),
    ("fp16 (8, 7): rows of 14 bytes", lambda: torch.zeros(8, 7, dtype=torch.float16, device=DEVICE), ("16",)),
    (
        "every other column",
        lambda: torch.zeros(8, 64, dtype=torch.float32, device=DEVICE)[:, ::2],
        ("contiguous", "stride 1", "stride(1)"),
    ),
    ("base 4 bytes past 16", lambda: unaligned(8, 32, torch.float16), ("align", "base", "address")),
]


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
            f"{what}（stride {tuple(t.stride())}）违反 TMA 的规矩，tma_problem 却返回 None",
            f"{what} (strides {tuple(t.stride())}) breaks a TMA rule, yet tma_problem returned None",
            "3.2",
        )
    if "tensor_q" not in problem or not any(w in problem for w in words):
        fail(
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
                f"b = W.t()，W 是行主序的 (24, 64)：应当按 K-major 直接读 W（b_kmajor=True，返回的 b 就是 W，"
                f"不复制）；得到 b_kmajor={kmajor}，shape {tuple(b2.shape)}",
                f"b = W.t() with W a row-major (24, 64): read W K-major as it is (b_kmajor=True, the b returned "
                f"is W itself, no copy); got b_kmajor={kmajor}, shape {tuple(b2.shape)}",
                "3.2",
            )
        if a2.data_ptr() != a.data_ptr():
            fail("a 本来就合规，不该复制", "a keeps the rules already: it must not be copied", "3.2")


@pytest.mark.t5_2
@pytest.mark.parametrize(
    "what, make_a, make_b, bad",
    [
        ("fp16 with odd K = 33", lambda: random((20, 33), torch.float16), lambda: random((33, 16), torch.float16), "a"),
        ("fp16 with odd N = 21", lambda: random((20, 32), torch.float16), lambda: random((32, 21), torch.float16), "b"),
        ("column-major a", lambda: random((48, 20), torch.float16).t(), lambda: random((48, 16), torch.float16), "a"),
    ],
)
def test_tma_ready_copies_or_refuses(t5, what, make_a, make_b, bad):
    """Both outcomes: by default an aligned copy (same values, rules kept); with fallback=False a
    ValueError naming the tensor that breaks a rule."""
    a, b = make_a(), make_b()
    a2, b2, kmajor = t5.tma_ready(a, b, True)
    for name, got, want in (("a", a2, a), ("b", b2.t() if kmajor else b2, b)):
        if t5.tma_problem(got, name) is not None and not (name == "b" and kmajor):
            fail(
                f"{what}：tma_ready 返回的 {name} 仍然违反规矩",
                f"{what}: the {name} tma_ready returns still breaks a rule",
                "3.2",
            )
        if not torch.equal(got, want):
            fail(
                f"{what}：tma_ready 返回的 {name} 数值变了",
                f"{what}: the {name} tma_ready returns holds other values",
                "3.2",
            )
    try:
        t5.tma_ready(a, b, False)
    except ValueError as e:
        if f"{bad}:" not in str(e) and f"{bad} " not in str(e):
            fail(
                f"{what}：ValueError 要写出违规的张量 {bad}，得到 {e}",
                f"{what}: the ValueError must name {bad}, got {e}",
                "3.2",
            )
        return
    fail(f"{what}：fallback=False 时应当抛 ValueError", f"{what}: with fallback=False it must raise ValueError", "3.2")


def descriptor(t, box):
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor.from_tensor(t, box)


@pytest.mark.t5_2
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize(
    "M, N, K, kb_begin, kb_end, kmajor",
    [(45, 37, 83, 0, 3, False), (32, 32, 96, 1, 3, False), (17, 50, 70, 0, 3, True)],
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
                    f"{case}：{name} 的 box 是 {list(desc.block_shape)}，应当是 {box}"
                    + ("（K-major 时读的是 Bᵀ，box 是 [BLOCK_N, BLOCK_K]）" if transposed else ""),
                    f"{case}: {name}'s box is {list(desc.block_shape)}, {box} expected"
                    + (" (K-major, it reads B^T: the box is [BLOCK_N, BLOCK_K])" if transposed else ""),
                    "3.1",
                )
            if list(desc.shape) != list(t.shape):
                fail(
                    f"{case}：{name} 的形状是 {list(desc.shape)}，应当是张量自己的 {list(t.shape)}",
                    f"{case}: {name}'s shape is {list(desc.shape)}, the tensor's own {list(t.shape)} expected",
                    "3.1",
                )


def run_store_tile(probes, M, N, dtype, subtile, bias=None, activation="none", bm=32, bn=32):
    """C inside sentinel padding, written by store_tile; returns (c, buf, before, acc)."""
    c, buf = padded(M, N, dtype, fill=-1234.0, values=False)
    before = buf.clone()
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    acc = 3 * torch.randn(grid[0] * bm, grid[1] * bn, device=DEVICE)
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
            f"{case}：C 外面有 {stray} 个格子被写了：存储要经过 c_desc，越界部分由它裁掉",
            f"{case}: {stray} cells outside C were written: store through c_desc, which clips what sticks out",
            section,
        )
    unwritten = (c == -1234.0).sum().item()
    if unwritten:
        fail(f"{case}：C 有 {unwritten} 个格子没写", f"{case}: {unwritten} cells of C were never written", section)
    if not torch.equal(c, want):
        fail(
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
    tr = new_trace(tiles) if trace else None
    c = t5.matmul(a, b, config=config, num_programs=progs, out=out, trace=tr)
    return c, a, b, (trace_rows(tr) if trace else None)


def check_product(c, a, b, dtype, case, section):
    if not isinstance(c, torch.Tensor) or tuple(c.shape) != (a.shape[0], b.shape[1]):
        fail(f"{case}：结果形状不对", f"{case}: the result has the wrong shape", section)
    if c.isnan().any():
        fail(
            f"{case}：C 里有 {c.isnan().sum().item()} 个 NaN：有 tile 没写，或读到了 A、B 外面",
            f"{case}: {c.isnan().sum().item()} NaN in C: a tile was never written, or a load read outside A or B",
            section,
        )
    err = rel_err(c, a.double() @ b.double())
    if err > OUT_RTOL[dtype]:
        fail(
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
                f"ValueError 要写出张量 a 和 16 字节的规矩，得到 {e}",
                f"the ValueError must name a and the 16-byte rule, got {e}",
                "3.2",
            )
        return
    fail(
        "fp16、K = 33、tma_fallback=False：应当抛 ValueError",
        "fp16, K = 33, tma_fallback=False: expected a ValueError",
        "3.2",
    )


@pytest.mark.t5_2
@pytest.mark.parametrize("M, N, K", [(6, 5, 0), (40, 33, 0)])
def test_empty_k_gives_zeros(t5, M, N, K):
    c = t5.matmul(random((M, K), torch.float16), random((K, N), torch.float16), config=cfg(t5))
    if tuple(c.shape) != (M, N) or not torch.equal(c, torch.zeros_like(c)):
        fail(f"{M}x{K} @ {K}x{N}：应当是 ({M}, {N}) 的全零", f"{M}x{K} @ {K}x{N}: expected ({M}, {N}) zeros", "3.1")


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
            f"{total} 个 k-block 分给 {progs} 个程序：各段应当首尾相接、前 {extra} 段多一个：期望 {want}，得到 {got}",
            f"{total} k-blocks over {progs} programs: the runs lie end to end, the first {extra} one longer: "
            f"expected {want}, got {got}",
            "4.1",
        )
    want_owner = [p for p, (lo, hi) in enumerate(want) for _ in range(lo, hi)]
    if owners.cpu().tolist() != want_owner:
        fail(
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
        case = say(
            zh=f"{num_pid_m} x {num_pid_n} 个 tile，每个 {k_blocks} 个 k-block，"
            f"{sk_tiles} 个走 stream-K，{progs} 个程序",
            en=f"{num_pid_m} x {num_pid_n} tiles, {k_blocks} k-blocks each, "
            f"{sk_tiles} stream-K tiles, {progs} programs",
        )
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
            fail(
                f"{case}：结束时还有 flag 没归零 {flags.cpu().tolist()}：owner 用完一个 partial 要把它的 flag 置回 0",
                f"{case}: flags left raised {flags.cpu().tolist()}: the owner puts each flag back to 0 after "
                "adding its partial",
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
    ],
)
def test_stream_k_split(t5, tiles, k_blocks, sms, mode, want):
    got = tuple(t5.stream_k_split(tiles, k_blocks, sms, mode))
    if got != want:
        fail(
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
                f"{case}：kernel 结束后 workspace 的 flag 没有归零：{flags.cpu().tolist()}",
                f"{case}: the workspace's flags are not back at 0 after the kernel: {flags.cpu().tolist()}",
                "4.2",
            )


# ================================================================================================
# T5.4 (advanced) epilogue subtiling, with T4's fused bias and GELU
# ================================================================================================
def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


@pytest.mark.t5_4
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("M, N", [(32, 64), (37, 48), (5, 72)])  # whole 16-byte chunks, as in test_store_tile
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
    want = acc[:M, :N] + bias[None, :]
    want = gelu(want) if activation == "gelu" else want
    err = rel_err(c, want)
    if c.isnan().any() or err > 1e-5:
        fail(
            f"C {M}x{N}，子块 epilogue，bias 步长 2，activation={activation}：相对误差 {err:.1e}"
            "：右半块的 bias 从第 pid_n * BLOCK_N + BLOCK_N // 2 列开始",
            f"C {M}x{N}, subtiled epilogue, bias with stride 2, activation={activation}: relative error {err:.1e}: "
            "the right half's bias starts at column pid_n * BLOCK_N + BLOCK_N // 2",
            "5",
        )


@pytest.mark.t5_4
@pytest.mark.parametrize("mode", ["dp", "sk", "swap"])
def test_matmul_subtiled_with_bias_and_gelu(t5, mode):
    """The whole kernel with EPILOGUE_SUBTILE = 2: data-parallel tiles, stream-K owners, or the
    turned-around tiles of a decode step (§6.3)."""
    M, N, K = 45, 70, 96
    a, b = padded(M, K, torch.float16)[0], padded(K, N, torch.float16)[0]
    bias = padded(1, 2 * N, torch.float16)[0][0, ::2]
    c = t5.matmul(a, b, bias=bias, activation="gelu", config=cfg(t5, subtile=2, mode=mode), num_programs=3)
    ref = torch.nn.functional.gelu(a.double() @ b.double() + bias.double())
    err = rel_err(c, ref)
    if c.isnan().any() or err > OUT_RTOL[torch.float16]:
        fail(
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
        fail(f"pick_config({M}, {N}, {K}) 没有 pdl", f"pick_config({M}, {N}, {K}) has no pdl", "6.4")
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
                f"两个 stream 同时做 stream-K（{size}³，{programs} 个 program）：stream {i} 60 秒后仍未完成",
                f"two streams running stream-K at once ({size}³, {programs} programs): stream {i} has not "
                "finished after 60 s",
                "4.2",
            )
    counts = [int(bad) for bad in wrong]
    if any(counts):
        fail(
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
                f"CUDA graph 第 {replay + 1} 次重放（另一个 stream 上同时做 stream-K）60 秒后仍未完成",
                f"replay {replay + 1} of the CUDA graph (stream-K running eagerly on another stream) has not "
                "finished after 60 s",
                "4.2",
            )
        for (M, N, K, layout, _), (a, b, c, _) in zip(cases, static, strict=True):
            err = rel_err(c, a.double() @ b.double())
            if c.isnan().any() or not err <= OUT_RTOL[torch.float16]:
                fail(
                    f"CUDA graph 第 {replay + 1} 次重放，{M}x{N}x{K} {layout}：{c.isnan().sum().item()} 个 NaN，"
                    f"相对误差 {err:.2e}",
                    f"replay {replay + 1} of the CUDA graph, {M}x{N}x{K} {layout}: {c.isnan().sum().item()} NaN, "
                    f"relative error {err:.2e}",
                    "4.2",
                )
    if int(eager_bad):
        fail(
            f"CUDA graph 重放时另一个 stream 上的 stream-K 乘积有 {int(eager_bad)} 个元素与单独计算不同",
            f"stream-K products on another stream during the replays: {int(eager_bad)} elements differ from "
            "the product computed alone",
            "4.2",
        )
