"""Answers the suite compares against, computed without any of the kernel's formulas."""


def grouped_order(num_pid_m, num_pid_n, group_m):
    """The grouped tile order: hand out pids group by group, column by column, row by row."""
    order = []
    for first in range(0, num_pid_m, group_m):
        rows = range(first, min(first + group_m, num_pid_m))
        order += [(m, n) for n in range(num_pid_n) for m in rows]
    return order
