"""Lesson T5's tile loops told by their counts: which wrong loop over whole tiles finishes each tile as often as a
trace says (check_trace, tests/t5/common.py, names it)."""

from support import loop_like


def tile_loop_like(epilogues, programs, first):
    """loop_like (tests/support.py) with the starts a T5.1 loop may be written with."""
    starts = {"first_tile + pid": [first + p for p in range(programs)], "pid": list(range(programs))}
    return loop_like(epilogues, {**starts, "first_tile": [first] * programs}, programs)


def stops_at(epilogues, programs, first, end):
    """Whether `epilogues` are the counts of the right loop (first_tile + pid, step NUM_PROGS) that stops at end."""
    counts = [0] * len(epilogues)
    for p in range(programs):
        for t in range(first + p, end, programs):
            counts[t] += 1
    return counts == list(epilogues)


def stops_short_by_first(epilogues, programs, first):
    """Whether `epilogues` are the counts of the right loop that stops at num_tiles - first_tile, the tiles after
    first_tile counted instead of the tile numbers (first_tile > 1: at 1 it is the loop one_short names)."""
    return first > 1 and stops_at(epilogues, programs, first, len(epilogues) - first)


def one_short(epilogues, programs, first):
    """Whether `epilogues` are the counts of the right loop that stops at num_tiles - 1 (hunt16: a learner's end
    made inclusive by hand), leaving the last tile undone (first_tile != 1: there stops_short_by_first's loop too)."""
    return first != 1 and stops_at(epilogues, programs, first, len(epilogues) - 1)


def counted_under_pids(rows, k_blocks, programs, first, num_tiles):
    """Whether the trace's k-block counts are those of a right loop (program p: first + p, + programs, ...)
    whose k_segment counted every tile of program p under tile number p."""
    want = [0] * len(rows)
    for p in range(min(programs, len(rows))):
        want[p] = len(range(first + p, num_tiles, programs)) * k_blocks
    return any(want) and [r[1] for r in rows] == want


# Every tile one k-block over where K is a whole number of k-blocks (hunt16: stream-K's count was told as 'tile 0
# summed 6 k-blocks, 5 expected' alone; the tile loop's own test says the same in these words)
PAST_WHOLE_K = (
    "：每个 tile 都多算了一个 k-block：K 正好是整数个 k-block 时，K // BLOCK_K + 1 多数了一个；"
    "k_blocks = tl.cdiv(K, BLOCK_K)",
    ": every tile summed one k-block more: where K is a whole number of k-blocks, K // BLOCK_K + 1 counts one past "
    "them; k_blocks = tl.cdiv(K, BLOCK_K)",
)
