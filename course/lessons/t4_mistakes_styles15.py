"""Lesson T4's mutants of our own from the fifteenth styles round (styles15, 2026-12-05): tile_coords in the grouped
order turned round, GROUP_M columns of tiles to a group and the pids along a row first, a correct order of another
course (each tile once, the same L2 reuse) but not this lesson's.  test_tile_order had failed it as a wrong tile
order with the map alone; it now says which order it is and how the lesson's differs.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t4_mistakes.CAUSES, STYLES15_CAUSES here).  t4_mistakes.py gathers them last, and their causes too.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
STYLES15_CAUSES = {
    # tests/t4/test_tile_order.py: the whole map is turned_order's
    "order-turned": ("整张图是把分组顺序转了个方向", "map is the grouped order turned round"),
}

GROUPED = (
    "    num_pid_in_group = GROUP_M * num_pid_n\n"
    "    group_id = pid // num_pid_in_group\n"
    "    first_pid_m = group_id * GROUP_M\n"
    "    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)  # the last group may be short\n"
    "    pid_in_group = pid % num_pid_in_group\n"
    "    pid_m = first_pid_m + pid_in_group % group_size_m\n"
    "    pid_n = pid_in_group // group_size_m\n"
)

STYLES15 = (
    mutant(
        "styles15-grouped-by-columns",
        "T4.1",
        "2",
        GROUPED,
        "    num_pid_in_group = GROUP_M * num_pid_m\n"
        "    group_id = pid // num_pid_in_group\n"
        "    first_pid_n = group_id * GROUP_M\n"
        "    group_size_n = tl.minimum(num_pid_n - first_pid_n, GROUP_M)\n"
        "    pid_in_group = pid % num_pid_in_group\n"
        "    pid_n = first_pid_n + pid_in_group % group_size_n\n"
        "    pid_m = pid_in_group // group_size_n\n",
        "test_tile_coords_exact_map[5-3-2]",
        "order-turned",
        zh="tile_coords 让 GROUP_M 列 tile 成一组、pid 先沿一行走：分组顺序转了个方向，"
        "只被说成 tile 顺序不对（styles15）",
        en="tile_coords groups GROUP_M columns of tiles, the pids along a row first: the grouped order turned "
        "round, told only as a wrong tile order (styles15)",
    ),
)
