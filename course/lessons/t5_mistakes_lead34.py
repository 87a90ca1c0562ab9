"""Lesson T5's mutants of our own from session 34's lead (2026-12-05): persistent_grid computing another count than
min(num_sms, num_tiles), which test_persistent_grid had shown as the expected and the got count alone (zhlearner15b:
only described).  tests/t5/test_tile_loop.py's grid_formula now asks the learner's persistent_grid at six probes and
names the formula where it is one of five at every probe.  Only make check runs them (table=False); each must be
caught by its test, whose message names its cause (LEAD34_CAUSES here, gathered into t5_mistakes.CAUSES).  The SM
count alone (grid-not-capped) and the tile count alone (hunt12-grid-one-per-tile) were mutants already; they now
carry causes grid-is-sms and grid-is-tiles.
"""

from course.lessons.t5_mistakes_own import own

GRID = "    return min(num_sms, num_tiles)\n"

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEAD34_CAUSES = {
    "grid-is-sms": ("都返回 num_sms，没有和 tile 数取最小值", "returns num_sms, not capped at the number of tiles"),
    "grid-is-tiles": ("都返回 num_tiles：一个 tile 一个程序", "returns num_tiles: one program per tile"),
    "grid-is-max": ("都返回 max(num_sms, num_tiles)", "returns max(num_sms, num_tiles)"),
    "grid-plus-one": ("min(num_sms, num_tiles) + 1：多了一个", "min(num_sms, num_tiles) + 1: one too many"),
    "grid-minus-one": ("min(num_sms, num_tiles) - 1：少了一个", "min(num_sms, num_tiles) - 1: one too few"),
}

LEAD34 = (
    own(
        "lead34-grid-max",
        "T5.1",
        "persistent_grid returns max(num_sms, num_tiles) (session 34's lead)",
        "2.2",
        GRID,
        "    return max(num_sms, num_tiles)\n",
        "test_persistent_grid[1-132-1]",
        "grid-is-max",
    ),
    own(
        "lead34-grid-plus-one",
        "T5.1",
        "persistent_grid returns min(num_sms, num_tiles) + 1 (session 34's lead)",
        "2.2",
        GRID,
        "    return min(num_sms, num_tiles) + 1\n",
        "test_persistent_grid[1-132-1]",
        "grid-plus-one",
    ),
    own(
        "lead34-grid-minus-one",
        "T5.1",
        "persistent_grid returns min(num_sms, num_tiles) - 1 (session 34's lead)",
        "2.2",
        GRID,
        "    return min(num_sms, num_tiles) - 1\n",
        "test_persistent_grid[1-132-1]",
        "grid-minus-one",
    ),
)
