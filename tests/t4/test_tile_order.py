"""T4.1: tile_coords puts the program ids in the grouped order, probed alone."""

import pytest
import torch

from course.i18n import say
from course.messages import read
from course.tile_order import grouped_order

from .order_slips import order_slip_words
from support import DEVICE

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T4.1 grouped program order
# ================================================================================================
def run_tile_coords(probes, num_pid_m, num_pid_n, group_m):
    out = torch.full((num_pid_m * num_pid_n, 2), -1, dtype=torch.int32, device=DEVICE)
    probes.tile_coords_probe[(num_pid_m * num_pid_n,)](out, num_pid_m, num_pid_n, group_m)
    return [tuple(p) for p in out.cpu().tolist()]


def picture(coords, num_pid_m, num_pid_n):
    """The pid that computed each tile, as the grid of C tiles ('?' never computed, '!' twice); every
    column as wide as the grid's largest pid, so that two pictures of one grid line up."""
    cells = [["?"] * num_pid_n for _ in range(num_pid_m)]
    for pid, (m, n) in enumerate(coords):
        if 0 <= m < num_pid_m and 0 <= n < num_pid_n:
            cells[m][n] = str(pid) if cells[m][n] == "?" else "!"
    width = len(str(num_pid_m * num_pid_n - 1)) + 1
    return "\n".join("    " + "".join(c.rjust(width) for c in row) for row in cells)


@pytest.mark.t4_1
def test_tile_coords_worked_example(probes):
    coords = run_tile_coords(probes, 4, 4, 2)
    swapped = (
        SWAPPED_WORDS
        if coords == swapped_quotient_order(4, 4, 2)
        else ROW_MAJOR_WORDS
        if coords == grouped_order(4, 4, 1)
        else GROUP_ID_WORDS
        if group_id_by_group_m(coords, 4, 4, 2)
        else TURNED_WORDS
        if coords == turned_order(4, 4, 2)
        else order_slip_words(coords, 4, 4, 2)
    )
    assert coords[5] == (1, 2), say(
        zh=f"4 x 4 的网格、GROUP_M = 2 时，pid 5 应该算 tile (1, 2)，实际是 {coords[5]}。{swapped}\n"
        f"手算一遍：num_pid_in_group = 8，group_id = 0，first_pid_m = 0，group_size_m = 2，pid_in_group = 5；"
        f"{read('T4.1')}",
        en=f"pid 5 of a 4 x 4 grid with GROUP_M = 2 must compute tile (1, 2), got {coords[5]}.{swapped}\n"
        f"By hand: num_pid_in_group = 8, group_id = 0, first_pid_m = 0, group_size_m = 2, pid_in_group = 5; "
        f"{read('T4.1')}",
    )


def swapped_quotient_order(num_pid_m, num_pid_n, group_m):
    """A first-timer's slip, in plain Python: the group right, but pid_m from the quotient of pid_in_group by
    group_size_m and pid_n from its remainder (down a column means the remainder is the row)."""
    order = []
    for pid in range(num_pid_m * num_pid_n):
        first = pid // (group_m * num_pid_n) * group_m
        rows = min(num_pid_m - first, group_m)
        order.append((first + pid % (group_m * num_pid_n) // rows, pid % (group_m * num_pid_n) % rows))
    return order


# Said only where the whole map is that slip's (on the 4 x 4 grid, GROUP_M = 2, no other slip here gives it).
SWAPPED_WORDS = say(
    zh="整张图正好是把商和余数用反的结果：组内先竖着走，所以 pid_in_group 除以 group_size_m 的余数是行"
    "（加上 first_pid_m 得 pid_m），商是列 pid_n。",
    en=" The whole map is what quotient and remainder swapped give: a group runs down a column first, so the "
    "remainder of pid_in_group by group_size_m is the row (plus first_pid_m, pid_m) and the quotient the "
    "column, pid_n.",
)


def turned_order(num_pid_m, num_pid_n, group_m):
    """The grouped order turned round, a correct order of another course: GROUP_M columns of tiles to a group,
    the pids running along a row first (the same L2 reuse), each tile once."""
    return [(m, n) for n, m in grouped_order(num_pid_n, num_pid_m, group_m)]


# Said only where the whole map is the grouped order turned round: right for L2, but not this lesson's order.
TURNED_WORDS = say(
    zh="整张图是把分组顺序转了个方向：GROUP_M 列 tile 一组，组内先沿一行走。它对 L2 一样有用，每个 tile 也只算一次，"
    "可本课的顺序是 GROUP_M 行一组、组内先竖着走（T5、T6 也按它放 tile）：pid_m 取 pid_in_group 除以 group_size_m "
    "的余数，pid_n 取商。",
    en=" The whole map is the grouped order turned round: GROUP_M columns of tiles to a group, the pids running "
    "along a row first. That reuses L2 as well and computes each tile once, but this lesson's order groups "
    "GROUP_M rows and runs down a column first (T5 and T6 place their tiles by it): pid_m from the remainder of "
    "pid_in_group by group_size_m, pid_n from the quotient.",
)


# Said only where the whole map is row-major, GROUP_M = 1's, though GROUP_M is larger.
ROW_MAJOR_WORDS = say(
    zh="整张图是行优先顺序，也就是 GROUP_M = 1 的顺序：pid 先沿一行往右走。分组顺序里，组内先竖着走"
    "（group_size_m 个 tile 一列），再往右移一列：pid_m 取 pid_in_group 除以 group_size_m 的余数，pid_n 取商。",
    en=" The whole map is row-major order, GROUP_M = 1's: the pids run along a row first. In the grouped order a "
    "group runs down a column first (group_size_m tiles), then moves one column right: pid_m from the remainder "
    "of pid_in_group by group_size_m, pid_n from the quotient.",
)


def modulo_group_m_order(num_pid_m, num_pid_n, group_m):
    """The classic slip, in plain Python: inside the last group, divide by GROUP_M, not by its real rows."""
    order = []
    for pid in range(num_pid_m * num_pid_n):
        first = pid // (group_m * num_pid_n) * group_m
        order.append((first + pid % (group_m * num_pid_n) % group_m, pid % (group_m * num_pid_n) // group_m))
    return order


def pid_not_position_order(num_pid_m, num_pid_n, group_m):
    """Another slip, in plain Python: pid_m from pid % group_size_m, the remainder of pid itself, not
    of its position in its group; the same map unless the group's first pid is no multiple of its rows."""
    order = []
    for pid in range(num_pid_m * num_pid_n):
        first = pid // (group_m * num_pid_n) * group_m
        rows = min(num_pid_m - first, group_m)
        order.append((first + pid % rows, pid % (group_m * num_pid_n) // rows))
    return order


def columns_by_group_m_order(num_pid_m, num_pid_n, group_m):
    """A slip of one of the two: pid_m by the group's real rows, pid_n = pid_in_group // GROUP_M; the
    same map unless the last group is short."""
    order = []
    for pid in range(num_pid_m * num_pid_n):
        first = pid // (group_m * num_pid_n) * group_m
        rows, at = min(num_pid_m - first, group_m), pid % (group_m * num_pid_n)
        order.append((first + at % rows, at // group_m))
    return order


def group_index_as_first_row_order(num_pid_m, num_pid_n, group_m):
    """A slip in plain Python: first_pid_m = group_id, the group's index taken for its first row (not times
    GROUP_M); group 0 is right, group g starts at row g and overlaps the groups before it."""
    order = []
    for pid in range(num_pid_m * num_pid_n):
        first = pid // (group_m * num_pid_n)
        rows, at = min(num_pid_m - first, group_m), pid % (group_m * num_pid_n)
        order.append((first + at % rows, at // rows))
    return order


def group_sized_by_rows_order(num_pid_m, num_pid_n, group_m):
    """A slip in plain Python: num_pid_in_group = GROUP_M * num_pid_m, a group counted in rows of num_pid_m tiles
    where a row of tiles holds num_pid_n; the same map on a square grid."""
    order = []
    for pid in range(num_pid_m * num_pid_n):
        first = pid // (group_m * num_pid_m) * group_m
        rows, at = min(num_pid_m - first, group_m), pid % (group_m * num_pid_m)
        order.append((first + at % rows, at // rows))
    return order


def group_id_by_group_m(got, num_pid_m, num_pid_n, group_m):
    """Whether `got` is what group_id = pid // GROUP_M gives (the rest of the body right): a group of GROUP_M rows
    holds GROUP_M * num_pid_n pids, not GROUP_M.  Compared on the pids whose group_size_m comes out positive alone,
    since the others divide by zero or by a negative count, whose result differs between the interpreter and a GPU;
    and only where at least one of those pids is off the grouped order."""
    per_group, want, off = group_m * num_pid_n, grouped_order(num_pid_m, num_pid_n, group_m), False
    for pid, tile in enumerate(got):
        first = pid // group_m * group_m
        rows, at = min(num_pid_m - first, group_m), pid % per_group
        if rows > 0:
            if tile != (first + at % rows, at // rows):
                return False
            off = off or tile != want[pid]
    return off


# Said only where the map is that slip's on every pid it defines.
GROUP_ID_WORDS = say(
    zh="这正是 group_id = pid // GROUP_M 的结果：一组是 GROUP_M 行 tile、每行 num_pid_n 个，含 num_pid_in_group "
    "个 pid，所以 group_id = pid // num_pid_in_group。",
    en=" It is what group_id = pid // GROUP_M gives: a group is GROUP_M rows of num_pid_n tiles, num_pid_in_group "
    "pids, so group_id = pid // num_pid_in_group.",
)


def slips_only_in_the_short_group(probes, got, num_pid_m, num_pid_n, group_m):
    """Whether `got` is the GROUP_M slip's map and the same code is right where every group is full.
    Matching the slip on one grid is not enough: on a grid that is all one short group of one row
    (1 x 6, GROUP_M = 8) quotient and remainder swapped give the very same map."""
    if got != modulo_group_m_order(num_pid_m, num_pid_n, group_m):
        return False
    full = 2 * group_m  # two whole groups, no short one: the slip is right there
    return run_tile_coords(probes, full, num_pid_n, group_m) == grouped_order(full, num_pid_n, group_m)


@pytest.mark.t4_1
@pytest.mark.parametrize(
    "num_pid_m, num_pid_n, group_m",
    # (7, 2, 4): a short last group of 3 rows starting at pid 8, which 3 does not divide, so taking
    # pid % group_size_m for pid_in_group % group_size_m shows (elsewhere the two agree)
    [(4, 4, 2), (4, 4, 1), (5, 3, 2), (3, 5, 4), (7, 2, 3), (1, 6, 8), (6, 1, 4), (2, 2, 8), (7, 2, 4)],
)
def test_tile_coords_exact_map(probes, num_pid_m, num_pid_n, group_m):
    got = run_tile_coords(probes, num_pid_m, num_pid_n, group_m)
    want = grouped_order(num_pid_m, num_pid_n, group_m)
    if got != want:
        rest = num_pid_m % group_m
        short = (
            ""
            if rest == 0 or not slips_only_in_the_short_group(probes, got, num_pid_m, num_pid_n, group_m)
            else say(
                zh=f"最后一组只有 {rest} 行：在这一组里，pid_m 和 pid_n 要按它实有的行数取模和整除，"
                "group_size_m = min(num_pid_m - first_pid_m, GROUP_M)，不是 GROUP_M。",
                en=f" The last group has only {rest} row{'s' if rest > 1 else ''}: there, take pid_m and pid_n "
                "modulo and divided by the rows it has, group_size_m = min(num_pid_m - first_pid_m, GROUP_M), "
                "not GROUP_M.",
            )
        )
        if (
            not short
            and got == swapped_quotient_order(num_pid_m, num_pid_n, group_m)
            and run_tile_coords(probes, 4, 4, 2) == swapped_quotient_order(4, 4, 2)  # on a 1 x 6 grid the
        ):  # GROUP_M slip gives the same map: the 4 x 4 grid, where it is right, tells them apart
            short = SWAPPED_WORDS
        if not short and got == grouped_order(num_pid_m, num_pid_n, 1):
            short = ROW_MAJOR_WORDS
        if not short and got == turned_order(num_pid_m, num_pid_n, group_m):
            short = TURNED_WORDS
        if not short and group_id_by_group_m(got, num_pid_m, num_pid_n, group_m):
            short = GROUP_ID_WORDS
        if not short and got == pid_not_position_order(num_pid_m, num_pid_n, group_m):
            short = say(
                zh="这正是用 pid % group_size_m 算 pid_m 的结果：取余的应该是 pid 在组内的位置"
                "（pid % num_pid_in_group），不是 pid 本身。",
                en=" It is what pid_m = first_pid_m + pid % group_size_m gives: take the remainder of the pid's "
                "position in its group (pid % num_pid_in_group), not of pid itself.",
            )
        if not short and rest and got == columns_by_group_m_order(num_pid_m, num_pid_n, group_m):
            short = say(
                zh=f"这正是 pid_m 按最后一组实有的 {rest} 行取模、pid_n 却用 pid_in_group // GROUP_M 的结果："
                "两个都要用 group_size_m，pid_n = pid_in_group // group_size_m。",
                en=f" It is what pid_m taken modulo the last group's real rows ({rest}) gives, with pid_n = "
                "pid_in_group // GROUP_M: use group_size_m for both, pid_n = pid_in_group // group_size_m.",
            )
        if not short and group_m > 1 and got == group_index_as_first_row_order(num_pid_m, num_pid_n, group_m):
            short = say(
                zh="这正是 first_pid_m 取成 group_id 的结果：第 0 组对，第 g 组却从第 g 行开始，和前面的组重叠。"
                "一组有 GROUP_M 行，所以 first_pid_m = group_id * GROUP_M。",
                en=" It is what first_pid_m = group_id gives: group 0 is right, but group g starts at row g, over "
                "the groups before it. A group has GROUP_M rows, so first_pid_m = group_id * GROUP_M.",
            )
        if not short and num_pid_m != num_pid_n and got == group_sized_by_rows_order(num_pid_m, num_pid_n, group_m):
            short = say(
                zh="这正是 num_pid_in_group = GROUP_M * num_pid_m 的结果：一组是 GROUP_M 行 tile，每行有 num_pid_n "
                "个，所以 num_pid_in_group = GROUP_M * num_pid_n。",
                en=" It is what num_pid_in_group = GROUP_M * num_pid_m gives: a group is GROUP_M rows of tiles, "
                "num_pid_n tiles each, so num_pid_in_group = GROUP_M * num_pid_n.",
            )
        short = short or order_slip_words(got, num_pid_m, num_pid_n, group_m)  # hunt36's slips, tried last
        yours, expected = picture(got, num_pid_m, num_pid_n), picture(want, num_pid_m, num_pid_n)
        off = [(pid, t) for pid, t in enumerate(got) if not (0 <= t[0] < num_pid_m and 0 <= t[1] < num_pid_n)]
        shown = ", ".join(f"{pid} {t}" for pid, t in off[:6])  # one run of numbers: cases with it share a block
        outside = (
            say(
                zh=f"\n  落在网格外、所以不在图里的：{len(off)} 个 pid；前几个，每个后面是它算的 tile：{shown}",
                en=f"\n  outside the grid, so not in the picture: {len(off)} pid{'s' * (len(off) != 1)}; the "
                f"first, each with its tile: {shown}",
            )
            if off
            else ""
        )
        pytest.fail(
            say(
                zh=f"{num_pid_m} x {num_pid_n} 的网格、GROUP_M = {group_m} 时 tile 的顺序不对。{short}\n"
                f"  每个 tile 由哪个 pid 计算，你的：\n{yours}{outside}\n  应该是：\n{expected}\n"
                f"  （'?' = 没有程序算这个 tile，'!' = 不止一个程序算它）；{read('T4.1', '2', '2.2')}",
                en=f"wrong tile order for a {num_pid_m} x {num_pid_n} grid, GROUP_M = {group_m}.{short}\n"
                f"  which pid computes each tile, yours:\n{yours}{outside}\n  expected:\n{expected}\n"
                f"  ('?' = no program computes that tile, '!' = more than one); {read('T4.1', '2', '2.2')}",
            ),
            pytrace=False,
        )


@pytest.mark.t4_1
def test_tile_coords_is_a_bijection(probes):
    """Every tile computed exactly once, over many grids, short last groups included."""
    grids = [(9, 7, 4), (13, 3, 8), (3, 11, 2)] + [  # and five random ones, from the test's seed
        tuple(int(x) for x in torch.randint(1, 12, (2,))) + (2 ** int(torch.randint(0, 4, (1,))),) for _ in range(5)
    ]
    for num_pid_m, num_pid_n, group_m in grids:
        got = run_tile_coords(probes, num_pid_m, num_pid_n, group_m)
        tiles = {(m, n) for m in range(num_pid_m) for n in range(num_pid_n)}
        missing = sorted(tiles - set(got))
        repeated = sorted({t for t in got if got.count(t) > 1})
        outside = sorted({t for t in got if t not in tiles})
        assert not (missing or repeated or outside), say(
            zh=f"{num_pid_m} x {num_pid_n} 的网格、GROUP_M = {group_m}：每个 tile 必须恰好算一次。\n"
            f"  没人算的：{missing[:6]}\n  算了两次及以上的：{repeated[:6]}\n"
            f"  落在网格外的：{outside[:6]}\n{picture(got, num_pid_m, num_pid_n)}\n{read('T4.1')}",
            en=f"{num_pid_m} x {num_pid_n} grid, GROUP_M = {group_m}: every tile must be computed exactly once.\n"
            f"  never computed: {missing[:6]}\n  computed twice or more: {repeated[:6]}\n"
            f"  outside the grid: {outside[:6]}\n{picture(got, num_pid_m, num_pid_n)}\n{read('T4.1')}",
        )
