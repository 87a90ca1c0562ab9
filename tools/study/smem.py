"""Shared memory per autotune config, and the GPUs that can run it (explainer §4 and §6).

A pipelined matmul keeps num_stages A blocks (BLOCK_M x BLOCK_K) and num_stages B blocks
(BLOCK_K x BLOCK_N) in shared memory at once, so that the loads of the next steps of K fly
while tl.dot works on this one:

    shared memory = num_stages * (BLOCK_M*BLOCK_K + BLOCK_K*BLOCK_N) * bytes per element

Triton refuses to launch a config that needs more than the GPU's per-block opt-in limit, and
the autotuner skips such a config silently, so a list tuned on an H100 may leave an NVIDIA T4
with nothing.  The formula and the limits live in course/hardware.py, which the suite reads too.

    python -m tools.study.smem                      # your AUTOTUNE_CONFIGS, fp16
    python -m tools.study.smem --solution --dtype fp32 --format markdown
    python -m tools.study.smem --config 128 256 64 3

The text follows the course's language (COURSE_LANG=zh or en, else the locale; --lang pins it).
"""

import argparse

from course.hardware import BYTES_PER_ELEMENT, SMEM_LIMITS, blocks_of, fits, shared_memory
from course.i18n import add_lang_flag, say, use_lang
from course.messages import read
from course.registry import step_writing
from tools.core.tables import table
from tools.study import common as study  # light: torch and triton load only with the graded file

STUDIED = "AUTOTUNE_CONFIGS"  # what this tool reads; the step that writes it gives the lesson


def report(blocks, dtype, markdown):
    """blocks: (BLOCK_M, BLOCK_N, BLOCK_K, num_stages) tuples; a table of bytes and GPUs."""
    headers = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", say(zh=f"字节数（{dtype}）", en=f"bytes ({dtype})")] + [
        say(zh=f"{gpu}（{limit:,} B）", en=f"{gpu} ({limit:,} B)") for gpu, limit in SMEM_LIMITS.items()
    ]
    yes, no = say(zh="放得下", en="yes"), say(zh="放不下", en="no")
    rows = []
    for b in blocks:
        nbytes = shared_memory(*b, BYTES_PER_ELEMENT[dtype])
        rows.append([*b, f"{nbytes:,}"] + [yes if ok else no for ok in fits(nbytes).values()])
    return table(headers, rows, markdown)


def graded_blocks(solution):
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_stages) of each config in the graded AUTOTUNE_CONFIGS."""
    step = step_writing(STUDIED)
    graded = study.load_graded(solution, step.lesson)
    if not graded.AUTOTUNE_CONFIGS:
        study.not_written_yet(
            say(
                zh=f"AUTOTUNE_CONFIGS 还是空的；{read(step)}。在那之前可以用 --solution，或 --config BM BN BK STAGES",
                en=f"AUTOTUNE_CONFIGS is empty; {read(step)}. Meanwhile: --solution, or --config BM BN BK STAGES",
            )
        )
    try:
        return [blocks_of(c) for c in graded.AUTOTUNE_CONFIGS]
    except (AttributeError, KeyError) as e:
        study.stop(
            say(
                zh=f"AUTOTUNE_CONFIGS：每一项都必须是 kwargs 里有 BLOCK_M、BLOCK_N、BLOCK_K 的 triton.Config"
                f"（{type(e).__name__}: {e}）；`make test STEP={step.id}` 会说得更多",
                en=f"AUTOTUNE_CONFIGS: every entry must be a triton.Config with BLOCK_M, BLOCK_N and "
                f"BLOCK_K in its kwargs ({type(e).__name__}: {e}); `make test STEP={step.id}` says more",
            )
        )


def main(argv=None):
    parser = study.Parser("make smem", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", choices=sorted(BYTES_PER_ELEMENT), default="fp16")
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument(
        "--config",
        nargs=4,
        type=int,
        metavar=("BM", "BN", "BK", "STAGES"),
        help="one hand-made config instead of AUTOTUNE_CONFIGS",
    )
    study.add_solution_flag(parser, step_writing(STUDIED).lesson)
    add_lang_flag(parser)
    args = parser.parse_args(argv)
    use_lang(args)
    if args.config and min(args.config) < 1:
        parser.error("--config: every number must be at least 1")
    blocks = [tuple(args.config)] if args.config else graded_blocks(args.solution)
    markdown = args.format == "markdown"
    if not markdown:
        where = "--config" if args.config else study.graded_path(step_writing(STUDIED).lesson)
        formula = f"num_stages * (BLOCK_M*BLOCK_K + BLOCK_K*BLOCK_N) * {BYTES_PER_ELEMENT[args.dtype]} B"
        print(
            say(
                zh=f"共享内存 = {formula}（{args.dtype}）；配置取自 {where}\n",
                en=f"shared memory = {formula} ({args.dtype}); configs from {where}\n",
            )
        )
    print(report(blocks, args.dtype, markdown))
    nbytes = [shared_memory(*b, BYTES_PER_ELEMENT[args.dtype]) for b in blocks]
    left_out = [gpu for gpu, limit in SMEM_LIMITS.items() if min(nbytes) > limit]
    if left_out and not markdown and not args.config:
        print(
            say(
                zh=f"\n没有一个配置放得下的 GPU：{'、'.join(left_out)}（自动调优器在那里没有配置可跑）",
                en=f"\nno config fits on: {', '.join(left_out)} (the autotuner would have nothing to run there)",
            )
        )


if __name__ == "__main__":
    main()
