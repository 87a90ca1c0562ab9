"""Lesson T6's suite: one section per step, each marked so that `make test STEP=T6.2` runs it alone.

Routing (T6.1) is checked against a stable sort, over many distributions of the experts.  The tile
schedule (T6.2) is recorded through a trace in record-only mode: per global tile, its epilogues,
expert, place and rows, and the program that did it.  The grouped kernel (T6.3, T6.4) is checked
against torch._grouped_mm (on the CPU) and a float64 loop, under a watch on its launch that fills
the output with a sentinel first and makes torch's own products fail.  T6 imports the learner's own
T5 and T4 (persistent_grid, tma_problem, tile_coords): one of their bodies not written yet fails
these checks as "not written yet".
"""

import re

import pytest
import torch
import triton

from course import seam
from course.i18n import say
from course.messages import fail
from course.registry import lesson

from bounds import AddressWatch, padded_integers, padding_written
from support import (
    DEVICE,
    DTYPES,
    INTERPRETING,
    UNWRITTEN,
    LaunchWatch,
    descriptor,
    poison_allocations,
    refuse_products,
    rel_err,
)

T6 = lesson("T6")

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's

# ||out - ref|| / ||ref|| with ref in float64: rounding to the dtype; tf32 on a GPU.  T6's own
# table: fp16 at 2e-3, where tests/support.py's OUT_RTOL, which T4 and T5 use, has 1.5e-3.
OUT_RTOL = {torch.float16: 2e-3, torch.bfloat16: 1.2e-2, torch.float32: 2e-3 if DEVICE == "cuda" else 1e-5}
TRACE_INTS = 7  # per tile: epilogues, expert, pid_m, pid_n, first row, row end, program


@pytest.fixture(scope="session")
def t6(graded_module):
    return graded_module(T6)


UNSET = -1  # what a new integer tensor holds in these tests: an index the routing never wrote


@pytest.fixture(autouse=True)
def integers_start_unset():
    """torch.empty's integer tensors start as UNSET, not as whatever memory held: a position the
    routing never writes then reads the same in every run, and so does its message (§8's table)."""
    with pytest.MonkeyPatch.context() as patch:  # its own: watched_call undoes the test's monkeypatch
        poison_allocations(patch, floats=None, integers=UNSET)
        yield


@pytest.fixture(scope="session")
def probes(t6):
    from course.lessons import t6_probes  # its kernels call the graded module's functions, so it loads after `t6`

    return t6_probes


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


ROUTE_CASES = [  # (kind, tokens, top_k, experts)
    ("balanced", 37, 2, 5),
    ("one expert", 20, 1, 4),
    ("empty experts", 29, 2, 6),
    ("skewed", 150, 2, 9),  # 300 slots: three routing blocks of 128
    ("balanced", 1, 1, 3),  # one row
    ("skewed", 70, 4, 16),
    ("skewed", 1100, 2, 9),  # 2200 slots: 18 routing blocks, more than one batch of SCAN_ROWS = 16
]


KIND_ZH = {"balanced": "均匀", "one expert": "全给一个专家", "empty experts": "有空专家", "skewed": "偏斜（Zipf）"}


def case_name(kind, tokens, top_k, experts):
    return say(
        zh=f"{KIND_ZH[kind]}的路由，{tokens} 个 token，top_k={top_k}，{experts} 个专家",
        en=f"{kind} routing, {tokens} tokens, top_k={top_k}, {experts} experts",
    )


# ================================================================================================
# T6.1 routing as a counting sort
# ================================================================================================
def check_routing(r, ids, experts, case):
    flat = ids.reshape(-1).cpu()
    want_counts = torch.bincount(flat, minlength=experts).int()
    want_offsets = want_counts.cumsum(0).int()
    want_sorted = torch.sort(flat, stable=True).indices.int()
    counts, offsets = r.counts.cpu(), r.offsets.cpu()
    if not torch.equal(counts, want_counts):
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}",
            "2.1",
        )
    if not torch.equal(offsets, want_offsets):
        starts = torch.equal(offsets, want_offsets - want_counts)
        fail(
            T6,
            f"{case}：offsets 应当是每个专家的行尾 {want_offsets.tolist()}（torch._grouped_mm 的 offs），得到 "
            f"{offsets.tolist()}" + ("：这是每个专家的行首（不含自身的前缀和），不是行尾" if starts else ""),
            f"{case}: offsets should be each expert's row end {want_offsets.tolist()} (torch._grouped_mm's offs), "
            f"got {offsets.tolist()}"
            + (": these are the row starts (an exclusive sum), not the ends" if starts else ""),
            "2.1",
        )
    got = r.sorted_slots.cpu()
    slots = want_sorted.numel()
    if got.shape != want_sorted.shape or not torch.equal(got.sort().values, torch.arange(slots, dtype=got.dtype)):
        outside = int(((got < 0) | (got >= slots)).sum()) if got.numel() else 0
        seen = torch.bincount(got[(got >= 0) & (got < slots)].long(), minlength=slots) if got.numel() else got
        fail(
            T6,
            f"{case}：sorted_slots 不是 0..{slots - 1} 的一个排列：{outside} 个值越界，"
            f"{int((seen == 0).sum())} 个 slot 没有出现（有的位置没写，或两个 slot 写到了同一个位置）",
            f"{case}: sorted_slots is not a permutation of 0..{slots - 1}: {outside} values out of range, "
            f"{int((seen == 0).sum())} slots missing (positions never written, or two slots written to one)",
            "2.1",
        )
    if not torch.equal(got, want_sorted):
        bad = int((got != want_sorted).nonzero()[0])
        same_groups = got.numel() == want_sorted.numel() and torch.equal(flat[got.long()], flat[want_sorted.long()])
        grouped_right = same_groups and all(
            sorted(got[a:b].tolist()) == sorted(want_sorted[a:b].tolist())
            for a, b in zip([0] + want_offsets.tolist()[:-1], want_offsets.tolist(), strict=True)
        )
        fail(
            T6,
            f"{case}：sorted_slots 从第 {bad} 个位置起不对：应当是 slot {int(want_sorted[bad])}，得到 {int(got[bad])}"
            + ("：每个专家拿到的 slot 对了，但专家内的顺序不是 slot 的原顺序（散射不稳定）" if grouped_right else ""),
            f"{case}: sorted_slots is wrong from position {bad} on: slot {int(want_sorted[bad])} expected, got "
            f"{int(got[bad])}"
            + (
                ": each expert has the right slots, but not in the slots' own order (the scatter is not stable)"
                if grouped_right
                else ""
            ),
            "2.2" if grouped_right else "2.1",
        )
    inverse = torch.empty_like(want_sorted)
    inverse[want_sorted.long()] = torch.arange(want_sorted.numel(), dtype=torch.int32)
    if not torch.equal(r.slot_pos.cpu(), inverse):
        fail(
            T6,
            f"{case}：slot_pos 不是 sorted_slots 的逆：slot_pos[sorted_slots[pos]] 应当等于 pos",
            f"{case}: slot_pos is not the inverse of sorted_slots: slot_pos[sorted_slots[pos]] must be pos",
            "2.1",
        )


ROUTE_KERNELS = ("count_experts", "scan_counts", "scatter_slots")
# Where each of the Routing's tensors comes from: (the kernel that writes it, its argument there).
WRITTEN_BY = {
    "counts": ("scan_counts", "counts_ptr"),
    "offsets": ("scan_counts", "offsets_ptr"),
    "sorted_slots": ("scatter_slots", "sorted_slots_ptr"),
    "slot_pos": ("scatter_slots", "slot_pos_ptr"),
}


def watched_route(t6, monkeypatch, ids, experts, case):
    """route under a LaunchWatch on its three kernels: the Routing must be what they wrote, in one
    launch each (§2.3).  Numbers cannot tell the kernels from a stable sort on the host.  On the
    interpreter their addresses are watched too: a place computed wrong (past sorted_slots, say) is
    reported and stopped, where it would write over whatever memory lies there."""
    addresses = AddressWatch(t6, monkeypatch, ROUTE_KERNELS)
    watch = LaunchWatch(
        t6, monkeypatch, dict.fromkeys(ROUTE_KERNELS, True), wrapper="route", out=None, shared_names=False
    )
    r = t6.route(ids, experts)
    monkeypatch.undo()
    for kernel, lanes in addresses.outside.items():
        fail(
            T6,
            f"{case}：{kernel} 读了 {lanes['read']} 个、写了 {lanes['write']} 个不属于它拿到的任何张量的单元"
            "（这里拦下了，没有真的读写）",
            f"{case}: {kernel} read {lanes['read']} and wrote {lanes['write']} cells outside every tensor it was "
            "given (stopped here, not made)",
            "2.1",
        )
    launched = [launch.name for launch in watch.launches]
    if launched != list(ROUTE_KERNELS):
        fail(
            T6,
            f"{case}：route 启动的内核依次是 {launched}，应当是 count_experts、scan_counts、scatter_slots "
            "各一次、按这个顺序：Routing 由这三次启动算出来",
            f"{case}: route launched {launched}, where count_experts, scan_counts and scatter_slots are expected "
            "once each, in that order: the Routing is what these three launches compute",
            "2.3",
        )
    args = {launch.name: launch.args for launch in watch.launches}
    for name, (kernel, arg) in WRITTEN_BY.items():
        if not same_memory(getattr(r, name), args[kernel].get(arg)):
            fail(
                T6,
                f"{case}：Routing.{name} 不是 {kernel} 写入的那个张量（它的 {arg}）：Routing 交出的就是内核的输出",
                f"{case}: Routing.{name} is not the tensor {kernel} wrote into (its {arg}): the Routing hands back "
                "the kernels' own outputs",
                "2.3",
            )
    return r


@pytest.mark.t6_1
@pytest.mark.parametrize("kind, tokens, top_k, experts", ROUTE_CASES)
def test_route_is_a_stable_counting_sort(t6, monkeypatch, kind, tokens, top_k, experts):
    ids = make_ids(kind, tokens, top_k, experts)
    before = ids.clone()
    case = case_name(kind, tokens, top_k, experts)
    r = watched_route(t6, monkeypatch, ids, experts, case)
    check_routing(r, ids, experts, case)
    if not torch.equal(ids, before):
        fail(T6, f"{case}：route 改动了调用者的 topk_ids", f"{case}: route changed the caller's topk_ids", "2.3")
    for name in ("counts", "offsets", "sorted_slots", "slot_pos"):
        t = getattr(r, name)
        if t.dtype != torch.int32:
            fail(
                T6,
                f"{case}：Routing.{name} 应当是 int32，得到 {t.dtype}",
                f"{case}: Routing.{name} must be int32, got {t.dtype}",
                "2.3",
            )


@pytest.mark.t6_1
def test_route_takes_int32_ids_and_repeats_its_bits(t6):
    ids = make_ids("skewed", 90, 3, 7)
    first = t6.route(ids.int(), 7)
    check_routing(first, ids, 7, say(zh="int32 的 topk_ids", en="int32 topk_ids"))
    again = t6.route(ids, 7)
    for name in ("counts", "offsets", "sorted_slots", "slot_pos"):
        if not torch.equal(getattr(first, name), getattr(again, name)):
            fail(
                T6,
                f"同一组 topk_ids 路由两次，Routing.{name} 不一样：路由必须每次给出同样的位",
                f"the same topk_ids routed twice gave two different Routing.{name}: routing must give the same "
                "bits every run",
                "2.2",
            )


@pytest.mark.t6_1
@pytest.mark.skipif(not INTERPRETING, reason="program orders are chosen through the interpreter")
def test_route_in_any_program_order(t6):
    """The interpreter runs programs in id order; here the blocks run in other orders too, so a
    scatter that hands out places first come, first served shows: right in id order, other bits in
    another."""
    from course.interpreter_order import orders, programs_run

    ids = make_ids("skewed", 200, 2, 5)  # 400 slots: four blocks
    in_id_order = t6.route(ids, 5)
    check_routing(
        in_id_order, ids, 5, say(zh="路由的各个程序按 id 顺序运行", en="the routing programs run in id order")
    )
    for name, order in orders(4, 1).items():
        if name == "in id order":
            continue
        with programs_run(order):
            r = t6.route(ids, 5)
        fields = ("counts", "offsets", "sorted_slots", "slot_pos")
        differ = [f"Routing.{f}" for f in fields if not torch.equal(getattr(r, f), getattr(in_id_order, f))]
        if differ:
            fail(
                T6,
                f"同一组 topk_ids，路由的各个程序按 {order} 的顺序运行时，{'、'.join(differ)} "
                "和按 id 顺序运行时（那次是对的）不一样：slot 放到哪里取决于程序运行的先后"
                "（比如用 atomic 计数器发放位置）；每个位置要由 block_base（前面各块的计数）和块内名次算出来，"
                "不管哪个程序先跑",
                f"the same topk_ids with the routing programs run in order {order} gave another "
                f"{', '.join(differ)} than in id order (which was right): where a slot goes depends on the order "
                "the programs run (an atomic cursor handing out places, say); compute each place from block_base "
                "(the counts of the blocks before) and the rank in the block, whichever program runs first",
                "2.2",
            )


BAD_ROUTES = [  # (what, ids, num_experts, the argument the error must name)
    ("an id >= num_experts", lambda: torch.tensor([[0, 4], [1, 2]]), 4, "topk_ids"),
    ("a negative id", lambda: torch.tensor([[0, -1], [1, 2]]), 4, "topk_ids"),
    ("float ids", lambda: torch.tensor([[0.0, 1.0]]), 4, "topk_ids"),
    ("1-D ids", lambda: torch.tensor([0, 1, 2]), 4, "topk_ids"),
    ("num_experts = 0", lambda: torch.tensor([[0, 1]]), 0, "num_experts"),
    ("num_experts = 4.0", lambda: torch.tensor([[0, 1]]), 4.0, "num_experts"),
]


@pytest.mark.t6_1
@pytest.mark.parametrize("what, make, experts, name", BAD_ROUTES, ids=[b[0] for b in BAD_ROUTES])
def test_route_refuses_bad_input(t6, what, make, experts, name):
    ids = make().to(DEVICE)
    before = ids.clone()
    deeper = None  # an error from further in than the checks
    try:
        t6.route(ids, experts)
    except (ValueError, TypeError) as e:
        if not names_one_of(str(e), (name,)):
            fail(
                T6,
                f"{what}：route 抛出了 {type(e).__name__}，但信息没有说出出错的参数 {name}：{e}",
                f"{what}: route raised {type(e).__name__}, but its message does not name the argument {name}: {e}",
                "2.3",
            )
    except NotImplementedError:
        raise  # a body not written yet: the suite says so in its own words
    except Exception as e:  # noqa: BLE001 - an error from further in (a kernel, say) is what this reports
        deeper = f"{type(e).__name__} ({str(e)[:200]})"
    else:
        fail(
            T6,
            f"{what}：route 应当抛出 ValueError（或 TypeError）并说出 {name}，却什么也没抛",
            f"{what}: route should raise a ValueError (or TypeError) naming {name}, and raised nothing",
            "2.3",
        )
    if deeper:  # reported outside the except, so that the traceback of the learner's error stays out of it
        fail(
            T6,
            f"{what}：route 抛出了 {deeper}，而不是写着 {name} 的 ValueError（或 TypeError）："
            "这样的输入要在 check_routing_inputs 里、任何一次启动之前拒绝",
            f"{what}: route raised {deeper}, not a ValueError (or TypeError) naming {name}: refuse such input "
            "in check_routing_inputs, before any launch",
            "2.3",
        )
    if not torch.equal(ids, before):
        fail(T6, f"{what}：route 改动了调用者的 topk_ids", f"{what}: route changed the caller's topk_ids", "2.3")


# For 5 experts: below 0, in E_BLOCK = 8's spare lanes, past them; and on the CPU, where the watch
# stops any access, 2**32 + 1, which an int64 id narrowed to int32 before its check turns into expert 1.
OUT_OF_RANGE = (-1, -3, 5, 6, 7, 8, 11) + ((2**32 + 1,) if INTERPRETING else ())


@pytest.mark.t6_1
def test_route_ignores_ids_out_of_range(t6, monkeypatch):
    """With check_ids=False (and under graph capture) nothing looks at the ids on the host, so the
    kernels meet ids outside [0, E) themselves.  §2.3: such a slot is counted for no expert and gets
    no sorted row; the other slots are routed as if it were not there; no kernel reads or writes
    outside its tensors.  The interpreter's addresses are watched (an access outside is counted and
    not made); the routing's integer tensors sit inside zeroed padding, so a GPU cannot fault there."""
    experts, tokens, top_k = 5, 150, 2  # 300 slots: three routing blocks
    ids = make_ids("skewed", tokens, top_k, experts)
    bad = torch.randperm(tokens * top_k)[: 6 * len(OUT_OF_RANGE)]
    ids.view(-1)[bad.to(DEVICE)] = torch.tensor(OUT_OF_RANGE).repeat(6).to(DEVICE)
    before = ids.clone()
    case = say(
        zh=f"{tokens * top_k} 个 slot 里有 {len(bad)} 个的专家号不在 [0, {experts}) 里（{list(OUT_OF_RANGE)}），"
        "route(..., check_ids=False)",
        en=f"{len(bad)} of {tokens * top_k} slots with expert ids outside [0, {experts}) ({list(OUT_OF_RANGE)}), "
        "route(..., check_ids=False)",
    )
    made = padded_integers(monkeypatch)
    watch = AddressWatch(t6, monkeypatch, ("count_experts", "scan_counts", "scatter_slots"))
    try:
        r = t6.route(ids, experts, check_ids=False)
    except (ValueError, TypeError) as e:
        fail(
            T6,
            f"{case}：route 抛出了 {type(e).__name__}：{e}；check_ids=False 时主机不看专家号，越界的号由 kernel 忽略",
            f"{case}: route raised {type(e).__name__}: {e}; with check_ids=False the host does not look at the "
            "ids, and the kernels ignore those out of range",
            "2.3",
        )
    finally:
        monkeypatch.undo()
    for kernel, lanes in watch.outside.items():
        fail(
            T6,
            f"{case}：{kernel} 读了 {lanes['read']} 个、写了 {lanes['write']} 个不属于它拿到的任何张量的单元"
            "（这里拦下了，没有真的读写）：越界的专家号不算进任何专家，也不能拿来当下标",
            f"{case}: {kernel} read {lanes['read']} and wrote {lanes['write']} cells outside every tensor it was "
            "given (stopped here, not made): an id out of range counts for no expert and is never an index",
            "2.3",
        )
    stray = padding_written(made)
    if stray:
        fail(
            T6,
            f"{case}：route 的 kernel 写到了它的整数张量之外的 {stray} 个单元",
            f"{case}: route's kernels wrote {stray} cells just outside its integer tensors",
            "2.3",
        )
    flat = ids.reshape(-1).cpu()
    inside = (flat >= 0) & (flat < experts)
    want_counts = torch.bincount(flat[inside], minlength=experts).int()
    kept = int(inside.sum())
    want_sorted = torch.sort(torch.where(inside, flat, experts), stable=True).indices[:kept].int()
    got_counts, got_offsets = r.counts.cpu(), r.offsets.cpu()
    if not torch.equal(got_counts, want_counts) or not torch.equal(got_offsets, want_counts.cumsum(0).int()):
        fail(
            T6,
            f"{case}：counts 应当只数范围内的号，{want_counts.tolist()}，offsets 是它的累加和；"
            f"得到 counts {got_counts.tolist()}，offsets {got_offsets.tolist()}",
            f"{case}: counts should count the ids in range alone, {want_counts.tolist()}, and offsets be their "
            f"running sum; got counts {got_counts.tolist()}, offsets {got_offsets.tolist()}",
            "2.3",
        )
    got = r.sorted_slots.cpu()[:kept]
    if not torch.equal(got, want_sorted):
        at = int((got != want_sorted).nonzero()[0])
        fail(
            T6,
            f"{case}：sorted_slots 的前 {kept} 行应当是范围内的 slot 按专家稳定排好序，从第 {at} 行起不对："
            f"应当是 slot {int(want_sorted[at])}，得到 {int(got[at])}",
            f"{case}: the first {kept} rows of sorted_slots should be the slots in range, stably sorted by "
            f"expert; wrong from row {at} on: slot {int(want_sorted[at])} expected, got {int(got[at])}",
            "2.3",
        )
    if not torch.equal(r.slot_pos.cpu()[want_sorted.long()], torch.arange(kept, dtype=torch.int32)):
        fail(
            T6,
            f"{case}：范围内的 slot s 的 slot_pos[s] 应当是它在 sorted_slots 里的行",
            f"{case}: slot_pos[s] of a slot s in range should be its row in sorted_slots",
            "2.3",
        )
    if not torch.equal(ids, before):
        fail(T6, f"{case}：route 改动了调用者的 topk_ids", f"{case}: route changed the caller's topk_ids", "2.3")


def raised_by(call):
    """(what call returned, None) or (None, "its error, in short"): a learner's error told outside the
    except, so that its traceback stays out of the failure; a body not written yet is left to the suite."""
    try:
        return call(), None
    except NotImplementedError:
        raise
    except Exception as e:  # noqa: BLE001 - any error on valid input is what this reports
        return None, f"{type(e).__name__}: {str(e)[:200]}"


@pytest.mark.t6_1
def test_route_of_no_tokens(t6):
    """0 tokens is valid input (a batch with nothing for this layer): an empty Routing whose counts
    and offsets are all 0 (§2.3's checks look at the ids only when there are some)."""
    ids = torch.empty((0, 2), dtype=torch.int64, device=DEVICE)
    case = say(zh="0 个 token（topk_ids 是 [0, 2]），4 个专家", en="0 tokens (topk_ids [0, 2]), 4 experts")
    r, error = raised_by(lambda: t6.route(ids, 4))
    if error:
        fail(
            T6,
            f"{case}：这是合法的输入，route 却抛出了 {error}",
            f"{case}: valid input, yet route raised {error}",
            "2.3",
        )
    check_routing(r, ids, 4, case)


# ================================================================================================
# T6.2 the tile schedule over ragged groups
# ================================================================================================
SCHEDULE_CASES = [  # (rows per expert, BLOCK_M, BLOCK_N, N, programs, GROUP_M)
    ([5, 0, 9], 4, 16, 32, 3, 2),  # §3's picture
    ([0, 0, 0, 7], 4, 16, 16, 2, 1),  # empty experts first
    ([0, 0, 0], 4, 16, 48, 3, 2),  # nothing at all
    ([33], 16, 16, 40, 3, 4),  # every row on one expert; N not a multiple of BLOCK_N
    ([1], 16, 16, 16, 3, 1),  # one row
    ([16, 32, 0, 48, 0], 16, 16, 32, 5, 2),  # multiples of BLOCK_M
    ([3, 17, 1, 0, 30, 2, 0, 5, 12], 8, 16, 24, 4, 2),
]


def upper_bound(counts, bm, bn, n):
    return (triton.cdiv(sum(counts), bm) + min(len(counts), sum(counts))) * triton.cdiv(n, bn)


def expected_tiles(counts, bm, bn, n):
    """{(expert, pid_m, pid_n): (row_begin, row_end)} of every tile the counts give."""
    want, start = {}, 0
    for e, c in enumerate(counts):
        for pm in range(triton.cdiv(c, bm)):
            for pn in range(triton.cdiv(n, bn)):
                want[(e, pm, pn)] = (start + pm * bm, min(start + (pm + 1) * bm, start + c))
        start += c
    return want


def run_schedule(probes, counts, bm, bn, n, progs, group_m):
    cnt = torch.tensor(counts, dtype=torch.int32, device=DEVICE)
    offs = cnt.cumsum(0).int()
    trace = torch.zeros(max(1, upper_bound(counts, bm, bn, n)) * TRACE_INTS, dtype=torch.int32, device=DEVICE)
    probes.schedule_probe[(progs,)](
        cnt, offs, trace, n, len(counts), progs, 1, bm, bn, group_m, probes.e_block(len(counts))
    )
    return [tuple(r) for r in trace.view(-1, TRACE_INTS).cpu().tolist()]


def check_schedule(rows, counts, bm, bn, n, progs, case):
    want = expected_tiles(counts, bm, bn, n)
    total = len(want)
    seen = {}
    for tile, (epilogues, e, pm, pn, begin, end, prog) in enumerate(rows):
        if tile >= total:
            if epilogues:
                fail(
                    T6,
                    f"{case}：一共只有 {total} 个 tile，tile 号 {tile} 却也被做了：循环要停在设备上读出的总数",
                    f"{case}: there are {total} tiles, yet tile id {tile} was done too: the loop must stop at "
                    "the total read on the device",
                    "3.4",
                )
            continue
        if epilogues != 1:
            fail(
                T6,
                f"{case}：tile {tile} 的 epilogue 跑了 {epilogues} 次，应当恰好 1 次",
                f"{case}: tile {tile} had {epilogues} epilogues, exactly 1 expected",
                "3.4",
            )
        if prog != tile % progs:
            fail(
                T6,
                f"{case}：tile {tile} 由程序 {prog} 做了，{progs} 个常驻程序里应当是程序 {tile % progs}",
                f"{case}: tile {tile} was done by program {prog}; of {progs} persistent programs, program "
                f"{tile % progs} should",
                "3.4",
            )
        key = (e, pm, pn)
        if key not in want:
            fail(
                T6,
                f"{case}：tile {tile} 被放在专家 {e} 的 (pid_m={pm}, pid_n={pn})，这个专家没有这个 tile",
                f"{case}: tile {tile} was placed at expert {e}, (pid_m={pm}, pid_n={pn}), which that expert does "
                "not have",
                "3.3",
            )
        if key in seen:
            fail(
                T6,
                f"{case}：tile {seen[key]} 和 tile {tile} 做的是同一个 (专家 {e}, pid_m={pm}, pid_n={pn})",
                f"{case}: tiles {seen[key]} and {tile} both did (expert {e}, pid_m={pm}, pid_n={pn})",
                "3.3",
            )
        seen[key] = tile
        if begin == want[key][0] and end > begin + bm:
            fail(
                T6,
                f"{case}：专家 {e} 的 tile (pid_m={pm}) 从排好序的第 {begin} 行开始，这没错，但它的 row_end 是 {end}，"
                f"超过了 row_begin + BLOCK_M = {begin + bm}：传给 finish_tile 的 row_end 最多是 row_begin + BLOCK_M"
                "（一个 tile 至多 BLOCK_M 行；专家先结束时就是专家的末行）",
                f"{case}: expert {e}'s tile (pid_m={pm}) starts at sorted row {begin}, as it should, but its row_end "
                f"is {end}, past row_begin + BLOCK_M = {begin + bm}: the row_end passed to finish_tile must be at most "
                "row_begin + BLOCK_M (a tile has at most BLOCK_M rows; the expert's end where that comes first)",
                "3.2",
            )
        if (begin, end) != want[key]:
            a, b = want[key]
            mixes = end > b and any(b <= s < end for s in (sum(counts[: x + 1]) for x in range(len(counts))))
            fail(
                T6,
                f"{case}：专家 {e} 的 tile (pid_m={pm}) 算的是排好序的第 {begin}..{end - 1} 行，应当是 {a}..{b - 1}"
                + ("：它越过了这个专家的最后一行，混进了下一个专家的行" if mixes else ""),
                f"{case}: expert {e}'s tile (pid_m={pm}) covers sorted rows {begin}..{end - 1}, rows {a}..{b - 1} "
                "expected" + (": it runs past the expert's last row into the next expert's" if mixes else ""),
                "3.2",
            )
    missing = sorted(set(want) - set(seen))
    if missing:
        fail(
            T6,
            f"{case}：{len(missing)} 个 tile 没人做，例如 (专家, pid_m, pid_n) = {missing[0]}",
            f"{case}: {len(missing)} tiles were not done, (expert, pid_m, pid_n) = {missing[0]} for one",
            "3.3",
        )


@pytest.mark.t6_2
def test_every_tile_of_every_expert_once(probes):
    """Over many distributions: each tile of each expert exactly once, by program tile % programs,
    on its expert's rows only; no tile id past the total touched."""
    cases = SCHEDULE_CASES + [  # and two random ones, from the test's seed
        ([int(c) for c in torch.randint(0, 20, (int(torch.randint(1, 9, (1,))),))], 8, 16, 32, 3, 2) for _ in range(2)
    ]
    for counts, bm, bn, n, progs, group_m in cases:
        rows = run_schedule(probes, counts, bm, bn, n, progs, group_m)
        case = say(
            zh=f"每个专家的行数 {counts}，BLOCK_M={bm}，N={n}，BLOCK_N={bn}，{progs} 个程序",
            en=f"rows per expert {counts}, BLOCK_M={bm}, N={n}, BLOCK_N={bn}, {progs} programs",
        )
        check_schedule(rows, counts, bm, bn, n, progs, case)


@pytest.mark.t6_2
def test_tile_counts_and_places_alone(probes):
    """expert_tile_counts and locate_tile, without the loop: each global tile's expert, and every
    tile of an expert exactly once."""
    counts, bm, bn, n = [5, 0, 9, 1, 0], 4, 16, 32
    num_pid_n = triton.cdiv(n, bn)
    want_m = [triton.cdiv(c, bm) for c in counts]
    want_ends = torch.tensor(want_m).mul(num_pid_n).cumsum(0).tolist()
    tiles = want_ends[-1]
    cnt = torch.tensor(counts, dtype=torch.int32, device=DEVICE)
    found = torch.full((3 * tiles + 2 * len(counts),), -1, dtype=torch.int32, device=DEVICE)
    probes.locate_probe[(tiles,)](cnt, found, len(counts), num_pid_n, bm, 2, probes.e_block(len(counts)))
    found = found.cpu().tolist()
    m_blocks, ends = found[3 * tiles : 3 * tiles + len(counts)], found[3 * tiles + len(counts) :]
    case = say(
        zh=f"每个专家的行数 {counts}，BLOCK_M={bm}，N 方向 {num_pid_n} 块",
        en=f"rows per expert {counts}, BLOCK_M={bm}, {num_pid_n} blocks along N",
    )
    if m_blocks != want_m or ends != want_ends:
        fail(
            T6,
            f"{case}：expert_tile_counts 应当给出 m_blocks {want_m}、tile_ends {want_ends}，得到 {m_blocks}、{ends}",
            f"{case}: expert_tile_counts should give m_blocks {want_m} and tile_ends {want_ends}, got {m_blocks} "
            f"and {ends}",
            "3.3",
        )
    want = expected_tiles(counts, bm, bn, n)
    places = [tuple(found[3 * t : 3 * t + 3]) for t in range(tiles)]
    for t, (e, pm, pn) in enumerate(places):
        owner = sum(end <= t for end in want_ends)
        if e != owner or (e, pm, pn) not in want:
            fail(
                T6,
                f"{case}：全局 tile {t} 属于专家 {owner}，locate_tile 给出 (专家 {e}, pid_m={pm}, pid_n={pn})",
                f"{case}: global tile {t} is expert {owner}'s; locate_tile gave (expert {e}, pid_m={pm}, pid_n={pn})",
                "3.3",
            )
    if len(set(places)) != len(places):
        fail(
            T6,
            f"{case}：locate_tile 把两个全局 tile 放到了同一个位置：{places}",
            f"{case}: locate_tile put two global tiles at one place: {places}",
            "3.3",
        )


# ------------------------------------------------------------------------------------------------
# What the kernels read: their own tensors, nothing before the offsets (T6.2, T6.3)
# ------------------------------------------------------------------------------------------------
OFFSETS_POISON = 1 << 20  # what the cells before the tests' offsets hold: a row past every expert's
FRONT = 16  # cells of poison before the offsets (64 bytes: the view stays aligned)


def offsets_after_poison(offsets):
    """offsets' values in a view with OFFSETS_POISON in the FRONT cells before it: what lies before
    a fresh tensor is often 0, so offsets[-1] (for expert 0's first row, say) would read right by
    luck; here a GPU, where nothing watches addresses, puts that tile past every expert's rows."""
    buf = torch.full((FRONT + offsets.numel(),), OFFSETS_POISON, dtype=offsets.dtype, device=offsets.device)
    buf[FRONT:] = offsets
    return buf[FRONT:]


class Accesses:
    """Every access of a launch under an AddressWatch (tests/bounds.py, seen=): (what, addresses, inside)."""

    def __init__(self):
        self.log = []

    def __call__(self, what, addresses, inside):
        self.log.append((what, addresses.copy(), inside.copy()))

    def read_just_before(self, t):
        """Whether a read outside every tensor hit the cell right before t: t[-1]."""
        cell = t.data_ptr() - t.element_size()
        return any(what == "read" and (addresses[~inside] == cell).any() for what, addresses, inside in self.log)


def check_inside(watch, accesses, offsets, case, who, section):
    """Fail when the watched launch read or wrote outside every tensor it was given; by name when it
    read offsets[-1]."""
    for lanes in watch.outside.values():
        if accesses.read_just_before(offsets):
            fail(
                T6,
                f"{case}：{who} 读了 offsets[-1]，也就是 offsets 前面的那个单元（这里拦下了，没有真的读）："
                "专家 0 的行从 0 开始，并没有 offsets[-1]；专家 e 的第一行是 offsets[e] - counts[e]",
                f"{case}: {who} read offsets[-1], the cell just before offsets (stopped here, not made): expert 0's "
                "rows start at 0, and there is no offsets[-1]; expert e's first row is offsets[e] - counts[e]",
                section,
            )
        fail(
            T6,
            f"{case}：{who} 读了 {lanes['read']} 个、写了 {lanes['write']} 个不属于它拿到的任何张量的单元"
            "（这里拦下了，没有真的读写）",
            f"{case}: {who} read {lanes['read']} and wrote {lanes['write']} cells outside every tensor it was "
            "given (stopped here, not made)",
            section,
        )


@pytest.mark.t6_2
def test_schedule_reads_only_counts_and_offsets(probes, monkeypatch):
    """grouped_tiles, record-only, reads counts and offsets and writes the trace, nothing else: on
    the interpreter each access is watched; the offsets follow poison, which a GPU would read."""
    accesses = Accesses()
    watch = AddressWatch(probes, monkeypatch, ("schedule_probe",), seen=accesses)
    for counts, bm, bn, n, progs, group_m in (SCHEDULE_CASES[0], SCHEDULE_CASES[-1]):
        cnt = torch.tensor(counts, dtype=torch.int32, device=DEVICE)
        offs = offsets_after_poison(cnt.cumsum(0).int())
        trace = torch.zeros(upper_bound(counts, bm, bn, n) * TRACE_INTS, dtype=torch.int32, device=DEVICE)
        accesses.log.clear()
        probes.schedule_probe[(progs,)](
            cnt, offs, trace, n, len(counts), progs, 1, bm, bn, group_m, probes.e_block(len(counts))
        )
        case = say(
            zh=f"每个专家的行数 {counts}，BLOCK_M={bm}，N={n}，BLOCK_N={bn}，{progs} 个程序",
            en=f"rows per expert {counts}, BLOCK_M={bm}, N={n}, BLOCK_N={bn}, {progs} programs",
        )
        check_inside(
            watch, accesses, offs, case, say(zh="只记录模式下的 grouped_tiles", en="grouped_tiles (record-only)"), "3.2"
        )
        rows = [tuple(r) for r in trace.view(-1, TRACE_INTS).cpu().tolist()]
        check_schedule(rows, counts, bm, bn, n, progs, case)


# ================================================================================================
# T6.3 the grouped kernel
# ================================================================================================
@pytest.mark.t6_3
@pytest.mark.parametrize("x_sorted", [False, True], ids=["gathered", "x sorted"])
def test_gathered_product_alone(probes, x_sorted):
    """One tile: rows 5..13 of a sorted order (9 live of 16), each reading x's row slot // top_k (or
    the sorted row itself), times expert 1's weight rows 16..31 of w2d = w.view(E*N, K)."""
    top_k, bm, bn, bk, K = 2, 16, 16, 16, 40
    slots = torch.randperm(40).int().to(DEVICE)
    x = torch.randn(40 if x_sorted else 20, K, device=DEVICE).half()
    w2d = torch.randn(3 * 32, K, device=DEVICE).half()
    acc = torch.full((bm, bn), UNWRITTEN, dtype=torch.float32, device=DEVICE)
    rows = torch.full((bm, 2), -1, dtype=torch.int32, device=DEVICE)
    begin, end, w_row = 5, 14, 32 + 16
    probes.gather_probe[(1,)](
        x,
        descriptor(w2d, [bn, bk]),
        slots,
        acc,
        rows,
        begin,
        end,
        w_row,
        K,
        x.stride(0),
        x.stride(1),
        top_k,
        x_sorted,
        bm,
        bn,
        bk,
    )
    pos = torch.arange(begin, begin + bm)
    live = pos < end
    want_rows = pos if x_sorted else slots.cpu()[pos.clamp_max(39)].long() // top_k
    got_rows, got_live = rows.cpu()[:, 0], rows.cpu()[:, 1].bool()
    if not torch.equal(got_live, live) or not torch.equal(got_rows[live].long(), want_rows[live]):
        fail(
            T6,
            f"gathered_rows：排好序的第 {begin}..{end - 1} 行应当读 x 的第 {want_rows[live].tolist()} 行（live 到 "
            f"{end} 为止），得到 {got_rows[got_live].tolist()}",
            f"gathered_rows: sorted rows {begin}..{end - 1} should read rows {want_rows[live].tolist()} of x (live "
            f"up to {end}), got {got_rows[got_live].tolist()}",
            "4.1",
        )
    want = torch.zeros(bm, bn, dtype=torch.float64)
    want[live] = x.cpu().double()[want_rows[live]] @ w2d.cpu().double()[w_row : w_row + bn].T
    err = rel_err(acc[live], want[live])
    dead = acc.cpu()[~live]
    if err > 1e-5 or (dead != 0).any():
        fail(
            T6,
            f"gathered_product：live 行的相对误差 {err:.2e}，不 live 的行里有 {int((dead != 0).sum())} 个非零值",
            f"gathered_product: relative error {err:.2e} on the live rows, {int((dead != 0).sum())} nonzero cells "
            "in the rows that are not live",
            "4.2",
        )


@pytest.mark.t6_3
@pytest.mark.parametrize(
    "weights, by_slot", [(False, False), (True, False), (True, True)], ids=["plain", "weighted", "weighted by slot"]
)
def test_store_rows_alone(probes, weights, by_slot):
    """One tile's epilogue into a sentinel-filled output: rows 3..9 (an expert ending at row 10) and
    columns 16..27 of N=28, at the sorted row or at the slot, times weights[slot]."""
    bm, bn, n, begin, end, pid_n = 16, 16, 28, 3, 10, 1
    rows_out = 24
    slots = torch.randperm(rows_out).int().to(DEVICE)
    acc = torch.randn(bm, bn, device=DEVICE)
    w = torch.rand(rows_out, device=DEVICE)
    out = torch.full((rows_out, n), UNWRITTEN, dtype=torch.float16, device=DEVICE)
    probes.store_probe[(1,)](
        out, acc, w, slots, begin, end, pid_n, n, out.stride(0), out.stride(1), weights, by_slot, bm, bn
    )
    want = torch.full((rows_out, n), UNWRITTEN, dtype=torch.float64)
    live = torch.arange(begin, end)
    at = slots.cpu()[live].long() if by_slot else live
    cols = torch.arange(pid_n * bn, n)
    vals = acc.cpu().double()[: end - begin, : len(cols)]
    if weights:
        vals = vals * w.cpu().double()[slots.cpu()[live].long()][:, None]
    want[at[:, None], cols[None, :]] = vals.half().double()
    got = out.cpu().double()
    stray = ((got != UNWRITTEN) & (want == UNWRITTEN)).sum().item()
    unwritten = ((got == UNWRITTEN) & (want != UNWRITTEN)).sum().item()
    if stray or unwritten:
        fail(
            T6,
            f"store_rows：{stray} 个不该写的单元被写了（掩码要挡住 row_end={end} 及以后的行和 >= N 的列），"
            f"{unwritten} 个该写的单元没写",
            f"store_rows: {stray} cells written that must not be (the mask must stop rows at row_end={end} and "
            f"columns at N), {unwritten} cells that should be written were not",
            "4.3",
        )
    err = rel_err(got[want != UNWRITTEN], want[want != UNWRITTEN])
    if err > 2e-3:
        fail(
            T6,
            f"store_rows：写入的值相对误差 {err:.2e}" + ("（要乘上 weights[slot]）" if weights else ""),
            f"store_rows: the stored values are off by {err:.2e} (relative)"
            + (" (multiply by weights[slot])" if weights else ""),
            "4.3",
        )
    # Bit for bit: acc times the weight in float32, then one rounding to the output's dtype.
    once = acc.cpu()[: end - begin, : len(cols)]
    if weights:
        once = once * w.cpu()[slots.cpu()[live].long()][:, None]
    differ = (got[at[:, None], cols[None, :]] != once.half().double()).sum().item()
    if differ:
        fail(
            T6,
            f"store_rows：{differ} 个单元和\"acc 乘权重（float32 里），再舍入一次到 fp16\"不是逐位相同",
            f"store_rows: {differ} cells are not bit for bit acc times the weight (in float32), rounded once to fp16",
            "4.3",
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


def watched_call(t6, monkeypatch, case, section, x, w, r, weights=None, **kwargs):
    """grouped_matmul under watch_grouped: returns its result once the launch checks out."""
    watch = watch_grouped(t6, monkeypatch)
    out = t6.grouped_matmul(x, w, r, weights, **kwargs)
    monkeypatch.undo()
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
    if not same_memory(base, w):
        fail(
            T6,
            f"{case}：moe_kernel 的 w_desc 不是建在调用者的 w 上的（w 是连续的，不需要拷贝）",
            f"{case}: moe_kernel's w_desc does not describe the caller's w (a contiguous w needs no copy)",
            "4.2",
        )
    buffer, left = args["out_ptr"], grouped[0].left  # left: a copy taken as soon as moe_kernel ended
    if (left == UNWRITTEN).any():
        fail(
            T6,
            f"{case}：moe_kernel 结束后输出里还有 {int((left == UNWRITTEN).sum())} 个单元没写",
            f"{case}: {int((left == UNWRITTEN).sum())} cells of the output were not written by moe_kernel",
            "4.3",
        )
    if kwargs.get("combine"):
        check_combine_launch(watch, case, buffer, left, out)
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
            f"{case}: grouped_matmul changed {cells_changed(out, left)} cells of the output after moe_kernel wrote "
            "them: the result is what the launch stored",
            "4.3",
        )
    if not INTERPRETING and "fadd" in str(getattr(compiled, "asm", {}).get("ttir", "")):
        fail(T6, f"{case}：moe_kernel 里有浮点 atomic_add", f"{case}: moe_kernel holds a float atomic_add", "4.4")
    return out


def cells_changed(now, then):
    """How many cells of now differ from the copy then (a NaN in both counts as unchanged)."""
    return int((~((now == then) | (now.isnan() & then.isnan()))).sum())


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
            f"{case}: {cells_changed(buffer, left)} cells of the by-slot buffer changed after moe_kernel wrote them: "
            "combine_topk reads what the launch stored",
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
            f"{case}: grouped_matmul changed {cells_changed(out, combines[0].left)} cells of the result after "
            "combine_topk wrote them",
            "4.4",
        )


def graded_caller(t6, default):
    """The function of the graded file that made the call now refused: the nearest frame on the stack
    in that file with a name of its own (not a comprehension's); `default` where none is."""
    import os
    import sys

    graded = os.path.realpath(getattr(t6, "__file__", "") or "")
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if os.path.realpath(code.co_filename) == graded and not code.co_name.startswith("<"):
            return code.co_name
        frame = frame.f_back
    return default


MATMUL_CASES = [  # (kind, tokens, top_k, experts, K, N)
    ("balanced", 37, 2, 5, 40, 24),
    ("one expert", 20, 1, 4, 32, 40),
    ("empty experts", 29, 2, 6, 24, 32),
    ("skewed", 45, 2, 9, 40, 24),
    ("balanced", 1, 1, 3, 32, 16),
]


@pytest.mark.t6_3
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind, tokens, top_k, experts, K, N", MATMUL_CASES)
def test_grouped_matmul_in_sorted_order(t6, monkeypatch, dtype, kind, tokens, top_k, experts, K, N):
    ids = make_ids(kind, tokens, top_k, experts)
    # x is a view into NaN: its rows are K wide, its row pitch K + 24, so a read past column K of a
    # row (a K tail without its mask) brings NaN into the product.
    x = torch.full((tokens, K + 24), float("nan"), device=DEVICE, dtype=dtype)[:, :K]
    x.copy_(torch.randn(tokens, K, device=DEVICE).to(dtype))
    w = (torch.randn(experts, N, K, device=DEVICE) / K**0.5).to(dtype)
    r = t6.route(ids, experts)
    case = case_name(kind, tokens, top_k, experts) + f", K={K}, N={N}, {dtype}, x a view with row pitch K + 24"
    want = reference(x, w, ids)
    grouped = None
    if DEVICE == "cpu" or dtype == torch.bfloat16:
        gathered = x[(r.sorted_slots.long() // top_k)]
        grouped = torch._grouped_mm(gathered, w.transpose(-2, -1), offs=r.offsets).double().cpu()
    before = x.clone(), w.clone()
    out = watched_call(t6, monkeypatch, case, "4", x, w, r)
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
        fail(
            T6,
            f"{case}：和 float64 的结果差 {err:.2e}（相对），超过 {OUT_RTOL[dtype]:.0e}；"
            f"差得最多的是排好序的第 {bad} 行",
            f"{case}: off from float64 by {err:.2e} (relative), over {OUT_RTOL[dtype]:.0e}; the worst is sorted "
            f"row {bad}",
            "4",
        )
    if grouped is not None and rel_err(out, grouped) > OUT_RTOL[dtype]:
        fail(
            T6,
            f"{case}：和 torch._grouped_mm 差 {rel_err(out, grouped):.2e}（相对）",
            f"{case}: off from torch._grouped_mm by {rel_err(out, grouped):.2e} (relative)",
            "4",
        )
    if not (torch.equal(x, before[0]) and torch.equal(w, before[1])):
        fail(
            T6,
            f"{case}：grouped_matmul 改动了调用者的 x 或 w",
            f"{case}: grouped_matmul changed the caller's x or w",
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
def test_each_tile_reads_its_own_expert_alone(t6, monkeypatch):
    """One launch, each access watched on the interpreter (tests/bounds.py): moe_kernel stays inside
    its tensors, and each tile reads its own expert's weight rows alone, the BLOCK_N rows at
    expert * N + pid_n * BLOCK_N of w.view(E*N, K) (§4.2).  Numbers cannot show a tile that also
    reads other experts' weights and masks their products away: it reads E times the bytes.  The
    routing's offsets follow poison, so a read before them shows on a GPU too."""
    import dataclasses

    from support import spans

    tokens, top_k, experts, K, N = 30, 2, 5, 40, 40  # N > BLOCK_N: no expert's box reaches another's
    cfg = t6.Config(16, 32, 32, 2, 4, 1)
    ids = make_ids("skewed", tokens, top_k, experts)  # expert 0 has the most rows
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = (torch.randn(experts, N, K, device=DEVICE) / K**0.5).half()
    r = t6.route(ids, experts)
    r = dataclasses.replace(r, offsets=offsets_after_poison(r.offsets))
    tiles = (triton.cdiv(tokens * top_k, cfg.BLOCK_M) + experts) * triton.cdiv(N, cfg.BLOCK_N)
    trace = torch.zeros(tiles * TRACE_INTS, dtype=torch.int32, device=DEVICE)
    case = say(
        zh=f"偏斜的路由，{tokens} 个 token，top_k={top_k}，{experts} 个专家，K={K}，N={N}，BLOCK_N={cfg.BLOCK_N}",
        en=f"skewed routing, {tokens} tokens, top_k={top_k}, {experts} experts, K={K}, N={N}, BLOCK_N={cfg.BLOCK_N}",
    )
    accesses = Accesses()
    watch = AddressWatch(t6, monkeypatch, ("moe_kernel",), seen=accesses)
    out = watched_call(t6, monkeypatch, case, "4", x, w, r, config=cfg, trace=trace)
    check_inside(watch, accesses, r.offsets, case, "moe_kernel", "3.2")
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
    err = rel_err(out, reference(x, w, ids))
    if err > OUT_RTOL[torch.float16]:
        fail(
            T6,
            f"{case}：和 float64 的结果差 {err:.2e}（相对）",
            f"{case}: off from float64 by {err:.2e} (relative)",
            "4",
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
    out = torch.full((tokens, N), UNWRITTEN, device=DEVICE, dtype=dtype)
    t6.combine_topk[(tokens, triton.cdiv(N, block_n))](by_slot, out, N, top_k, block_n)
    want = torch.zeros(tokens, N, device=DEVICE)
    for j in range(top_k):
        want = want + by_slot[j::top_k]
    want = want.to(dtype)
    differ = out != want
    if differ.any():
        t, n = (int(v) for v in differ.nonzero()[0])
        fail(
            T6,
            f"combine_topk，{dtype}：{int(differ.sum())} 个单元和"
            f"\"float32 里按 j = 0..{top_k - 1} 依次相加、最后舍入一次\"不是逐位相同；"
            f"例如 token {t} 第 {n} 列：{out[t, n].item()!r}，应为 {want[t, n].item()!r}",
            f"combine_topk, {dtype}: {int(differ.sum())} cells are not bit for bit the float32 sum in the order "
            f"j = 0..{top_k - 1}, rounded once; token {t}, column {n}, for one: {out[t, n].item()!r}, expected "
            f"{want[t, n].item()!r}",
            "4.4",
        )


@pytest.mark.t6_3
@pytest.mark.parametrize("combine", [False, True], ids=["sorted", "combined"])
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
    out = watched_call(t6, monkeypatch, case, "4.3", x, w, r, weights, combine=combine)
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
        unweighted = reference(x, w, ids, None, combine=combine)
        fail(
            T6,
            f"{case}：和 float64 的结果差 {err:.2e}（相对）"
            + ("：结果没有乘路由权重" if rel_err(out, unweighted) < OUT_RTOL[torch.float16] else ""),
            f"{case}: off from float64 by {err:.2e} (relative)"
            + (": the routing weights were not applied" if rel_err(out, unweighted) < OUT_RTOL[torch.float16] else ""),
            "4.4" if combine else "4.3",
        )
    # Nothing of the caller's is changed, a NaN included (an in-place nan_to_num_ or clamp_ of the
    # weights changes nothing else): the weights as they were, bit for bit, after the call.
    weights[5, 1] = float("nan")
    before = weights.clone()
    watched_call(t6, monkeypatch, case, "4.3", x, w, r, weights, combine=combine)
    if not torch.equal(weights.view(torch.int32), before.view(torch.int32)):
        changed = int((weights.view(torch.int32) != before.view(torch.int32)).sum())
        fail(
            T6,
            f"{case}，其中一个权重是 NaN：grouped_matmul 改动了调用者的 topk_weights（{changed} 个单元）",
            f"{case}, one weight NaN: grouped_matmul changed {changed} cell{'s' * (changed != 1)} of the "
            "caller's topk_weights",
            "4",
        )


@pytest.mark.t6_3
def test_combine_is_deterministic_without_float_atomics(t6, monkeypatch):
    """The same call twice gives the same bits, and (on the CPU, where the interpreter runs the
    programs one by one and any order of adds would repeat) no float atomic ran."""
    tokens, top_k, experts, K, N = 24, 2, 4, 32, 24
    ids = make_ids("balanced", tokens, top_k, experts)
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = torch.randn(experts, N, K, device=DEVICE).half()
    weights = torch.rand(tokens, top_k, device=DEVICE)
    r = t6.route(ids, experts)
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
    first = t6.grouped_matmul(x, w, r, weights, combine=True)
    monkeypatch.undo()
    again = t6.grouped_matmul(x, w, r, weights, combine=True)
    if float_atomics:
        fail(
            T6,
            f"combine 里用了 {len(float_atomics)} 次浮点 atomic_add（{float_atomics[0]}）：它们相加的顺序每次不同，"
            "结果的位也就不同；先按 slot 写出每一行，再按 j 的顺序加起来",
            f"the combine used {len(float_atomics)} float atomic adds ({float_atomics[0]}): their order varies "
            "from run to run, and so do the bits; write each row at its slot, then add them in j order",
            "4.4",
        )
    if not torch.equal(first, again):
        fail(
            T6,
            f"同一个调用跑两次，结果有 {int((first != again).sum())} 个单元的位不一样",
            f"the same call run twice gave {int((first != again).sum())} cells with other bits",
            "4.4",
        )


@pytest.mark.t6_3
@pytest.mark.skipif(not INTERPRETING, reason="program orders are chosen through the interpreter")
def test_expert_ends_hold_in_any_program_order(t6):
    """Experts ending inside a tile, the programs run in reverse: a tile that writes past its
    expert's last row then overwrites the next expert's rows after they were done."""
    from course.interpreter_order import programs_run

    counts = [5, 11, 3, 9]
    ids = torch.cat([torch.full((c,), e) for e, c in enumerate(counts)])[torch.randperm(sum(counts))]
    ids = ids.view(-1, 1).to(DEVICE)
    x = torch.randn(len(ids), 32, device=DEVICE).half()
    w = torch.randn(len(counts), 32, 32, device=DEVICE).half()
    r = t6.route(ids, len(counts))
    cfg = t6.Config(16, 32, 32, 1, 4, 1)
    for order in ([2, 1, 0], [1, 2, 0]):
        with programs_run(order):
            out = t6.grouped_matmul(x, w, r, config=cfg, num_programs=3)
        err = rel_err(out, reference(x, w, ids))
        if err > OUT_RTOL[torch.float16]:
            fail(
                T6,
                f"每个专家的行数 {counts}，BLOCK_M=16，程序按 {order} 的顺序运行：结果差 {err:.2e}（相对）",
                f"rows per expert {counts}, BLOCK_M=16, programs run in order {order}: off by {err:.2e} (relative)",
                "4.3",
            )


# What turns a tensor's value into a Python one: on a GPU each waits for the device (a host sync).
VALUE_READS = {"item", "tolist", "numpy", "__array__", "__bool__", "__int__", "__float__", "__index__", "equal"}
VALUE_READS |= {"allclose", "__format__", "__repr__", "__str__"}


def host_reads(t6):
    """A torch function mode recording (what, function, line) for each read of a tensor's value made
    by the graded file itself (not by torch, Triton's interpreter or the tests): on the CPU nothing
    syncs, so this is how a read that a CUDA graph would refuse shows there."""
    import os
    import sys

    from torch.overrides import TorchFunctionMode

    graded = os.path.realpath(getattr(t6, "__file__", "") or "")

    class HostReads(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.reads = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name in VALUE_READS:
                frame = sys._getframe(1)
                while frame is not None and f"{os.sep}torch{os.sep}" in frame.f_code.co_filename:
                    frame = frame.f_back
                if frame is not None and os.path.realpath(frame.f_code.co_filename) == graded:
                    line, function = frame.f_lineno, frame
                    while function.f_code.co_name.startswith("<") and function.f_back is not None:
                        function = function.f_back  # a comprehension's frame: name the function it is in
                    self.reads.append((name, function.f_code.co_name, line))
            return func(*args, **(kwargs or {}))

    return HostReads()


def check_no_host_reads(reads, case, who, section):
    if reads:
        what, function, line = reads[0]
        fail(
            T6,
            f"{case}：{who} 在主机上读了张量的值 {len(reads)} 次，第一次是 {function}（第 {line} 行）里的 {what}："
            "在 GPU 上每次都要等设备算完，CUDA graph 也捕获不了",
            f"{case}: {who} read tensor values back to the host {len(reads)} time{'s' * (len(reads) != 1)}, "
            f"first {what} in {function} (line {line}): on a GPU each waits for the device, and a CUDA graph "
            "cannot capture it",
            section,
        )


@pytest.mark.t6_1
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU, test_routing_and_launch_under_a_cuda_graph checks this")
def test_route_without_check_ids_reads_nothing_back(t6):
    """§2.3: with check_ids=False, route looks at no value of the ids (nor of anything it computes)."""
    ids = make_ids("skewed", 40, 2, 6)
    with host_reads(t6) as mode:
        t6.route(ids, 6, check_ids=False)
    check_no_host_reads(
        mode.reads, say(zh="40 个 token，6 个专家", en="40 tokens, 6 experts"), "route(check_ids=False)", "2.3"
    )


@pytest.mark.t6_3
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU, test_routing_and_launch_under_a_cuda_graph checks this")
def test_grouped_matmul_reads_nothing_back(t6):
    """§3.4: with a Routing from route, grouped_matmul (checks, launch, combine) reads no value of a
    tensor on the host: the tile count stays on the device, and route's own routings skip
    check_offsets' look at the offsets."""
    tokens, top_k, experts, K, N = 40, 2, 6, 32, 24
    ids = make_ids("skewed", tokens, top_k, experts)
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = torch.randn(experts, N, K, device=DEVICE).half()
    weights = torch.rand(tokens, top_k, device=DEVICE)
    r = t6.route(ids, experts)
    with host_reads(t6) as mode:
        t6.grouped_matmul(x, w, r, weights, combine=True)
    case = say(
        zh=f"{tokens} 个 token，{experts} 个专家，route 给的 Routing",
        en=f"{tokens} tokens, {experts} experts, a Routing from route",
    )
    check_no_host_reads(mode.reads, case, "grouped_matmul(combine=True)", "3.4")


@pytest.mark.t6_3
@pytest.mark.skipif(INTERPRETING, reason="CUDA graphs need a GPU")
def test_routing_and_launch_under_a_cuda_graph(t6):
    """route (check_ids=False) and grouped_matmul with the combine, captured in one CUDA graph: a host
    sync anywhere (reading a count, the total of tiles, an offset) makes the capture fail.  Replayed
    on other ids, the graph gives what an eager call gives."""
    tokens, top_k, experts, K, N = 64, 2, 8, 64, 64
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = torch.randn(experts, N, K, device=DEVICE).half()
    weights = torch.rand(tokens, top_k, device=DEVICE)
    ids = make_ids("skewed", tokens, top_k, experts)
    t6.grouped_matmul(x, w, t6.route(ids, experts), weights, combine=True)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            y = t6.grouped_matmul(x, w, t6.route(ids, experts, check_ids=False), weights, combine=True)
    except Exception as e:  # noqa: BLE001 - any failure of the capture is what this reports
        fail(
            T6,
            f"route 加 grouped_matmul 没能被 CUDA graph 捕获（{type(e).__name__}: {str(e)[:200]}）："
            "调用里有和主机的同步，比如读了 counts、offsets 或 tile 总数的值",
            f"route and grouped_matmul could not be captured in a CUDA graph ({type(e).__name__}: "
            f"{str(e)[:200]}): the call syncs with the host somewhere, reading a count, an offset or the "
            "total of tiles, say",
            "3.4",
        )
    ids.copy_(make_ids("one expert", tokens, top_k, experts))
    graph.replay()
    want = t6.grouped_matmul(x, w, t6.route(ids, experts), weights, combine=True)
    if not torch.equal(y, want):
        fail(
            T6,
            f"CUDA graph 重放（新的路由）和直接调用的结果有 {int((y != want).sum())} 个单元不同",
            f"the CUDA graph replayed on new routing differs from an eager call in {int((y != want).sum())} cells",
            "3.4",
        )


def names_one_of(message, names):
    """Whether message names one of names as a word of its own: "w" in "w is 2-D", not in "two rows"."""
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) for name in names)


def bad_inputs(t6):
    """(what, call, the arguments the error may name, one at least[, keyword arguments]), each on a fresh
    small problem; a mismatch between x and w may name either (or, for two devices, the devices)."""
    x = torch.randn(6, 32, device=DEVICE).half()
    w = torch.randn(3, 16, 32, device=DEVICE).half()
    r = t6.route(torch.tensor([[0, 1], [2, 0], [1, 1], [0, 2], [2, 2], [1, 0]], device=DEVICE), 3)
    bad_offsets = t6.Routing(r.counts, r.offsets.flip(0).contiguous(), r.sorted_slots, r.slot_pos, 6, 2)
    short_offsets = t6.Routing(r.counts, r.offsets - 1, r.sorted_slots, r.slot_pos, 6, 2)
    return [
        ("x and w of two dtypes", (x, w.float(), r), ("x", "w")),
        ("w 2-D", (x, w[0], r), ("w",)),
        ("w's K differs from x's", (x, w[:, :, :16].contiguous(), r), ("x", "w")),
        ("w with 4 experts for a routing of 3", (x, torch.randn(4, 16, 32, device=DEVICE).half(), r), ("w", "routing")),
        ("x with 5 rows for 6 tokens", (x[:5], w, r), ("x",)),
        ("topk_weights [6, 3] for top_k 2", (x, w, r, torch.rand(6, 3, device=DEVICE)), ("topk_weights",)),
        ("offsets not monotone", (x, w, bad_offsets), ("offsets",)),
        ("offsets not ending at the rows", (x, w, short_offsets), ("offsets",)),
        ("x and w on two devices", (x, w.to("meta"), r), ("x", "w", "device", "devices")),
        ("x and w in float64", (x.double(), w.double(), r), ("x", "w")),
        ("w of 15 rows for swiglu ([gate; up]: 2F)", (x, w[:, :15].contiguous(), r), ("w",), {"activation": "swiglu"}),
        (
            "topk_weights [2, 6], transposed, for 6 tokens with top_k 2",
            (x, w, r, torch.rand(2, 6, device=DEVICE)),
            ("topk_weights",),
        ),
        # x_sorted: one row per slot, 12 here; the 6 rows sit in a buffer of 12, so a kernel let run reads x's own.
        (
            "x_sorted=True with x of 6 rows for 12 slots",
            (torch.randn(12, 32, device=DEVICE).half()[:6], w, r),
            ("x",),
            {"x_sorted": True},
        ),
    ]


@pytest.mark.t6_3
def test_grouped_matmul_refuses_bad_input(t6):
    for what, args, names, *named in bad_inputs(t6):
        name = " or ".join(names)
        before = [a.clone() if isinstance(a, torch.Tensor) and a.device.type != "meta" else None for a in args]
        try:
            t6.grouped_matmul(*args, **(named[0] if named else {}))
        except (ValueError, TypeError) as e:
            if not names_one_of(str(e), names):
                fail(
                    T6,
                    f"{what}：grouped_matmul 抛出了 {type(e).__name__}，但信息没有说出 {name}：{e}",
                    f"{what}: grouped_matmul raised {type(e).__name__}, but its message does not name {name}: {e}",
                    "4",
                )
        else:
            fail(
                T6,
                f"{what}：grouped_matmul 应当抛出 ValueError（或 TypeError）并说出 {name}，却什么也没抛",
                f"{what}: grouped_matmul should raise a ValueError (or TypeError) naming {name}, and raised nothing",
                "4",
            )
        for a, b in zip(args, before, strict=True):
            if b is not None and not torch.equal(a, b):
                fail(
                    T6,
                    f"{what}：grouped_matmul 改动了调用者的参数",
                    f"{what}: grouped_matmul changed a caller's argument",
                    "4",
                )


@pytest.mark.t6_3
@pytest.mark.parametrize("combine", [False, True], ids=["sorted", "combined"])
def test_grouped_matmul_of_no_tokens(t6, combine):
    """0 tokens is valid input: an empty [0, N] result, not an error (each expert has 0 rows)."""
    empty = torch.empty(0, dtype=torch.int32, device=DEVICE)
    none = torch.zeros(3, dtype=torch.int32, device=DEVICE)
    r = t6.Routing(none, none.clone(), empty, empty.clone(), 0, 2)
    x = torch.empty((0, 32), device=DEVICE).half()
    w = torch.randn(3, 16, 32, device=DEVICE).half()
    weights = torch.empty((0, 2), device=DEVICE)
    case = say(
        zh=f"0 个 token，3 个专家，x 是 [0, 32]，combine={combine}",
        en=f"0 tokens, 3 experts, x [0, 32], combine={combine}",
    )
    out, error = raised_by(lambda: t6.grouped_matmul(x, w, r, weights, combine=combine))
    if error:
        fail(
            T6,
            f"{case}：这是合法的输入，grouped_matmul 却抛出了 {error}",
            f"{case}: valid input, yet grouped_matmul raised {error}",
            "4",
        )
    if tuple(out.shape) != (0, 16) or out.dtype != x.dtype:
        fail(
            T6,
            f"{case}：结果应当是 {x.dtype} 的 [0, 16]，得到 {out.dtype} {tuple(out.shape)}",
            f"{case}: the result should be [0, 16] in {x.dtype}, got {out.dtype} {tuple(out.shape)}",
            "4",
        )


# ================================================================================================
# T6.4 (advanced) the expert MLP in two launches
# ================================================================================================
@pytest.mark.t6_4
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gate_up_with_swiglu(t6, monkeypatch, dtype):
    tokens, top_k, experts, K, F = 21, 2, 5, 32, 24  # F not a multiple of BLOCK_N: gate boxes reach up's rows
    ids = make_ids("skewed", tokens, top_k, experts)
    x = torch.randn(K, tokens, device=DEVICE).to(dtype).t()  # a transposed view: x's stride along K is T
    w = (torch.randn(experts, 2 * F, K, device=DEVICE) / K**0.5).to(dtype)
    r = t6.route(ids, experts)
    case = say(zh=f"gate/up，F={F}，{dtype}，x 是列主序的视图", en=f"gate/up, F={F}, {dtype}, x a column-major view")
    out = watched_call(t6, monkeypatch, case, "5.1", x, w, r, activation="swiglu")
    want = reference(x, w, ids, activation="swiglu")
    err = rel_err(out, want) if out.shape == want.shape else float("inf")
    if err > OUT_RTOL[dtype]:
        fail(
            T6,
            f"{case}：结果应当是 [{tokens * top_k}, {F}] 的 silu(gate) * up，和 float64 差 {err:.2e}（相对）",
            f"{case}: the result should be silu(gate) * up, [{tokens * top_k}, {F}]; off from float64 by {err:.2e} "
            "(relative)",
            "5.1",
        )


@pytest.mark.t6_4
def test_gate_up_product_alone(probes, monkeypatch):
    """gate_up_product on one tile, fp16 inputs over K = 512 (eight k-boxes): gate and up are sums
    of exact fp16 products, so summed in float32 they sit within 1e-5 of float64 (§5.1), where the
    whole layer's test, after the rounding to fp16, cannot tell a sum kept in fp16 from one in float32.
    On the interpreter each read is watched too: each element of x's live rows is read once, for both."""
    bm, bn, bk, K, F = 16, 16, 64, 512, 32
    x = torch.randn(20, K, device=DEVICE).half()
    w2d = torch.randn(3 * 2 * F, K, device=DEVICE).half()  # three experts' [gate; up] rows
    x_rows = torch.full((bm,), -1, dtype=torch.int32)
    x_rows[:11] = torch.randint(0, 20, (11,), dtype=torch.int32)  # 11 live rows, the rest not
    gate_row, up_row = 2 * F + bn, 2 * F + F + bn  # expert 1, pid_n = 1
    gate = torch.full((bm, bn), UNWRITTEN, device=DEVICE)
    up = torch.full((bm, bn), UNWRITTEN, device=DEVICE)
    accesses = Accesses()
    AddressWatch(probes, monkeypatch, ("gate_up_probe",), seen=accesses)
    probes.gate_up_probe[(1,)](
        x,
        descriptor(w2d, [bn, bk]),
        x_rows.to(DEVICE),
        gate,
        up,
        gate_row,
        up_row,
        K,
        x.stride(0),
        x.stride(1),
        bm,
        bn,
        bk,
    )
    live = x_rows >= 0
    a = x.cpu().double()[x_rows[live].long()]
    errs = {}
    for name, got, row in (("gate", gate, gate_row), ("up", up, up_row)):
        got = got.cpu()
        want = a @ w2d.cpu().double()[row : row + bn].T
        errs[name] = (rel_err(got[live], want), int((got[~live] != 0).sum()))
    if any(err > 1e-5 or dead for err, dead in errs.values()):
        (eg, dg), (eu, du) = errs["gate"], errs["up"]
        fail(
            T6,
            f"gate_up_product，fp16 输入，K={K}：live 行上 gate 和 float64 差 {eg:.2e}，up 差 {eu:.2e}（相对），"
            "超过 1e-5（fp16 的乘积在 float32 里相加，误差在它之内）"
            + (f"；不 live 的行里 gate 有 {dg} 个、up 有 {du} 个非零值" if dg + du else ""),
            f"gate_up_product, fp16 inputs, K={K}: on the live rows gate is off from float64 by {eg:.2e} and up by "
            f"{eu:.2e} (relative), over 1e-5 (fp16 products summed in float32 stay within it)"
            + (f"; the rows not live hold {dg} nonzero cells of gate and {du} of up" if dg + du else ""),
            "5.1",
        )
    first, end = x.data_ptr(), x.data_ptr() + x.numel() * x.element_size()
    x_reads = sum(
        int(((addresses >= first) & (addresses < end) & inside).sum())
        for what, addresses, inside in accesses.log
        if what == "read"
    )
    rows = int(live.sum())
    needed = rows * K
    if x_reads > needed:
        fail(
            T6,
            f"gate_up_product 从 x 读了 {x_reads} 个元素，而它要的只是 live 的 {rows} 行 × K={K} = {needed} 个"
            f"（{x_reads / needed:.1f} 倍）：每个 A 的块只读一次，gate 和 up 都用它",
            f"gate_up_product read {x_reads} elements of x, where the {rows} live rows x K={K} = {needed} are all "
            f"it needs ({x_reads / needed:.1f} times): load each A box once and use it for both gate and up",
            "5.1",
        )


@pytest.mark.t6_4
def test_moe_mlp_in_two_launches(t6, monkeypatch):
    tokens, top_k, experts, K, F = 19, 2, 4, 32, 16
    ids = make_ids("balanced", tokens, top_k, experts)
    x = torch.randn(tokens, K, device=DEVICE).half()
    w_gate_up = (torch.randn(experts, 2 * F, K, device=DEVICE) / K**0.5).half()
    w_down = (torch.randn(experts, K, F, device=DEVICE) / F**0.5).half()
    weights = torch.rand(tokens, top_k, device=DEVICE)
    given = {"x": x, "w_gate_up": w_gate_up, "w_down": w_down, "topk_ids": ids, "topk_weights": weights}
    before = {name: t.clone() for name, t in given.items()}
    watch = watch_grouped(t6, monkeypatch)
    y = t6.moe_mlp(x, w_gate_up, w_down, ids, weights)
    monkeypatch.undo()
    changed = [name for name, t in given.items() if not torch.equal(t, before[name])]
    if changed:
        fail(
            T6,
            f"moe_mlp 改动了调用者的 {'、'.join(changed)}",
            f"moe_mlp changed the caller's {', '.join(changed)}",
            "5.2",
        )
    launched = watch.of("moe_kernel")
    kinds = [(launch.args.get("ACTIVATION"), bool(launch.args.get("BY_SLOT"))) for launch in launched]
    if kinds != [("swiglu", False), ("none", True)]:
        fail(
            T6,
            f"moe_mlp 应当启动 moe_kernel 两次：先 gate/up（ACTIVATION=swiglu），再 down（按 slot 写出、合并），"
            f"得到 {kinds}",
            f"moe_mlp should launch moe_kernel twice: gate/up (ACTIVATION=swiglu), then down (written by slot and "
            f"combined), got {kinds}",
            "5",
        )
    # Which launch scaled by the weights: scaling h (after SwiGLU, or `up` alone) gives the same
    # numbers, so only the launches can tell.  §5.2 asks for h unweighted, the weights in down's epilogue.
    weighted = [bool(launch.args.get("HAS_WEIGHTS")) for launch in launched]
    if weighted != [False, True]:
        said = [
            (
                "gate/up 那次启动收到了路由权重（HAS_WEIGHTS=True）",
                "the gate/up launch got the routing weights (HAS_WEIGHTS=True)",
            )
        ] * weighted[0] + [
            (
                "down 那次启动没有收到路由权重（HAS_WEIGHTS=False）",
                "the down launch got no routing weights (HAS_WEIGHTS=False)",
            )
        ] * (not weighted[1])
        fail(
            T6,
            "moe_mlp：路由权重只在 down 那次启动的 epilogue 里乘，h 不乘权重；" + "，".join(zh for zh, _ in said),
            "moe_mlp: the routing weights go to the down launch alone, applied in its epilogue, and h stays "
            "unweighted; " + ", ".join(en for _, en in said),
            "5.2",
        )
    hidden = reference(x, w_gate_up, ids, activation="swiglu", combine=False)
    flat = ids.reshape(-1).cpu()
    by_slot = torch.empty_like(hidden)
    by_slot[torch.sort(flat, stable=True).indices] = hidden
    want = torch.zeros(tokens, K, dtype=torch.float64)
    for s in range(tokens * top_k):
        want[s // top_k] += weights.reshape(-1)[s].double().cpu() * (w_down[flat[s]].double().cpu() @ by_slot[s])
    err = rel_err(y, want) if y.shape == want.shape else float("inf")
    if err > 4e-3:
        fail(
            T6,
            f"moe_mlp：和 float64 的结果差 {err:.2e}（相对）",
            f"moe_mlp: off from float64 by {err:.2e} (relative)",
            "5.2",
        )
