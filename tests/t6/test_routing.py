"""T6.1: routing as a counting sort: a stable sort of the expert ids over many distributions, in any program order."""

import pytest
import torch

from course import seam
from course.i18n import cells, count, say
from course.interpreter_order import atomic_lanes_last_first
from course.messages import fail

from .accesses import Accesses
from .block_counts import check_block_counts
from .common import (
    ROUTE_BLOCK,
    ROUTING_WORDS,
    T6,
    case_name,
    fail_if_raised,
    make_ids,
    raised_by,
    raised_in,
    same_memory,
)
from .routings import ROUTE_KERNELS, check_counts_and_offsets, check_routing, counts_in_range, places_found, route_watch
from .stray import routing_inputs_left_to_the_test
from bounds import near_words, place
from support import INTERPRETING, LaunchWatch

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


ROUTE_CASES = [  # (kind, tokens, top_k, experts)
    ("balanced", 37, 2, 5),
    ("one expert", 20, 1, 4),
    ("empty experts", 29, 2, 6),
    ("skewed", 150, 2, 9),  # 300 slots: three routing blocks of 128
    ("balanced", 1, 1, 3),  # one row
    ("balanced", 5, 3, 3),  # top_k = E: every token on every expert
    ("skewed", 70, 4, 16),
    ("skewed", 1100, 2, 9),  # 2200 slots: 18 routing blocks, more than one batch of SCAN_ROWS = 16
]


# Where each of the Routing's tensors comes from: (the kernel that writes it, its argument there).
WRITTEN_BY = {
    "counts": ("scan_counts", "counts_ptr"),
    "offsets": ("scan_counts", "offsets_ptr"),
    "sorted_slots": ("scatter_slots", "sorted_slots_ptr"),
    "slot_pos": ("scatter_slots", "slot_pos_ptr"),
}


def tail_of_slot_pos(accesses, r, slots):
    """Whether every write outside the tensors (at least one) fell in the cells past slot_pos's end
    that slot_pos[slot] of the last block's lanes past the last slot (slot >= slots) would take."""
    writes = [a[~inside] for what, a, inside in accesses.log if what == "write"]
    writes = [a for a in writes if a.size]
    size = r.slot_pos.element_size()
    end = r.slot_pos.data_ptr() + slots * size
    stop = r.slot_pos.data_ptr() + -(-slots // ROUTE_BLOCK) * ROUTE_BLOCK * size
    return bool(writes) and all(((a >= end) & (a < stop)).all() for a in writes)


def report_outside(addresses, r, ids, experts, case, accesses=None, block_counts=None, block_base=None):
    """Fail, naming the kernel and the line, where one of route's kernels read or wrote outside its
    tensors (the AddressWatch stopped those lanes: made, they would write over whatever memory lies
    there, or crash the run).  Where scatter_slots alone did, its places come from counts and offsets:
    those first (with block_counts, scan_counts' input as the launch got it, what it tells of them);
    then the places it wrote into slot_pos (with block_base as scan_counts left it), and (accesses, an
    Accesses it recorded into) a write past slot_pos's end by the lanes past the last slot."""
    found, section = None, "2.1"
    if set(addresses.outside) == {"scatter_slots"}:
        if block_counts is not None:
            check_block_counts(block_counts, r, ids, experts, case, block_base)
        check_counts_and_offsets(r, ids, experts, case)
        found = places_found(r, ids, experts, block_base)
        if found is None and accesses is not None and tail_of_slot_pos(accesses, r, ids.numel()):
            found = (
                "这些都落在 slot_pos 末尾之后、最后一块里越过最后一个 slot 的那些 lane（slot >= num_slots）"
                "的 slot_pos[slot] 上：每个存储都要用掩码挡掉这些 lane",
                "each of them past slot_pos's end, at slot_pos[slot] of the last block's lanes past the last slot "
                "(slot >= num_slots): every store masks those lanes off",
            )
            section = "2.3"
    for kernel, lanes in addresses.outside.items():
        kinds = [w for w, f in addresses.strays.first.items() if f and f[-1].name == kernel]
        frames = [addresses.strays.first[w][-1] for w in kinds]
        at_zh, at_en = (f"，第一个在 {place(frames[0])}", f", first at {place(frames[0])}") if frames else ("", "")
        near_zh, near_en = near_words(addresses.strays.near.get(kinds[0])) if kinds and not found else ("", "")
        fail(
            T6,
            f"{case}：{kernel} 读了 {lanes['read']} 个、写了 {lanes['write']} 个不属于它拿到的任何张量的单元{at_zh}"
            "（这里拦下了，没有真的读写）" + (f"；{found[0]}" if found else "") + (f"；{near_zh}" if near_zh else ""),
            f"{case}: {kernel} read {lanes['read']} and wrote {cells(lanes['write'])} outside every tensor it was "
            f"given{at_en} (stopped here, not made)"
            + (f"; {found[1]}" if found else "")
            + (f"; {near_en}" if near_en else ""),
            section,
        )


def lanes_by_kernel(stores):
    """(zh, en) words for {kernel: lanes} of the stores that fell in a tensor: 'scatter_slots (74 lanes)'."""
    return (
        "、".join(f"{k}（{n} 个 lane）" for k, n in stores.items()),
        ", ".join(f"{k} ({count(n, 'lane')})" for k, n in stores.items()),
    )


def ids_kept(r, ids, before, experts, case, accesses):
    """Fail where route changed the caller's topk_ids, which it only reads (a store of its kernels
    that lands there changes what every later check would compare against): counts and offsets first,
    against the ids as they were; then the change, naming the kernels whose stores fell in it."""
    if torch.equal(ids, before):
        return
    check_counts_and_offsets(r, before, experts, case)
    changed = int((ids != before).sum())
    stores = accesses.writes_into(ids) if ids.device.type == "cpu" else {}
    by_zh, by_en = lanes_by_kernel(stores)
    fail(
        T6,
        f"{case}：route 改动了调用者的 topk_ids（{changed} 个专家号变了），它只应该读 topk_ids"
        + (f"：存进去的是 {by_zh}的存储；每个 kernel 只往自己的输出里存" if stores else ""),
        f"{case}: route changed {count(changed, 'id')} of the caller's topk_ids, which it only reads"
        + (f": the stores of {by_en} fell in it; each kernel stores only into its own outputs" if stores else ""),
        "2.3",
    )


def stores_kept(r, ids, experts, case, accesses):
    """Fail where counts or offsets hold other values than the ids give and stores of a kernel other
    than scan_counts fell in them (scatter_slots gets both, to read): named, with what it left there."""
    for name, want in zip(("counts", "offsets"), counts_in_range(ids, experts), strict=True):
        got, owner = getattr(r, name), WRITTEN_BY[name][0]
        foreign = {k: n for k, n in accesses.writes_into(got).items() if k != owner}
        if not foreign or torch.equal(got.cpu(), want):
            continue
        by_zh, by_en = lanes_by_kernel(foreign)
        fail(
            T6,
            f"{case}：{by_zh}的存储落进了 {name}，而 {name} 只该由 {owner} 写：{name} 应当是 "
            f"{want.tolist()}，得到 {got.cpu().tolist()}；每个 kernel 只往自己的输出里存",
            f"{case}: the stores of {by_en} fell in {name}, which {owner} alone writes: {name} should be "
            f"{want.tolist()}, got {got.cpu().tolist()}; each kernel stores only into its own outputs",
            "2.3",
        )


def guarded_route(t6, monkeypatch, ids, experts, case, **options):
    """route with its kernels' addresses watched on the interpreter (report_outside), and the
    caller's ids kept (ids_kept)."""
    accesses, before = Accesses(), ids.clone()
    with monkeypatch.context() as patch, routing_inputs_left_to_the_test():
        addresses = route_watch(t6, patch, accesses)
        r = t6.route(ids, experts, **options)
    report_outside(addresses, r, before, experts, case, accesses)
    ids_kept(r, ids, before, experts, case, accesses)
    stores_kept(r, before, experts, case, accesses)
    return r


def check_not_written(t6, ids, experts):
    """Whether check_routing_inputs is still the stub (its own `raise NotImplementedError` on valid ids): the
    learner starts T6.1 with the kernels of §2.1, and test_route_refuses_bad_input grades the check (§2.3)."""
    try:
        t6.check_routing_inputs(ids, experts, False)
    except NotImplementedError as e:
        return seam.stub_message(e) is not None
    except Exception:  # noqa: BLE001 - the check written, and wrong on valid ids: route tells it below
        return False
    return False


def watched_route(t6, monkeypatch, ids, experts, case):
    """(the Routing, block_base as scan_counts left it): route under a LaunchWatch on its three
    kernels: the Routing must be what they wrote, in one launch each (§2.3).  Numbers cannot tell the
    kernels from a stable sort on the host.  On the interpreter their addresses are watched too: a
    place computed wrong (past sorted_slots, say) is reported and stopped, where it would write over
    whatever memory lies there."""
    accesses, before = Accesses(), ids.clone()
    if check_not_written(t6, ids, experts):  # §2.1's kernels come first: they are what this test grades
        monkeypatch.setattr(t6, "check_routing_inputs", lambda *args, **kwargs: None)
    addresses = route_watch(t6, monkeypatch, accesses)
    watch = LaunchWatch(
        t6, monkeypatch, dict.fromkeys(ROUTE_KERNELS, True), wrapper="route", out=None, shared_names=False
    )
    with routing_inputs_left_to_the_test():  # ids_kept and stores_kept below name what changed them
        r, error = raised_by(lambda: t6.route(ids, experts))  # told as a failure: the ids are valid input
    monkeypatch.undo()
    fail_if_raised(case, "route", error, "2.3")
    scanned = [launch.args for launch in watch.launches if launch.name == "scan_counts"]
    block_counts = scanned[0].get("block_counts_ptr") if scanned else None  # scan_counts' input, as launched
    block_base = scanned[0].get("block_base_ptr") if scanned else None  # and its other output, as it left it
    report_outside(addresses, r, before, experts, case, accesses, block_counts, block_base)
    ids_kept(r, ids, before, experts, case, accesses)
    stores_kept(r, before, experts, case, accesses)
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
    scan = args["scan_counts"]
    check_block_counts(scan.get("block_counts_ptr"), r, ids, experts, case, scan.get("block_base_ptr"))
    return r, args["scan_counts"].get("block_base_ptr")


@pytest.mark.t6_1
@pytest.mark.parametrize("kind, tokens, top_k, experts", ROUTE_CASES)
@pytest.mark.case_words(**ROUTING_WORDS)
def test_route_is_a_stable_counting_sort(t6, monkeypatch, kind, tokens, top_k, experts):
    ids = make_ids(kind, tokens, top_k, experts)
    case = case_name(kind, tokens, top_k, experts)
    r, block_base = watched_route(t6, monkeypatch, ids, experts, case)  # the caller's ids kept, too
    check_routing(r, ids, experts, case, block_base)
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
def test_route_takes_int32_ids_and_repeats_its_bits(t6, monkeypatch):
    ids = make_ids("skewed", 90, 3, 7)
    case = say(zh="int32 的 topk_ids", en="int32 topk_ids")
    first = guarded_route(t6, monkeypatch, ids.int(), 7, case)
    check_routing(first, ids, 7, case)
    again = guarded_route(t6, monkeypatch, ids, 7, say(zh="int64 的 topk_ids", en="int64 topk_ids"))
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
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16], ids=str)
def test_route_takes_narrower_integer_ids(t6, monkeypatch, dtype):
    """§2.3 refuses topk_ids that is not an integer tensor; int8, uint8 and int16 are integer
    tensors (a router with few experts may keep its ids so), to be routed as their int64 values are."""
    ids = make_ids("skewed", 90, 3, 7)
    narrow = ids.to(dtype)
    before = narrow.clone()
    name = str(dtype).replace("torch.", "")
    case = say(zh=f"{name} 的 topk_ids", en=f"{name} topk_ids")
    refused = []  # whether the error came from check_routing_inputs: a refusal, not a kernel's error

    def routed():
        try:
            return guarded_route(t6, monkeypatch, narrow, 7, case)
        except Exception as e:
            refused.append(raised_in(e, t6, "check_routing_inputs"))
            raise

    r, error = raised_by(routed)
    if error and not refused[0]:
        fail(
            T6,
            f"{case}：route 抛出了 {error}，不是在 check_routing_inputs 里，而是在更里面（比如一个 kernel）："
            f"{name} 也是整数张量，是合法的输入，路由的 kernel 会原样读进 {name} 的专家号",
            f"{case}: route raised {error}, not in check_routing_inputs but further in (a kernel, say): {name} is "
            f"an integer tensor too, valid input, and the routing kernels load its ids as {name}",
            "2.3",
        )
    if error:
        fail(
            T6,
            f"{case}：route 抛出了 {error}；{name} 也是整数张量，是合法的输入：拒绝浮点和 bool 的 topk_ids，"
            "不要拒绝更窄的整数类型，按它们的值路由",
            f"{case}: route raised {error}; {name} is an integer tensor too, valid input: refuse float and bool "
            "topk_ids, not narrower integer types, and route them by their values",
            "2.3",
        )
    check_routing(r, ids, 7, case)
    if not torch.equal(narrow, before):
        fail(T6, f"{case}：route 改动了调用者的 topk_ids", f"{case}: route changed the caller's topk_ids", "2.3")


@pytest.mark.t6_1
@pytest.mark.skipif(not INTERPRETING, reason="program orders are chosen through the interpreter")
def test_route_in_any_program_order(t6, monkeypatch):
    """The interpreter runs programs in id order; here the blocks run in other orders too, so a
    scatter that hands out places first come, first served shows: right in id order, other bits in
    another.  The id-order run's record also shows an atomic on cells a plain store of the same launch
    wrote with nothing ordering the two (course/interpreter_races.py): right on the CPU, a race on a GPU."""
    from course.interpreter_order import orders, programs_run
    from course.interpreter_races import unordered_writes

    ids = make_ids("skewed", 200, 2, 5)  # 400 slots: four blocks
    case = say(zh="路由的各个程序按 id 顺序运行", en="the routing programs run in id order")
    with monkeypatch.context() as patch:
        raced = unordered_writes(patch)
        in_id_order = guarded_route(t6, monkeypatch, ids, 5, case)
    check_routing(in_id_order, ids, 5, case)
    for kernel, p, by, lanes in sorted(raced, key=lambda w: w.stored_by == w.program)[:1]:  # another program's first
        if by != p:
            fail(
                T6,
                f"{kernel} 的程序 {p} 的 atomic 有 {lanes} 个 lane 加到了同一次启动里程序 {by} "
                "用普通 store 写过的单元上：同一次启动的两个程序之间没有先后（没有跨程序的屏障），GPU 上这些 atomic "
                "可以先落地，再被那次 store 抹掉；解释器按 id 顺序一个一个地跑程序，所以这里结果碰巧是对的。"
                "每个程序只写自己那一行",
                f"{kernel}'s program {p} added with {lanes} lanes of an atomic into cells that program {by} of "
                "the same launch wrote with a plain store: nothing orders two programs of one launch (no barrier "
                "spans programs), so on a GPU the atomics can land first and be wiped by that store; the interpreter "
                "runs the programs one by one in id order, which is why the result came out right here. Have each "
                "program write its own row alone",
                "2.1",
            )
        fail(
            T6,
            f"{kernel} 的程序 {p} 先用普通 store 写了一些单元（比如清零），再用 atomic 的 {lanes} 个 lane"
            "（不是那次 store 的 lane）加到这些单元上，两者之间没有 tl.debug_barrier()：GPU 上一个程序的各个 lane "
            "分在不同的线程和 warp 里，彼此没有先后，有的 atomic 可以先落地，再被那次 store 抹掉；解释器一条一条"
            "按顺序执行，所以这里结果碰巧是对的。在 store 和 atomic 之间加 tl.debug_barrier()，或者不用 atomic："
            "用 tl.histogram 算出整行，再 store 一次",
            f"{kernel}'s program {p} wrote cells with a plain store (zeros, say) and then added into them with "
            f"{lanes} lanes of an atomic, other lanes than the store's, with no tl.debug_barrier() between the two: "
            "on a GPU a program's lanes sit in different threads and warps, in no set order, so some atomics can "
            "land first and be wiped by that store; the interpreter runs one operation after another, which is why "
            "the result came out right here. Put tl.debug_barrier() between the store and the atomics, or count "
            "without atomics: tl.histogram for the whole row, then one store",
            "2.1",
        )
    for name, order in orders(4, 1).items():
        if name == "in id order":
            continue
        with programs_run(order):
            r = guarded_route(
                t6, monkeypatch, ids, 5, say(zh=f"程序按 {order} 的顺序运行", en=f"programs run in order {order}")
            )
        fields = ("counts", "offsets", "sorted_slots", "slot_pos")
        differ = [f"Routing.{f}" for f in fields if not torch.equal(getattr(r, f), getattr(in_id_order, f))]
        if {"Routing.counts", "Routing.offsets"} & set(differ):  # the counts, not the places: before any scatter
            fail(
                T6,
                f"同一组 topk_ids，路由的各个程序按 {order} 的顺序运行时，{'、'.join(differ)} "
                "和按 id 顺序运行时（那次是对的）不一样：连计数都取决于程序运行的先后；三个内核里只有 count_experts"
                "（写 block_counts）和 scatter_slots 不止一个程序：每个程序只数自己这一块的 slot，写进自己那一行，"
                "不读也不加别的程序在同一次启动里写的东西",
                f"the same topk_ids with the routing programs run in order {order} gave another "
                f"{', '.join(differ)} than in id order (which was right): even the counts depend on the order the "
                "programs run, and of the three kernels only count_experts (block_counts) and scatter_slots run more "
                "than one: each program counts its own block's slots into its own row, and neither reads nor adds to "
                "what another program of the same launch writes",
                "2.3",
            )
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
    with monkeypatch.context() as patch:  # one program's lanes: a GPU takes a vector atomic's in no set order
        atomic_lanes_last_first(patch)
        r = guarded_route(t6, monkeypatch, ids, 5, say(zh="每个 atomic 的 lane 倒着执行", en="atomic lanes last first"))
    differ = [f"Routing.{f}" for f in fields if not torch.equal(getattr(r, f), getattr(in_id_order, f))]
    if differ:
        fail(
            T6,
            f"同一组 topk_ids，让每个 atomic 的各个 lane 倒着（最后一个 lane 先）执行时，{'、'.join(differ)} "
            "和按 lane 顺序执行时（那次是对的）不一样：结果取决于同一个 atomic 里各 lane 执行的先后，GPU 上这个先后"
            "没有定数；每个位置要由 block_base（前面各块的计数）和块内名次算出来，不要靠 atomic",
            f"the same topk_ids with each atomic's lanes taken last first gave another {', '.join(differ)} than with "
            "them taken in lane order (which was right): the result depends on the order one atomic takes its lanes "
            "in, which a GPU does not fix; compute each place from block_base (the counts of the blocks before) and "
            "the rank in the block, not with an atomic",
            "2.2",
        )
