"""The arithmetic tools/explainers/counts.py shows in the explainers agrees with an enumeration of the grouped
order (the same oracle as the suite's) and with tools/study/l2sim.py's."""

import pytest

from course.tile_order import grouped_order
from tools.core import tiles
from tools.explainers import counts
from tools.study import l2sim


@pytest.mark.parametrize("grid", [(4, 4, 2), (5, 3, 2), (3, 5, 4), (7, 2, 3), (9, 7, 4), (4, 4, 1)])
def test_coords_walks_the_grouped_order(grid):
    m, n, g = grid
    got = [(v["pid_m"], v["pid_n"]) for v in (tiles.coords(p, m, n, g) for p in range(m * n))]
    assert got == grouped_order(m, n, g)
    assert got == [l2sim.tile_of(p, m, n, g) for p in range(m * n)]


def test_the_mistake_shown_in_section_2_really_is_one():
    m, n, g = 5, 3, 2
    wrong = [(v["pid_m"], v["pid_n"]) for v in (tiles.coords(p, m, n, g, modulo_group_m=True) for p in range(m * n))]
    assert wrong != grouped_order(m, n, g)
    assert (5, 0) in wrong and (4, 2) not in wrong  # a tile outside the grid, a tile never computed


def test_fusion_counts_the_extra_round_trip():
    text = counts.fusion(8192, 8192, 1024, "fp16", "en")
    assert "| 160.02 |" in text and "| 416.02 |" in text  # 16 + 16 + 128 MiB, then + 2 * 128 MiB


def test_first_wave_panels_match_section_2():
    assert counts.first_wave_panels(4, 4, 1, 4) == (1, 4)  # 1 + 4 = 5 panels
    assert counts.first_wave_panels(4, 4, 2, 4) == (2, 2)  # 2 + 2 = 4 panels
    assert counts.first_wave_panels(64, 32, 1, 132) == (5, 32)  # 132 = 4 rows of 32, and 4 more
    assert counts.first_wave_panels(64, 32, 8, 132) == (8, 17)  # 132 = 16 columns of 8, and 4 more
