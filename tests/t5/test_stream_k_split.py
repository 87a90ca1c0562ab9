"""T5.3: the stream-K split: which program sums which k-blocks, every tile once, products right and
bitwise repeatable."""

import pytest
import torch
import triton

from course.messages import fail

from .common import T5, cfg, check_product, check_trace, new_trace, product_case, trace_rows
from .stream_k_cases import SK_CASES, sk_case, sk_owner
from support import DEVICE, INTERPRETING

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T5.3 stream-K with a deterministic fix-up
# ================================================================================================
@pytest.mark.t5_3
@pytest.mark.parametrize("total, progs", [(12, 3), (13, 3), (7, 7), (20, 6), (5, 8), (100, 9)])
def test_sk_runs_cover_every_k_block_once(probes, total, progs):
    runs = torch.full((2 * progs,), -1, dtype=torch.int32, device=DEVICE)
    owners = torch.full((total,), -1, dtype=torch.int32, device=DEVICE)
    probes.sk_run_probe[(progs,)](runs, owners, total, progs)
    got = [tuple(r) for r in runs.view(-1, 2).cpu().tolist()]
    base, extra = divmod(total, progs)
    want, at = [], 0
    for p in range(progs):
        want.append((at, at + base + (p < extra)))
        at = want[-1][1]
    if got != want:
        fail(
            T5,
            f"{total} 个 k-block 分给 {progs} 个程序：各段应当首尾相接"
            + (f"、前 {extra} 段多一个" if extra else f"、每段 {base} 个")
            + f"：期望 {want}，得到 {got}",
            f"{total} k-blocks over {progs} programs: the runs lie end to end, "
            + (f"the first {extra} one k-block longer" if extra else f"{base} each")
            + f": expected {want}, got {got}",
            "4.1",
        )
    want_owner = [p for p, (lo, hi) in enumerate(want) for _ in range(lo, hi)]
    if owners.cpu().tolist() != want_owner:
        fail(
            T5,
            f"sk_program_of 和 sk_run 对不上：k-block 的归属期望 {want_owner}，得到 {owners.cpu().tolist()}",
            f"sk_program_of disagrees with sk_run: expected owners {want_owner}, got {owners.cpu().tolist()}",
            "4.1",
        )


@pytest.mark.t5_3
def test_stream_k_every_tile_once(probes):
    """Count-only: every stream-K tile gets all its k-blocks and one epilogue, by the program that
    holds its last k-block; no other tile is touched; every flag is back at 0 at the end."""
    cases = SK_CASES + [
        (
            int(torch.randint(1, 5, (1,))),
            int(torch.randint(1, 5, (1,))),
            int(torch.randint(1, 9, (1,))),
            0,
            int(torch.randint(2, 10, (1,))),
        )
        for _ in range(3)
    ]
    for num_pid_m, num_pid_n, k_blocks, sk_tiles, progs in cases:
        tiles = num_pid_m * num_pid_n
        sk_tiles = sk_tiles or tiles
        progs = min(progs, sk_tiles * k_blocks)
        trace = new_trace(tiles)
        partials = torch.zeros(progs * 16 * 16, device=DEVICE)
        flags = torch.zeros(progs, dtype=torch.int32, device=DEVICE)
        probes.stream_k_probe[(progs,)](
            trace, partials, flags, 32 * k_blocks - 3, sk_tiles, num_pid_m, num_pid_n, progs, 32, 2
        )
        case = sk_case(num_pid_m, num_pid_n, k_blocks, sk_tiles, progs)
        total = sk_tiles * k_blocks
        check_trace(
            trace_rows(trace),
            num_pid_m,
            num_pid_n,
            2,
            k_blocks,
            case,
            "4.2",
            owner=lambda t, kb=k_blocks, tot=total, p=progs: sk_owner(t, kb, tot, p),
            done=range(sk_tiles),
        )
        if flags.any():
            # every publisher's flag still at 1, and no other: whatever the owners did with the partials
            # (this run counts, it does not add), none put a flag back
            base, extra = divmod(total, progs)
            ends = [(p + 1) * base + min(p + 1, extra) for p in range(progs)]
            published = [int(p < total and ends[p] % k_blocks != 0) for p in range(progs)]
            left_up = flags.cpu().tolist() == published
            fail(
                T5,
                f"{case}：结束时还有 flag 没归零 {flags.cpu().tolist()}"
                + (
                    "：发布过 partial 的程序的 flag 都还是 1，没有一个被 owner 放回 0（owner 等的是不是这些程序？"
                    "见 sk_program_of）"
                    if left_up
                    else ""
                ),
                f"{case}: flags left raised {flags.cpu().tolist()}"
                + (
                    ": every publisher's flag is still 1, none was put back to 0 by an owner (does each owner wait "
                    "on these programs? sk_program_of)"
                    if left_up
                    else ""
                ),
                "4.2",
            )


@pytest.mark.t5_3
@pytest.mark.parametrize(
    "tiles, k_blocks, sms, mode, want",
    [
        (64, 8, 132, "auto", (64, 132)),  # one thin wave (< half): all stream-K
        (100, 8, 132, "auto", (0, 100)),  # one wave at least half full: data-parallel
        (264, 8, 132, "auto", (0, 132)),  # whole waves
        (300, 8, 132, "auto", (168, 132)),  # a thin last wave merged with one full wave
        (400, 8, 132, "auto", (136, 132)),  # 3 waves and 4 tiles: the 4 and one wave go to stream-K
        (10, 1, 132, "auto", (0, 10)),  # one k-block: nothing to split
        (10, 4, 132, "sk", (10, 40)),  # no more programs than k-blocks
        (10, 4, 132, "dp", (0, 10)),
        (66, 8, 132, "auto", (0, 66)),  # exactly half full: data-parallel (an even SM count shows >= from >)
        (65, 8, 132, "auto", (65, 132)),  # one tile under half: stream-K
        (7, 8, 3, "auto", (4, 3)),  # an odd SM count: 1 tile is under half of 3 (a floored half would say 1 >= 1)
        (8, 8, 3, "auto", (0, 3)),  # 2 of 3 is over half: data-parallel
    ],
)
def test_stream_k_split(t5, tiles, k_blocks, sms, mode, want):
    got = tuple(t5.stream_k_split(tiles, k_blocks, sms, mode))
    if got != want:
        fail(
            T5,
            f"{tiles} 个 tile、每个 {k_blocks} 个 k-block、{sms} 个 SM、mode={mode}："
            f"期望 (sk_tiles, programs) = {want}，得到 {got}",
            f"{tiles} tiles of {k_blocks} k-blocks on {sms} SMs, mode={mode}: expected (sk_tiles, programs) = "
            f"{want}, got {got}",
            "4.3",
        )


@pytest.mark.t5_3
@pytest.mark.parametrize(
    "dtype, mode, M, N, K, progs",
    [
        (torch.float16, "sk", 45, 37, 160, 3),
        (torch.float32, "sk", 45, 37, 160, 3),
        (torch.float16, "sk", 64, 64, 130, 3),
        (torch.float16, "auto", 96, 33, 200, 5),
        (torch.float32, "auto", 64, 64, 130, 2),
        (torch.float16, "auto", 100, 70, 96, 4),
        (torch.float16, "tail", 128, 160, 96, 7),  # 20 tiles on 7: a last wave of 6, and one of 7, by stream-K
        (torch.float16, "split", 64, 40, 256, 9),  # split-K: 4 tiles, each cut in two along K, on 8 programs
        (torch.float16, "split", 128, 96, 64, 5),  # 12 tiles, more than half the 5 slots: whole tiles
    ]
    # On a GPU also tiles shared by 8 programs each (4 and 6 tiles, long K): with one or two programs
    # per tile a sum in no fixed order can still come out the same every run.
    + (
        []
        if INTERPRETING
        else [
            (torch.bfloat16, "sk", 300, 200, 1000, 7),
            (torch.float16, "auto", 512, 300, 4000, 11),
            (torch.float32, "sk", 64, 64, 4096, 32),
            (torch.float16, "sk", 64, 96, 8192, 48),
            (torch.float16, "split", 100, 64, 8192, 40),
        ]
    ),
    ids=str,
)
def test_stream_k_products_are_right_and_bitwise_repeatable(t5, dtype, mode, M, N, K, progs):
    config = cfg(t5, mode=mode)
    c, a, b, rows = product_case(t5, M, N, K, dtype, "row-major", progs, config)
    case = f"{M}x{K} @ {K}x{N} {dtype}, mode={mode}, {progs} programs"
    check_product(c, a, b, dtype, case, "4.2", tile=(config.BLOCK_M, config.BLOCK_N))
    check_trace(rows, triton.cdiv(M, 32), triton.cdiv(N, 32), 4, triton.cdiv(K, 32), case, "4.2")
    for run in range(1 if INTERPRETING else 20):  # the interpreter runs programs in order; a GPU does not
        again = t5.matmul(a, b, config=config, num_programs=progs)
        if not torch.equal(
            again.view(torch.int32 if dtype == torch.float32 else torch.int16),
            c.view(torch.int32 if dtype == torch.float32 else torch.int16),
        ):
            fail(
                T5,
                f"{case}：第 {run + 2} 次运行的结果和第 1 次不是同样的比特：partial 要按固定顺序相加，不用浮点 atomic",
                f"{case}: run {run + 2} differs in its bits from run 1: add the partials in a fixed order, "
                "with no float atomics",
                "4.2",
            )
    sk_tiles, programs = t5.stream_k_plan(triton.cdiv(M, 32) * triton.cdiv(N, 32), triton.cdiv(K, 32), progs, mode)
    if sk_tiles:
        flags = t5.workspace(a.device, programs, 32, 32)[1]
        if flags.any():
            fail(
                T5,
                f"{case}：kernel 结束后 workspace 的 flag 没有归零：{flags.cpu().tolist()}",
                f"{case}: the workspace's flags are not back at 0 after the kernel: {flags.cpu().tolist()}",
                "4.2",
            )
