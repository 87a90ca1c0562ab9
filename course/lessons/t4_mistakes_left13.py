"""Lesson T4's mutants of our own from the thirteenth round of leftovers (left13, 2026-12-05): each was caught with a
message that said what was observed alone (a map, a relative error, cells never written) where the check could tell
the cause, until that check was mended to compare with the pattern the mistake makes.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t4_mistakes.CAUSES, LEFT13_CAUSES here).  t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT13_CAUSES = {
    # tests/t4/test_tile_order.py: the map is group_id = pid // GROUP_M's on every pid it defines
    "group-id-by-group-m": ("这正是 group_id = pid // GROUP_M 的结果", "It is what group_id = pid // GROUP_M gives"),
    # tests/t4/mainloop_models.py and tests/t4/test_epilogue.py: the tiles start at pid_m and pid_n, not times the block
    "unscaled-rows": ("offs_m = pid_m + tl.arange(0, BLOCK_M)", "offs_m = pid_m + tl.arange(0, BLOCK_M)"),
    "unscaled-both": ("都少乘了 BLOCK_M、BLOCK_N", "without * BLOCK_M and * BLOCK_N"),
    # tests/t4/test_epilogue.py: C is, cell for cell, what a store on pid_m and pid_n swapped leaves
    "tiles-swapped": ("写在了 tile (pid_n, pid_m) 的位置上", "where tile (pid_n, pid_m) goes"),
    # tests/t4/test_wrapper_launch.py: a dict config was not refused, and no wrapper of matmul is given/t4_config.py's
    "config-checked-gone": ("matmul 上面已经没有 @config_checked 了", "matmul no longer carries @config_checked"),
}

MAINLOOP_OFFSETS = (
    "    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
    "    offs_k"
)
EPILOGUE_OFFSETS = (
    "    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
    "    c_ptrs"
)

LEFT13 = (
    mutant(
        "left13-group-id-by-group-m",
        "T4.1",
        "2",
        "    group_id = pid // num_pid_in_group\n",
        "    group_id = pid // GROUP_M\n",
        "test_tile_coords_worked_example",
        "group-id-by-group-m",
        zh="group_id = pid // GROUP_M，不是 pid // num_pid_in_group：消息只给了 pid 5 的 tile 和手算的值，"
        "再画出图（left13）",
        en="group_id = pid // GROUP_M, not pid // num_pid_in_group: the message gave pid 5's tile and the values by "
        "hand, then drew the map, alone (left13)",
    ),
    mutant(
        "left13-mainloop-offsets-unscaled",
        "T4.2",
        "3",
        MAINLOOP_OFFSETS,
        MAINLOOP_OFFSETS.replace("pid_m * BLOCK_M", "pid_m").replace("pid_n * BLOCK_N", "pid_n"),
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "unscaled-both",
        zh="mainloop 的 offs_m、offs_n 少乘了 BLOCK_M、BLOCK_N：消息只有相对误差和错了多少个单元（left13）",
        en="mainloop's offs_m and offs_n without * BLOCK_M and * BLOCK_N: the message said a relative error and how "
        "many cells were wrong, alone (left13)",
    ),
    mutant(
        "left13-mainloop-rows-unscaled",
        "T4.2",
        "3",
        MAINLOOP_OFFSETS,
        MAINLOOP_OFFSETS.replace("pid_m * BLOCK_M", "pid_m"),
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "unscaled-rows",
        zh="mainloop 的 offs_m 少乘了 BLOCK_M（offs_n 对）：同上（left13）",
        en="mainloop's offs_m without * BLOCK_M (offs_n right): as above (left13)",
    ),
    mutant(
        "left13-epilogue-offsets-unscaled",
        "T4.3",
        "5.1",
        EPILOGUE_OFFSETS,
        EPILOGUE_OFFSETS.replace("pid_m * BLOCK_M", "pid_m").replace("pid_n * BLOCK_N", "pid_n"),
        "test_epilogue[32-32-16-16-row-major-torch.float16]",
        "unscaled-both",
        zh="epilogue 的 offs_m、offs_n 少乘了 BLOCK_M、BLOCK_N：消息只说有多少单元没被写过、在哪几行哪几列（left13）",
        en="the epilogue's offs_m and offs_n without * BLOCK_M and * BLOCK_N: the message said how many cells were "
        "never written, and in which rows and columns, alone (left13)",
    ),
    mutant(
        "left13-epilogue-pids-swapped",
        "T4.3",
        "5.1",
        EPILOGUE_OFFSETS,
        EPILOGUE_OFFSETS.replace("pid_m * BLOCK_M", "pid_n * BLOCK_M").replace("pid_n * BLOCK_N", "pid_m * BLOCK_N"),
        "test_epilogue[32-32-16-16-row-major-torch.float16]",
        "tiles-swapped",
        zh="epilogue 里 pid_m 和 pid_n 对调（mainloop 对）：消息只说 C 和 acc 不一样、错了多少个单元（left13）",
        en="pid_m and pid_n swapped in the epilogue alone (the mainloop right): the message said C differs from acc, "
        "and how many cells, alone (left13)",
    ),
    mutant(
        "left13-config-check-removed",
        "T4.4",
        "6.2",
        "@config_checked  # given: a config that is neither None nor a triton.Config refused (given/t4_config.py)\n",
        "",
        "test_wrapper_launches_the_kernel",
        "config-checked-gone",
        zh="matmul 上面给定的 @config_checked 被删掉了：config 是 dict 时，错误从 T4.4 的代码里冒出来"
        "（AttributeError）；加这个装饰器之前就是这样，也没有一项检查试过别的类型的 config（left13）",
        en="the given @config_checked above matmul deleted: a dict config fails inside the T4.4 body (AttributeError); "
        "so it was before that decorator was given, and no check tried a config of another type (left13)",
    ),
)
