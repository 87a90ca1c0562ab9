"""T6.3 on a GPU: a long prefill's MoE layer, whose sorted rows times their width pass 2**31 elements,
stored right, by slot and combined.  The given moe_kernel makes the strides int64 there (its WIDE
flag, which the host sets past 2**31; §4.3), and combine_topk's N is int64 (§4.4)."""

import pytest
import torch

from course.messages import fail

from .common import T6
from support import BIG_GPU, BIG_GPU_REASON, fault_past_int32, rows_off_past_int32

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


@pytest.mark.t6_3
@pytest.mark.skipif(not BIG_GPU, reason=BIG_GPU_REASON)
def test_rows_past_2_31_elements(t6):
    tokens, top_k, experts, K, N = 140000, 2, 8, 64, 8192  # 280,000 sorted rows x 8192: 2,293,760,000
    g = torch.Generator(device="cuda").manual_seed(0)
    ids = torch.randint(0, experts - 1, (tokens, 1), device="cuda", generator=g)
    ids = torch.cat([ids, (ids + 1) % experts], dim=1)  # two different experts per token
    x = torch.randn(tokens, K, device="cuda", generator=g).half()
    w = (torch.randn(experts, N, K, device="cuda", generator=g) / 8).half()
    weights = torch.rand(tokens, top_k, device="cuda", generator=g).half()
    r = t6.route(ids, experts)
    case_zh = f"{tokens} 个 token，top-2，{experts} 个专家，K={K}，N={N}，fp16"
    case_en = f"{tokens} tokens, top-2, {experts} experts, K={K}, N={N}, fp16"
    out = t6.grouped_matmul(x, w, r, weights)
    problem = fault_past_int32()
    if problem:
        fail(T6, f"{case_zh}：{problem[0]}", f"{case_en}: {problem[1]}", "4.3")
    slots = r.sorted_slots.long()
    want = torch.empty_like(out)
    for e, end in enumerate(r.offsets.tolist()):  # each expert's sorted rows, by torch
        rows = slots[end - int(r.counts[e]) : end]
        want[end - int(r.counts[e]) : end] = (x[rows // top_k] @ w[e].t()) * weights.reshape(-1)[rows, None]
    problem = rows_off_past_int32(out, want, N)
    if problem:
        fail(T6, f"{case_zh}：{problem[0]}", f"{case_en}: {problem[1]}", "4.3")
    del out, want
    y = t6.grouped_matmul(x, w, r, weights, combine=True)
    problem = fault_past_int32()
    if problem:
        fail(T6, f"{case_zh}，合并：{problem[0]}", f"{case_en}, combined: {problem[1]}", "4.4")
    want = torch.zeros(tokens, N, device="cuda")
    for j in range(top_k):
        for e in range(experts):
            t = (ids[:, j] == e).nonzero()[:, 0]
            want.index_add_(0, t, (x[t] @ w[e].t()).float() * weights[t, j, None].float())
    problem = rows_off_past_int32(y, want, N)
    if problem:
        fail(T6, f"{case_zh}，合并：{problem[0]}", f"{case_en}, combined: {problem[1]}", "4.4")
    del y, want
    torch.cuda.empty_cache()
