"""`make help` (and plain `make`): the commands, in the learner's language, fitted to the terminal.

Run with the python that make reset uses, before any set-up: it imports nothing but course/i18n.py
and the terminal's width.  tools/tests/test_learner_commands.py checks that every target of the
Makefile a learner or an instructor types is here.
"""

import sys

from course.i18n import display_width, say
from tools.learner.terminal import wrap


def commands(venv=".venv"):
    """[(command, what it does)] in the learner's language."""
    return [
        (
            "make test [STEP=T4.2]",
            say(
                zh="给你的文件评分：先是第一个失败，再是成绩单（SOLUTION=1：给 solutions/ 评分）",
                en="grade your file: the first failure, then the scorecard (SOLUTION=1: solutions/)",
            ),
        ),
        (
            "make grade [STEP=T4.2]",
            say(
                zh="只看成绩单：哪些步骤通过了，接下来读什么",
                en="the scorecard alone: which steps pass, what to read next",
            ),
        ),
        (
            "make watch [STEP=T4.2]",
            say(
                zh="每次保存你的文件，就重跑你正在做的那一步（Ctrl-C 停止）",
                en="re-run the step you are on each time you save your file (Ctrl-C stops)",
            ),
        ),
        (
            "make hint [STEP=T4.2]",
            say(
                zh="一步的下一条提示（ALL=1：看过的提示全部再看一遍）",
                en="the next hint for a step (ALL=1: every hint seen so far)",
            ),
        ),
        (
            "make reset",
            say(
                zh="每一课的文件都换回 stub（LESSON=T5：只换这一课的）；你的文件先保存在 mine/backups/",
                en="every lesson's file the stub again (LESSON=T5: that one alone); yours kept in mine/backups/ first",
            ),
        ),
        (
            "make upgrade",
            say(
                zh="课程更新之后：把你写的代码块搬进课程现在的文件",
                en="your bodies moved into the course's current file (after a course update)",
            ),
        ),
        ("make check", say(zh="仓库自己的不变量：CI 跑的就是它", en="the repo's invariants: what CI runs")),
        (
            "make bench [ARGS=...]",
            say(
                zh="只在 GPU 上：和 torch.matmul 比 TFLOP/s（T6：ARGS=--moe）",
                en="GPU only: TFLOP/s against torch.matmul (T6: ARGS=--moe)",
            ),
        ),
        (
            "make tiles [ARGS=...]",
            say(
                zh="哪个 pid 算哪个 tile，用你的 tile_coords",
                en="which pid computes each tile, through your tile_coords",
            ),
        ),
        (
            "make streamk [ARGS=...]",
            say(
                zh="T5 的 stream-K：哪个 program 累加哪个 tile 的哪些 k-block",
                en="T5 stream-K: which program sums which k-blocks of which tile",
            ),
        ),
        (
            "make groups [ARGS=...]",
            say(
                zh="T6 的分组 GEMM：哪个 program 算哪个专家的哪个 tile",
                en="T6 grouped GEMM: which program does which tile of which expert",
            ),
        ),
        (
            "make smem [ARGS=...]",
            say(
                zh="每个 autotune 配置的 shared memory，以及放得下它的 GPU",
                en="shared memory per autotune config, and the GPUs it fits",
            ),
        ),
        (
            "make l2sim [ARGS=...]",
            say(
                zh="行优先与分组顺序各读多少 DRAM 字节：一个 L2 模型",
                en="DRAM bytes in row-major vs grouped order, an L2 model",
            ),
        ),
        (
            "make loads [ARGS=...]",
            say(
                zh="你的 mainloop 每个 K 步读了什么、epilogue 写了什么",
                en="what your mainloop loads and your epilogue stores, per K step",
            ),
        ),
        (
            "make setup",
            say(
                zh=f"用固定的版本建好 {venv}（第一次用时自动完成）",
                en=f"create {venv} with the pinned versions (done on first use)",
            ),
        ),
    ]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rows = commands(*argv[:1])
    width = max(display_width(c) for c, _ in rows) + 2
    for command, what in rows:
        print("\n".join(wrap(what, width, first=command + " " * (width - display_width(command)))))
    print(
        "\n".join(
            wrap(
                say(
                    zh="另外：SEED=n 重放一次运行的随机输入；LESSON=T4 选一课；study 工具都接受 ARGS=--help",
                    en="also: SEED=n replays a run's random inputs; LESSON=T4 picks a lesson; each study tool "
                    "takes ARGS=--help",
                ),
                3,
            )
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
