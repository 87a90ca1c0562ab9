"""T5.1: the k-blocks the tile loop hands k_segment, seen call by call on the interpreter.

The count-only trace keeps kb_end - kb_begin alone, so a tile loop that passes k_segment k-blocks 1 .. cdiv(K,
BLOCK_K) (the first k-block skipped) counts as one that stops a k-block short (K // BLOCK_K, or cdiv - 1), and was
told as one of those (hunt16).  Here k_segment is wrapped, as T6's test_tile_handoff wraps tile_product, so that each
call's kb_begin and kb_end are recorded before the given function runs."""

import inspect

import numpy as np

from course.messages import fail

from .common import T5
from support import INTERPRETING


def scalar(v):
    """An argument's value as an int: an interpreter tensor's one element, a constexpr's value, or an int."""
    v = getattr(v, "value", v)
    data = getattr(getattr(v, "handle", None), "data", v)
    return int(np.asarray(data).reshape(-1)[0])


def k_segment_calls(t5, launch):
    """[(tile_id, kb_begin, kb_end)] of every k_segment call while launch() runs, k_segment wrapped in t5."""
    calls, given = [], t5.k_segment
    signature = inspect.signature(getattr(given, "fn", given))

    def k_segment(*args, **kwargs):
        bound = signature.bind(*args, **kwargs).arguments
        calls.append(tuple(scalar(bound[name]) for name in ("tile_id", "kb_begin", "kb_end")))
        return given(*args, **kwargs)

    t5.k_segment = k_segment
    try:
        launch()
    finally:
        t5.k_segment = given
    return calls


def fail_if_k_blocks_from_one(t5, launch, k_blocks, case):
    """Fail where every call of k_segment in launch() was handed k-blocks 1 .. k_blocks: the loop over whole tiles
    skips each tile's first k-block.  On the interpreter alone (the wrapper runs there)."""
    if not INTERPRETING:
        return
    calls = k_segment_calls(t5, launch)
    if not calls or any((b, e) != (1, k_blocks) for _, b, e in calls):
        return
    fail(
        T5,
        f"{case}：每个 tile 都少算了一个 k-block：data_parallel_tiles 每次交给 k_segment 的都是第 1 到 {k_blocks} 个 "
        f"k-block（kb_begin = 1, kb_end = {k_blocks}），第 0 个 k-block 一次也没有算；一整块 tile 的 k-block 是 "
        "0 .. tl.cdiv(K, BLOCK_K)，kb_begin 传 0",
        f"{case}: every tile summed one k-block too few: data_parallel_tiles handed k_segment k-blocks 1 to "
        f"{k_blocks} each time (kb_begin = 1, kb_end = {k_blocks}), so k-block 0 was never summed; a whole tile's "
        "k-blocks are 0 .. tl.cdiv(K, BLOCK_K), so kb_begin is 0",
        "2.2",
        "2.3",
    )
