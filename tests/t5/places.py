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
    others = [  # tile_coords given another GROUP_M than the config's (1 is the row-major case above)
        g
        for g in range(2, 9)
        if g != group_m
        and grouped_order(num_pid_m, num_pid_n, g) != order
        and all(p == grouped_order(num_pid_m, num_pid_n, g)[t] for t, p in placed)
    ]
    if others:
        many = others[-1] == 8 and others[0] >= num_pid_m  # from num_pid_m rows on, one group: the same order
        listed = (
            (f"{others[0]} 或更大", f"{others[0]} or more")
            if many
            else ("、".join(map(str, others)), " or ".join(map(str, others)))
        )
        said.append(
            (
                f"每个 tile 都落在 tile_coords 用 GROUP_M = {listed[0]} 时给的位置上，不是配置的 GROUP_M = {group_m}："
                "GROUP_M 要原样传下去",
                f"every tile is where tile_coords puts it with GROUP_M = {listed[1]}, not the config's GROUP_M = "
                f"{group_m}: pass GROUP_M on as it is",
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
