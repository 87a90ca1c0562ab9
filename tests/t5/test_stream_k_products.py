"""T5.3: the products of stream-K, right and bitwise repeatable, and the workspace's flags back at 0 after them
(the fix-up's two halves alone, publish and collect, before them: test_fix_up_halves.py)."""

import pytest
import torch
import triton

from course.i18n import say
from course.messages import fail

from .common import T5, cfg, check_product, check_trace, gelu, product_case, run_matmul
from .sk_carried import fail_if_acc_carried
from .stream_k_cases import (
    fail_if_data_parallel_redoes,
    fail_if_owners_alone,
    fail_if_segments_counted_globally,
)
from .test_data_parallel import fail_if_rounded_to_fp16
from support import DEVICE, INTERPRETING, OUT_RTOL, padded, rel_err

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


@pytest.mark.t5_3
@pytest.mark.parametrize(
    "dtype, mode, M, N, K, progs",
    [
        (torch.float16, "sk", 45, 37, 160, 3),
        (torch.float32, "sk", 45, 37, 160, 3),
        (torch.float16, "sk", 64, 64, 130, 3),
        (torch.float16, "sk", 64, 64, 129, 3),  # a last k-block one column wide: cdiv(K - 1, BLOCK_K) drops it
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
def test_stream_k_products_are_right_and_bitwise_repeatable(t5, probes, dtype, mode, M, N, K, progs):
    config = cfg(t5, mode=mode)
    c, a, b, rows = product_case(t5, M, N, K, dtype, "row-major", progs, config)
    case = say(
        zh=f"{M}x{K} @ {K}x{N} {dtype}，mode={mode}，{progs} 个程序",
        en=f"{M}x{K} @ {K}x{N} {dtype}, mode={mode}, {progs} programs",
    )
    grid, k_blocks = (triton.cdiv(M, 32), triton.cdiv(N, 32)), triton.cdiv(K, 32)
    plan = t5.stream_k_plan(grid[0] * grid[1], k_blocks, progs, mode)
    if rel_err(c, a.double() @ b.double()) > OUT_RTOL[dtype]:  # a known wrong product is named first
        fail_if_segments_counted_globally(c, a, b, plan[0], (32, 32, *grid), 4, OUT_RTOL[dtype], case)
        flags = t5.workspace(a.device, plan[1], 32, 32)[1] if plan[0] else None
        fail_if_owners_alone(c, a, b, plan, k_blocks, (32, 32, 32, *grid), 4, OUT_RTOL[dtype], case, flags)
        fail_if_acc_carried(c, a, b, plan, k_blocks, (32, 32, 32, *grid), 4, OUT_RTOL[dtype], case)
        fail_if_rounded_to_fp16(c, a, b, dtype, case, "4.2")
        last = (k_blocks - 1) * 32  # the last k-block's first column
        if k_blocks > 1 and rel_err(c, a[:, :last].double() @ b[:last].double()) <= OUT_RTOL[dtype]:
            fail(
                T5,
                f"{case}：结果等于去掉最后一个 k-block（第 {last}..{K - 1} 列）的乘积：每个 tile 的最后一个 k-block "
                f"都没有加进去；K = {K} 时一个 tile 有 cdiv(K, BLOCK_K) = {k_blocks} 个 k-block",
                f"{case}: the result is the product without the last k-block (columns {last}..{K - 1}): every "
                f"tile's last k-block was left out; with K = {K} a tile has cdiv(K, BLOCK_K) = {k_blocks} k-blocks",
                "4.2",
            )
    check_product(c, a, b, dtype, case, "4.2", tile=(config.BLOCK_M, config.BLOCK_N))
    fail_if_data_parallel_redoes(probes, rows, plan, grid, k_blocks, case)
    check_trace(rows, grid[0], grid[1], 4, k_blocks, case, "4.2", whole_k=K % 32 == 0, K=K)
    for run in range(1 if INTERPRETING else 20):  # the interpreter runs programs in order; a GPU does not
        again = t5.matmul(a, b, config=config, num_programs=progs)
        if not torch.equal(
            again.view(torch.int32 if dtype == torch.float32 else torch.int16),
            c.view(torch.int32 if dtype == torch.float32 else torch.int16),
        ):
            # The interpreter runs the programs in id order every time: there no order of adding can differ.
            why = (
                (
                    "，而解释器两次都按程序号顺序运行这些程序，所以不是相加顺序的问题：是第 1 次运行留下的东西改变了"
                    "第 2 次，比如 workspace（partial 加进了槽里而不是存进去，或者有 flag 没放回 0）",
                    ", though the interpreter ran the programs in id order both times, so no order of adding "
                    "explains it: something run 1 left behind changed run 2, in the workspace, say (a partial added "
                    "into its slot rather than stored there, or a flag left raised)",
                )
                if INTERPRETING
                else (
                    "：partial 要按固定顺序相加，不用浮点 atomic，也不要让上一次运行留在 workspace 里的东西影响下一次",
                    ": add the partials in a fixed order, with no float atomics, and let nothing a run leaves in "
                    "the workspace change the next",
                )
            )
            fail(
                T5,
                f"{case}：第 {run + 2} 次运行的结果和第 1 次不是同样的比特{why[0]}",
                f"{case}: run {run + 2} differs in its bits from run 1{why[1]}",
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


@pytest.mark.t5_3
def test_stream_k_with_w_t_bias_and_gelu(t5):
    """Stream-K tiles as a model's layer calls them: x @ W.t() (B read K-major), a bias with stride 2 and a
    GELU.  The other stream-K products multiply a row-major B with neither, so the flags stream_k_tiles
    hands on (B_KMAJOR to k_segment, HAS_BIAS and ACTIVATION to finish_tile) were never seen to matter."""
    M, N, K = 45, 70, 160  # 2 x 3 tiles of 32, 5 k-blocks each, all of them stream-K's
    x, w = padded(M, K, torch.float16)[0], padded(N, K, torch.float16)[0]
    bias = padded(1, 2 * N, torch.float16)[0][0, ::2]
    case = say(
        zh=f"x {M}x{K} @ W.t()（W 是 {N}x{K}），fp16，mode=sk，3 个程序，bias 步长 2，GELU",
        en=f"x {M}x{K} @ W.t() ({N}x{K} W), fp16, mode=sk, 3 programs, bias with stride 2, GELU",
    )
    c = run_matmul(t5, case, "4.2", x, w.t(), bias=bias, activation="gelu", config=cfg(t5, mode="sk"), num_programs=3)
    product = x.double() @ w.double().t()
    err = rel_err(c, gelu(product + bias.double()))
    if err <= OUT_RTOL[torch.float16]:
        return
    k, n = torch.arange(K, device=DEVICE)[:, None], torch.arange(N, device=DEVICE)[None, :]
    as_row_major = torch.where((k < N) & (n < K), w.double()[k.clamp(max=N - 1), n.clamp(max=K - 1)], 0.0)
    said = []
    if rel_err(c, product) <= OUT_RTOL[torch.float16]:
        said.append(
            (
                "C 是没加 bias、没做 GELU 的乘积：stream-K 的 tile 收尾时要把 HAS_BIAS 和 ACTIVATION 传给 finish_tile",
                "C is the product with neither the bias nor the GELU: the stream-K tiles' finish_tile must be handed "
                "HAS_BIAS and ACTIVATION",
            )
        )
    elif rel_err(c, gelu(x.double() @ as_row_major + bias.double())) <= OUT_RTOL[torch.float16]:
        said.append(
            (
                "C 是把 W 当成行主序的 B 读出来的乘积（B[k, n] 取了 W[k, n]）："
                "stream-K 的 tile 要把 B_KMAJOR 传给 k_segment",
                "C is the product with W read as a row-major B (W[k, n] for B[k, n]): the stream-K tiles must hand "
                "B_KMAJOR on to k_segment",
            )
        )
    fail(
        T5,
        f"{case}：相对误差 {err:.2e}" + "".join(f"：{zh}" for zh, _ in said),
        f"{case}: relative error {err:.2e}" + "".join(f": {en}" for _, en in said),
        "4.2",
    )
