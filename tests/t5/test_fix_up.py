"""T5.3: the fix-up's two halves as a pair run in other program orders (§4.2), and each program's
own run (each half alone is tested in test_fix_up_halves.py, before the whole kernel).  On the CPU
the interpreter runs programs one after another in id order, so every flag is up before anyone
waits: course/interpreter_order.py runs them cooperatively in a chosen order instead, and records
what each program did, for the checks numbers cannot make on a CPU (barrier, release, acquire;
test_fix_up_memory_order.py reads that record)."""

import pytest
import torch

from course.i18n import agree, cells, say
from course.messages import fail

from .common import T5, TRACE_INTS, cfg, check_product, new_trace
from .memory_order import record_problems
from .run_reads import check_reads_and_stores
from .stream_k_cases import (
    FIX_BM,
    FIX_BN,
    SK_CASES,
    data_parallel_below,
    pair_case,
    recorded_count_run,
    sk_case,
    sk_owner,
    sk_runs,
)
from support import DEVICE, INTERPRETING, random

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


def check_pair(out, flags, want, case, wanted, why=()):
    """The owner's sum against `want`, bit for bit; wanted: (zh, en) words for what want is.  why: (zh, en)
    sentences of the run's record (record_problems) that say how the owner came to read a partial early."""
    if out.isnan().any():
        fail(
            T5,
            f"{case}：结果里有 {out.isnan().sum().item()} 个 NaN：owner 读到了还没写进来的 partial"
            "（workspace 事先填的是 NaN）" + "".join(f"；这次运行的记录里：{zh}" for zh, _ in why),
            f"{case}: {out.isnan().sum().item()} NaN in the result: the owner read a partial before that partial "
            "was written (the workspace was filled with NaN)"
            + "".join(f"; in this run's record, {en}" for _, en in why),
            "4.2",
        )
    if not torch.equal(out, want):
        fail(
            T5,
            f"{case}：结果有 {(out != want).sum().item()} 个格子和{wanted[0]}不是同样的比特",
            f"{case}: {cells((out != want).sum().item())} of the result "
            f"{agree((out != want).sum().item(), 'differs', 'differ')} in their bits from {wanted[1]}",
            "4.2",
        )
    if flags.any():
        fail(
            T5,
            f"{case}：结束时 flag 是 {flags.cpu().tolist()}，应当全是 0",
            f"{case}: flags {flags.cpu().tolist()} at the end, all 0 expected",
            "4.2",
        )


ORDERS = ["reversed", "shuffled"]


def in_order(order, launch, held=(), runs=None):
    """launch() with the interpreter running its programs in `order`, taking turns (§4.2), those in held
    only when another spins; programs that wait for each other for good fail with a message instead of
    hanging.  runs: a list the run (its record of each program) is added to."""
    from course.interpreter_order import ProgramsStuck, programs_run

    try:
        with programs_run(order, held) as run:
            if runs is not None:
                runs.append(run)
            return launch()
    except ProgramsStuck as e:
        fail(
            T5,
            f"程序按 {order} 的顺序轮流运行时互相等个不停（{e}）：有程序在等一面永远没人举的旗",
            f"with the programs run in turns in the order {order}, they waited on each other for good ({e}): "
            "a program waits for a flag that nobody raises",
            "4.2",
        )


IN_ORDER = ("按程序号顺序把 partial 加起来的结果", "the partials added in program order")


@pytest.mark.t5_3
@pytest.mark.parametrize("order", ORDERS if INTERPRETING else ["GPU, 500 launches"])
def test_fix_up_waits_and_adds_in_program_order(probes, order):
    """Programs 0..5 publish, program 6 collects.  On the CPU the programs run in this order, taking
    turns at each atomic: the owner can be first, and flags can come up in any order.  On a GPU, 500
    launches with the workspace filled with NaN before each.  Either way the owner's sum must be the
    partials added in program order, bit for bit, with no NaN."""
    n = 7
    src, partials, flags, out, want = pair_case(n)
    if INTERPRETING:
        from course.interpreter_order import orders

        # first in id order, every partial published before the owner starts: a NaN then is no timing
        probes.publish_collect_probe[(n,)](src, partials, flags, out, FIX_BM, FIX_BN)
        if out.isnan().any():
            fail(
                T5,
                f"程序 0..{n - 2} 发布、程序 {n - 1} 收集，按程序号顺序运行（owner 开始前 partial 都已发布）："
                f"结果里有 {out.isnan().sum().item()} 个 NaN：owner 加上了 workspace 里没有哪次发布写过的格子"
                "（workspace 事先填的是 NaN；程序 p 的槽是 partials[p*BLOCK_M*BLOCK_N : (p+1)*BLOCK_M*BLOCK_N]）",
                f"programs 0..{n - 2} publish, program {n - 1} collects, run in id order (every partial published "
                f"before the owner starts): {out.isnan().sum().item()} NaN in the result: the owner added cells of "
                "the workspace that no publish wrote (it was filled with NaN; program p's slot is "
                "partials[p*BLOCK_M*BLOCK_N : (p+1)*BLOCK_M*BLOCK_N])",
                "4.2",
            )
        all_added_in_id_order = torch.equal(out, want)
        src, partials, flags, out, want = pair_case(n)

        chosen, held = orders(n, int(torch.randint(0, 2**31, (1,))))[order], ()
        if order == "shuffled":  # publisher 0, then the owner; the rest, shuffled, run only while the owner spins:
            held = [p for p in chosen if p not in (0, n - 1)]  # it meets flag 0 up, then flag 1 down, and must wait
            chosen = [0, n - 1, *held]
        runs = []
        in_order(
            chosen, lambda: probes.publish_collect_probe[(n,)](src, partials, flags, out, FIX_BM, FIX_BN), held, runs
        )
        wait = say(zh="，其余的只在 owner 空等时运行", en=", the rest only while the owner spins") if held else ""
        case = say(
            zh=f"程序 0..{n - 2} 发布、程序 {n - 1} 收集，按 {chosen} 的顺序轮流运行{wait}",
            en=f"programs 0..{n - 2} publish, program {n - 1} collects, run in turns in the order {chosen}{wait}",
        )
        why = (
            record_problems(runs[0].events, partials, flags, n, only=("flag-first", "no-wait"))
            if out.isnan().any()
            else ()
        )
        if all_added_in_id_order and not out.isnan().any():
            fail_if_partials_skipped(out, src, want, n, case)
        check_pair(out, flags, want, case, IN_ORDER, why)
        return
    for launch in range(500):
        partials.fill_(float("nan"))
        out.fill_(float("nan"))
        probes.publish_collect_probe[(n,)](src, partials, flags, out, FIX_BM, FIX_BN)
        case = say(zh=f"第 {launch + 1} 次启动（共 500 次）", en=f"launch {launch + 1} of 500")
        if out.isnan().any():
            nan_with_every_partial_written(probes, n, (src, partials, flags, out), f"{n} programs, {case}")
        check_pair(out, flags, want, f"{n} programs, {case}", IN_ORDER)


def fail_if_partials_skipped(out, src, want, n, case):
    """Fail where the owner's sum is acc plus some of the partials of programs 0..n-2, in program order, the
    others left out, though in id order (every partial published first) it added them all: the owner looked
    at a flag once and went on without the partial when it was not up yet, instead of waiting for it."""
    if torch.equal(out, want):
        return
    for mask in range(2 ** (n - 1) - 1):  # every set of publishers but the whole
        kept = [p for p in range(n - 1) if mask >> p & 1]
        total = src[n - 1]
        for p in kept:
            total = total + src[p]
        if torch.equal(out, total):
            skipped = [p for p in range(n - 1) if p not in kept]
            fail(
                T5,
                f"{case}：程序 {skipped} 的 partial 没有加上，结果正是其余 partial 按程序号顺序加到 acc 上的和；"
                "按程序号顺序运行（每个 partial 都先发布好）时却都加上了：owner 没等到旗举起来就跳过了那个 partial。"
                '等旗是原地转圈，直到读到 1（while tl.atomic_add(flag, 0, sem="acquire") != 1），'
                "然后每个 partial 都加上",
                f"{case}: the partials of programs {skipped} were not added; the result is exactly acc plus the "
                "others in program order, and run in id order (every partial published first) all were added: the "
                "owner skipped it without waiting for its flag. Waiting is spinning until the flag reads 1 (while "
                'tl.atomic_add(flag, 0, sem="acquire") != 1), then adding every partial',
                "4.2",
            )


def nan_with_every_partial_written(probes, n, args, case):
    """On a GPU, where the programs' order cannot be chosen: launch once more on the workspace the last
    launch left, every partial in it already written (the same values).  An owner that reads a partial
    too early now reads a written one and gives no NaN; NaN still there come from cells that no publish
    writes: fail naming that.  (check_pair then names the early read, now seen.)"""
    src, partials, flags, out = args
    kept, kept_flags = out.clone(), flags.clone()
    flags.zero_()
    out.fill_(float("nan"))
    probes.publish_collect_probe[(n,)](src, partials, flags, out, FIX_BM, FIX_BN)
    if out.isnan().any():
        fail(
            T5,
            f"{case}：结果里有 {int(out.isnan().sum())} 个 NaN，再在上次留下的 workspace 上启动一次（每个 partial "
            "都已写好）仍有：owner 加上了 workspace 里没有哪次发布写过的格子（workspace 事先填的是 NaN；程序 p 的槽是 "
            "partials[p*BLOCK_M*BLOCK_N : (p+1)*BLOCK_M*BLOCK_N]）",
            f"{case}: {int(out.isnan().sum())} NaN in the result, and still some in a launch on the workspace the "
            "last one left (every partial already written): the owner added cells of the workspace that no publish "
            "wrote (it was filled with NaN; program p's slot is partials[p*BLOCK_M*BLOCK_N : (p+1)*BLOCK_M*BLOCK_N])",
            "4.2",
        )
    out.copy_(kept)
    flags.copy_(kept_flags)


@pytest.mark.t5_3
@pytest.mark.skipif(not INTERPRETING, reason="CPU only: the order of the interpreter's programs")
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("M, N, K, progs", [(32, 32, 320, 5), (64, 64, 160, 6)])
def test_stream_k_in_any_program_order(t5, probes, order, M, N, K, progs):
    """The whole kernel, all stream-K, in float32, with the workspace filled with NaN: run in id
    order, then reversed or shuffled (course/interpreter_order.py); the same bits every time."""
    from course.interpreter_order import orders

    config = cfg(t5, mode="sk")
    a, b = random((M, K), torch.float32), random((K, N), torch.float32)
    partials = t5.workspace(a.device, progs, 32, 32)[0]
    partials.fill_(float("nan"))
    first = t5.matmul(a, b, config=config, num_programs=progs)
    left_up = t5.workspace(a.device, progs, 32, 32)[1].clone()  # the flags the run in id order left
    chosen = orders(progs, int(torch.randint(0, 2**31, (1,))))[order]
    partials.fill_(float("nan"))
    runs = []
    again = in_order(chosen, lambda: t5.matmul(a, b, config=config, num_programs=progs), runs=runs)
    case = say(
        zh=f"{M}x{K} @ {K}x{N} fp32，全部 stream-K，{progs} 个程序按 {chosen} 的顺序轮流运行",
        en=f"{M}x{K} @ {K}x{N} fp32, all stream-K, {progs} programs run in turns in the order {chosen}",
    )
    if first.isnan().any():  # whose NaN: the same call with the workspace filled with zeros instead
        partials.fill_(0.0)
        if not t5.matmul(a, b, config=config, num_programs=progs).isnan().any():
            fail(
                T5,
                f"{M}x{K} @ {K}x{N} fp32，全部 stream-K，{progs} 个程序按程序号顺序运行：workspace 事先填 NaN 时 "
                f"C 里有 {first.isnan().sum().item()} 个 NaN，换成填 0 就没有 NaN：owner 加上了 workspace 里当时还没有"
                "哪次发布写过的格子（程序 p 的槽是 partials[p*BLOCK_M*BLOCK_N : (p+1)*BLOCK_M*BLOCK_N]）",
                f"{M}x{K} @ {K}x{N} fp32, all stream-K, {progs} programs run in id order: with the workspace filled "
                f"with NaN first, C holds {first.isnan().sum().item()} NaN, and with it filled with zeros instead C "
                "has none: the owner added cells of the workspace that no publish had written (program p's slot is "
                "partials[p*BLOCK_M*BLOCK_N : (p+1)*BLOCK_M*BLOCK_N])",
                "4.2",
            )
    check_product(first, a, b, torch.float32, case, "4.2")
    if left_up.any():  # the run in another order started with them raised
        nan = again.isnan().sum().item()
        fail(
            T5,
            f"{M}x{K} @ {K}x{N} fp32，全部 stream-K，{progs} 个程序按程序号顺序运行：结果对，但结束后 "
            f"workspace 的 flag 没有归零：{left_up.cpu().tolist()}"
            + (
                f"；紧接着按 {chosen} 的顺序再跑，开始时这些 flag 还举着，结果里有 {nan} 个 NaN："
                "举着的旧 flag 让 owner 在这次发布之前就读了那个槽"
                if nan
                else ""
            )
            + "。每个发布了的 partial 都要由 owner 收集，收集后把那个程序的 flag 放回 0；这次运行看不出是 owner 加完"
            "没有放回 0，还是根本没有 owner 去收集它",
            f"{M}x{K} @ {K}x{N} fp32, all stream-K, {progs} programs run in id order: the product is right, but "
            f"the workspace's flags are not back at 0 after the kernel: {left_up.cpu().tolist()}"
            + (
                f"; the run in the order {chosen} after it, which started with those flags raised, has {nan} NaN "
                "in the result: a flag left raised let an owner read its slot before this launch wrote it"
                if nan
                else ""
            )
            + ". Every partial published is collected by an owner, who then puts that program's flag back to 0; "
            "this run cannot tell whether an owner added it and left the flag up or no owner collected it at all",
            "4.2",
        )
    check_pair(
        again, t5.workspace(a.device, progs, 32, 32)[1], first, case, ("按程序号顺序运行时", "the run in id order")
    )
    grid = (M // 32, N // 32)  # every tile stream-K's: first_tile, the data-parallel pass's first, is their count
    redone = lambda: data_parallel_below(probes, grid[0] * grid[1], grid, K // 32, progs)  # noqa: E731
    check_reads_and_stores(runs[0].events, a, again, (32, 32, 32), K // 32, 4, progs, case, redone)


def sk_share(tile, k_blocks, run):
    """How many of the tile's k-blocks lie in the run [begin, end)."""
    return max(0, min(run[1], (tile + 1) * k_blocks) - max(run[0], tile * k_blocks))


@pytest.mark.t5_3
@pytest.mark.skipif(not INTERPRETING, reason="CPU only: the interpreter tells which program did what")
def test_each_stream_k_program_sums_its_own_run(probes):
    """Count-only, with each program's trace updates recorded: program p sums exactly the k-blocks
    of its run (sk_run), tile by tile, and no others.  The trace alone cannot tell this from an
    owner that sums its whole tile itself: the tile's total is the same."""
    from course.interpreter_order import ProgramsStuck, programs_run

    for num_pid_m, num_pid_n, k_blocks, sk_tiles, progs in SK_CASES:
        tiles = num_pid_m * num_pid_n
        trace = new_trace(tiles)
        partials = torch.zeros(progs * 16 * 16, device=DEVICE)
        flags = torch.zeros(progs, dtype=torch.int32, device=DEVICE)
        try:
            with programs_run(range(progs)) as run:
                probes.stream_k_probe[(progs,)](
                    trace, partials, flags, 32 * k_blocks - 3, sk_tiles, num_pid_m, num_pid_n, progs, 32, 2
                )
        except ProgramsStuck as e:  # as in_order says it: a wait for good, not a timeout
            fail(
                T5,
                f"{sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs)}：程序按程序号的顺序轮流运行时互相等个"
                f"不停（{e}）：有程序在等一面永远没人举的旗；owner 要等的是从 sk_program_of(tile 的第一个 k-block) "
                "到 pid - 1 的程序，它们各自发布了这个 tile 的一段",
                f"{sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs)}: with the programs run in turns in id "
                f"order, they waited on each other for good ({e}): a program waits for a flag that nobody raises; an "
                "owner waits on the programs from sk_program_of(its tile's first k-block) to pid - 1, each of which "
                "published a segment of that tile",
                "4.1",
                "4.2",
            )
        got = {}  # (program, tile): k-blocks summed
        for p, events in run.events.items():
            for e in events:
                offset = (e.lo - trace.data_ptr()) // 4
                if e.kind == "atomic" and e.lo == e.hi and 0 <= offset < trace.numel() and offset % TRACE_INTS == 1:
                    got[p, offset // TRACE_INTS] = got.get((p, offset // TRACE_INTS), 0) + sum(e.values)
        total = sk_tiles * k_blocks
        runs = sk_runs(total, progs)
        shown = [f"[{lo}, {hi})" for lo, hi in runs]
        want = {(p, t): sk_share(t, k_blocks, runs[p]) for p in range(progs) for t in range(sk_tiles)}
        want = {key: n for key, n in want.items() if n}
        got = {key: n for key, n in got.items() if n}
        if got == want:
            continue
        owners_alone = (
            all(got.get((sk_owner(t, k_blocks, total, progs), t)) == k_blocks for t in range(sk_tiles))
            and len(got) == sk_tiles
        )
        case = sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs)
        (p, t), n = next((key, n) for key, n in sorted(got.items() | want.items()) if got.get(key) != want.get(key))
        fail(
            T5,
            f"{case}：程序 {p} 在 tile {t} 上算了 {got.get((p, t), 0)} 个 k-block，它的段 {shown[p]} 里"
            f"只有 {want.get((p, t), 0)} 个是这个 tile 的"
            + (
                "：每个 tile 都由 owner 自己把全部 k-block 算完了。每个程序只算自己那一段，别的段交给 partial"
                if owners_alone
                else ""
            ),
            f"{case}: program {p} summed {got.get((p, t), 0)} k-blocks of tile {t}; its run {shown[p]} holds "
            f"{want.get((p, t), 0)} of that tile's"
            + (
                ": every tile's owner summed all its k-blocks itself. Each program sums its own run only, and "
                "the other segments come as partials"
                if owners_alone
                else ""
            ),
            "4.1",
        )


@pytest.mark.t5_3
@pytest.mark.skipif(not INTERPRETING, reason="CPU only: the interpreter tells which program did what")
def test_each_stream_k_program_publishes_before_it_waits(probes):
    """Count-only, each program's flag traffic recorded: a program that publishes a partial raises
    its own flag before it touches another program's (§4.2: every publish comes before any wait).  A
    run walked from its start waits first and publishes last, so on a GPU each owner waits for the
    whole run of the program before it, and that one for the one before: a chain through every
    program, which gives the right bits and so shows in no product."""
    for num_pid_m, num_pid_n, k_blocks, sk_tiles, progs in SK_CASES:
        recorded, base = recorded_count_run(probes, (num_pid_m, num_pid_n, k_blocks, sk_tiles, progs))
        for p, events in sorted(recorded.items()):
            touched = [(e.lo - base) // 4 for e in events if base <= e.lo < base + 4 * progs]
            if p not in touched or touched[0] == p:
                continue  # publishes nothing, or publishes first
            other = touched[0]
            case = sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs)
            fail(
                T5,
                f"{case}：程序 {p} 先碰了程序 {other} 的 flag（等它的 partial），后来才举自己的 flag：发布要在"
                "任何等待之前。从段尾往回走，唯一可能要发布的那一段（最高的那段）就是第一个做的；"
                "从段首往前走，每个 owner 都要等前一个程序把整段跑完，GPU 上就成了一条穿过所有程序的链",
                f"{case}: program {p} touched program {other}'s flag (waiting for its partial) before raising its "
                "own: every publish comes before any wait. Walked from its end, a run's only segment that may be "
                "published, its highest, is the first one done; walked from its start, each owner waits for the "
                "program before it to finish its whole run, and on a GPU that is a chain through every program",
                "4.2",
            )
