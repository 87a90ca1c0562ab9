"""T6.2: what grouped_tiles hands tile_product is what it hands finish_tile.  The record-only trace shows
finish_tile's arguments alone, and with TRACE=2 tile_product computes nothing, so a tile whose product
is asked for another column block (pid_m passed where pid_n goes, say) passed T6.2 and failed T6.3
later with a relative error.  On the interpreter, tile_product is wrapped here so that each call's
rows, expert and column block are recorded before the given function runs."""

import inspect

import numpy as np
import pytest

from course.i18n import say
from course.messages import fail

from .common import T6
from .schedule_checks import run_schedule
from .schedules import FINISH_PIDS_SWAPPED, expected_tiles, finish_pids_swapped
from support import INTERPRETING

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's

# (rows per expert, BLOCK_M, BLOCK_N, N, programs, GROUP_M): pid_m and pid_n differ in many tiles here
CASES = [([5, 0, 9], 4, 16, 32, 3, 2), ([3, 17, 1, 0, 30, 2, 0, 5, 12], 8, 16, 24, 4, 2)]
# tile_product's arguments that finish_tile also gets, in the trace's order: (name, its column there)
SHARED = (("expert", 1), ("pid_n", 3), ("row_begin", 4), ("row_end", 5))
NAMES_ZH = {"expert": "专家号", "pid_n": "pid_n", "row_begin": "row_begin", "row_end": "row_end"}


def scalar(v):
    """An argument's value as an int: an interpreter tensor's one element, a constexpr's value, or an int."""
    v = getattr(v, "value", v)
    data = getattr(getattr(v, "handle", None), "data", v)
    return int(np.asarray(data).reshape(-1)[0])


def recording(t6, calls):
    """A stand-in for t6.tile_product that records (program, expert, pid_n, row_begin, row_end) into calls and
    returns what the given function returns."""
    given = t6.tile_product
    signature = inspect.signature(getattr(given, "fn", given))

    def tile_product(*args, **kwargs):
        import triton.language as tl

        bound = signature.bind(*args, **kwargs).arguments
        calls.append((scalar(tl.program_id(0)), *(scalar(bound[name]) for name, _ in SHARED)))
        return given(*args, **kwargs)

    return tile_product


@pytest.mark.t6_2
@pytest.mark.skipif(not INTERPRETING, reason="the interpreter runs the stand-in; the trace alone on a GPU")
def test_tile_product_gets_the_tile_finish_tile_gets(t6, probes, monkeypatch):
    """§3.3, §3.4: per program, the k-th call of tile_product has the expert, pid_n and rows of the k-th tile
    that program records (finish_tile's): the tile computed is the tile stored."""
    for counts, bm, bn, n, progs, group_m in CASES:
        calls = []
        monkeypatch.setattr(t6, "tile_product", recording(t6, calls))
        rows, _ = run_schedule(probes, counts, bm, bn, n, progs, group_m)
        monkeypatch.undo()
        done = [(t, r) for t, r in enumerate(rows) if r[0]]
        want_tiles = expected_tiles(counts, bm, bn, n)
        if any(r[0] != 1 or r[6] != t % progs for t, r in done):
            continue  # a schedule test_every_tile_of_every_expert_once names; nothing to pair here
        case = say(
            zh=f"每个专家的行数 {counts}，BLOCK_M={bm}，N={n}，BLOCK_N={bn}，{progs} 个程序",
            en=f"rows per expert {counts}, BLOCK_M={bm}, N={n}, BLOCK_N={bn}, {progs} programs",
        )
        for p in range(progs):
            stored = [(t, r) for t, r in done if r[6] == p]
            computed = [c[1:] for c in calls if c[0] == p]
            if len(computed) != len(stored):
                fail(
                    T6,
                    f"{case}：程序 {p} 调用了 {len(computed)} 次 tile_product，finish_tile 却记下了 {len(stored)} 个 "
                    "tile：grouped_tiles 的每个 tile 要先 tile_product、再 finish_tile，各一次",
                    f"{case}: program {p} called tile_product {len(computed)} times, and finish_tile recorded "
                    f"{len(stored)} tiles: grouped_tiles calls tile_product, then finish_tile, once each per tile",
                    "3.4",
                )
            for (t, r), got in zip(stored, computed, strict=True):
                want = tuple(r[col] for _, col in SHARED)
                wrong = [i for i in range(len(SHARED)) if got[i] != want[i]]
                if not wrong:
                    continue
                named = [SHARED[i][0] for i in wrong]
                as_pid_m = named == ["pid_n"] and all(
                    c[1] == rr[2] for (_, rr), c in zip(stored, computed, strict=True)
                )
                swapped = as_pid_m and finish_pids_swapped([rr for _, rr in done], set(want_tiles), counts, bm)
                given = ", ".join(f"{SHARED[i][0]}={got[i]}" for i in wrong)
                recorded = ", ".join(f"{SHARED[i][0]}={want[i]}" for i in wrong)
                fail(
                    T6,
                    f"{case}：tile {t}（专家 {r[1]}，pid_m={r[2]}，pid_n={r[3]}）交给 tile_product 的 "
                    f"{'、'.join(NAMES_ZH[x] for x in named)} 和交给 finish_tile 的不一样：tile_product 拿到 {given}，"
                    f"finish_tile 拿到 {recorded}，算出来的就不是存下去的那个 tile"
                    + (FINISH_PIDS_SWAPPED[0] if swapped else "")
                    + (
                        "：交给 tile_product 的 pid_n 正是这个 tile 的 pid_m（两个参数用混了）"
                        if as_pid_m and not swapped
                        else ""
                    ),
                    f"{case}: tile {t} (expert {r[1]}, pid_m={r[2]}, pid_n={r[3]}) hands tile_product another "
                    f"{', '.join(named)} than finish_tile: tile_product got {given}, finish_tile {recorded}, so the "
                    "tile computed is not the tile stored"
                    + (FINISH_PIDS_SWAPPED[1] if swapped else "")
                    + (
                        ": the pid_n tile_product got is the tile's pid_m (the two mixed up)"
                        if as_pid_m and not swapped
                        else ""
                    ),
                    "3.3",
                    "3.4",
                )
