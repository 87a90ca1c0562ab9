"""T6.3: grouped_matmul under a watch on its launch: products in sorted order, each tile reading
its own expert alone."""

import pytest
import torch
import triton

from course.i18n import cells, say
from course.messages import fail

from .accesses import Accesses, check_inside, offsets_after_poison
from .common import (
    OUT_RTOL,
    ROUTING_WORDS,
    T6,
    TRACE_INTS,
    by_slot_found,
    case_name,
    make_ids,
    reference,
    watched_call,
)
from .products import rows_scaled
from .stray import OURS
from bounds import AddressWatch, Strays, near_words, place
from support import DEVICE, DTYPES, rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


MATMUL_CASES = [  # (kind, tokens, top_k, experts, K, N)
    ("balanced", 37, 2, 5, 40, 24),
    ("one expert", 20, 1, 4, 32, 40),
    ("empty experts", 29, 2, 6, 24, 32),
    ("skewed", 45, 2, 9, 40, 24),
    ("balanced", 1, 1, 3, 32, 16),
    # K = 33: the last k-box one column wide (BLOCK_K 32 on the CPU), which a k loop that stops at K - 1 leaves out
    ("skewed", 21, 2, 4, 33, 24),
    ("one expert", 7, 2, 1, 32, 24),  # E = 1, every token on expert 0 twice: valid, a layer of one expert
]


@pytest.mark.t6_3
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind, tokens, top_k, experts, K, N", MATMUL_CASES)
@pytest.mark.case_words(**ROUTING_WORDS)
def test_grouped_matmul_in_sorted_order(t6, monkeypatch, dtype, kind, tokens, top_k, experts, K, N):
    ids = make_ids(kind, tokens, top_k, experts)
    # x is a view into NaN: its rows are K wide, its row pitch K + 24, so a read past column K of a
    # row (a K tail without its mask) brings NaN into the product.
    x = torch.full((tokens, K + 24), float("nan"), device=DEVICE, dtype=dtype)[:, :K]
    x.copy_(torch.randn(tokens, K, device=DEVICE).to(dtype))
    w = (torch.randn(experts, N, K, device=DEVICE) / K**0.5).to(dtype)
    r = t6.route(ids, experts)
    name = str(dtype).removeprefix("torch.")
    case = case_name(kind, tokens, top_k, experts) + say(
        zh=f"，K={K}，N={N}，{name}，x 是行距为 K + 24 的视图",
        en=f", K={K}, N={N}, {name}, x a view with row pitch K + 24",
    )
    want = reference(x, w, ids)
    grouped = None
    if (DEVICE == "cpu" or dtype == torch.bfloat16) and K * x.element_size() % 16 == 0:  # _grouped_mm's rule
        gathered = x[(r.sorted_slots.long() // top_k)]
        grouped = torch._grouped_mm(gathered, w.transpose(-2, -1), offs=r.offsets).double().cpu()
    out = watched_call(t6, monkeypatch, case, "4", x, w, r)  # it also checks that x and w are unchanged
    if tuple(out.shape) != (tokens * top_k, N) or out.dtype != dtype:
        fail(
            T6,
            f"{case}：结果应当是 {dtype} 的 [{tokens * top_k}, {N}]，得到 {out.dtype} {tuple(out.shape)}",
            f"{case}: the result should be [{tokens * top_k}, {N}] in {dtype}, got {out.dtype} {tuple(out.shape)}",
            "4",
        )
    err = rel_err(out, want)
    if err > OUT_RTOL[dtype]:
        bad = (out.double().cpu() - want).abs().amax(1).argmax().item()
        # the product without column K - 1 of x and w: a k loop that stops one short of K leaves it out
        short = K > 1 and rel_err(out, reference(x[:, : K - 1], w[..., : K - 1], ids)) <= OUT_RTOL[dtype]
        # with top_k = 1, x's rows taken as slot // 2: a gather written for top_k = 2 alone
        experts_of = torch.repeat_interleave(torch.arange(experts), r.counts.long().cpu())
        halved = torch.einsum(
            "rk,rnk->rn", x.cpu().double()[r.sorted_slots.long().cpu() // 2], w.cpu().double()[experts_of]
        )
        halved = top_k == 1 and tokens > 1 and rel_err(out, halved) <= OUT_RTOL[dtype]
        # a float32 result every value of which is a narrower type's: rounded to it on the way to out
        narrow = [
            name
            for name, t in (("fp16", torch.float16), ("bf16", torch.bfloat16))
            if dtype == torch.float32 and not short and torch.equal(out.to(t).float(), out)
        ]
        # a float32 product of x and w each rounded to fp16 first: operands cast to float16 before tl.dot
        halves = dtype == torch.float32 and not (short or halved or narrow)
        halves = halves and rel_err(out, reference(x.half().float(), w.half().float(), ids)) <= OUT_RTOL[dtype]
        scaled = None if short or halved or narrow or halves else rows_scaled(out, want, 4 * OUT_RTOL[dtype])
        if scaled:
            fail(
                T6,
                f"{case}：和 float64 的结果差 {err:.2e}（相对）：每一行都正好是对的那一行乘上它自己的一个系数（从 "
                f"{scaled[0]:.3g} 到 {scaled[1]:.3g}）。这次调用没有 topk_weights，什么也不该缩放一行：HAS_WEIGHTS 为 "
                "False 时 store_rows 不乘 weights_ptr 里的值，grouped_tiles 把 HAS_WEIGHTS 原样传下去",
                f"{case}: off from float64 by {err:.2e} (relative): each row is the right row times a factor of its "
                f"own (from {scaled[0]:.3g} to {scaled[1]:.3g}). This call has no topk_weights, so nothing scales a "
                "row: with HAS_WEIGHTS False store_rows does not multiply by weights_ptr's values, and grouped_tiles "
                "passes HAS_WEIGHTS on as it is",
                "4.3",
                "3.4",
            )
        fail(
            T6,
            f"{case}：和 float64 的结果差 {err:.2e}（相对），超过 {OUT_RTOL[dtype]:.0e}；"
            f"差得最多的是排好序的第 {bad} 行"
            + ("：它等于去掉 x 和 w 的最后一列（k = K - 1）的乘积，最后那个 k 块没有加进去" if short else "")
            + (
                "：它等于第 i 行读 x 的第 sorted_slots[i] // 2 行的乘积，好像 top_k 总是 2；这里 top_k = 1，"
                "第 i 行读 x 的第 sorted_slots[i] // top_k 行"
                if halved
                else ""
            )
            + (
                f"：float32 结果的每一个值都正好是 {narrow[0]} 的值：存之前被舍入成了 {narrow[0]}，要转成 out 的类型"
                if narrow
                else ""
            )
            + (
                "：它正是 x 和 w 先各自舍入成 fp16 再相乘的结果：操作数在 tl.dot 之前被转成了 float16；"
                "float32 的块原样交给 tl.dot"
                if halves
                else ""
            ),
            f"{case}: off from float64 by {err:.2e} (relative), over {OUT_RTOL[dtype]:.0e}; the worst is sorted "
            f"row {bad}"
            + (
                ": it is the product without x's and w's last column (k = K - 1), the last k-box left out"
                if short
                else ""
            )
            + (
                ": it is the product of x's rows sorted_slots[i] // 2, as if top_k were always 2; here top_k = 1, "
                "and row i reads x's row sorted_slots[i] // top_k"
                if halved
                else ""
            )
            + (
                f": every value of the float32 result is an {narrow[0]} value: it was rounded to {narrow[0]} on its "
                "way to out; cast to out's dtype"
                if narrow
                else ""
            )
            + (
                ": it is the product of x and w each rounded to fp16 first: the operands were cast to float16 before "
                "tl.dot; float32 tiles go to tl.dot as they are"
                if halves
                else ""
            ),
            "4",
        )
    if grouped is not None and rel_err(out, grouped) > OUT_RTOL[dtype]:
        fail(
            T6,
            f"{case}：和 torch._grouped_mm 差 {rel_err(out, grouped):.2e}（相对）",
            f"{case}: off from torch._grouped_mm by {rel_err(out, grouped):.2e} (relative)",
            "4",
        )


def weight_rows_per_tile(accesses, w, trace):
    """{tile: set of w's rows (of w.view(E*N, K)) it read}: the reads of w between one epilogue and
    the next belong to the tile whose epilogue (finish_tile's count in the trace) comes next."""
    w_first, row_bytes = w.data_ptr(), w.shape[-1] * w.element_size()
    w_end = w_first + w.numel() * w.element_size()
    t_first, per_tile = trace.data_ptr(), TRACE_INTS * trace.element_size()
    t_end = t_first + trace.numel() * trace.element_size()
    rows, pending = {}, set()
    for what, addresses, inside in accesses.log:
        addresses = addresses[inside]
        if what == "read":
            hit = addresses[(addresses >= w_first) & (addresses < w_end)]
            pending.update(((hit - w_first) // row_bytes).astype(int).tolist())
            continue
        counters = addresses[(addresses >= t_first) & (addresses < t_end) & ((addresses - t_first) % per_tile == 0)]
        for tile in ((counters - t_first) // per_tile).astype(int).tolist():
            rows.setdefault(tile, set()).update(pending)
            pending = set()
    return rows


@pytest.mark.t6_3
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted and combined"])
@pytest.mark.case_words(id_zh={"plain": "不带路由权重", "weighted and combined": "带路由权重、合并"})
def test_each_tile_reads_its_own_expert_alone(t6, monkeypatch, weighted):
    """One launch, each access watched on the interpreter (tests/bounds.py): moe_kernel stays inside
    its tensors, and each tile reads its own expert's weight rows alone, the BLOCK_N rows at
    expert * N + pid_n * BLOCK_N of w.view(E*N, K) (§4.2).  Numbers cannot show a tile that also
    reads other experts' weights and masks their products away: it reads E times the bytes.  The
    routing's offsets follow poison, so a read before them shows on a GPU too.  Once with routing
    weights and the combine, where store_rows reads sorted_slots too (for the weights, and the slots)."""
    import dataclasses

    from support import spans

    tokens, top_k, experts, K, N = 30, 2, 5, 40, 40  # N > BLOCK_N: no expert's box reaches another's
    cfg = t6.Config(16, 32, 32, 2, 4, 1)
    ids = make_ids("skewed", tokens, top_k, experts)  # expert 0 has the most rows
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = (torch.randn(experts, N, K, device=DEVICE) / K**0.5).half()
    weights = torch.rand(tokens, top_k, device=DEVICE) if weighted else None
    r = t6.route(ids, experts)
    r = dataclasses.replace(r, offsets=offsets_after_poison(r.offsets))
    tiles = (triton.cdiv(tokens * top_k, cfg.BLOCK_M) + experts) * triton.cdiv(N, cfg.BLOCK_N)
    trace = torch.zeros(tiles * TRACE_INTS, dtype=torch.int32, device=DEVICE)
    case = case_name("skewed", tokens, top_k, experts) + say(
        zh=f"，K={K}，N={N}，BLOCK_N={cfg.BLOCK_N}", en=f", K={K}, N={N}, BLOCK_N={cfg.BLOCK_N}"
    )
    case += say(zh="，带路由权重、合并", en=", routing weights, combined") if weighted else ""
    accesses, combine = Accesses(), Strays(OURS, "t6_probes.py")  # combine: the combine's strays alone

    def seen_by(what, lanes, inside):
        accesses(what, lanes, inside)
        if watch._running == "combine_topk":
            combine.seen(what, lanes, inside)

    watch = AddressWatch(t6, monkeypatch, ("moe_kernel", "combine_topk"), seen=seen_by)
    combine.watch = watch
    seen = {}
    out = watched_call(
        t6, monkeypatch, case, "4", x, w, r, weights, seen=seen, config=cfg, trace=trace, combine=weighted
    )
    stray = watch.outside.pop("combine_topk", None)  # the combine's own: neither §3.2's nor §4.1's
    if stray:
        what, _, frames = combine.worst()
        at_zh, at_en = (f"，第一个在 {place(frames[-1])}", f", first at {place(frames[-1])}") if frames else ("", "")
        near_zh, near_en = near_words(combine.near.get(what))
        fail(
            T6,
            f"{case}：combine_topk 读了 {stray['read']} 个、写了 {stray['write']} 个不属于它拿到的任何张量的单元{at_zh}"
            "（这里拦下了，没有真的读写）"
            + (f"；{near_zh}" if near_zh else "")
            + "：它只读按 slot 的缓冲区 [T*top_k, N]，只写结果 [T, N]",
            f"{case}: combine_topk read {stray['read']} and wrote {cells(stray['write'])} outside every tensor it was "
            f"given{at_en} (stopped here, not made)" + (f"; {near_en}" if near_en else "") + ": it reads the by-slot "
            "buffer [T*top_k, N] and writes the result [T, N] alone",
            "4.4",
        )
    check_inside(watch, accesses, r.offsets, case, "moe_kernel", "3.2", r.sorted_slots, cfg.BLOCK_M, x, top_k)
    read = weight_rows_per_tile(accesses, w, trace)
    for tile, (epilogues, e, _, pn, _, _, _) in enumerate(trace.view(-1, TRACE_INTS).cpu().tolist()):
        first = e * N + pn * cfg.BLOCK_N
        foreign = sorted(row for row in read.get(tile, ()) if not first <= row < first + cfg.BLOCK_N)
        if epilogues and foreign:
            owners, last = sorted({row // N for row in foreign}), first + cfg.BLOCK_N - 1
            fail(
                T6,
                f"{case}：tile {tile}（专家 {e}，pid_n={pn}）除了自己的 w.view(E*N, K) 第 {first}..{last} 行，"
                f"还读了第 {spans(foreign)} 行（专家 {owners} 的权重）：一个 tile 只读它自己的专家、自己的 pid_n 的"
                "那 BLOCK_N 行权重",
                f"{case}: tile {tile} (expert {e}, pid_n={pn}) read rows {first}..{last} of w.view(E*N, K), its own, "
                f"and also rows {spans(foreign)} (weights of experts {owners}): a tile reads the BLOCK_N weight rows "
                "of its own expert and pid_n alone",
                "4.2",
            )
    err = rel_err(out, reference(x, w, ids, weights, combine=weighted))
    if err > OUT_RTOL[torch.float16]:
        found = by_slot_found(seen["by_slot"], x, w, ids, weights, out) if weighted else ("", "", False)
        fail(
            T6,
            f"{case}：和 float64 的结果差 {err:.2e}（相对）{found[0]}",
            f"{case}: off from float64 by {err:.2e} (relative){found[1]}",
            "4.4" if found[2] else "4",
        )


@pytest.mark.t6_3
def test_a_combine_without_routing_weights(t6, monkeypatch):
    """combine=True with no topk_weights: each token's top_k rows summed as they are (HAS_WEIGHTS false).
    The host hands weights_ptr a placeholder then (the by-slot buffer itself), never to be read: an
    epilogue that scales whenever it stores by slot reads it as weights."""
    tokens, top_k, experts, K, N = 21, 2, 4, 32, 24
    ids = make_ids("skewed", tokens, top_k, experts)
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = (torch.randn(experts, N, K, device=DEVICE) / K**0.5).half()
    r = t6.route(ids, experts)
    case = say(
        zh=f"{tokens} 个 token，top_k={top_k}，combine=True，没有路由权重",
        en=f"{tokens} tokens, top_k={top_k}, combine=True, no routing weights",
    )
    seen = {}
    out = watched_call(t6, monkeypatch, case, "4.4", x, w, r, seen=seen, combine=True)
    err = rel_err(out, reference(x, w, ids, combine=True))
    if err <= OUT_RTOL[torch.float16]:
        return
    # each by-slot row against its unscaled product: a multiple of it, but not 1, is a row scaled
    rows = seen["by_slot"].double().cpu()
    plain = reference(x, w, ids)[r.slot_pos.long().cpu()]  # sorted order taken back to slot order
    factor = (rows * plain).sum(1) / (plain * plain).sum(1).clamp_min(1e-30)
    off = ((factor - 1).abs() > 1e-3).nonzero().flatten().tolist()
    # the one row off is slot 0's, zeroed: where a row past row_end, its A masked to 0, goes when its slot
    # is loaded with other=0 and the store lets it through
    zeroed = off == [0] and not rows[0].any() and plain[0].any()
    scaled = rel_err(rows, factor[:, None] * plain) <= 1e-3 and bool(off) and not zeroed
    fail(
        T6,
        f"{case}：和 float64 的结果差 {err:.2e}（相对）"
        + (
            "：moe_kernel 按 slot 写出的行各乘了一个不是 1 的数，而调用者没给 topk_weights：只有 HAS_WEIGHTS 时才乘权重"
            "（没有权重时 weights_ptr 只是个占位，不能读）"
            if scaled
            else "：按 slot 写出的行只有 slot 0 那一行错了，全是 0：这正是一个不是 live 的行"
            "（在 row_end 之后，A 被遮成 0）的去处，它的 slot 按 other=0 读成了 0，store 的掩码又没挡住它；"
            "store 要停在 row_end（rows < row_end）"
            if zeroed
            else "：没有 topk_weights 时，每个 token 的 top_k 行原样相加"
        ),
        f"{case}: off from float64 by {err:.2e} (relative)"
        + (
            ": the rows moe_kernel wrote by slot are each scaled by a factor other than 1, though the caller gave "
            "no topk_weights: multiply by the weights only when HAS_WEIGHTS (without them weights_ptr is a "
            "placeholder, never to be read)"
            if scaled
            else ": of the rows written by slot, slot 0's alone is wrong, all zeros: where a row that is not live "
            "(past row_end, its A masked to 0) goes when its slot is loaded as other=0 and the store's mask lets "
            "it through; the store stops at row_end (rows < row_end)"
            if zeroed
            else ": with no topk_weights each token's top_k rows are summed as they are"
        ),
        "4.3" if scaled or zeroed else "4.4",
    )


@pytest.mark.t6_3
@pytest.mark.parametrize("weights_dtype", [torch.float16, torch.float64], ids=str)
def test_routing_weights_of_another_floating_dtype(t6, monkeypatch, weights_dtype):
    """topk_weights is any floating tensor (§4): a router's float32, or fp16 beside fp16 activations, or
    float64; the epilogue loads each weight as float32."""
    tokens, top_k, experts, K, N = 13, 2, 4, 32, 24
    ids = make_ids("balanced", tokens, top_k, experts)
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = (torch.randn(experts, N, K, device=DEVICE) / K**0.5).half()
    weights = torch.rand(tokens, top_k, device=DEVICE).to(weights_dtype)
    r = t6.route(ids, experts)
    name = str(weights_dtype).replace("torch.", "")
    case = say(
        zh=f"{tokens} 个 token，top_k={top_k}，{name} 的 topk_weights，combine=True",
        en=f"{tokens} tokens, top_k={top_k}, {name} topk_weights, combine=True",
    )
    out = watched_call(t6, monkeypatch, case, "4.3", x, w, r, weights, combine=True)
    err = rel_err(out, reference(x, w, ids, weights, combine=True))
    if err > OUT_RTOL[torch.float16]:
        fail(
            T6,
            f"{case}：和 float64 的结果差 {err:.2e}（相对）",
            f"{case}: off from float64 by {err:.2e} (relative)",
            "4.3",
        )


@pytest.mark.t6_3
def test_grouped_matmul_of_x_in_sorted_order(t6, monkeypatch):
    """x_sorted=True, as moe_mlp's down launch calls it: x (h) holds a row per slot in sorted order, read at
    sorted row i itself, with routing weights and the combine; valid input, which check_expert_inputs takes."""
    tokens, top_k, experts, K, N = 13, 2, 4, 32, 24
    ids = make_ids("skewed", tokens, top_k, experts)
    x = torch.randn(tokens * top_k, K, device=DEVICE).half()
    w = (torch.randn(experts, N, K, device=DEVICE) / K**0.5).half()
    weights = torch.rand(tokens, top_k, device=DEVICE)
    r = t6.route(ids, experts)
    case = case_name("skewed", tokens, top_k, experts) + say(
        zh="，x 按排好的顺序（x_sorted=True），带路由权重、合并",
        en=", x in sorted order (x_sorted=True), routing weights, combined",
    )
    out = watched_call(t6, monkeypatch, case, "4.1", x, w, r, weights, combine=True, x_sorted=True)
    per_slot = x.double().cpu()[r.slot_pos.long().cpu()]  # slot s's row of x: its sorted row, slot_pos[s]
    rows = torch.einsum("sk,snk->sn", per_slot, w.double().cpu()[ids.reshape(-1).cpu()])
    want = (rows * weights.reshape(-1, 1).double().cpu()).view(tokens, top_k, N).sum(1)
    err = rel_err(out, want) if tuple(out.shape) == (tokens, N) else float("inf")
    if err <= OUT_RTOL[torch.float16]:
        return
    # the rows read as for x in token order, x[slot // top_k]: X_SORTED lost on its way to gathered_rows
    if rel_err(out, reference(x[:tokens], w, ids, weights, combine=True)) <= OUT_RTOL[torch.float16]:
        fail(
            T6,
            f"{case}：和 float64 差 {err:.2e}（相对）：它等于把 x 当成按 token 排的来读（排好序的第 i 行读 x 的第 "
            "sorted_slots[i] // top_k 行）的结果，好像 X_SORTED 是 False：grouped_tiles 要把 X_SORTED 原样传给 "
            "tile_product，x_sorted 时 gathered_rows 读第 i 行本身",
            f"{case}: off from float64 by {err:.2e} (relative): it is the result of x read as if in token order "
            "(sorted row i reading x's row sorted_slots[i] // top_k), as if X_SORTED were False: grouped_tiles passes "
            "X_SORTED on to tile_product as it is, and with x_sorted gathered_rows reads row i itself",
            "4.1",
            "3.4",
        )
    fail(
        T6,
        f"{case}：结果应当是 [{tokens}, {N}]，和 float64 差 {err:.2e}（相对）",
        f"{case}: the result should be [{tokens}, {N}]; off from float64 by {err:.2e} (relative)",
        "4.1",
    )
