"""T5.4's two halves of a tile: what C holds when a subtiled store put a half in the wrong place, so
that a message names that mix-up only when C is exactly what it gives (tests of store_tile and of
the whole kernel with EPILOGUE_SUBTILE = 2)."""

import torch
import torch.nn.functional as F

from course.messages import fail

from .common import T5, even_odd_halves, fail_even_odd_halves
from support import rel_err


def moved_columns(x, bn, source):
    """x with column j of each bn-wide tile taken from that tile's column source(j, bn // 2)."""
    cols = torch.arange(x.shape[1], device=x.device)
    j = cols % bn
    return x[:, cols - j + source(j, bn // 2)]


# {key: acc -> acc with each tile's columns where that mix-up puts them}
LAYOUTS = {
    "even-odd-halves": even_odd_halves,
    "halves-swapped": lambda x, bn: moved_columns(x, bn, lambda j, h: (j + h) % (2 * h)),
    "left-half-twice": lambda x, bn: moved_columns(x, bn, lambda j, h: j % h),
    "right-half-twice": lambda x, bn: moved_columns(x, bn, lambda j, h: h + j % h),
}

CAUSES = {
    "halves-swapped": (
        "每个 tile 的两半互换了位置：左半块放的是 acc 的右半，右半块放的是左半。tl.split 先给出左半（tile 的前 "
        "BLOCK_N // 2 列）：存到第 pid_n * BLOCK_N 列，右半存到第 pid_n * BLOCK_N + BLOCK_N // 2 列",
        "each tile's two halves are in each other's place: its left half holds acc's right half and its right "
        "half the left one. tl.split gives the left half (the tile's first BLOCK_N // 2 columns) first: store it "
        "at column pid_n * BLOCK_N, the right one at pid_n * BLOCK_N + BLOCK_N // 2",
    ),
    "left-half-twice": (
        "每个 tile 的两半放的都是 acc 的左半：左半块也存进了右半块的列；右半块（tl.split 的第二个结果）存到第 "
        "pid_n * BLOCK_N + BLOCK_N // 2 列",
        "both halves of each tile hold acc's left half: the left half was stored at the right half's columns "
        "too; the right half (tl.split's second result) goes to column pid_n * BLOCK_N + BLOCK_N // 2",
    ),
    "right-half-twice": (
        "每个 tile 的两半放的都是 acc 的右半：右半块也存进了左半块的列；左半块（tl.split 的第一个结果）存到第 "
        "pid_n * BLOCK_N 列",
        "both halves of each tile hold acc's right half: the right half was stored at the left half's columns "
        "too; the left half (tl.split's first result) goes to column pid_n * BLOCK_N",
    ),
}


def mixed_halves(c, acc, bn, finish, tol):
    """The key of LAYOUTS whose mix-up C is, within tol, or None.  acc: the float32 sums, as wide as
    the grid of tiles; finish: the epilogue (bias, activation, cast), on that width.  C is compared
    with the mix-up made before the epilogue (the halves split the wrong way round, each then given
    the bias of the columns it lands in) and after it (each half finished, then stored elsewhere)."""
    M, N = c.shape
    if rel_err(c, finish(acc)[:M, :N]) <= tol:
        return None
    for key, layout in LAYOUTS.items():
        for mixed in (finish(layout(acc, bn)), layout(finish(acc), bn)):
            if rel_err(c, mixed[:M, :N]) <= tol:
                return key
    return None


def fail_if_halves_mixed(c, acc, bn, finish, tol, case):
    """Fail, naming it, where C is a known mix-up of each tile's two halves (mixed_halves)."""
    key = mixed_halves(c, acc, bn, finish, tol)
    if key == "even-odd-halves":
        fail_even_odd_halves(case)
    if key is not None:
        zh, en = CAUSES[key]
        fail(T5, f"{case}：{zh}", f"{case}: {en}", "5")


def grid_wide(x, bn):
    """x with zero columns appended up to a whole number of bn-wide tiles: what a tile's sum holds
    past N, where TMA fills B's box with zeros."""
    return F.pad(x, (0, -x.shape[1] % bn))


BIAS_ON_ONE_HALF = {  # which halves of each tile got the bias: (zh, en) words of what C shows
    "left": ("只有左半块加了 bias，右半块没有 bias", "the left halves got the bias and the right halves got no bias"),
    "right": ("只有右半块加了 bias，左半块没有 bias", "the right halves got the bias and the left halves got no bias"),
}


def fail_if_one_half_without_bias(c, acc, bn, with_bias, without_bias, tol, case):
    """Fail, naming it, where C is each tile's one half finished with the bias (with_bias(acc)) and the other
    finished without it (without_bias(acc)), within tol, and the bias changes C there: a half whose call of
    bias_and_activation was given HAS_BIAS=False, or none at all where the activation is none.  acc: the
    float32 sums, as wide as the grid of tiles."""
    M, N = c.shape
    done, bare = with_bias(acc)[:M, :N], without_bias(acc)[:M, :N]
    left = ((torch.arange(N, device=c.device) % bn) < bn // 2)[None, :]
    for side, keep in (("left", left), ("right", ~left)):
        mixed = torch.where(keep, done, bare)
        if rel_err(c, mixed) <= tol and rel_err(mixed, done) > tol:
            zh, en = BIAS_ON_ONE_HALF[side]
            fail(
                T5,
                f"{case}：{zh}：两半都要调用 bias_and_activation，各自带上 HAS_BIAS 和自己的半块编号",
                f"{case}: {en}: call bias_and_activation on both halves, each with HAS_BIAS and its own half number",
                "5",
            )


# Halves stored at other columns than pid_n * BLOCK_N and pid_n * BLOCK_N + BLOCK_N // 2 (hunt16: the left half at
# pid_n * BLOCK_N // 2 was told 'relative error 2.0e+02' alone): {key: (left column, right column) of (pid_n, bn)}.
PLACES = {
    "left-at-half-offset": (lambda p, bn: p * bn // 2, lambda p, bn: p * bn + bn // 2),
    "both-at-half-offsets": (lambda p, bn: p * (bn // 2), lambda p, bn: p * (bn // 2) + bn // 2),
}
PLACE_WORDS = {
    "left-at-half-offset": (
        "左半块存到了第 pid_n * BLOCK_N // 2 列：两半都在 tile 自己的列里，左半从第 pid_n * BLOCK_N 列开始",
        "the left half was stored at column pid_n * BLOCK_N // 2: both halves lie in the tile's own columns, the "
        "left one from column pid_n * BLOCK_N",
    ),
    "both-at-half-offsets": (
        "两半存到了第 pid_n * (BLOCK_N // 2) 和 pid_n * (BLOCK_N // 2) + BLOCK_N // 2 列：box 窄了一半，"
        "tile 却还是 BLOCK_N 宽，它的列从 pid_n * BLOCK_N 开始",
        "the halves were stored at columns pid_n * (BLOCK_N // 2) and pid_n * (BLOCK_N // 2) + BLOCK_N // 2: the box "
        "is half as wide, the tile is still BLOCK_N wide, and its columns start at pid_n * BLOCK_N",
    ),
}


def placed(done, bn, n, left_col, right_col, sentinel):
    """C as the halves of `done` (the finished tiles, as wide as the grid) leave it when each tile's halves are
    stored at left_col(pid_n, bn) and right_col(pid_n, bn), clipped at N, the tiles of a row in pid_n order (the
    interpreter's) and later stores over earlier ones; cells never stored hold sentinel."""
    c = torch.full((done.shape[0], n), sentinel, dtype=done.dtype, device=done.device)
    half = bn // 2
    for p in range(done.shape[1] // bn):
        for col, src in ((left_col(p, bn), p * bn), (right_col(p, bn), p * bn + half)):
            hi = min(col + half, n)
            if col < hi:
                c[:, col:hi] = done[:, src : src + hi - col]
    return c


def fail_if_halves_placed(c, acc, bn, finish, tol, sentinel, case):
    """Fail, naming it, where C is what halves stored at one of PLACES' other columns give (placed), within tol."""
    M, N = c.shape
    done = finish(acc)[:M]
    for key, (left_col, right_col) in PLACES.items():
        want = placed(done, bn, N, left_col, right_col, sentinel)
        if torch.equal(c == sentinel, want == sentinel) and rel_err(c, want) <= tol:
            zh, en = PLACE_WORDS[key]
            fail(T5, f"{case}：{zh}", f"{case}: {en}", "5")
