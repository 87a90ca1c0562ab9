"""A stream-K walk with BLOCK_K where the tile's k-block count (k_blocks) is meant, in the owner test
(it_end == tile_begin + BLOCK_K) or in the tile's number (tile_id = (it_end - 1) // BLOCK_K).  The suite's
stream-K probes run BLOCK_K = 32, more than any case's k_blocks: the first never takes a segment for the owner,
the second counts every k-block on tile 0, and both were told 'tile 0 had 0 epilogues' alone (left36's hunt).
Other slips give those counts too (an owner test that never holds, a tile's number divided by K), so where the
counts match, the walk is launched once more, count-only, with a BLOCK_K that tells BLOCK_K from k_blocks and
from K; only where that launch gives the slip's counts too is it named."""

import torch

from .common import new_trace, trace_rows
from .crashes import waits_told
from .stream_k_cases import sk_runs
from support import DEVICE

PROBE_BLOCK_K = 32  # the BLOCK_K of test_stream_k_every_tile_once's launches


def walk_by(k_blocks, sk_tiles, progs, tile_len, owner_len):
    """([epilogues], [k-blocks]) per stream-K tile of a walk whose tile is (it_end - 1) // tile_len and whose owner
    test is it_end == tile_begin + owner_len (the right walk: both k_blocks); None where a segment lies past the
    stream-K tiles or is empty (the walk would stray or never end: nothing to compare)."""
    epilogues, kbs = [0] * sk_tiles, [0] * sk_tiles
    for lo, hi in sk_runs(sk_tiles * k_blocks, progs):
        it_end = hi
        while it_end > lo:
            tile = (it_end - 1) // tile_len
            begin = tile * k_blocks
            it_begin = max(begin, lo)
            if tile >= sk_tiles or it_begin >= it_end:
                return None
            kbs[tile] += it_end - it_begin
            epilogues[tile] += it_end == begin + owner_len
            it_end = it_begin
    return epilogues, kbs


# (the walk's (tile_len, owner_len) from (k_blocks, BLOCK_K), the launch that tells it apart as (k_blocks, BLOCK_K,
# sk_tiles, programs), zh, en); the launch's K is k_blocks * BLOCK_K, its grid 1 x sk_tiles
SLIPS = (
    (
        lambda kb, bk: (kb, bk),
        (4, 2, 2, 3),
        "每个 tile 的 epilogue 次数正好是把 owner 判成 it_end == tile_begin + BLOCK_K 的结果（BLOCK_K = {bk} 比"
        "每个 tile 的 {kb} 个 k-block 多，这个判断从不成立；另用 BLOCK_K = 2、每个 tile 4 个 k-block 启动一次，"
        "收尾的正是段终点落在 tile_begin + 2 的程序）：BLOCK_K 当成了 tile 的 k-block 个数；owner 是 "
        "it_end == tile_begin + k_blocks 的那一段",
        "every tile's epilogues are what an owner test of it_end == tile_begin + BLOCK_K gives (BLOCK_K = {bk} is "
        "more than a tile's {kb} k-blocks, so it never holds; launched again with BLOCK_K = 2 and 4 k-blocks a tile, "
        "the tiles were finished by the segments ending at tile_begin + 2): BLOCK_K was taken for the tile's k-block "
        "count; the owner is the segment with it_end == tile_begin + k_blocks",
    ),
    (
        lambda kb, bk: (bk, kb),
        (2, 3, 3, 2),
        "每个 tile 的 epilogue 和 k-block 个数正好是 tile_id = (it_end - 1) // BLOCK_K 的结果（BLOCK_K = {bk}："
        "k-block 全记在了前面的 tile 上；另用 BLOCK_K = 3、每个 tile 2 个 k-block 启动一次也是如此）：BLOCK_K "
        "当成了 tile 的 k-block 个数；k-block it 属于 tile it // k_blocks，所以 tile_id = (it_end - 1) // k_blocks",
        "every tile's epilogues and k-blocks are what tile_id = (it_end - 1) // BLOCK_K gives (BLOCK_K = {bk}: the "
        "k-blocks all counted on the first tiles; launched again with BLOCK_K = 3 and 2 k-blocks a tile, the same): "
        "BLOCK_K was taken for the tile's k-block count; k-block it belongs to tile it // k_blocks, so tile_id = "
        "(it_end - 1) // k_blocks",
    ),
)


def block_k_walk_words(rows, k_blocks, sk_tiles, progs, probes, case):
    """(zh, en) of the one SLIPS whose counts per stream-K tile are the rows given (a launch with BLOCK_K 32) and
    those of its own launch too, where that launch tells it from k_blocks, from K and from the right walk; None
    otherwise."""
    seen = ([r[0] for r in rows[:sk_tiles]], [r[1] for r in rows[:sk_tiles]])
    if any(r[0] or r[1] for r in rows[sk_tiles:]):
        return None
    for lens, (kb, bk, tiles, p), zh, en in SLIPS:
        slip = walk_by(k_blocks, sk_tiles, progs, *lens(k_blocks, PROBE_BLOCK_K))
        if slip is None or slip != seen:
            continue
        want = walk_by(kb, tiles, p, *lens(kb, bk))
        others = (walk_by(kb, tiles, p, kb, kb), walk_by(kb, tiles, p, *lens(kb, kb * bk)))  # right, K for BLOCK_K
        if want is None or want in others:  # a launch that cannot tell the slip apart names nothing
            continue
        trace = new_trace(tiles)
        partials = torch.zeros(p * 16 * 16, device=DEVICE)
        flags = torch.zeros(p, dtype=torch.int32, device=DEVICE)
        with waits_told(case):
            probes.stream_k_probe[(p,)](trace, partials, flags, kb * bk, tiles, 1, tiles, p, bk, 2)
        got = trace_rows(trace)
        if ([r[0] for r in got], [r[1] for r in got]) == want:
            return zh.format(kb=k_blocks, bk=PROBE_BLOCK_K), en.format(kb=k_blocks, bk=PROBE_BLOCK_K)
    return None
