"""A stream-K owner that hands sk_program_of its tile's number (tile_id) where the tile's first k-block, an index
into the stream-K part's k-blocks (tile_begin), is meant: the owner collects from a program too early, whose flag
nobody raises or an earlier owner has put back, and waits for good; the wait's words alone told it (left36b's
hunt).  While a launch runs inside waits_told, the graded module's sk_program_of is wrapped so that its calls are
kept; at a wait, the last call is read against the waiting sk_collect_partials and the launch's stream_k_tiles
(their frames are in the wait's traceback, locals and all)."""

import inspect
import traceback
from contextlib import contextmanager

from course.errors import error_chain
from course.registry import lesson
from course.seam import load

from .sk_counts import scalar
from .stream_k_cases import sk_holder, sk_owner
from support import INTERPRETING


@contextmanager
def program_of_calls():
    """[(argument, result)] of each call of the graded module's sk_program_of while inside, as ints (None where one
    is not); on the interpreter alone (elsewhere the list stays empty)."""
    calls = []
    t5 = load(lesson("T5")) if INTERPRETING else None
    given = getattr(t5, "sk_program_of", None)
    if given is None:
        yield calls
        return
    signature = inspect.signature(getattr(given, "fn", given))

    def sk_program_of(*args, **kwargs):
        out = given(*args, **kwargs)
        first = next(iter(signature.bind(*args, **kwargs).arguments.values()))
        calls.append((scalar(first), scalar(out)))
        return out

    t5.sk_program_of = sk_program_of
    try:
        yield calls
    finally:
        t5.sk_program_of = given


def frames_of(exc):
    """Every frame in the tracebacks along exc's chain, outermost first within each."""
    return [frame for error in error_chain(exc, suppressed=True) for frame, _ in traceback.walk_tb(error.__traceback__)]


def tile_id_words(exc, calls):
    """(zh, en) where the program waiting in sk_collect_partials (exc: the wait) got its first_pid from the last
    sk_program_of call, and that call was handed the number of a tile the program owns (not 0: tile 0's number and
    first k-block are both 0) where its first k-block is meant; None otherwise."""
    frames = frames_of(exc)
    collect = [f for f in frames if f.f_code.co_name == "sk_collect_partials"]
    walk = [f for f in frames if f.f_code.co_name == "stream_k_tiles"]
    if not calls or not collect or not walk:
        return None
    first, pid = (scalar(collect[-1].f_locals.get(n)) for n in ("first_pid", "pid"))
    held = {n: scalar(walk[-1].f_locals.get(n)) for n in ("K", "BLOCK_K", "sk_tiles", "NUM_PROGS")}
    it, got = calls[-1]
    if None in (first, pid, it, got, *held.values()) or got != first or not held["BLOCK_K"] > 0:
        return None
    k_blocks = -(-held["K"] // held["BLOCK_K"])
    sk_tiles, progs = held["sk_tiles"], held["NUM_PROGS"]
    total = sk_tiles * k_blocks
    if k_blocks < 2 or not 0 < it < sk_tiles or sk_owner(it, k_blocks, total, progs) != pid:
        return None
    if it % k_blocks == 0 and sk_owner(it // k_blocks, k_blocks, total, progs) == pid:
        return None  # it is also the first k-block of a tile this program owns: a right call, as far as told here
    right = sk_holder(it * k_blocks, total, progs)
    if right == first:
        return None
    return (
        f"这里 sk_program_of 拿到的是 tile 号 {it}（tile_id），给出 first_pid = {first}；它要的是 k-block 的序号："
        f"tile {it} 的第一个 k-block 是 tile_begin = {it * k_blocks}，在程序 {right} 的段里，"
        "所以 first_pid = sk_program_of(tile_begin, total, NUM_PROGS)",
        f"here sk_program_of was handed the tile's number, {it} (tile_id), and gave first_pid = {first}; it takes a "
        f"k-block's index: tile {it}'s first k-block is tile_begin = {it * k_blocks}, in program {right}'s run, so "
        "first_pid = sk_program_of(tile_begin, total, NUM_PROGS)",
    )
