"""Which persistent program does which tile of which expert: the grouped GEMM's tile schedule over
ragged groups (explainer §3 of the lesson whose step writes grouped_tiles).

This runs YOUR route on a routing made from the command line, then YOUR expert_tile_counts,
locate_tile and grouped_tiles (in mine/, or the reference with --solution) through the suite's own
probe kernels in record-only mode (nothing is loaded or multiplied), on the GPU or, without one,
through Triton's interpreter: the tables are what your code does, not what it should do.

    python -m tools.study.groups                              # 24 tokens, top-2, 8 experts, Zipf-skewed
    python -m tools.study.groups --counts 0,37,3,16,0         # rows per expert, given outright
    python -m tools.study.groups --skew one --programs 4      # every token to one expert
    python -m tools.study.groups --block-m 8 --n 96 --format markdown
    python -m tools.study.groups --png /tmp/groups.png        # each expert's m-blocks x n-blocks

It prints each expert's rows and m-blocks (a ragged last block marked *), each global tile's
(expert, m-block, n-block) and sorted rows, each program's tiles, and the problems it finds: a tile
done twice or never, one that mixes two experts' rows, one done by the wrong program.
"""

import argparse
import sys
from dataclasses import dataclass

from course.i18n import say, use_lang, wrap
from course.registry import lesson_writing
from tools.core.tables import table
from tools.study import common as study
from tools.study.groups_check import Schedule, expected_tiles, ranges

STUDIED = "grouped_tiles"  # with expert_tile_counts and locate_tile; the step that writes it gives the lesson
TRACE_INTS = 7  # the graded file's trace: per tile, epilogues, expert, pid_m, pid_n, row begin, row end, program
SKEWS = ("zipf", "balanced", "one")
WIDTH = 80  # the terminal the text is made for


def paragraph(text):
    return "\n".join(wrap(text, WIDTH))


def cdiv(a, b):
    return -(-a // b)


@dataclass
class Routing:
    """A routing asked for on the command line: topk_ids [tokens, top_k] over `experts`."""

    ids: list  # ids[t][j]
    experts: int
    what: str  # how it was made, for the headline

    @property
    def histogram(self):
        out = [0] * self.experts
        for row in self.ids:
            for e in row:
                out[e] += 1
        return out


def make_routing(tokens, top_k, experts, skew, seed, counts=None):
    """topk_ids as torch.topk gives them: a Zipf-like skew (expert e chosen with weight 1/(e+1)^1.5,
    as the suite's skewed routing), each token's top_k distinct experts at random, or every choice
    on the last expert; with counts, counts[e] rows of expert e, one choice per token, shuffled."""
    import torch

    g = torch.Generator().manual_seed(seed)
    if counts is not None:
        flat = torch.tensor([e for e, c in enumerate(counts) for _ in range(c)], dtype=torch.int64)
        ids = flat[torch.randperm(flat.numel(), generator=g)].reshape(-1, 1)
        what = say(
            zh=f"给定的每个专家行数，token 的顺序打乱（seed {seed}）",
            en=f"The given rows per expert, the tokens in shuffled order (seed {seed})",
        )
        return Routing(ids.tolist(), len(counts), what)
    if skew == "one":
        ids = torch.full((tokens, top_k), experts - 1, dtype=torch.int64)
    elif skew == "balanced":
        ids = torch.stack([torch.randperm(experts, generator=g)[:top_k] for _ in range(tokens)])
    else:
        p = 1.0 / torch.arange(1, experts + 1, dtype=torch.float64) ** 1.5
        ids = torch.multinomial(p.expand(tokens, experts), top_k, replacement=False, generator=g)
    ids = ids.reshape(tokens, top_k)
    names = dict(
        zipf=("Zipf 偏斜", "Zipf-skewed"), balanced=("均匀", "balanced"), one=("全给一个专家", "all on one expert")
    )
    zh, en = names[skew]
    what = say(
        zh=f"{tokens} 个 token × top-{top_k}，{experts} 个专家，{zh}（seed {seed}）",
        en=f"{tokens} tokens x top-{top_k}, {experts} experts, {en} (seed {seed})",
    )
    return Routing(ids.tolist(), experts, what)


def compute(routing, n, block_m, block_n, group_m, programs, solution):
    """The Schedule the graded file gives: its route's counts, offsets and sorted slots, its
    expert_tile_counts, and the trace of its grouped_tiles over `programs` persistent programs."""
    lesson = lesson_writing(STUDIED)
    graded = study.load_graded(solution, lesson)
    import torch

    device = study.graded_device()
    experts = routing.experts
    top_k = len(routing.ids[0]) if routing.ids else 1
    ids = torch.tensor(routing.ids, dtype=torch.int64, device=device).reshape(-1, top_k)
    try:
        r = graded.route(ids, experts)
        counts, offsets = r.counts.cpu().tolist(), r.offsets.cpu().tolist()
        sorted_slots = r.sorted_slots.cpu().tolist()
        probes = study.probes(lesson)  # its kernels call the graded file's functions
        num_pid_n = cdiv(n, block_n)
        e_block = probes.e_block(experts)
        cnt = torch.tensor(counts, dtype=torch.int32, device=device)
        offs = torch.tensor(offsets, dtype=torch.int32, device=device)
        m_blocks = tile_ends = None
        if sum(max(0, c) for c in counts):  # program 0 of locate_probe writes expert_tile_counts' vectors
            found = torch.full((3 + experts + e_block,), -1, dtype=torch.int32, device=device)
            probes.locate_probe[(1,)](cnt, found, experts, num_pid_n, block_m, group_m, e_block)
            found = found.cpu().tolist()
            m_blocks, tile_ends = found[3 : 3 + experts], found[3 + experts : 3 + 2 * experts]
        # Room for every tile id the counts can give, and as many again: a loop that runs past the
        # total writes there, and is drawn, rather than into memory that is not the trace's.
        room = 2 * max(1, len(expected_tiles(counts, block_m, block_n, n)) + experts * num_pid_n)
        trace = torch.zeros(room * TRACE_INTS, dtype=torch.int32, device=device)
        probes.schedule_probe[(programs,)](
            cnt, offs, trace, n, experts, programs, top_k, block_m, block_n, group_m, e_block
        )
    except Exception as e:
        study.stop_if_stub(e)
        raise
    return Schedule(
        histogram=routing.histogram,
        counts=counts,
        offsets=offsets,
        sorted_slots=sorted_slots,
        slot_experts=[e for row in routing.ids for e in row],
        m_blocks=m_blocks,
        tile_ends=tile_ends,
        trace=[tuple(t) for t in trace.view(-1, TRACE_INTS).cpu().tolist()],
        n=n,
        block_m=block_m,
        block_n=block_n,
        programs=programs,
    )


# ------------------------------------------------------------------------------------------------
# The text
# ------------------------------------------------------------------------------------------------
def rows_label(begin, end, ragged):
    if end <= begin:
        return "-"
    return (f"{begin}..{end - 1}" if end - begin > 1 else str(begin)) + ("*" if ragged else "")


def headline(s, routing, group_m):
    total = len(expected_tiles(s.counts, s.block_m, s.block_n, s.n))
    return say(
        zh=f"{routing.what}：共 {sum(s.histogram)} 行。BLOCK_M={s.block_m}，N={s.n}，BLOCK_N={s.block_n}"
        f"（N 方向 {s.num_pid_n} 块），GROUP_M={group_m}；{total} 个 tile，{s.programs} 个常驻程序",
        en=f"{routing.what}: {sum(s.histogram)} rows. BLOCK_M={s.block_m}, N={s.n}, BLOCK_N={s.block_n} "
        f"({s.num_pid_n} n-blocks), GROUP_M={group_m}; {total} tiles, {s.programs} persistent programs",
    )


def expert_table(s, markdown):
    """One row per expert: its rows (route's counts), sorted rows, m-blocks and global tiles."""
    rows = []
    for e, c in enumerate(s.counts):
        begin = s.offsets[e] - c
        full, ragged = divmod(max(0, c), s.block_m)
        blocks = " + ".join(([f"{full}x{s.block_m}"] if full else []) + ([f"1x{ragged}*"] if ragged else [])) or "0"
        mine = [t for t, row in s.done_tiles() if row[1] == e]
        rows.append([str(e), str(c), rows_label(begin, begin + c, False), blocks, ranges(mine)])
    headers = [
        say(zh="专家", en="expert"),
        say(zh="行数", en="rows"),
        say(zh="排序后的行", en="sorted rows"),
        say(zh="m-block", en="m-blocks"),
        say(zh="全局 tile", en="global tiles"),
    ]
    return table(headers, rows, markdown)


def tile_table(s, markdown):
    """One row per global tile id that the counts give or that was done: where it went, who did it."""
    total = len(expected_tiles(s.counts, s.block_m, s.block_n, s.n))
    rows = []
    for t, (epilogues, e, pm, pn, begin, end, prog) in enumerate(s.trace):
        if t >= total and not epilogues:
            continue
        if not epilogues:
            rows.append([str(t), "?", "?", "?", "?", say(zh="没人做", en="none")])
            continue
        ragged = end - begin < s.block_m
        done = str(prog)
        if epilogues > 1:  # the trace keeps the program of the last epilogue only
            done = say(zh=f"{epilogues} 次，最后是 {prog}", en=f"{epilogues}x, last {prog}")
        rows.append([str(t), str(e), str(pm), str(pn), rows_label(begin, end, ragged), done])
    headers = [
        "tile",
        say(zh="专家", en="expert"),
        "m-block",
        "n-block",
        say(zh="排序后的行", en="sorted rows"),
        say(zh="程序", en="program"),
    ]
    return table(headers, rows, markdown)


def program_tiles(tiles, programs, width=56):
    """'0, 3, 6, ..., 45' for an even stride of `programs`, else the ids cut to `width` columns."""
    if len(tiles) > 4 and all(b - a == programs for a, b in zip(tiles, tiles[1:], strict=False)):
        return f"{tiles[0]}, {tiles[1]}, {tiles[2]}, ..., {tiles[-1]}"
    text = ", ".join(map(str, tiles)) or "-"
    return text if len(text) <= width else text[: width - 4].rsplit(",", 1)[0] + ", ..."


def program_table(s, markdown):
    by_program = {p: [] for p in range(s.programs)}
    for t, row in s.done_tiles():
        by_program.setdefault(row[6], []).append(t)
    rows = [[str(p), str(len(ts)), program_tiles(ts, s.programs)] for p, ts in sorted(by_program.items())]
    headers = [say(zh="程序", en="program"), say(zh="tile 数", en="tiles"), say(zh="做的 tile", en="tile ids")]
    text = table(headers, rows, markdown)
    if any(row[0] > 1 for _, row in s.done_tiles()):
        text += "\n" + paragraph(
            say(
                zh="（做了不止一次的 tile 只记在最后做它的程序名下：trace 只留最后一个）",
                en="(a tile done more than once counts for the last program that did it: the trace keeps only "
                "that one)",
            )
        )
    return text


def report(s, routing, group_m, markdown):
    parts = [
        paragraph(headline(s, routing, group_m)),
        paragraph(
            say(
                zh="每个专家（*：最后一块不满 BLOCK_M 行，掩码停在专家的最后一行）",
                en="Per expert (*: a ragged last m-block, fewer than BLOCK_M rows: the mask stops at the expert's "
                "last row)",
            )
        ),
        expert_table(s, markdown),
        say(
            zh="全局 tile 号 → (专家, m-block, n-block)，以及做它的程序",
            en="Global tile id -> (expert, m-block, n-block), and the program that did it",
        ),
        tile_table(s, markdown),
        say(zh="每个常驻程序做的 tile", en="The tiles of each persistent program"),
        program_table(s, markdown),
    ]
    problems = s.problems()
    if problems:
        parts.append(study.problems_list(problems, STUDIED, WIDTH))
    else:
        parts.append(
            say(
                zh="没有发现问题：每个专家的每个 tile 恰好做了一次。",
                en="No problems: every tile of every expert was done exactly once.",
            )
        )
    return "\n\n".join(parts)


def parse_counts(text):
    try:
        counts = [int(c) for c in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--counts takes integers separated by commas, got {text!r}") from None
    if not counts or min(counts) < 0:
        raise argparse.ArgumentTypeError(f"--counts takes one count >= 0 per expert, got {text!r}")
    return counts


def main(argv=None):
    parser = study.Parser("make groups", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=24, help="tokens routed (default 24)")
    parser.add_argument("--top-k", type=int, default=2, help="experts per token (default 2)")
    parser.add_argument("--experts", type=int, default=8, help="experts (default 8)")
    parser.add_argument("--skew", choices=SKEWS, default="zipf", help="how the tokens choose (default zipf)")
    parser.add_argument(
        "--seed",
        type=int,
        default=1,
        help="the routing's random seed (default 1: empty experts, a full block, one row)",
    )
    parser.add_argument("--counts", type=parse_counts, help="rows per expert, e.g. 0,37,3,16,0 (one choice per token)")
    parser.add_argument("--block-m", type=int, default=16, help="BLOCK_M, rows of a tile (default 16)")
    parser.add_argument("--n", type=int, default=64, help="N, columns of the output (default 64)")
    parser.add_argument("--block-n", type=int, default=32, help="BLOCK_N (default 32)")
    parser.add_argument("--group-m", type=int, default=2, help="GROUP_M of the order within an expert (default 2)")
    parser.add_argument("--programs", type=int, default=3, help="persistent programs launched (default 3)")
    study.add_report_flags(parser, STUDIED, "draw each expert's tiles into PATH instead of printing")
    args = parser.parse_args(argv)
    use_lang(args)
    if min(args.tokens, args.top_k, args.experts, args.n, args.block_n, args.group_m, args.programs) < 1:
        parser.error("--tokens, --top-k, --experts, --n, --block-n, --group-m and --programs must be at least 1")
    if args.block_m < 1 or args.block_m & (args.block_m - 1) or args.block_n & (args.block_n - 1):
        parser.error("--block-m and --block-n must be powers of 2 (Triton's blocks are)")
    if args.counts is None and args.skew != "one" and args.top_k > args.experts:
        parser.error("--top-k can be at most --experts: a token's experts are distinct")
    if cdiv(args.n, args.block_n) > 8:
        parser.error("at most 8 n-blocks (N / BLOCK_N), so that the tables fit 80 columns")
    routing = make_routing(args.tokens, args.top_k, args.experts, args.skew, args.seed, args.counts)
    s = compute(routing, args.n, args.block_m, args.block_n, args.group_m, args.programs, args.solution)
    if args.png:
        from tools.study.groups_picture import draw

        draw(s, args.png)
        return
    print(report(s, routing, args.group_m, args.format == "markdown"))
    if s.problems():
        sys.exit(1)


if __name__ == "__main__":
    main()
