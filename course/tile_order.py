"""A CPU model of the grouped tile order (explainer §2), written without the kernel's formulas:
the answer T4.1's tests and the tile-order tools compare against."""


def grouped_order(num_pid_m, num_pid_n, group_m):
    """[(pid_m, pid_n) for each pid]: hand out tiles group by group, column by column, row by row."""
    order = []
    for first in range(0, num_pid_m, group_m):
        rows = range(first, min(first + group_m, num_pid_m))
        order += [(m, n) for n in range(num_pid_n) for m in rows]
    return order
