"""Where a known mistake of the tile loop puts every tile: check_trace (common.py) names such a
mistake only when each tile it checks is at the place that mistake gives."""

from course.tile_order import grouped_order


def known_places(rows, done, order, num_pid_n, group_m):
    """[(Chinese, English)] for each known mistake whose places every tile in `done` has: rows are the
    trace's (epilogues, k-blocks, program, pid_m, pid_n), order the grouped order T4 gives."""
    num_pid_m = len(order) // num_pid_n
    turned = grouped_order(num_pid_n, num_pid_m, group_m)  # tile_coords given num_pid_n, num_pid_m
    placed = [(t, (m, n)) for t, (_, _, _, m, n) in enumerate(rows) if t in done]
    first = min(done, default=0)  # the first tile of the loop: first_tile
    said = []
    if all(p == order[t][::-1] for t, p in placed):
        said.append(("pid_m 和 pid_n 拿反了", "pid_m and pid_n are the other way round"))
    if all(p == divmod(t, num_pid_n) for t, p in placed):
        said.append(
            (
                "每个 tile 都落在按行优先的位置上（GROUP_M = 1 的顺序）："
                "要经过 tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)，用配置的 GROUP_M",
                "every tile is at its row-major place (the order of GROUP_M = 1): pass it through "
                "tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M), with the config's GROUP_M",
            )
        )
    if num_pid_m != num_pid_n and all(p == turned[t] for t, p in placed):
        said.append(
            (
                "tile_coords 的 num_pid_m 和 num_pid_n 传反了：它要的是 (tile_id, num_pid_m, num_pid_n, GROUP_M)",
                "num_pid_m and num_pid_n were passed to tile_coords the other way round: it takes (tile_id, "
                "num_pid_m, num_pid_n, GROUP_M)",
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
