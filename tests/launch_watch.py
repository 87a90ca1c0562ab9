"""The launch watch, the defence against a launch into another tensor: LaunchWatch stands in for a
wrapper's kernels and sees what was launched, with which arguments and grid, into which tensor.
Lesson-neutral, like support.py, which every lesson's tests import it from.

    LaunchWatch, Launch, same_tensor, UNWRITTEN  what a wrapper launched, into which tensor
"""

import math
from typing import NamedTuple

import pytest
import torch
import triton

from course.i18n import say

# What C holds before the launch: exact in every dtype here, and far from any product of these inputs,
# so a cell still holding it was never written, and a NaN was computed (a load outside A or B).
UNWRITTEN = -1234.0


class Launch(NamedTuple):
    name: str  # the kernel's attribute in the graded module
    args: dict  # {argument: value}, positional ones named after the kernel's signature
    left: object  # a copy of the output as this launch left it (None where it is no tensor)
    grid: object
    result: object  # what the kernel returned (its compiled form, on a GPU)


class LaunchWatch:
    """Stands in for a wrapper's kernels while it runs, so the suite sees what was launched, with
    which arguments and grid, into which tensor.  kernels: {attribute of the graded module: whether
    the real kernel runs}; the first is the wrapper's main kernel, given by the scaffold, and
    positional arguments are named after its signature (a learner's autotuned kernel may name its
    own otherwise), or, with shared_names=False, after each kernel's own.  out: the argument every
    kernel writes its output to (C, c_ptr, by default).  Right before a kernel runs, its output is
    filled with UNWRITTEN (-1234.0); right after, a copy of what the kernel left there is kept.  So
    C can hold only what that one launch wrote, and anything done to it later shows."""

    def __init__(self, module, monkeypatch, kernels, wrapper, out="c_ptr", shared_names=True):
        self.launches = []  # a Launch each, in the order they ran
        self.on_error = None  # on_error(arguments): checks a launch whose kernel raised, before it propagates
        self.before = None  # before(arguments): checks a launch before its kernel runs (sizes that are not C's)
        # Set by a lesson whose main kernel runs one program per tile (T4), to where its grid is explained (read()'s
        # words): that grid is checked before the launch (fail_if_grid_counts_elements); a persistent grid is not.
        self.read_grid = ""
        self.kernel, self.wrapper = next(iter(kernels)), wrapper
        first = getattr(module, self.kernel).arg_names
        for name, run in kernels.items():
            kernel = getattr(module, name)
            if kernel is not None:
                arg_names = list(first if shared_names else kernel.arg_names)
                monkeypatch.setattr(module, name, _Spy(self, name, kernel, arg_names, run, out))

    def of(self, name):
        return [launch for launch in self.launches if launch.name == name]

    def count(self, name):
        return len(self.of(name))

    def check(self, c, operands, case, read_launch, read_copy, read_result, also=None):
        """Fail unless C came whole from one launch that got this call's operands ({"a": a, ...},
        passed as a_ptr, ...; not copies), with a program for every tile.  also(arguments) checks
        the lesson's own arguments (flags, a bias) before C is.  The read_* texts end the messages:
        read_launch those about the launch and its grid, read_copy the one about a copied operand,
        read_result those about what C holds."""
        if not self.launches and isinstance(c, torch.Tensor) and c.numel() == 0:
            return  # nothing to compute, nothing to launch
        if len(self.launches) != 1:
            pytest.fail(
                say(
                    zh=f"{case}：{self.wrapper} 启动了 {len(self.launches)} 次内核，应该只启动一次："
                    f"一次 {self.kernel} 的 launch 算出整个 C"
                    + (
                        "（C 不是空的就要 launch，K = 0 也一样：K 循环一步不走，存下的就是 0）"
                        if not self.launches
                        else ""
                    )
                    + f"；{read_launch}",
                    en=f"{case}: {self.wrapper} launched the kernel {len(self.launches)} times, expected once: one "
                    f"launch of {self.kernel} computes all of C"
                    + (
                        " (a C that is not empty needs it even when K = 0: the K loop then takes no step and "
                        "stores zeros)"
                        if not self.launches
                        else ""
                    )
                    + f"; {read_launch}",
                ),
                pytrace=False,
            )
        _, args, left, grid, _ = self.launches[0]
        for name, given in operands.items():
            check_operand(args.get(f"{name}_ptr"), given, name, case, read_launch, read_copy)
        if also is not None:
            also(args)
        if not same_tensor(c, args.get("c_ptr")):
            pytest.fail(
                say(
                    zh=f"{case}：{self.wrapper} 返回的张量不是内核写入的那个（内核的 c_ptr 是另一个）：返回你 launch 时"
                    f"传进去的 C；C 必须来自内核，而不是 torch 在另一块缓冲区上算出来的；{read_result}",
                    en=f"{case}: {self.wrapper} returned a tensor the kernel did not write into (its c_ptr was "
                    f"another): return the C you launched on; C must come from the kernel, not from torch "
                    f"work on another buffer; {read_result}",
                ),
                pytrace=False,
            )
        changed = (~((c == left) | (c.isnan() & left.isnan()))).sum().item()
        if changed:
            pytest.fail(
                say(
                    zh=f"{case}：{self.kernel} 返回之后，C 里还有 {changed} 个单元被改过：C 的每个值都必须来自"
                    f"内核（bias 和 GELU 也一样），launch 之后不能再用 torch 对 C 做运算；{read_result}",
                    en=f"{case}: {changed} cell{'s' if changed != 1 else ''} of C changed after {self.kernel} "
                    f"returned: every value of C must come from the kernel (the bias and GELU too), with no "
                    f"torch arithmetic on C after the launch; {read_result}",
                ),
                pytrace=False,
            )
        check_grid(grid, args, c, case, read_launch)


def check_operand(got, given, name, case, read_launch, read_copy):
    """Fail unless the launch got the caller's tensor itself: same memory, shape and strides (the
    kernel takes strides so that no operand needs a copy)."""
    if same_tensor(got, given):
        return
    if isinstance(got, torch.Tensor) and got.shape == given.shape and torch.equal(got.cpu(), given.cpu()):
        pytest.fail(
            say(
                zh=f"{case}：launch 收到的 {name}_ptr 是调用者的 {name} 的一份拷贝（stride {tuple(given.stride())} → "
                f"{tuple(got.stride())}），不是 {name} 本身：把 {name} 连同它自己的 stride 原样传给内核；"
                f"拷贝（如 .contiguous()）要把整个 {name} 再读写一遍，而传 stride 正是为了省掉它；"
                f"{read_copy}",
                en=f"{case}: the launch's {name}_ptr is a copy of the caller's {name} (strides "
                f"{tuple(given.stride())} -> {tuple(got.stride())}), not {name} itself: pass {name} as it is, "
                f"with its own strides; a copy (.contiguous(), say) reads and writes all of {name} once more, "
                f"which passing the strides is there to avoid; {read_copy}",
            ),
            pytrace=False,
        )
    pytest.fail(
        say(
            zh=f"{case}：launch 的 {name}_ptr 不是调用者传进来的 {name}（也不是它的拷贝）：把 {name} 本身传给内核；"
            f"{read_launch}",
            en=f"{case}: the launch's {name}_ptr is not the caller's {name} (nor a copy of it): pass {name} "
            f"itself; {read_launch}",
        ),
        pytrace=False,
    )


LAST_N = {}  # {M: N} of the last launch check_grid saw, to tell a grid kept from a call of another N


def check_grid(grid, args, c, case, read_launch):
    """Fail when the launch of the plain kernel has fewer programs than C has tiles under its config."""
    if not all(isinstance(args.get(k), int) for k in ("BLOCK_M", "BLOCK_N")) or not isinstance(c, torch.Tensor):
        return  # the autotuned kernel: the config is the autotuner's choice
    try:
        dims = grid(dict(args)) if callable(grid) else grid
        programs = math.prod(int(d) for d in dims)
    except Exception:  # noqa: BLE001 - a grid this cannot read is judged by what C holds
        return
    bm, bn = args["BLOCK_M"], args["BLOCK_N"]
    tiles = triton.cdiv(c.shape[0], bm) * triton.cdiv(c.shape[1], bn)
    before = LAST_N.get(c.shape[0])  # N of the last launch seen with this M
    LAST_N[c.shape[0]] = c.shape[1]
    if programs >= tiles:
        return
    side = counts_one_side(grid, args, *c.shape)
    if side:
        pytest.fail(
            say(
                zh=f"{case}：launch 的网格只有 {programs} 个程序，比这个配置下 C 的 {tiles} 个 {bm}x{bn} tile 少；"
                f"{one_side_words(side)}：tile 数是 cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) = "
                f"cdiv({c.shape[0]}, {bm}) * cdiv({c.shape[1]}, {bn})；{read_launch}",
                en=f"{case}: the launch's grid has {programs} programs, fewer than the {tiles} tiles of {bm}x{bn} "
                f"that C has under this config; {one_side_words(side)}: the tiles are cdiv(M, BLOCK_M) * "
                f"cdiv(N, BLOCK_N) = cdiv({c.shape[0]}, {bm}) * cdiv({c.shape[1]}, {bn}); {read_launch}",
            ),
            pytrace=False,
        )
    if not follows_meta(grid, args, programs):
        pytest.fail(
            say(
                zh=f"{case}：launch 的网格只有 {programs} 个程序，比这个配置下 C 的 {tiles} 个 {bm}x{bn} tile 少；"
                f"把 meta 里的 BLOCK_M 和 BLOCK_N 都减半，它给的还是 {programs}："
                f"网格要用 meta[\"BLOCK_M\"] 和 meta[\"BLOCK_N\"] 来算，cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)；"
                f"{read_launch}",
                en=f"{case}: the launch's grid has {programs} programs, fewer than the {tiles} tiles of {bm}x{bn} "
                f"that C has under this config; with BLOCK_M and BLOCK_N both halved in meta it still gives "
                f"{programs}: compute the grid from meta[\"BLOCK_M\"] and meta[\"BLOCK_N\"], cdiv(M, BLOCK_M) * "
                f"cdiv(N, BLOCK_N); {read_launch}",
            ),
            pytrace=False,
        )
    (rows, cols), area = c.shape, triton.cdiv(c.shape[0] * c.shape[1], bm * bn)
    why = (
        say(
            zh=f"它等于 cdiv(M * N, BLOCK_M * BLOCK_N) = {area}，是把面积整体向上取整：边上不满的 tile 要各占一个程序",
            en=f"it equals cdiv(M * N, BLOCK_M * BLOCK_N) = {area}, the area rounded up as a whole: each part-filled "
            f"edge tile needs a program of its own",
        )
        if programs == area
        else say(
            zh=f"把 meta 里的 BLOCK_M 和 BLOCK_N 对调，它给出的正好是 {tiles}：网格拿 BLOCK_N 去分 M、"
            f"拿 BLOCK_M 去分 N，两个块参数用反了，它算的是 cdiv({rows}, {bn}) * cdiv({cols}, {bm}) = {programs}",
            en=f"with BLOCK_M and BLOCK_N swapped in meta it gives exactly {tiles}: the grid divides M by BLOCK_N "
            f"and N by BLOCK_M, the two block sizes swapped, so it counts cdiv({rows}, {bn}) * cdiv({cols}, {bm}) "
            f"= {programs}",
        )
        if swapped_count(grid, args) == tiles
        else say(
            zh=f"它正是上一次同样 M = {rows}、但 N = {before} 的调用的 tile 数：网格（或算它的 plan）"
            f"只按 M 缓存了，换一个 N 就拿到了别的形状的网格；缓存的键要包含 N（和 K），或者不缓存",
            en=f"it is exactly the tile count of the last call with the same M = {rows} but N = {before}: the grid "
            f"(or the plan it comes from) was cached by M alone, so another N got another shape's grid; key the "
            f"cache on N (and K) too, or cache nothing",
        )
        if before not in (None, cols) and programs == triton.cdiv(rows, bm) * triton.cdiv(before, bn)
        else say(zh="它随 meta 变了，但数得不对", en="it follows meta, but counts wrong")
    )
    pytest.fail(
        say(
            zh=f"{case}：launch 的网格只有 {programs} 个程序，比这个配置下 C 的 {tiles} 个 {bm}x{bn} tile 少；{why}："
            f"tile 数是 cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) = cdiv({rows}, {bm}) * cdiv({cols}, {bn})，"
            f"两个方向各自向上取整；{read_launch}",
            en=f"{case}: the launch's grid has {programs} programs, fewer than the {tiles} tiles of {bm}x{bn} "
            f"that C has under this config; {why}: the tiles are cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) = "
            f"cdiv({rows}, {bm}) * cdiv({cols}, {bn}), each dimension rounded up on its own; {read_launch}",
        ),
        pytrace=False,
    )


def grid_programs(grid, args, bm, bn):
    """The programs a grid function gives with BLOCK_M = bm and BLOCK_N = bn in its meta; None if it cannot."""
    try:
        return math.prod(int(d) for d in grid(dict(args, BLOCK_M=bm, BLOCK_N=bn)))
    except Exception:  # noqa: BLE001 - a grid that fails here names no count
        return None


def counts_one_side(grid, args, rows, cols):
    """The side "rows" where a grid function gives cdiv(M, BLOCK_M) programs for every block size tried in its
    meta, and changes with BLOCK_M (so it reads it), "cols" where it gives cdiv(N, BLOCK_N) and changes
    with BLOCK_N; None otherwise, and where no size tried tells that count from the right one."""
    if not callable(grid):
        return None
    bm, bn = args["BLOCK_M"], args["BLOCK_N"]
    sizes = [(bm, bn), (bm, 1), (1, bn), (max(bm // 2, 1), bn * 2), (bm * 2, max(bn // 2, 1))]
    got = [grid_programs(grid, args, m, n) for m, n in sizes]
    right = [triton.cdiv(rows, m) * triton.cdiv(cols, n) for m, n in sizes]
    for side, count in (("rows", lambda m, n: triton.cdiv(rows, m)), ("cols", lambda m, n: triton.cdiv(cols, n))):
        model = [count(m, n) for m, n in sizes]
        if got == model and len(set(model)) > 1 and model != right:
            return side
    return None


def one_side_words(side):
    """What to say when counts_one_side found `side`."""
    if side == "rows":
        return say(
            zh="对试过的每组 BLOCK_M、BLOCK_N，它给的都正好是 cdiv(M, BLOCK_M)，不管 BLOCK_N 是多少："
            "它只数了 tile 的行数，少乘了列数 cdiv(N, BLOCK_N)",
            en="for every BLOCK_M and BLOCK_N tried it gives exactly cdiv(M, BLOCK_M), whatever BLOCK_N is: it "
            "counts the rows of tiles alone, without the factor cdiv(N, BLOCK_N) for the columns",
        )
    return say(
        zh="对试过的每组 BLOCK_M、BLOCK_N，它给的都正好是 cdiv(N, BLOCK_N)，不管 BLOCK_M 是多少："
        "它只数了 tile 的列数，少乘了行数 cdiv(M, BLOCK_M)",
        en="for every BLOCK_M and BLOCK_N tried it gives exactly cdiv(N, BLOCK_N), whatever BLOCK_M is: it "
        "counts the columns of tiles alone, without the factor cdiv(M, BLOCK_M) for the rows",
    )


def swapped_count(grid, args):
    """The programs a grid function gives with BLOCK_M and BLOCK_N swapped in its meta; None if it cannot."""
    try:
        return math.prod(int(d) for d in grid(dict(args, BLOCK_M=args["BLOCK_N"], BLOCK_N=args["BLOCK_M"])))
    except Exception:  # noqa: BLE001 - a grid that fails here names no swap
        return None


def follows_meta(grid, args, programs):
    """Whether a grid function gives another number of programs for other block sizes in its meta
    (halved: more tiles), so that it reads them; a tuple or a function that ignores them does not."""
    if not callable(grid):
        return False
    try:
        other = grid(dict(args, BLOCK_M=max(args["BLOCK_M"] // 2, 1), BLOCK_N=max(args["BLOCK_N"] // 2, 1)))
        return math.prod(int(d) for d in other) != programs
    except Exception:  # noqa: BLE001 - a grid that fails on other sizes: said as not following meta
        return False


def fail_if_grid_counts_elements(grid, args, c, where=""):
    """Fail, before the launch, where the plain kernel's grid (BLOCK_M and BLOCK_N given) counts C's rows or
    columns in elements where their blocks are meant: cdiv(M, BLOCK_M) * N, M * cdiv(N, BLOCK_N) or M * N
    programs for C's tiles.  Each program past the tiles computes nothing (every store masked off), yet runs;
    on the interpreter they take so long that a timeout would speak first, as of an endless loop.  where: the
    words that end the failure, where to read."""
    if not all(isinstance(args.get(k), int) for k in ("BLOCK_M", "BLOCK_N")) or not isinstance(c, torch.Tensor):
        return
    if c.ndim != 2:
        return
    try:
        programs = math.prod(int(d) for d in (grid(dict(args)) if callable(grid) else grid))
    except Exception:  # noqa: BLE001 - a grid this cannot read is left to the checks after the launch
        return
    (rows, cols), bm, bn = c.shape, args["BLOCK_M"], args["BLOCK_N"]
    m_blocks, n_blocks = triton.cdiv(rows, bm), triton.cdiv(cols, bn)
    ways = {  # programs: (zh, en) of the side counted in elements
        m_blocks * cols: (
            "N 按列数了，而不是按块数（cdiv(N, BLOCK_N)）",
            "N counted in columns, not in blocks (cdiv(N, BLOCK_N))",
        ),
        rows * n_blocks: (
            "M 按行数了，而不是按块数（cdiv(M, BLOCK_M)）",
            "M counted in rows, not in blocks (cdiv(M, BLOCK_M))",
        ),
        rows * cols: ("M 和 N 都按元素数了，而不是按块数", "M and N both counted in elements, not in blocks"),
    }
    said = ways.get(programs) if programs > m_blocks * n_blocks else None
    if said is None:
        return
    pytest.fail(
        say(
            zh=f"launch 的网格有 {programs} 个程序，而 C（{rows}x{cols}）在这个配置下只有 {m_blocks * n_blocks} 个 "
            f"{bm}x{bn} 的 tile：{said[0]}；多出来的程序什么也不算（存储全被掩码挡掉），却一样要跑："
            f"tile 数是 cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)（这里没有启动它）" + (f"；{where}" if where else ""),
            en=f"the launch's grid has {programs} programs for the {m_blocks * n_blocks} tiles of {bm}x{bn} that C "
            f"({rows}x{cols}) has under this config: {said[1]}; the programs past the tiles "
            "compute nothing (every store masked off), yet each runs: the tiles are cdiv(M, BLOCK_M) * "
            "cdiv(N, BLOCK_N) (this launch was not run)" + (f"; {where}" if where else ""),
        ),
        pytrace=False,
    )


class _Spy:
    def __init__(self, watch, name, kernel, arg_names, run, out):
        self.watch, self.name, self.kernel, self.arg_names = watch, name, kernel, arg_names
        self.run, self.out = run, out

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            bound = dict(zip(self.arg_names, args, strict=False), **kwargs)
            if self.watch.before is not None:  # fails the check before a kernel given wrong sizes writes past C
                self.watch.before(bound)
            out = bound.get(self.out)
            if self.name == self.watch.kernel and self.watch.read_grid:  # a grid of columns runs BLOCK_N times long
                fail_if_grid_counts_elements(grid, bound, out, self.watch.read_grid)
            if isinstance(out, torch.Tensor) and out.is_floating_point():
                out.fill_(UNWRITTEN)  # a cell still holding it was never written by this launch
            try:
                result = self.kernel[grid](*args, **kwargs) if self.run else None
            except Exception:
                if self.watch.on_error is not None:  # arguments that explain the error fail the check first
                    self.watch.on_error(bound)
                raise
            left = out.clone() if isinstance(out, torch.Tensor) else None
            self.watch.launches.append(Launch(self.name, bound, left, grid, result))
            return result

        return launch

    def __getattr__(self, name):
        return getattr(self.kernel, name)


def same_tensor(x, y):
    return (
        isinstance(x, torch.Tensor)
        and isinstance(y, torch.Tensor)
        and x.data_ptr() == y.data_ptr()
        and x.shape == y.shape
        and x.stride() == y.stride()
        and x.dtype == y.dtype
    )
