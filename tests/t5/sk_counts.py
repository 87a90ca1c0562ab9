"""A stream-K count made in the wrong unit, read off the kernel as a stray access happens: T5's launches run on the
interpreter under an AddressWatch (stray.py), and at the first access outside every tensor the frame of the
learner's stream_k_tiles is still live, its locals in hand.  A total of sk_tiles * K (K's elements, hunt16) where
sk_tiles * cdiv(K, BLOCK_K) k-blocks are meant runs the programs' runs BLOCK_K times too far, into tiles past the
stream-K ones, and the stray words alone (the trace's atomic past its tensor) do not say why.  And the k-block
counts of a walk that steps back one k-block at a time (walked_by_one_words), which check_trace names."""

import sys

import numpy as np

from bounds import Strays

# the given parameters of stream_k_tiles (its signature is the lesson's): a learner's locals are the rest
GIVEN = {
    "given tile_id",
    "K",
    "BLOCK_K",
    "sk_tiles",
    "NUM_PROGS",
    "N",
    "num_pid_m",
    "num_pid_n",
    "BLOCK_M",
    "BLOCK_N",
    "GROUP_M",
}


def scalar(value):
    """A local's value as a Python int where it is one integer (an int, a constexpr, a one-element integer block
    under the interpreter); None otherwise."""
    value = getattr(value, "value", value)  # a tl.constexpr
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    data = getattr(getattr(value, "handle", None), "data", None)
    if isinstance(data, np.ndarray) and data.size == 1 and np.issubdtype(data.dtype, np.integer):
        return int(data.reshape(-1)[0])
    return None


class SkStrays(Strays):
    """Strays that also keep, at the launch's first stray access, the integer locals of the learner's
    stream_k_tiles (sk_locals: {name: int}), where that function is on the stack, and the tile_id the given
    k_segment or finish_tile below it was handed (in sk_locals as "given tile_id"); {} otherwise."""

    def clear(self):
        super().clear()
        self.sk_locals = {}

    def seen(self, what, addresses, inside):
        first = not self.first and bool((~inside).any())
        super().seen(what, addresses, inside)
        if first:
            frame, tile = sys._getframe(1), None
            while frame is not None and not (
                frame.f_code.co_name == "stream_k_tiles" and frame.f_code.co_filename.endswith(self.ours[0])
            ):
                if frame.f_code.co_name in ("k_segment", "finish_tile") and tile is None:
                    tile = scalar(frame.f_locals.get("tile_id"))
                frame = frame.f_back
            if frame is not None:
                found = {name: scalar(v) for name, v in frame.f_locals.items()}
                self.sk_locals = {name: v for name, v in found.items() if v is not None}
                if tile is not None:
                    self.sk_locals["given tile_id"] = tile


def total_in_elements_words(held):
    """(zh, en) words where the locals of stream_k_tiles (`held`, SkStrays.sk_locals) hold the stream-K part's
    total counted in K's elements, sk_tiles * K, or in k-blocks times BLOCK_K, where sk_tiles * cdiv(K, BLOCK_K)
    k-blocks are meant; ("", "") otherwise."""
    if not all(n in held for n in ("K", "BLOCK_K", "sk_tiles")):
        return "", ""
    K, block_k, sk_tiles = held["K"], held["BLOCK_K"], held["sk_tiles"]
    blocks = sk_tiles * -(-K // block_k)
    ways = ((sk_tiles * K, "sk_tiles * K"), (blocks * block_k, "sk_tiles * k_blocks * BLOCK_K"))  # (wrong total, how)
    for wrong, how in ways:
        names = [n for n, v in held.items() if n not in GIVEN and v == wrong]
        if wrong != blocks and names:
            return (
                f"stream_k_tiles 里的 {names[0]} = {wrong}，正是 {how}：stream-K 部分的总数数成了 K 的元素个数，"
                f"而各段切的是 k-block：sk_tiles * cdiv(K, BLOCK_K) = {blocks} 个；"
                "各段于是跑到了 stream-K 的 tile 之后",
                f"stream_k_tiles's {names[0]} = {wrong}, which is {how}: the stream-K part's total was counted in K's "
                f"elements, where the runs cut k-blocks, sk_tiles * cdiv(K, BLOCK_K) = {blocks} of them; so the runs "
                "reach past the stream-K tiles",
            )
    return "", ""


def tile_begin_in_elements_words(held):
    """(zh, en) words where the locals of stream_k_tiles (`held`, SkStrays.sk_locals) hold the first k-block of the
    tile handed to k_segment or finish_tile as tile_id * BLOCK_K (in K's elements) where tile_id * k_blocks is
    meant; ("", "") otherwise."""
    if not all(n in held for n in ("given tile_id", "K", "BLOCK_K")) or held["given tile_id"] < 1:
        return "", ""
    tile, block_k = held["given tile_id"], held["BLOCK_K"]
    k_blocks = -(-held["K"] // block_k)
    names = [n for n, v in held.items() if n not in GIVEN and v == tile * block_k != tile * k_blocks]
    if not names:
        return "", ""
    return (
        f"stream_k_tiles 里的 {names[0]} = {tile * block_k}，正是 tile_id * BLOCK_K（tile {tile}）：tile 的第一个 "
        f"k-block 按元素算了；k-block 的编号里，tile t 从 t * k_blocks = {tile * k_blocks} 开始",
        f"stream_k_tiles's {names[0]} = {tile * block_k}, which is tile_id * BLOCK_K (tile {tile}): the tile's first "
        f"k-block was counted in elements; in k-block numbers tile t starts at t * k_blocks = {tile * k_blocks}",
    )


def walked_by_one_words(rows, k_blocks, sk_tiles, progs, *_):
    """(zh, en) where each stream-K tile's k-blocks (rows' second column) are those of a walk that steps back one
    k-block at a time (it_end -= 1, or it_end - 1) instead of jumping to its segment's start: every step sums the
    segment again from its start, tl.maximum(tile_begin, run_begin), up to it_end, so a tile's k-blocks are summed
    over and over (learner37: 'tile 0 summed 15 k-blocks, 5 expected' alone); else None."""
    from .stream_k_cases import sk_runs

    kbs = [0] * sk_tiles
    for lo, hi in sk_runs(sk_tiles * k_blocks, progs):
        it_end = hi
        while it_end > lo:
            tile = (it_end - 1) // k_blocks
            if tile >= sk_tiles:
                return None
            it_begin = max(tile * k_blocks, lo)
            kbs[tile] += it_end - it_begin
            it_end -= 1
    if kbs == [k_blocks] * sk_tiles or [r[1] for r in rows[:sk_tiles]] != kbs:
        return None
    return (
        "每个 tile 算的 k-block 个数正好是 it_end 每次只退一个 k-block（it_end - 1）的结果：每退一步都把这一段从它的"
        "起点重新算到 it_end，同一些 k-block 算了一遍又一遍；算完一段，it_end 跳到这一段的起点：it_end = it_begin",
        "every tile's k-block count is what a walk that steps it_end back by one k-block (it_end - 1) gives: each "
        "step sums the segment again from its start up to it_end, the same k-blocks over and over; once a segment "
        "is summed, it_end jumps to that segment's start: it_end = it_begin",
    )
