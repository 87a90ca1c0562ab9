"""Where a known mistake of the tile loop puts every tile: check_trace (common.py) names such a
mistake only when each tile it checks is at the place that mistake gives."""


def known_places(rows, done, order, num_pid_n):
    """[(Chinese, English)] for each known mistake whose places every tile in `done` has: rows are the
    trace's (epilogues, k-blocks, program, pid_m, pid_n), order the grouped order T4 gives."""
    placed = [(t, (m, n)) for t, (_, _, _, m, n) in enumerate(rows) if t in done]
    first = min(done, default=0)  # the first tile of the loop: first_tile
    said = []
    if all(p == order[t][::-1] for t, p in placed):
        said.append(("pid_m 和 pid_n 拿反了", "pid_m and pid_n are the other way round"))
    if all(p == divmod(t, num_pid_n) for t, p in placed):
        said.append(
            (
                "每个 tile 都按行优先拆开了，没有经过 tile_coords(tile_id, ...)",
                "every tile was split row-major, not passed through tile_coords(tile_id, ...)",
            )
        )
    if first > 0 and all(p == order[t - first] for t, p in placed):  # tile_coords given tile_id - first_tile
        said.append(
            (
                f"每个 tile 都算在了编号小 {first} 的 tile 的位置：tile_coords 要传 tile_id 本身",
                f"every tile is at the place of the tile {first} before it: pass tile_id itself to tile_coords",
            )
        )
    return said
