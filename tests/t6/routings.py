"""Lesson T6's routing checks, which T6.1's test files share: a Routing against a stable sort of the ids."""

import torch

from course.i18n import count
from course.messages import fail

from .common import ROUTE_BLOCK, T6


def check_counts_and_offsets(r, ids, experts, case):
    """counts and offsets (scan_counts' outputs) against the ids: returned, the expected pair."""
    want_counts = torch.bincount(ids.reshape(-1).cpu(), minlength=experts).int()
    want_offsets = want_counts.cumsum(0).int()
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
    return want_counts, want_offsets


def check_routing(r, ids, experts, case):
    want_counts, want_offsets = check_counts_and_offsets(r, ids, experts, case)
    flat = ids.reshape(-1).cpu()
    want_sorted = torch.sort(flat, stable=True).indices.int()
    got = r.sorted_slots.cpu()
    slots = want_sorted.numel()
    if got.shape != want_sorted.shape or not torch.equal(got.sort().values, torch.arange(slots, dtype=got.dtype)):
        outside = int(((got < 0) | (got >= slots)).sum()) if got.numel() else 0
        seen = torch.bincount(got[(got >= 0) & (got < slots)].long(), minlength=slots) if got.numel() else got
        fail(
            T6,
            f"{case}：sorted_slots 不是 0..{slots - 1} 的一个排列：{outside} 个值越界，"
            f"{int((seen == 0).sum())} 个 slot 没有出现（有的位置没写，或两个 slot 写到了同一个位置）",
            f"{case}: sorted_slots is not a permutation of 0..{slots - 1}: {count(outside, 'value')} out of range, "
            f"{count(int((seen == 0).sum()), 'slot')} missing (positions never written, or two slots written to one)",
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
    inverse = torch.empty_like(want_sorted)
    inverse[want_sorted.long()] = torch.arange(want_sorted.numel(), dtype=torch.int32)
    if not torch.equal(r.slot_pos.cpu(), inverse):
        fail(
            T6,
            f"{case}：slot_pos 不是 sorted_slots 的逆：slot_pos[sorted_slots[pos]] 应当等于 pos",
            f"{case}: slot_pos is not the inverse of sorted_slots: slot_pos[sorted_slots[pos]] must be pos",
            "2.1",
        )
