"""Lesson T6's routing checks, which T6.1's test files share: a Routing against a stable sort of the ids,
and the address watch on route's three kernels that names the line of a stray access."""

import torch
import triton

from course.i18n import count
from course.messages import fail

from .common import ROUTE_BLOCK, SCAN_ROWS, T6
from .stray import OURS, tail_lanes_counted, undefined_rows_words
from bounds import AddressWatch, Strays

ROUTE_KERNELS = ("count_experts", "scan_counts", "scatter_slots")


def route_watch(t6, patch, accesses=None):
    """An AddressWatch on route's three kernels, with its strays' lines (Strays) as .strays; every
    access is also recorded into accesses (an Accesses) where one is given."""
    strays = Strays(OURS, "t6_probes.py")

    def seen(what, lanes, inside):
        strays.seen(what, lanes, inside)
        if accesses is not None:
            accesses(what, lanes, inside, addresses._running)  # the kernel running now

    addresses = AddressWatch(t6, patch, ROUTE_KERNELS, seen=seen)
    addresses.strays, strays.watch = strays, addresses
    return addresses


def counts_in_range(ids, experts):
    """(counts, offsets) that route's ids give: each expert's ids in range counted, and their running sum."""
    flat = ids.reshape(-1).cpu()
    counts = torch.bincount(flat[(flat >= 0) & (flat < experts)], minlength=experts).int()
    return counts, counts.cumsum(0).int()


def check_counts_and_offsets(r, ids, experts, case):
    """counts and offsets (scan_counts' outputs) against the ids: returned, the expected pair."""
    want_counts, want_offsets = counts_in_range(ids, experts)
    counts, offsets = r.counts.cpu(), r.offsets.cpu()
    if not torch.equal(counts, want_counts):
        ends = torch.equal(counts, want_offsets) and not torch.equal(want_offsets, want_counts)
        zh, en = undefined_rows_words(counts, want_counts, tail_lanes_counted(counts, want_counts, ids, experts))
        last = counts.shape == want_counts.shape and torch.equal(counts[:-1], want_counts[:-1]) and counts[-1] == 0
        if last and not zh:
            zh, en = (
                f"：只有最后一个专家（{experts - 1}）的计数不对，是 0：专家号 {experts - 1} 的 slot 没有算进任何专家"
                "（范围检查少了一个专家，比如 ids < num_experts - 1）",
                f": the last expert's count alone is wrong, 0: the slots of id {experts - 1} were counted for no "
                "expert (a range check one expert short, ids < num_experts - 1, say)",
            )
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}"
            + ("：这是每个专家的行尾（累加和，offsets 的值），不是它自己的行数" if ends else zh),
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}"
            + (
                ": these are the row ends (the running sum, offsets' values), not each expert's own count"
                if ends
                else en
            ),
            "2.1",
        )
    if not torch.equal(offsets, want_offsets):
        last = offsets.shape == want_offsets.shape and torch.equal(offsets[:-1], want_offsets[:-1])
        starts = torch.equal(offsets, want_offsets - want_counts)  # where the last alone differs too: both fit
        # each expert's own count stored where its row end goes: the running sum (tl.cumsum) never taken
        own = not last and torch.equal(offsets, want_counts) and not torch.equal(want_counts, want_offsets)
        total = int(want_offsets[-1]) if want_offsets.numel() else 0
        fail(
            T6,
            f"{case}：offsets 应当是每个专家的行尾 {want_offsets.tolist()}（torch._grouped_mm 的 offs），得到 "
            f"{offsets.tolist()}"
            + ("：这是每个专家的行首（不含自身的前缀和），不是行尾" if starts and not last else "")
            + (
                "：这正是每个专家自己的行数（counts 的值）：offsets 是 counts 沿专家的累加和（tl.cumsum）"
                if own
                else ""
            )
            + (f"：只有最后一个不对，offsets[num_experts - 1] 应当是总数 {total}：" if last else "")
            + (
                "只有最后一个专家有行，这个用例分不清两种错误：存下的是不含自身的前缀和（每个专家的行首），或者"
                if last and starts
                else ""
            )
            + ("最后一个专家的行尾没有照样存下（比如存储的掩码少了一个专家）" if last else ""),
            f"{case}: offsets should be each expert's row end {want_offsets.tolist()} (torch._grouped_mm's offs), "
            f"got {offsets.tolist()}"
            + (": these are the row starts (an exclusive sum), not the ends" if starts and not last else "")
            + (
                ": these are each expert's own count (counts' values): offsets are the running sum of counts over "
                "the experts (tl.cumsum)"
                if own
                else ""
            )
            + (f": the last alone is wrong, offsets[num_experts - 1], which is the total {total}: " if last else "")
            + (
                "only the last expert has rows, so this case cannot tell two mistakes apart: an exclusive sum stored "
                "(each expert's row start), or "
                if last and starts
                else ""
            )
            + (
                "the last expert's row end was not stored as the others were (a store's mask one expert short, say)"
                if last
                else ""
            ),
            "2.1",
        )
    return want_counts, want_offsets


def places_found(r, ids, experts, block_base=None):
    """Where scatter_slots put each slot in range, read back from slot_pos (which it writes inside its
    own tensor even when a place is wrong), against where the slot belongs: (zh, en) naming the pattern
    the differences make, or the first wrong slot with its right place taken apart; None when every
    place is right (or slot_pos is not a tensor of one int per slot).  block_base, as scan_counts left
    it (where the test has it): when it is right, no pattern that blames it is named, and a scatter
    that left it out of the places is."""
    flat = ids.reshape(-1).cpu().long()
    got = r.slot_pos.cpu().long() if isinstance(r.slot_pos, torch.Tensor) else None
    if got is None or got.shape != flat.shape:
        return None
    slots, keep = flat.numel(), (flat >= 0) & (flat < experts)
    want = torch.empty_like(flat)
    want[torch.sort(torch.where(keep, flat, experts), stable=True).indices] = torch.arange(slots)
    diff = (got - want)[keep]
    if not diff.any():
        return None
    e, block = flat[keep], (torch.arange(slots) // ROUTE_BLOCK)[keep]
    counts = torch.bincount(e, minlength=experts)
    blocks = int(block.max()) + 1
    in_block = torch.bincount(block * experts + e, minlength=blocks * experts).view(blocks, experts)
    base = in_block.cumsum(0) - in_block  # block_base: expert e's slots in the blocks before b
    found = []  # each pattern the differences fit; several where this routing cannot tell them apart
    written = block_base.cpu().long() if isinstance(block_base, torch.Tensor) and block_base.dim() == 2 else None
    base_right = written is not None and written.shape[0] == blocks and torch.equal(written[:, :experts], base)
    if (diff == 1).all():
        found.append(
            (
                "块内名次把这个 slot 自己也数进去了（名次只数这一块里排在它前面、选了同一个专家的 slot）",
                "the rank in the block counted the slot itself (it counts only the earlier slots of the block that "
                "chose the same expert)",
            )
        )
    # block_base as written, where the test has it: an inclusive scan, or one that took in its whole batch (the
    # running sum grown by the batch's column sums before the batch's block_base went out); with one block a
    # batch the two are one; either explains the places, so the first row is not blamed beside it
    shown = written[:, :experts] if written is not None and written.shape[0] == blocks else None
    batch = torch.arange(blocks) // SCAN_ROWS
    in_batch = torch.zeros(int(batch.max()) + 1, experts, dtype=in_block.dtype).index_add_(0, batch, in_block)[batch]
    inclusive = shown is not None and torch.equal(shown, base + in_block)
    whole_batch = shown is not None and not inclusive and torch.equal(shown, base + in_batch)
    # told by block_base itself (the places, read back from slot_pos, may be overwritten by stores past sorted_slots)
    whole_batch_words = (
        "scan_counts 写出的 block_base[b, e] 把块 b 所在的整批都数进去了：running 先加上了这一批各列的和，"
        "这一批的 block_base 才存出去（先存 block_base，再让 running 增长）",
        "block_base[b, e] as scan_counts wrote it took in all of block b's batch: running grew by the batch's column "
        "sums before the batch's block_base went out (store block_base first, then grow running)",
    )
    if not base_right and (shown is None or inclusive) and torch.equal(diff, in_block[block, e]):
        found.append(
            (
                "block_base[b, e] 把块 b 自己也数进去了（它只数 b 之前各块里专家 e 的 slot：不含自身的前缀和）",
                "block_base[b, e] counted block b itself (it counts expert e's slots in the blocks before b alone: an "
                "exclusive scan)",
            )
        )
    carry = base[torch.arange(blocks) // SCAN_ROWS * SCAN_ROWS]  # the running sum carried into each block's batch
    if not base_right and written is not None and written.shape[0] == blocks:
        if torch.equal(written[:, :experts], carry + in_block.cumsum(1) - in_block):
            found.append(
                (
                    "block_base[b, e] 数的是块 b 里专家 e 之前各专家的 slot（tl.cumsum 沿 axis=1，横着跨专家累加），"
                    "而它要数的是专家 e 在 b 之前各块里的 slot（沿 axis=0，顺着各块往下累加）",
                    "block_base[b, e] held block b's slots of the experts before e (a tl.cumsum along axis 1, across "
                    "the experts), where it counts expert e's slots in the blocks before b (along axis 0, down the "
                    "blocks)",
                )
            )
    if torch.equal(diff, counts[e]) and not inclusive and not whole_batch:
        found.append(
            (
                "行首取成了 offsets[e]，也就是专家的行尾（行首是 offsets[e] - counts[e]）",
                "the first row were offsets[e], the expert's row end (it is offsets[e] - counts[e])",
            )
        )
    lanes = torch.zeros(blocks * ROUTE_BLOCK, dtype=flat.dtype)
    lanes[:slots] = flat  # the lanes past the last slot load id 0 (the load's other=0)
    same = (lanes.view(blocks, ROUTE_BLOCK, 1) == lanes.view(blocks, 1, ROUTE_BLOCK)).long()  # [block, i, j]
    after = torch.arange(ROUTE_BLOCK)[:, None] > torch.arange(ROUTE_BLOCK)[None, :]  # lane i after lane j
    later = ((same * after).sum(1) - (same * after.T).sum(1)).reshape(-1)[:slots]  # lane j: later minus earlier
    valid = torch.zeros(blocks * ROUTE_BLOCK, dtype=torch.long)
    valid[:slots] = keep.long()  # the lanes of a slot in range
    later_in_range = (same * after * valid.view(blocks, ROUTE_BLOCK, 1)).sum(1).reshape(-1)[:slots]
    if later[keep].any() and torch.equal(diff, later_in_range[keep]):
        found.append(
            (
                "块内名次把这一块里排在它后面、选了同一个专家的 slot 也数进去了（数了除它以外的所有同专家 slot），"
                "而名次只数排在它前面的",
                "the rank in the block counted the slots of its expert after it in the block too (every other slot "
                "of the expert), where it counts the slots before it alone",
            )
        )
    v = valid.view(blocks, ROUTE_BLOCK)
    rank = (same * after.T * v[:, :, None]).sum(1)  # lane j's right rank: earlier lanes in range of its id
    any_expert = ((v.cumsum(1) - v) - rank).reshape(-1)[:slots]  # the earlier lanes in range of other ids
    if any_expert[keep].any() and torch.equal(diff, any_expert[keep]):
        found.append(
            (
                "块内名次数了这一块里排在它前面的所有 slot，不管选的是哪个专家，而名次只数选了同一个专家的",
                "the rank in the block counted every earlier slot of the block, whatever expert it chose, where it "
                "counts those that chose the same expert alone",
            )
        )
    if torch.equal(diff, later[keep]):
        found.append(
            (
                "块内名次数的是这一块里排在它后面、专家号相同的 lane"
                "（最后一个 slot 之后、专家号读成 0 的 lane 也算上了），而名次只数排在它前面的",
                "the rank in the block counted the lanes after the slot with its id (the lanes past the last slot, "
                "their id loaded as 0, among them), where it counts the slots before it",
            )
        )
    starts = counts.cumsum(0) - counts  # each expert's first row, offsets - counts
    if starts[e].any() and torch.equal(diff, -starts[e]):
        found.append(
            (
                "算位置时漏了专家的行首 offsets[e] - counts[e]（位置 = 行首 + block_base[b, e] + 块内名次）",
                "the expert's first row, offsets[e] - counts[e], were left out of each place (a place is first row "
                "+ block_base[b, e] + rank in the block)",
            )
        )
    batch = base[block // SCAN_ROWS * SCAN_ROWS, e]  # the running sum carried into the slot's batch
    if not base_right and torch.equal(diff, -batch):
        found.append(
            (
                f"scan_counts 没有把前面各批（一批 SCAN_ROWS = {SCAN_ROWS} 行）的累计量带进下一批的 block_base",
                f"scan_counts did not carry the running sum of the earlier batches of SCAN_ROWS = {SCAN_ROWS} "
                "block rows into the next batch's block_base",
            )
        )
    if not base_right and torch.equal(diff, batch - base[block, e]):
        found.append(
            (
                "block_base 只有前面各批的累计量，漏了同一批里块 b 之前的那几块（批内的 tl.cumsum）",
                "block_base held the running sum of the earlier batches alone, without the blocks before b in b's "
                "own batch (the tl.cumsum within the batch)",
            )
        )
    if base_right and base.any() and torch.equal(diff, -base[block, e]):
        found.append(
            (
                "scatter_slots 算位置时漏了 block_base[b, e]（scan_counts 写出的 block_base 是对的：它就是没被加上）",
                "scatter_slots left block_base[b, e] out of each place (block_base as scan_counts wrote it is right: "
                "it was just never added)",
            )
        )
    e_block = max(2, triton.next_power_of_2(experts))  # block_base's row: E_BLOCK ints, the lanes past E 0
    laid = torch.zeros(blocks, e_block, dtype=base.dtype)
    laid[:, :experts] = base
    if base_right and written.shape[1] == e_block:  # past E, what scan_counts left there (unwritten: UNSET)
        laid = written
    if experts != e_block and torch.equal(diff, laid.reshape(-1)[block * experts + e] - base[block, e]):
        found.append(
            (
                f"scatter_slots 按行距 num_experts = {experts} 读了 block_base[b, e]（b * num_experts + e）："
                f"它的每一行有 E_BLOCK = {e_block} 个数",
                f"scatter_slots read block_base[b, e] at b * num_experts + e, a row pitch of num_experts = {experts}, "
                f"where a row of block_base holds E_BLOCK = {e_block}",
            )
        )
    at = int((got != want).logical_and(keep).nonzero()[0])
    ex, b = int(flat[at]), at // ROUTE_BLOCK
    first, below = int(counts[:ex].sum()), int(base[b, ex])
    rank = int(want[at]) - first - below
    zh = (
        f"slot {at}（专家 {ex}，块 {b}）的 slot_pos 是 {int(got[at])}，应当是 {int(want[at])} = 行首 {first}"
        f"（offsets - counts）+ block_base[{b}, {ex}] = {below} + 块内名次 {rank}；专家 {ex} 一共 "
        f"{int(counts[ex])} 行，其中 {int(in_block[b, ex])} 行在块 {b}"
    )
    en = (
        f"slot {at} (expert {ex}, block {b}) has slot_pos {int(got[at])}, where {int(want[at])} = first row {first} "
        f"(offsets - counts) + block_base[{b}, {ex}] = {below} + rank in the block {rank} is expected; expert {ex} "
        f"has {count(int(counts[ex]), 'row')}, {int(in_block[b, ex])} of them in block {b}"
    )
    if found:
        zh += "：这组 routing 上每个 slot 的错位都和这样的错误一致：" + "；或者：".join(z for z, _ in found)
        en += ": every slot's place here is off as it would be if " + "; or if ".join(x for _, x in found)
    elif whole_batch:
        zh, en = f"{zh}：{whole_batch_words[0]}", f"{en}: {whole_batch_words[1]}"
    return zh, en


def check_routing(r, ids, experts, case, block_base=None):
    """r against a stable sort of ids; block_base (scan_counts' as launched, where known) for places_found."""
    want_counts, want_offsets = check_counts_and_offsets(r, ids, experts, case)
    flat = ids.reshape(-1).cpu()
    want_sorted = torch.sort(flat, stable=True).indices.int()
    got = r.sorted_slots.cpu()
    slots = want_sorted.numel()
    if got.shape != want_sorted.shape or not torch.equal(got.sort().values, torch.arange(slots, dtype=got.dtype)):
        outside = int(((got < 0) | (got >= slots)).sum()) if got.numel() else 0
        seen = torch.bincount(got[(got >= 0) & (got < slots)].long(), minlength=slots) if got.numel() else got
        found = places_found(r, ids, experts, block_base)
        if found is None and got.shape == want_sorted.shape and torch.equal(got, want_sorted % ROUTE_BLOCK):
            found = (
                f"sorted_slots 里存的是每个 slot 在它那一块里的 lane（slot % BLOCK，BLOCK = {ROUTE_BLOCK}），"
                "不是 slot 号本身（program_id * BLOCK + lane）",
                f"sorted_slots holds each slot's lane in its block (slot % BLOCK, BLOCK = {ROUTE_BLOCK}), not the "
                "slot number itself (program_id * BLOCK + lane)",
            )
        fail(
            T6,
            f"{case}：sorted_slots 不是 0..{slots - 1} 的一个排列：{outside} 个值越界，"
            f"{int((seen == 0).sum())} 个 slot 没有出现（有的位置没写，或两个 slot 写到了同一个位置）"
            + (f"；{found[0]}" if found else ""),
            f"{case}: sorted_slots is not a permutation of 0..{slots - 1}: {count(outside, 'value')} out of range, "
            f"{count(int((seen == 0).sum()), 'slot')} missing (positions never written, or two slots written to one)"
            + (f"; {found[1]}" if found else ""),
            "2.1",
        )
    inverse = torch.empty_like(want_sorted)
    inverse[want_sorted.long()] = torch.arange(want_sorted.numel(), dtype=torch.int32)
    if not torch.equal(got, want_sorted) and torch.equal(got, inverse) and torch.equal(r.slot_pos.cpu(), want_sorted):
        fail(
            T6,
            f"{case}：sorted_slots 和 slot_pos 互换了内容：sorted_slots 里是每个 slot 去的行（slot_pos 该有的），"
            "slot_pos 里是每行的 slot；sorted_slots[pos] = slot，slot_pos[slot] = pos",
            f"{case}: sorted_slots and slot_pos hold each other's values: sorted_slots holds the row each slot went "
            "to (slot_pos's), and slot_pos the slot of each row; sorted_slots[pos] = slot, slot_pos[slot] = pos",
            "2.1",
        )
    if not torch.equal(got, want_sorted):
        bad = int((got != want_sorted).nonzero()[0])
        same_groups = got.numel() == want_sorted.numel() and torch.equal(flat[got.long()], flat[want_sorted.long()])
        runs = list(zip([0] + want_offsets.tolist()[:-1], want_offsets.tolist(), strict=True))
        grouped_right = same_groups and all(
            sorted(got[a:b].tolist()) == sorted(want_sorted[a:b].tolist()) for a, b in runs
        )
        by_block = [got[a:b][torch.sort(got[a:b] // ROUTE_BLOCK, stable=True).indices] for a, b in runs]
        if grouped_right and all(torch.equal(s, s.sort().values) for s in by_block):  # in order within each block
            fail(
                T6,
                f"{case}：sorted_slots 从第 {bad} 个位置起不对：应当是 slot {int(want_sorted[bad])}，"
                f"得到 {int(got[bad])}：每个专家的 slot 对了，在每个 {ROUTE_BLOCK} 个 slot 的块内顺序也对，"
                "但各块的先后不对：block_base[b, e] 是专家 e 在 b 之前各块里的 slot 数",
                f"{case}: sorted_slots is wrong from position {bad} on: slot {int(want_sorted[bad])} expected, got "
                f"{int(got[bad])}: each expert has the right slots, in order within each block of {ROUTE_BLOCK}, but "
                "the blocks come in another order: block_base[b, e] counts expert e's slots in the blocks before b",
                "2.3",
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
    if not torch.equal(r.slot_pos.cpu(), inverse):
        # each slot's rank in its block: its place less its expert's first row and block_base
        flat = ids.reshape(-1).cpu().long()
        lanes = flat.view(-1, 1) == flat.view(1, -1)
        block = torch.arange(flat.numel()) // ROUTE_BLOCK
        earlier = torch.arange(flat.numel()).view(1, -1) < torch.arange(flat.numel()).view(-1, 1)
        rank = (lanes & earlier & (block.view(1, -1) == block.view(-1, 1))).sum(1)
        ranked = bool(inverse.ne(rank.to(inverse.dtype)).any()) and torch.equal(r.slot_pos.cpu().long(), rank)
        fail(
            T6,
            f"{case}：slot_pos 不是 sorted_slots 的逆：slot_pos[sorted_slots[pos]] 应当等于 pos"
            + (
                "：slot_pos 存的是每个 slot 在块内的名次，不是它的位置 pos（行首 + block_base + 名次）"
                if ranked
                else ""
            ),
            f"{case}: slot_pos is not the inverse of sorted_slots: slot_pos[sorted_slots[pos]] must be pos"
            + (
                ": slot_pos holds each slot's rank in its block, not its place pos (first row + block_base + rank)"
                if ranked
                else ""
            ),
            "2.1",
        )
