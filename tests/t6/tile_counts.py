"""What T6.2's test_tile_counts_and_places_alone (test_tile_schedule.py) says when expert_tile_counts is
wrong: its m_blocks and tile_ends against those the counts give, each wrong pattern named, and the lanes
of tile_ends past the experts, which must hold the total."""

import torch
import triton

from course.messages import fail

from .common import T6
from .schedule_checks import one_grid_words
from .stray import UNDEFINED_INT


def check_tile_counts(case, counts, bm, num_pid_n, want_m, want_ends, m_blocks, ends, spare):
    """Fail, naming the pattern, when expert_tile_counts gave m_blocks and tile_ends (ends: the experts'
    lanes, spare: the lanes past them) other than want_m and want_ends, the ones of counts."""
    tiles = want_ends[-1]
    if m_blocks != want_m or ends != want_ends:
        starts = m_blocks == want_m and ends == [end - m * num_pid_n for end, m in zip(want_ends, want_m, strict=True)]
        plus_one = m_blocks == [c // bm + 1 for c in counts]  # counts // BLOCK_M + 1: an m-block for the empty
        empty_one = not plus_one and m_blocks == [m or 1 for m in want_m]  # right but for the experts with no rows
        no_n = m_blocks == want_m and ends == torch.tensor(want_m).cumsum(0).tolist()  # num_pid_n left out
        # one short exactly where the last m-block holds one row: (counts + BLOCK_M - 2) // BLOCK_M, say
        one_row = m_blocks != want_m and m_blocks == [m - (c % bm == 1) for c, m in zip(counts, want_m, strict=True)]
        tiled = ends == want_ends and m_blocks == [m * num_pid_n for m in want_m]  # m_blocks given as tiles
        rows = m_blocks == list(counts)  # the rows themselves, not their m-blocks
        rounded = not rows and m_blocks == [m * bm for m in want_m]  # rows rounded up to whole m-blocks, not divided
        grid = one_grid_words(counts, bm, num_pid_n, m_blocks, ends)
        fail(
            T6,
            f"{case}：expert_tile_counts 应当给出 m_blocks {want_m}、tile_ends {want_ends}，得到 {m_blocks}、{ends}"
            + ("：这是每个专家的第一个 tile（不含自身的前缀和），不是 tile 的结尾" if starts else "")
            + (
                "：m_blocks 正是 counts // BLOCK_M + 1，没有行的专家也多了一个 M 块；要 cdiv(counts, BLOCK_M)"
                if plus_one
                else ""
            )
            + (
                "：m_blocks 只在没有行的专家上错了，它们各得了 1 个 M 块：比如 (counts - 1) // BLOCK_M + 1，"
                "Triton 的整数除法向 0 取整，counts = 0 时得 1；要 cdiv(counts, BLOCK_M)"
                if empty_one
                else ""
            )
            + (
                "：tile_ends 只是 m_blocks 的累加和，漏乘了 N 方向的块数：每个专家有 m_blocks * num_pid_n 个 tile"
                if no_n
                else ""
            )
            + (
                "：m_blocks 只在最后一个 M 块只有一行的专家（counts % BLOCK_M == 1）上少了 1：向上取整丢了这一行的块；"
                "要 cdiv(counts, BLOCK_M)"
                if one_row
                else ""
            )
            + (
                "：m_blocks 已经乘上了 num_pid_n（每个专家的 tile 数）：m_blocks 只是 M 块数，只在 tile_ends 里乘"
                if tiled
                else ""
            )
            + ("：m_blocks 就是 counts，每个专家的行数，不是 M 块数：要 cdiv(counts, BLOCK_M)" if rows else "")
            + (
                "：m_blocks 是行数向上取整到 BLOCK_M 的倍数（cdiv(counts, BLOCK_M) * BLOCK_M），是行，不是 M 块数："
                "不要再乘 BLOCK_M"
                if rounded
                else ""
            )
            + grid[0],
            f"{case}: expert_tile_counts should give m_blocks {want_m} and tile_ends {want_ends}, got {m_blocks} "
            f"and {ends}"
            + (": these are each expert's first tile (an exclusive sum), not the ends" if starts else "")
            + (
                ": m_blocks is counts // BLOCK_M + 1, an m-block even for an expert with no rows; it is "
                "cdiv(counts, BLOCK_M)"
                if plus_one
                else ""
            )
            + (
                ": m_blocks is wrong only for the experts with no rows, which got 1 each, as (counts - 1) // BLOCK_M "
                "+ 1 gives, say, where Triton's integer division rounds toward 0; it is cdiv(counts, BLOCK_M)"
                if empty_one
                else ""
            )
            + (
                ": tile_ends is the running sum of m_blocks alone, without the blocks along N: an expert has "
                "m_blocks * num_pid_n tiles"
                if no_n
                else ""
            )
            + (
                ": m_blocks is one short exactly for the experts whose last m-block holds one row (counts % BLOCK_M "
                "== 1): the rounding up lost that block; it is cdiv(counts, BLOCK_M)"
                if one_row
                else ""
            )
            + (
                ": m_blocks came back times num_pid_n (the tiles): it is the m-blocks alone; multiply in tile_ends"
                if tiled
                else ""
            )
            + (
                ": m_blocks is counts, each expert's rows, not its m-blocks; it is cdiv(counts, BLOCK_M)"
                if rows
                else ""
            )
            + (
                ": m_blocks is the rows rounded up to a multiple of BLOCK_M (cdiv(counts, BLOCK_M) * BLOCK_M), rows "
                "and not m-blocks: leave out the * BLOCK_M"
                if rounded
                else ""
            )
            + grid[1],
            "3.3",
        )
    # the spare lanes as counts' load leaves them where it has a mask and no other=0 (stray.py's UNDEFINED_INT)
    undefined = [tiles + (i + 1) * triton.cdiv(UNDEFINED_INT, bm) * num_pid_n for i in range(len(spare))]
    if spare and spare == undefined:
        fail(
            T6,
            f"{case}：expert_tile_counts 的 tile_ends 在专家之后的 lane 是 {spare}，不是总数 {tiles}：这些 lane 各算了 "
            f"{UNDEFINED_INT} 行，正是 T6 的测试在没有 other= 的掩码加载处读到的值。加载 counts 时给 other=0"
            "（不给时这些 lane 在 GPU 上是未定义的），不然总数 tl.max(tile_ends) 会超出真正的 tile 数",
            f"{case}: expert_tile_counts' tile_ends hold {spare} in the lanes past the experts, not the total {tiles}: "
            f"those lanes counted {UNDEFINED_INT} rows each, which is what the T6 tests read where a masked load has "
            "no other=.  Load counts with other=0 (without it those lanes are undefined on a GPU), or the total, "
            "tl.max(tile_ends), runs past the real tiles",
            "3.3",
        )
