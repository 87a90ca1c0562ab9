"""See your own loads and stores: which elements of A and B each K step of one program loads, which
lanes its masks switch off, and which cells of C its epilogue writes (explainer §3, §4, §5.1).

This runs YOUR mainloop and epilogue (in mine/, or the reference with --solution: the file of the lesson
whose steps write them) through that lesson's probe kernels (course/lessons/<id>_probes.py, as the suite
does) under Triton's interpreter, always, even on a GPU
machine: there tl.load and tl.store are Python, so make loads can note the address and the mask
of every lane of every tl.load / tl.store your file makes, without changing your code.  Each
address is mapped back to A[m, k], B[k, n] or C[m, n] through the tensor's data_ptr and strides.

A, B and C sit inside larger buffers full of NaN, as in the suite, so a load a mask should have
switched off reads the padding instead of a neighbour, and shows as '!'.  A lane that points
outside every buffer is switched off by make loads before the interpreter reads it (so that it
cannot crash) and is listed with its address.

    python -m tools.study.loads                              # §3's example: A (6, 8), blocks of 4
    python -m tools.study.loads --k 6 --pid-m 1              # a K tail, and the tile at M's edge
    python -m tools.study.loads --layout column-major        # A, B and C stored as x.t() gives them
    python -m tools.study.loads --m 5 --n 7 --k 9 --block 4 4 4 --pid-n 1 --solution
    python -m tools.study.loads --png loads.png              # the same as a picture
    python -m tools.study.loads --m 64 --k 130 --block 32 16 32 --wide   # every cell, however wide

In the grids, rows and columns are the tensor's own indices (A[m, k]: m down, k across):
    #   loaded (written, for C) by this step      .   a lane its mask switched off
    !   loaded or written OUTSIDE the tensor     2-9  the same element loaded that many times
    -   an element of the tensor this step did not touch
    x   (C only) written with a value other than the tile's result
Cells outside the tensor are drawn only where a lane points at them.  Every program of the grid
runs; below the grids of the chosen one, a line for each other program says whether its loads and
stores stayed inside.

The text fits a 100-column terminal: a grid taller than 20 rows, or too wide, is drawn compact,
each run of rows (columns) marked alike drawn once and labelled with its range, "0-31"; A's grid
goes above B's when the two do not fit side by side; the programs with nothing to report share one
line.  --wide draws every cell, A beside B, one line per program, nothing wrapped.

The default problem is §3's worked example: A of shape (6, 8), BLOCK_M = BLOCK_K = 4, pid_m = 0;
§3 does not fix N, so B is (8, 6) and BLOCK_N = 4, and the default program (0, 0) needs no mask.
Try --k 6 (a K tail) and --pid-m 1 (rows past M) to see masks at work.  Through make, pass the
options as ARGS: make loads ARGS="--k 6 --pid-m 1".  The text follows the course's language
(COURSE_LANG=zh or en, else the locale); the picture (--png, drawn instead of the text) is in
English.  Exits 1 with the stub's message while mainloop is not written yet; with mainloop written
and the epilogue not yet (T4.2 done, T4.3 to come), shows the loads, says so, and exits 0.
"""

import argparse
import os
import sys
from dataclasses import dataclass

from course.i18n import say, wrap
from course.messages import stub_report
from course.registry import lesson_writing
from tools.study import common as study
from tools.study.loads_picture import draw
from tools.study.loads_record import Call, Recorder, Tracked, padded
from tools.study.loads_text import WIDTH, grid_lines, marks, report
from tools.study.loads_verdict import Program, needed, programs, see, verdict

STUDIED = "mainloop"  # with epilogue: the lesson whose step writes it is the one studied

# What the tests and other tools use from make loads, wherever it is defined.
__all__ = [
    "Call",
    "Observed",
    "Program",
    "Tracked",
    "draw",
    "grid_lines",
    "marks",
    "needed",
    "padded",
    "see",
    "verdict",
]

LAYOUTS = ("row-major", "column-major", "every-other-column")  # the suite's poisoned_view
DTYPES = ("fp16", "fp32")
MAX_DIM = 160  # wider grids wrap in a terminal; the suite's failing cases go up to K = 130
MAX_PAD = 256  # the suite pads by 72 (tests/support.PAD)


# ------------------------------------------------------------------------------------------------
# Running it
# ------------------------------------------------------------------------------------------------
@dataclass
class Observed:
    tensors: list
    grid: list
    loads: dict  # pid -> Program of the mainloop's calls
    stores: dict  # pid -> Program of the epilogue's calls, or None if the epilogue is a stub
    wrong: set  # cells of C written with a value other than the tile's result
    acc_note: str  # what the mainloop returned, against A @ B
    epilogue_stub: str  # the stub's message, or ""
    mainloop_stub: str = ""  # the same for mainloop: then only C is shown


def observe(args):
    """Run the graded mainloop, then epilogue, over the whole grid, watching every load and store."""
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: the interpreter, on any machine
    lesson = lesson_writing(STUDIED)
    study.load_graded(args.solution, lesson)
    import torch
    import triton

    from course import seam

    probes = study.probes(lesson)  # its kernels call the graded module's mainloop and epilogue

    dtype = {"fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    bm, bn, bk = args.block
    pad = args.pad  # the NaN around each tensor, on each side (main: --pad, or a block past an edge and more)
    gen = torch.Generator().manual_seed(0)
    a_vals = torch.randn(args.m, args.k, generator=gen).to(dtype)
    b_vals = torch.randn(args.k, args.n, generator=gen).to(dtype)
    a, a_buf = padded(args.m, args.k, args.layout, dtype, pad, a_vals)
    b, b_buf = padded(args.k, args.n, args.layout_b, dtype, pad, b_vals)
    c, c_buf = padded(args.m, args.n, args.layout_c, dtype, pad, torch.zeros(args.m, args.n, dtype=dtype))
    c_buf.fill_(float("nan"))
    gm, gn = triton.cdiv(args.m, bm), triton.cdiv(args.n, bn)
    exact = a_vals.double() @ b_vals.double()
    acc_in = torch.zeros(gm * bm, gn * bn, dtype=torch.float32)
    acc_in[: args.m, : args.n] = exact.float()
    acc_out = torch.full_like(acc_in, -7.0)
    tensors = [Tracked("A", a, a_buf, pad), Tracked("B", b, b_buf, pad), Tracked("C", c, c_buf, pad)]
    scratch = [Tracked("acc", acc_in, acc_in, 0), Tracked("acc", acc_out, acc_out, 0)]
    grid = [(m, n) for m in range(gm) for n in range(gn)]

    def launch(kernel, *kargs):
        recorder = Recorder(seam.path(lesson), tensors + scratch)
        try:
            with recorder:
                kernel[(gm, gn)](*kargs)
        except Exception as e:
            message = seam.stub_message(e)
            if message is None:
                study.stop_on_learners_error(e)  # your line raised it: said as make test says it
                raise
            return None, message
        return recorder.calls, ""

    calls, stub = launch(
        probes.mainloop_probe,
        *(a, b, acc_out, args.m, args.n, args.k, *a.stride(), *b.stride(), acc_out.stride(0), bm, bn, bk),
    )
    loads = programs(calls or [], tensors, grid)
    acc_note = acc_verdict(acc_out, exact, args) if calls is not None else ""
    mainloop_stub = stub
    calls, epilogue_stub = launch(
        probes.epilogue_probe, acc_in, acc_in.stride(0), c, args.m, args.n, *c.stride(), bm, bn
    )
    if mainloop_stub and epilogue_stub:
        not_written_yet(mainloop_stub, None if getattr(args, "wide", False) else WIDTH)  # nothing to show
    stores = programs(calls, tensors, grid) if calls is not None else None
    expected = exact.float().to(dtype)
    wrong = {
        (r, col)
        for r in range(args.m)
        for col in range(args.n)
        if not torch.isnan(c[r, col]) and c[r, col] != expected[r, col]
    }
    return Observed(tensors, grid, loads, stores, wrong, acc_note, epilogue_stub, mainloop_stub)


def acc_verdict(acc_out, exact, args):
    """A sentence on the tile the mainloop returned for the chosen program, against float64 A @ B."""
    bm, bn, _ = args.block
    rows = slice(args.pid_m * bm, min(args.pid_m * bm + bm, args.m))
    cols = slice(args.pid_n * bn, min(args.pid_n * bn + bn, args.n))
    got, ref = acc_out[rows, cols].double(), exact[rows, cols]
    if got.numel() == 0:
        return ""
    nans = int(got.isnan().sum())
    if nans:
        return say(
            zh=f"mainloop 返回的 tile 里有 {nans} 个 NaN：有加载读到了 NaN 填充区",
            en=f"the tile mainloop returned holds {nans} NaN: a load read the NaN padding",
        )
    err = ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    if err < 1e-3:
        return say(
            zh="mainloop 返回的 tile 等于 A @ B 的这一块", en="the tile mainloop returned is this block of A @ B"
        )
    return say(
        zh=f"mainloop 返回的 tile 与 A @ B 不符（最大相对误差 {err:.2e}）",
        en=f"the tile mainloop returned differs from A @ B (largest relative error {err:.2e})",
    )


DESCRIPTION_ZH = """看你自己的加载和写回：一个程序在 K 的每一步从 A、B 加载了哪些元素，掩码关掉了
哪些 lane，epilogue 写了 C 的哪些格子（讲义 §3、§4、§5.1）。跑的是你的 mainloop 和 epilogue
（--solution：参考答案），总在 Triton 解释器上跑。默认的输出不超过 100 列：放不下的网格把标记
相同的连续行（列）合成一行（列），标上范围；--wide 画出每一格，A 和 B 并排。
例：make loads ARGS="--k 6 --pid-m 1"。"""


def stub_lines(message, width):
    """What the suite says about a body not written yet, in the learner's language, wrapped (never
    cut) to the width (None: one line)."""
    return "\n".join(wrap(stub_report(message), width, rest="  ") if width else [stub_report(message)])


def not_written_yet(message, width=WIDTH):
    """stub_lines on stderr; status 1."""
    print(stub_lines(message, width), file=sys.stderr)
    sys.exit(1)


def main(argv=None):
    parser = study.Parser(
        "make loads",
        description=say(zh=DESCRIPTION_ZH, en=__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )

    def number(flag, default, zh, en):
        parser.add_argument(flag, type=int, default=default, help=say(zh=zh, en=en))

    number("--m", 6, zh="A 和 C 的行数（默认 6，§3 的例子）", en="rows of A and C (default 6, §3's example)")
    number("--n", 6, zh="B 和 C 的列数（默认 6）", en="columns of B and C (default 6)")
    number(
        "--k", 8, zh="A 的列数、B 的行数（默认 8，§3 的例子）", en="columns of A, rows of B (default 8, §3's example)"
    )
    parser.add_argument(
        "--block",
        type=int,
        nargs=3,
        default=[4, 4, 4],
        metavar=("BM", "BN", "BK"),
        help=say(zh="默认 4 4 4", en="default 4 4 4"),
    )
    parser.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="row-major",
        help=say(zh="A 的存储方式（默认 row-major）", en="how A is stored (default row-major)"),
    )
    parser.add_argument(
        "--layout-b", choices=LAYOUTS, help=say(zh="B 的存储方式（默认同 A）", en="how B is stored (default: as A)")
    )
    parser.add_argument(
        "--layout-c", choices=LAYOUTS, help=say(zh="C 的存储方式（默认同 A）", en="how C is stored (default: as A)")
    )
    number(
        "--pid-m",
        0,
        zh="要看的程序：它所在的 tile 行（默认 0）",
        en="the program to show: its row of tiles (default 0)",
    )
    number("--pid-n", 0, zh="它所在的 tile 列（默认 0）", en="its column of tiles (default 0)")
    parser.add_argument(
        "--dtype",
        choices=DTYPES,
        default="fp16",
        help=say(zh="A、B、C 的类型（默认 fp16）", en="of A, B and C (default fp16)"),
    )
    parser.add_argument(
        "--pad",
        type=int,
        metavar="P",
        help=say(
            zh="A、B、C 每一边的 NaN 填充有几个元素，它决定了 stride（默认 2 * 最大的块 + 2，一次越界一整块也落在"
            "填充里）；测试失败时给的 make loads 命令带上测试自己的填充，stride 就和失败信息里的一样",
            en="elements of NaN padding on each side of A, B and C, which the strides count (default 2 * the "
            "largest block + 2, so a read a whole block past an edge still lands in it); the make loads command a "
            "failing test prints passes the test's own, so the strides are the ones its message shows",
        ),
    )
    parser.add_argument(
        "--png",
        metavar="PATH",
        help=say(
            zh="把所选程序的加载和写回画进 PATH（图是英文的）",
            en="draw the chosen program's loads and stores into PATH",
        ),
    )
    parser.add_argument(
        "--wide",
        action="store_true",
        help=say(
            zh=f"画出每一格，A 和 B 并排，不折行（默认的输出不超过 {WIDTH} 列）",
            en=f"draw every cell, A beside B, lines unwrapped (by default the text fits {WIDTH} columns)",
        ),
    )
    study.add_solution_flag(parser, lesson_writing(STUDIED))
    args = parser.parse_args(argv)
    args.layout_b, args.layout_c = args.layout_b or args.layout, args.layout_c or args.layout
    if not all(1 <= d <= MAX_DIM for d in (args.m, args.n, args.k)) or min(args.block) < 1:
        parser.error(
            say(
                zh=f"M、N、K 要在 1 到 {MAX_DIM} 之间，块大小至少为 1",
                en=f"M, N and K must be 1 to {MAX_DIM}, the blocks at least 1",
            )
        )
    if args.pad is None:
        args.pad = 2 * max(args.block) + 2
    if not 0 <= args.pad <= MAX_PAD:
        parser.error(say(zh=f"--pad 要在 0 到 {MAX_PAD} 之间", en=f"--pad must be 0 to {MAX_PAD}"))
    tiles_m, tiles_n = -(-args.m // args.block[0]), -(-args.n // args.block[1])
    if not (0 <= args.pid_m < tiles_m and 0 <= args.pid_n < tiles_n):
        parser.error(
            say(
                zh=f"--pid-m 要在 0 到 {tiles_m - 1} 之间，--pid-n 在 0 到 {tiles_n - 1} 之间",
                en=f"--pid-m must be 0 to {tiles_m - 1} and --pid-n 0 to {tiles_n - 1}",
            )
        )
    seen = observe(args)
    if args.png:
        draw(seen, args, args.png)
    else:
        print(report(seen, args, study.graded_path(lesson_writing(STUDIED)), width=None if args.wide else WIDTH))
    if seen.mainloop_stub:
        not_written_yet(seen.mainloop_stub, None if args.wide else WIDTH)
    if seen.epilogue_stub:  # the loads are shown, as T4.2 needs: the stores follow once T4.3 is written
        print(stub_lines(seen.epilogue_stub, None if args.wide else WIDTH))


if __name__ == "__main__":
    main()
