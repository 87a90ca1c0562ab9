"""What the study tools (tile_order.py, smem.py, l2sim.py, streamk.py, groups.py, loads.py) share:
loading the graded file the way the suite does, the learner's language (--lang pins it for a
generated block), a report's flags and its closing list of problems, and pictures that come out
the same pixel for pixel on every machine (tools/core/docs.py compares the committed PNGs with
fresh ones)."""

import argparse
import os
import shutil
import sys
from pathlib import Path

from course import seam, toolchain
from course.i18n import add_lang_flag, not_written, say, wrap
from course.registry import lesson_writing, step_writing

DPI = 100  # with a fixed figure size in inches: a fixed size in pixels


class Parser(argparse.ArgumentParser):
    """argparse, with its complaints about the command line said in the learner's language too
    (argparse's own words inside them stay English) and the make command that lists the options.
    command: the make target that runs the tool ("make tiles")."""

    def __init__(self, command, **kwargs):
        super().__init__(**kwargs)
        self.command = command

    def error(self, message):
        self.exit(
            2,
            say(
                zh=f"{self.command} 的参数有误：{message}\n（{self.command} ARGS=--help 列出所有选项）\n",
                en=f"{self.command}: {message}\n({self.command} ARGS=--help lists every option)\n",
            ),
        )


def add_solution_flag(parser, lesson):
    """--solution: the lesson's reference instead of the learner's file.  Each tool passes the lesson
    of what it studies (course.registry.lesson_writing), so no tool names a lesson."""
    parser.add_argument(
        "--solution",
        action="store_true",
        help=say(
            zh=f"用 solutions/{lesson.file}（设 SOLUTION=1）代替 mine/{lesson.file}",
            en=f"use solutions/{lesson.file} (sets SOLUTION=1) instead of mine/{lesson.file}",
        ),
    )


def add_report_flags(parser, studied, png_help, lang=True):
    """The flags of a tool that prints a report of the graded file's work or draws it: --format
    text|markdown, --png PATH (png_help: what it draws there), --solution, and --lang where the
    report is in the learner's language (lang).  studied: the function the tool studies."""
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument("--png", metavar="PATH", help=png_help)
    add_solution_flag(parser, lesson_writing(studied))
    if lang:
        add_lang_flag(parser)


def problems_list(problems, studied, width=None):
    """A report's list of what it found wrong, under a heading that sends the learner to the tests of
    the step writing `studied`: a bullet a problem, wrapped to `width` columns where given."""
    step = step_writing(studied).id
    if width is None:
        bullets = (f"  - {line}" for line in problems)
    else:
        bullets = ("\n".join(wrap(line, width, "  - ", "    ")) for line in problems)
    heading = say(
        zh=f"问题（`make test STEP={step}` 会说得更多）：",
        en=f"Problems (`make test STEP={step}` says more):",
    )
    return heading + "\n" + "\n".join(bullets)


def load_graded(solution, lesson):
    """The graded module of a lesson, chosen by course/seam.py: mine/ unless --solution or SOLUTION=1.

    As the suite does: Triton's interpreter when there is no CUDA (before triton is first
    imported), and a broken toolchain refused."""
    if solution:
        os.environ["SOLUTION"] = "1"
    toolchain.choose_backend()
    toolchain.require_working_toolchain()
    try:
        return seam.load(lesson)
    except seam.LearnerImportError as e:  # the report quotes Python's own words: say what they are about
        stop(say(zh=f"{seam.path(lesson)} 导入失败，没法运行：{e}", en=str(e)))


def stop(words):
    """Exit 1 with `words` on stderr, each line wrapped to the terminal (at most 100 columns)."""
    width = min(100, shutil.get_terminal_size((100, 24)).columns)
    lines = [(line[: len(line) - len(line.lstrip())], line.strip()) for line in str(words).splitlines()]
    print("\n".join(x for lead, text in lines for x in wrap(text, width, lead, lead + "  ")), file=sys.stderr)
    sys.exit(1)


def graded_path(lesson):
    """The file load_graded() loaded (after --solution or SOLUTION=1)."""
    return seam.path(lesson)


def probes(lesson):
    """The lesson's probe kernels (course/lessons/<id>_probes.py), which call the graded file's device
    functions; import it after load_graded, since it loads the graded file the same way."""
    import importlib

    return importlib.import_module(lesson.probes.removesuffix(".py").replace("/", "."))


def not_written_yet(message, meanwhile=False):
    """Say what the suite says about a body not written yet, wrapped to the terminal (at most 100
    columns), and stop with status 1; meanwhile: add that --solution shows the reference's."""
    said = not_written() + say(zh="：", en=": ") + message
    if meanwhile:
        said += say(zh="（在那之前，加 --solution 看参考实现的）", en=" (meanwhile, --solution shows the reference's)")
    stop(said)


def stop_if_stub(e):
    """Say "not written yet" and exit 1 if e comes from a stub's body; an error raised in the graded
    file (your own line) is said as make test says it, what raised it and the line, not as forty lines
    of Triton's traceback, and exits 1 (stop_on_learners_error); else return (the caller raises).  Each
    tool that calls it takes --solution."""
    message = seam.stub_message(e)
    if message is not None:
        not_written_yet(message, meanwhile=True)
    stop_on_learners_error(e)


def stop_on_learners_error(e):
    """An error raised in the graded file said as make test says it, and exit 1; else return."""
    from tools.core.failure_words import graded_frames, source_line, triton_lead  # pytest's: not for l2sim, smem

    found = graded_frames(e)
    if found is not None:
        lead, quote = triton_lead(e)
        said = say(
            zh=f"{lead}{quote}{found[2]}\n  出错的是 {source_line(*found[:2])}\n  make test 会说得更多",
            en=(f"{lead}{quote}" if lead else "") + f"{found[2]}\n  raised at {source_line(*found[:2])}\n"
            "  make test says more",
        )
        stop(said)


def graded_device():
    """Where the graded file's tensors go: the CPU under Triton's interpreter (which load_graded
    chose when there is no CUDA), else the GPU."""
    return "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def figure(width_in, height_in, ncols=1):
    """A matplotlib figure on the Agg backend with matplotlib's own defaults, so that no
    matplotlibrc of the reader's changes a pixel."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcdefaults()
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=(width_in, height_in), dpi=DPI, squeeze=False)


def save_png(fig, path):
    """Write the figure without metadata (no software version, no date): same input, same bytes."""
    import matplotlib.pyplot as plt

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {path}", file=sys.stderr)  # stderr: docs.py compares stdout, and redraws elsewhere


def draw_grid(ax, x0, y0, labels, fills, bold=None, cell=(1.0, 1.0)):
    """Cells of cell = (width, height) in data units, row 0 on top, the top left corner at
    (x0, y0): a label and a fill colour each, and a thick edge where bold[r][c] is true."""
    from matplotlib.patches import Rectangle

    w, h = cell
    for r, row in enumerate(labels):
        for c, text in enumerate(row):
            thick = bool(bold and bold[r][c])
            x, y = x0 + c * w, y0 - (r + 1) * h
            ax.add_patch(
                Rectangle(
                    (x, y),
                    w,
                    h,
                    facecolor=fills[r][c],
                    edgecolor="black",
                    linewidth=2.5 if thick else 0.8,
                    zorder=3 if thick else 2,
                )
            )
            ax.text(
                x + w / 2,
                y + h / 2,
                text,
                ha="center",
                va="center",
                zorder=4,
                fontsize=11,
                fontweight="bold" if thick else "normal",
            )


def number_and_frame_grid(ax, num_rows, num_cols):
    """Number the columns along the top and the rows down the left of a draw_grid of unit cells at
    (0, 0), then fit the axes to it: the margins are made for those numbers, so they go together."""
    for c in range(num_cols):
        ax.text(c + 0.5, 0.3, str(c), ha="center", va="center", fontsize=9, color="0.4")
    for r in range(num_rows):
        ax.text(-0.35, -r - 0.5, str(r), ha="center", va="center", fontsize=9, color="0.4")
    ax.set_xlim(-0.7, num_cols + 0.1)
    ax.set_ylim(-num_rows - 0.1, 0.6)
    ax.set_aspect("equal")
    ax.axis("off")
