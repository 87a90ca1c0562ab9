"""T6.1: what route ignores (ids out of range), no tokens at all, and one expert (what it refuses, bad input:
test_routing_refuses.py)."""

import pytest
import torch

from course.i18n import cells, count, say
from course.messages import fail

from .common import T6, fail_if_raised, make_ids, raised_by
from .routings import check_routing, route_watch
from .stray import HISTOGRAM_STRAYS
from bounds import near_words, padded_integers, padding_written, place
from support import DEVICE, INTERPRETING

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


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
    watch = route_watch(t6, monkeypatch)
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
    counted = sorted({value for value, _ in HISTOGRAM_STRAYS})
    if counted:
        bins = HISTOGRAM_STRAYS[0][1]
        fail(
            T6,
            f"{case}：count_experts 交给 tl.histogram 的值里有 {len(HISTOGRAM_STRAYS)} 个在 [0, {bins}) 之外，"
            f"却没被 mask 挡掉（{counted[:6]}）：解释器把它们丢掉，GPU 上的 tl.histogram 却不查范围，"
            "按值的低位分桶（-32 算进第 0 个桶）；越界的号（负的也算）要用 tl.histogram 的 mask 挡在外面",
            f"{case}: count_experts handed tl.histogram {len(HISTOGRAM_STRAYS)} values outside [0, {bins}) that its "
            f"mask did not leave out ({counted[:6]}): the interpreter drops them, but a GPU's tl.histogram has no "
            "range check and bins a value by its low bits (-32 counts in bin 0); leave every id out of range, "
            "negative ones too, out with tl.histogram's mask",
            "2.3",
        )
    for kernel, lanes in watch.outside.items():
        kinds = [w for w, f in watch.strays.first.items() if f and f[-1].name == kernel]
        frames = [watch.strays.first[w][-1] for w in kinds]
        near_zh, near_en = near_words(watch.strays.near.get(kinds[0])) if kinds else ("", "")
        # the line by number alone: the access may be made by a line the learner wrote right, whose
        # mask or index comes from a wrong one above it (and §8's table would then quote a reference line)
        where = place(frames[0], code=False) if frames else ""
        at_zh, at_en = (f"，第一个在 {where}", f", first at {where}") if frames else ("", "")
        # Whose fault: the same slots with every id in range (the bad ones made expert 0) stray too, or not.
        in_range = ids.clone()
        in_range.view(-1)[bad.to(DEVICE)] = 0
        with monkeypatch.context() as patch:
            again = route_watch(t6, patch)
            r_in = t6.route(in_range, experts, check_ids=False)
        # the scatter places slots by counts and offsets: counts wrong there are the first thing to mend
        want_in, got_in = torch.bincount(in_range.reshape(-1).cpu(), minlength=experts).int(), r_in.counts.cpu()
        if kernel in again.outside and kernel == "scatter_slots" and not torch.equal(got_in, want_in):
            why_zh, why_en, section = (
                f"；把越界的号都换成 0 以后照样越界，所以不是这些号的问题；那时 counts 就已经错了，得到 "
                f"{got_in.tolist()}，应当是 {want_in.tolist()}：scatter_slots 按 counts 和 offsets 放 slot，"
                "先看 count_experts 和 scan_counts",
                f"; it does so with every id in range too (the bad ones made 0), so the ids out of range are not the "
                f"cause; there the counts are wrong already, {got_in.tolist()} where {want_in.tolist()} is right: "
                "scatter_slots places the slots by counts and offsets, so look at count_experts and scan_counts first",
                "2.1",
            )
        elif kernel in again.outside:
            why_zh, why_en, section = (
                "；把越界的号都换成 0 以后照样越界，所以不是这些号的问题：看这一行的地址和掩码",
                "; it does so with every id in range too (the bad ones made 0), so the ids out of range are not "
                "the cause: look at that line's addresses and mask",
                "2.1",
            )
        else:
            why_zh, why_en, section = (
                "；把越界的号都换成 0 以后就不越界了：越界的专家号不算进任何专家，也不能拿来当下标",
                "; with every id in range (the bad ones made 0) it does not: an id out of range counts for no "
                "expert and is never an index",
                "2.3",
            )
        fail(
            T6,
            f"{case}：{kernel} 读了 {lanes['read']} 个、写了 {lanes['write']} 个不属于它拿到的任何张量的单元{at_zh}"
            "（这里拦下了，没有真的读写）" + (f"；{near_zh}" if near_zh else "") + why_zh,
            f"{case}: {kernel} read {lanes['read']} and wrote {cells(lanes['write'])} outside every tensor it was "
            f"given{at_en} (stopped here, not made)" + (f"; {near_en}" if near_en else "") + why_en,
            section,
        )
    stray = padding_written(made)
    if stray:
        fail(
            T6,
            f"{case}：route 的 kernel 写到了它的整数张量之外的 {stray} 个单元",
            f"{case}: route's kernels wrote {cells(stray)} just outside its integer tensors",
            "2.3",
        )
    flat = ids.reshape(-1).cpu()
    inside = (flat >= 0) & (flat < experts)
    want_counts = torch.bincount(flat[inside], minlength=experts).int()
    kept = int(inside.sum())
    want_sorted = torch.sort(torch.where(inside, flat, experts), stable=True).indices[:kept].int()
    got_counts, got_offsets = r.counts.cpu(), r.offsets.cpu()
    if not torch.equal(got_counts, want_counts) or not torch.equal(got_offsets, want_counts.cumsum(0).int()):
        # ids past 2**32 narrowed to int32 before the range check: 2**32 + 1 counted as expert 1
        narrowed = torch.bincount((flat[flat >= 2**32] % 2**32).clamp_max(experts), minlength=experts + 1)
        as_narrowed = bool(narrowed.sum()) and torch.equal(got_counts, want_counts + narrowed[:experts].int())
        as_expert_0 = torch.equal(got_counts - want_counts, torch.eye(experts, dtype=torch.int32)[0] * len(bad))
        high = int((flat >= experts).sum())  # ids at num_experts or past it, clamped to the last expert
        as_last = torch.equal(got_counts - want_counts, torch.eye(experts, dtype=torch.int32)[-1] * high)
        fail(
            T6,
            f"{case}：counts 应当只数范围内的号，{want_counts.tolist()}，offsets 是它的累加和；"
            f"得到 counts {got_counts.tolist()}，offsets {got_offsets.tolist()}"
            + (
                "：多出来的正是 2^32 + 1 这些号截成 int32 以后的专家（2^32 + 1 成了 1）：先用读进来的 int64 值查范围，"
                "只把进直方图的值转成 int32"
                if as_narrowed
                else f"：多出来的 {len(bad)} 个都在专家 0，正是越界的 slot 数：直方图把越界的号当成了专家 0"
                "（比如先用 tl.where 换成 0 再数），要用 tl.histogram 的 mask 把它们挡在外面"
                if as_expert_0
                else f"：多出来的 {high} 个都在最后一个专家 {experts - 1}，正是专家号 >= num_experts 的 slot 数："
                "这些号被截成了最后一个专家（比如 tl.minimum(ids, num_experts - 1)），要用 tl.histogram 的 mask "
                "把它们挡在外面"
                if as_last
                else ""
            ),
            f"{case}: counts should count the ids in range alone, {want_counts.tolist()}, and offsets be their "
            f"running sum; got counts {got_counts.tolist()}, offsets {got_offsets.tolist()}"
            + (
                ": the extra ones are exactly the ids 2^32 + 1 narrowed to int32 (2^32 + 1 became 1): check the range "
                "on the int64 ids as loaded, and cast only what goes into the histogram"
                if as_narrowed
                else f": the {len(bad)} extra ones are all expert 0's, as many as the slots out of range: the "
                "histogram counted those ids as expert 0 (made 0 by a tl.where before counting, say); leave them out "
                "with tl.histogram's mask"
                if as_expert_0
                else f": the {high} extra ones are all the last expert's, {experts - 1}, as many as the slots with "
                "an id at num_experts or past it: those ids were clamped to the last expert (tl.minimum(ids, "
                "num_experts - 1), say); leave them out with tl.histogram's mask"
                if as_last
                else ""
            ),
            "2.3",
        )
    got, slot_pos = r.sorted_slots.cpu()[:kept], r.slot_pos.cpu()
    # the two stores swapped: for each slot s in range, sorted_slots[s] holds its row and slot_pos[row] holds s
    ins = inside.nonzero().flatten()
    row_of = torch.full((len(flat),), -1, dtype=torch.int32)
    row_of[want_sorted.long()] = torch.arange(kept, dtype=torch.int32)
    into = slot_pos[row_of[ins].long()]  # slot_pos at the rows the slots in range went to
    if kept and torch.equal(r.sorted_slots.cpu()[ins], row_of[ins]) and torch.equal(into, ins.int()):
        fail(
            T6,
            f"{case}：sorted_slots 和 slot_pos 互换了内容：对范围内的每个 slot s，sorted_slots[s] 是它去的行，"
            "slot_pos[那一行] 是 s；sorted_slots[pos] = slot，slot_pos[slot] = pos",
            f"{case}: sorted_slots and slot_pos hold each other's values: for each slot s in range, sorted_slots[s] "
            "holds the row it went to, and slot_pos[that row] holds s; sorted_slots[pos] = slot, slot_pos[slot] = pos",
            "2.1",
        )
    # a slot out of range placed by the scatter: at a row, with slot_pos saying that row (both stores made
    # for it); a value that only equals such a slot's number (a token stored for a slot, say) is not one
    placed = [
        (row, int(v))
        for row, v in enumerate(got.tolist())
        if 0 <= v < len(flat) and not inside[v] and int(slot_pos[v]) == row
    ]
    if placed:
        row, slot = placed[0]
        # every slot placed has an id past 2**32 whose low 32 bits name an expert: checked after narrowing to int32
        narrowed = all(int(flat[v]) >= 2**32 and 0 <= int(flat[v]) % 2**32 < experts for _, v in placed)
        fail(
            T6,
            f"{case}：sorted_slots 的前 {kept} 行里有 {len(placed)} 个专家号越界的 slot，比如第 {row} 行是 slot {slot}"
            f"（专家号 {int(flat[slot])}）：越界的 slot 不占任何一行，它不算进任何专家，也不被放进 sorted_slots"
            + (
                f"；放进去的都是 2^32 以上的号，截成 int32 以后成了专家 {int(flat[slot]) % 2**32}：scatter_slots "
                "要拿读进来的 int64 值查范围，不要先 .to(tl.int32)"
                if narrowed
                else ""
            ),
            f"{case}: the first {kept} rows of sorted_slots hold {len(placed)} slots whose ids are out of range, "
            f"row {row} slot {slot} (id {int(flat[slot])}) for one: such a slot gets no row, counted for no expert and "
            "placed nowhere"
            + (
                f"; every one placed has an id past 2^32, which narrowed to int32 becomes expert "
                f"{int(flat[slot]) % 2**32}: scatter_slots checks the range on the int64 ids as loaded, with no "
                ".to(tl.int32) first"
                if narrowed
                else ""
            ),
            "2.3",
        )
    if not torch.equal(got, want_sorted):
        at = int((got != want_sorted).nonzero()[0])
        value = int(got[at])
        no_slot = not 0 <= value < len(flat)  # route's tensors are made by torch.empty: a row never written
        wrong = (got != want_sorted).nonzero()[:, 0]
        bad_here = [int(got[row]) for row in wrong if 0 <= int(got[row]) < len(flat) and not inside[int(got[row])]]
        if len(bad_here) == len(wrong):  # each wrong row holds a slot out of range, and only those rows are wrong
            fail(
                T6,
                f"{case}：sorted_slots 的第 {at} 行是 slot {value}，它的专家号 {int(flat[value])} 越界（这样的行共 "
                f"{len(wrong)} 行，其余都对）：越界的 slot 不占任何一行，存 sorted_slots 的掩码也要把它挡掉",
                f"{case}: row {at} of sorted_slots holds slot {value}, whose id {int(flat[value])} is out of range "
                f"({count(len(wrong), 'row')} such, the rest right): such a slot gets no row, so the store into "
                "sorted_slots masks it off too",
                "2.3",
            )
        fail(
            T6,
            f"{case}：sorted_slots 的前 {kept} 行应当是范围内的 slot 按专家稳定排好序，从第 {at} 行起不对："
            f"应当是 slot {int(want_sorted[at])}，得到 {value}"
            + (
                f"：{value} 根本不是 slot 号（0..{len(flat) - 1}），scatter 没写到的行里就可能是这样的值"
                if no_slot
                else ""
            ),
            f"{case}: the first {kept} rows of sorted_slots should be the slots in range, stably sorted by "
            f"expert; wrong from row {at} on: slot {int(want_sorted[at])} expected, got {value}"
            + (
                f", which is no slot number (0..{len(flat) - 1}), as a row the scatter never wrote may hold"
                if no_slot
                else ""
            ),
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


@pytest.mark.t6_1
def test_route_of_no_tokens(t6):
    """0 tokens is valid input (a batch with nothing for this layer): an empty Routing whose counts
    and offsets are all 0 (§2.3's checks look at the ids only when there are some)."""
    ids = torch.empty((0, 2), dtype=torch.int64, device=DEVICE)
    case = say(zh="0 个 token（topk_ids 是 [0, 2]），4 个专家", en="0 tokens (topk_ids [0, 2]), 4 experts")
    r, error = raised_by(lambda: t6.route(ids, 4))
    fail_if_raised(case, "route", error, "2.3")
    check_routing(r, ids, 4, case)


@pytest.mark.t6_1
def test_route_of_one_expert(t6):
    """One expert is valid input (num_experts a positive int: a layer of one expert, or a test's), and so is
    a token that chose one expert twice in its top_k: with E = 1 every token's top-2 are expert 0, and
    the slots keep their order, token by token, j before j + 1 (§2.2)."""
    ids = torch.zeros((7, 2), dtype=torch.int64, device=DEVICE)
    case = say(
        zh="1 个专家，7 个 token，top_k=2（每个 token 两次都选了专家 0）",
        en="1 expert, 7 tokens, top_k=2 (each token chose expert 0 twice)",
    )
    r, error = raised_by(lambda: t6.route(ids, 1))
    fail_if_raised(case, "route", error, "2.3")
    check_routing(r, ids, 1, case)
    ids[6, 1] = 1  # the same tensor, an id out of range written into it in place: checked again, at this call
    _, error = raised_by(lambda: t6.route(ids, 1))
    if error is None:
        fail(
            T6,
            f"{case}，再把 topk_ids[6, 1] 就地改成 1（不在 [0, 1) 里）再调用：route 应当抛出 ValueError，却什么也没抛："
            "同一个张量上一次是合法的，这一次不是了：每次调用都要重新检查专家号，不能记住上一次的结论",
            f"{case}, then topk_ids[6, 1] set to 1 in place (outside [0, 1)) and route called again: it should raise "
            "ValueError, and raised nothing: the same tensor was valid at the call before and is not now: the ids "
            "are checked at every call, nothing kept from an earlier one",
            "2.3",
        )


@pytest.mark.t6_1
def test_scatter_places_past_32767_rows(t6):
    """scatter_slots alone, one block of 16 slots over experts 1..3, after expert 0's 40000 rows (its slots in
    other blocks, not launched): each slot's place is past 2**15, where a place narrowed to int16 wraps.  A route
    of that many slots is slow on the interpreter; one program of scatter_slots is not."""
    from given.t6_host import ROUTE_BLOCK

    ids = torch.tensor([1, 3, 2, 1, 1, 3, 2, 2, 3, 1, 2, 3, 3, 1, 2, 1], dtype=torch.int64)
    counts = torch.tensor([40000] + [int((ids == e).sum()) for e in (1, 2, 3)], dtype=torch.int32)
    offsets = counts.cumsum(0).int()
    want = torch.empty(len(ids), dtype=torch.int64)
    for s, e in enumerate(ids.tolist()):
        want[s] = int(offsets[e] - counts[e]) + int((ids[:s] == e).sum())
    block_base = torch.zeros((1, 4), dtype=torch.int32, device=DEVICE)  # block 0: nothing before it
    sorted_slots = torch.full((int(offsets[-1]),), -1, dtype=torch.int32, device=DEVICE)
    slot_pos = torch.full((len(ids),), -1, dtype=torch.int32, device=DEVICE)
    args = [t.to(DEVICE) for t in (ids, block_base, counts, offsets)] + [sorted_slots, slot_pos]
    t6.scatter_slots[(1,)](*args, len(ids), 4, ROUTE_BLOCK, 4)
    got = slot_pos.cpu().long()
    if torch.equal(got, want):
        return
    case = say(
        zh="scatter_slots 单独一个块：16 个 slot 落在专家 1..3，专家 0 在它们前面占了 40000 行",
        en="scatter_slots on one block alone: 16 slots of experts 1..3, after expert 0's 40000 rows",
    )
    wrapped = (want + 2**15) % 2**16 - 2**15  # each place as int16 holds it
    if torch.equal(got, wrapped):
        fail(
            T6,
            f"{case}：slot_pos 应当是 {want[:4].tolist()}…，得到 {got[:4].tolist()}…：正是这些位置截成 int16 "
            "再存回 int32 的值：超过 32767 行就回绕；位置保持 int32（不要 .to(tl.int16)）",
            f"{case}: slot_pos should be {want[:4].tolist()}..., got {got[:4].tolist()}...: those places narrowed "
            "to int16 and stored back as int32, which wrap past 32767 rows; keep the places int32 (no .to(tl.int16))",
            "2.1",
        )
    fail(
        T6,
        f"{case}：slot_pos 应当是 {want.tolist()}，得到 {got.tolist()}",
        f"{case}: slot_pos should be {want.tolist()}, got {got.tolist()}",
        "2.1",
    )
