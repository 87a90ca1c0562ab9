"""T4.1: more grouped-order slips, each a whole map in plain Python and the words said where a learner's map is
exactly that slip's (hunt36).  test_tile_order.py tries its own slips first; these only where none of those
matched, so that one map is never told two causes."""

from course.i18n import say


def _order(num_pid_m, num_pid_n, group_m, rows_of=min, at_of=None, column_of=None):
    """The grouped order with one piece swapped for a slip: rows_of(rows left, GROUP_M) is group_size_m,
    at_of(pid, pids per group) is pid_in_group and column_of(pid, pid_in_group) what is divided for pid_n."""
    order = []
    for pid in range(num_pid_m * num_pid_n):
        per_group = group_m * num_pid_n
        first = pid // per_group * group_m
        rows = rows_of(num_pid_m - first, group_m)
        at = pid % per_group if at_of is None else at_of(pid, group_m)
        order.append((first + at % rows, (at if column_of is None else column_of(pid, at)) // rows))
    return order


def larger_group_size_order(num_pid_m, num_pid_n, group_m):
    """group_size_m = tl.maximum(num_pid_m - first_pid_m, GROUP_M): the larger, so a group with rows to spare
    below it takes them all."""
    return _order(num_pid_m, num_pid_n, group_m, rows_of=max)


def position_mod_group_m_order(num_pid_m, num_pid_n, group_m):
    """pid_in_group = pid % GROUP_M: the position in the group counted in GROUP_M pids, not num_pid_in_group."""
    return _order(num_pid_m, num_pid_n, group_m, at_of=lambda pid, gm: pid % gm)


def column_from_pid_order(num_pid_m, num_pid_n, group_m):
    """pid_n = pid // group_size_m: pid itself divided, not its position in the group; group 0 is right."""
    return _order(num_pid_m, num_pid_n, group_m, column_of=lambda pid, at: pid)


ORDER_SLIPS = (
    (
        larger_group_size_order,
        say(
            zh="这正是 group_size_m 用 tl.maximum 的结果：下面还剩更多行时，一组就把它们全占了。最后一组可能不满 "
            "GROUP_M 行，所以取两者中较小的：group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)。",
            en=" It is what group_size_m = tl.maximum(num_pid_m - first_pid_m, GROUP_M) gives: a group with more rows "
            "left below it takes them all. The last group may have fewer than GROUP_M rows, so take the smaller: "
            "group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M).",
        ),
    ),
    (
        position_mod_group_m_order,
        say(
            zh="这正是 pid_in_group = pid % GROUP_M 的结果：一组有 num_pid_in_group = GROUP_M * num_pid_n 个 pid，"
            "所以 pid 在组内的位置是 pid % num_pid_in_group。",
            en=" It is what pid_in_group = pid % GROUP_M gives: a group holds num_pid_in_group = GROUP_M * num_pid_n "
            "pids, so a pid's position in its group is pid % num_pid_in_group.",
        ),
    ),
    (
        column_from_pid_order,
        say(
            zh="这正是 pid_n = pid // group_size_m 的结果：第 0 组对，后面的组列号越过了网格。要除的是 pid 在组内的"
            "位置：pid_n = pid_in_group // group_size_m。",
            en=" It is what pid_n = pid // group_size_m gives: group 0 is right, the later groups' columns run past "
            "the grid. Divide the pid's position in its group: pid_n = pid_in_group // group_size_m.",
        ),
    ),
)


def order_slip_words(got, num_pid_m, num_pid_n, group_m):
    """The words of the one slip here whose whole map `got` is and the grouped order is not, else ''."""
    right = _order(num_pid_m, num_pid_n, group_m)
    return next(
        (
            words
            for order, words in ORDER_SLIPS
            if order(num_pid_m, num_pid_n, group_m) != right and got == order(num_pid_m, num_pid_n, group_m)
        ),
        "",
    )
