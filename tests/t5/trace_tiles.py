"""Lesson T5's checks of a trace's rows that say which tiles were done and how often: no tile past the last, and
epilogues handed other tiles' numbers (check_trace in common.py reads them)."""

from course.messages import fail
from course.registry import lesson

T5 = lesson("T5")


def no_tile_past(rows, tiles, case, stream_k=False):
    """rows[:tiles], after checking that the rows past them (a guard: tile ids the problem lacks) are untouched.
    stream_k: the launch may have run stream-K too, so either loop may have gone past the last tile."""
    past = [t for t, row in enumerate(rows) if t >= tiles and any(row[:2])]
    if past and stream_k:
        fail(
            T5,
            f"{case}：只有 {tiles} 个 tile（编号 0..{tiles - 1}），却做了编号 {past} 的 tile：整块 tile 的循环要停在 "
            "num_tiles 之前，stream-K 的各段加起来正好是 sk_tiles × k_blocks 个 k-block（sk_run 的最后一段停在 total）",
            f"{case}: there are {tiles} tiles (ids 0..{tiles - 1}), yet tile ids {past} were done: the loop over "
            "whole tiles stops before num_tiles, and the stream-K runs cover sk_tiles x k_blocks k-blocks in all "
            "(sk_run's last run ends at total)",
            "2.2",
            "4.1",
        )
    if past:
        fail(
            T5,
            f"{case}：只有 {tiles} 个 tile（编号 0..{tiles - 1}），却做了编号 {past} 的 tile："
            "循环要停在 num_tiles 之前",
            f"{case}: there are {tiles} tiles (ids 0..{tiles - 1}), yet tile ids {past} were done: the loop must "
            "stop before num_tiles",
            "2.2",
        )
    return rows[:tiles]


# What a tile finished 0 times or more than once means, for a loop over whole tiles whose wrong start
# or step was not recognised (tile_loop_like), and for stream-K (whose tiles are finished by their owner).
EPILOGUES_OFF = {
    "loop": (
        "（每个 tile 恰好一次：循环从 first_tile + pid 开始，步长 NUM_PROGS）",
        " (each tile exactly once: the loop starts at first_tile + pid and steps by NUM_PROGS)",
    ),
    "stream-K": (
        "（0 次：没有程序作为 owner 给它收尾；多次：不止一个；owner 是段里含这个 tile 最后一个 k-block 的程序）",
        " (0: no program finished it as its owner; more: more than one did; the owner is the program whose run "
        "holds the tile's last k-block)",
    ),
}


def epilogues_on_other_tiles(rows, done, k_blocks, case, step_section):
    """Fail where every tile in `done` summed all its k-blocks and as many epilogues ran as there are
    tiles, yet not one per tile: k_segment counts under the tile number it is given and finish_tile
    under its own, so the loop visited each tile once and finish_tile was given other numbers."""
    epilogues = [rows[t][0] for t in done]
    if all(rows[t][1] == k_blocks for t in done) and sum(epilogues) == len(epilogues) and set(epilogues) != {1}:
        off = [(t, rows[t][0]) for t in done if rows[t][0] != 1][:4]
        shown_zh = "，".join(f"tile {t} {n} 次" for t, n in off)
        shown_en = ", ".join(f"tile {t}: {n}" for t, n in off)
        fail(
            T5,
            f"{case}：每个 tile 的 k-block 都正好算了一遍，epilogue 的总次数也等于 tile 数，却不是每个 tile 一次"
            f"（{shown_zh}）：finish_tile 拿到的 tile 编号和它前面 k_segment 拿到的不一样；两个都传这一轮的 tile_id",
            f"{case}: every tile summed its k-blocks once and as many epilogues ran as there are tiles, yet not one "
            f"per tile (epilogues: {shown_en}): finish_tile was given other tile numbers than the k_segment before "
            "it; pass both this iteration's tile_id",
            step_section,
        )
