"""T6.3 past int32 offsets.  On a GPU: a long prefill's MoE layer, whose sorted rows times their width pass 2**31
elements, stored right, by slot and combined.  The given moe_kernel makes the strides int64 there (its WIDE flag,
which the host sets past 2**31; §4.3), and combine_topk's N is int64 (§4.4).  On the interpreter: combine_topk,
store_rows and gathered_product, each given rows 2**32 + 48 elements apart on small tensors, with the addresses
they make watched (tests/bounds.py): those of int32 offsets are named."""

import numpy as np
import pytest
import torch

from course.messages import fail

import bounds
from .common import T6
from support import BIG_GPU, BIG_GPU_REASON, DEVICE, INTERPRETING, descriptor, fault_past_int32, rows_off_past_int32

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


def watched(module, monkeypatch, kernel):
    """{"read": [...], "write": [...]}: the byte addresses each access of `kernel` (a launch on the interpreter)
    makes, filled as it runs under an AddressWatch, which leaves out those outside the launch's tensors."""
    seen = {"read": [], "write": []}
    watch = bounds.AddressWatch(module, monkeypatch, (kernel,), seen=lambda what, at, _: seen[what].append(at))
    if not watch.active:
        pytest.skip("this Triton's interpreter cannot be watched (bounds.AddressWatch)")
    return seen


def wrapped_offsets(seen, t, offsets, skip=None):
    """None where the addresses `seen` (one kind's list) near t's, the span of tensor `skip` aside, are t's element
    offsets `offsets`, one for one; True where they are those offsets each wrapped to int32; False otherwise."""
    got = np.unique(np.concatenate(seen)) if seen else np.zeros(0, dtype=np.uint64)
    got = got[(got >= t.data_ptr() - 2**40) & (got < t.data_ptr() + 2**40)]  # t's own, however far off
    if skip is not None:  # another tensor the kernel reads (w, by TMA): its own addresses
        got = got[(got < skip.data_ptr()) | (got >= skip.data_ptr() + skip.numel() * skip.element_size())]
    size = t.element_size()
    if np.array_equal(got, np.unique((t.data_ptr() + size * offsets).astype(np.uint64))):
        return None
    wrapped = (offsets + 2**31) % 2**32 - 2**31  # each offset as an int32 holds it
    return bool(np.array_equal(got, np.unique((t.data_ptr() + size * wrapped).astype(np.uint64))))


def fail_wrapped(case, name, as_int32, section):
    """Fail for a tensor's addresses (name: (zh, en)) that are not its offsets: as int32 ones where as_int32."""
    fail(
        T6,
        f"{case[0]}：{name[0]}"
        + (
            "地址就像偏移是 int32：过了 2**31 个元素的行落到了别处（在 GPU 上会出错）；偏移保持 int64："
            "别把 N、stride、行号乘它们的积或偏移转成 tl.int32"
            if as_int32
            else "地址和行号乘行距再加列号的那些不一样（行距这么大时）"
        ),
        f"{case[1]}: {name[1]}"
        + (
            " went to addresses as if the offsets were int32: the rows past element 2**31 landed elsewhere (on a "
            "GPU, a fault); keep the offsets int64: no cast of N, a stride, a row times them or an offset to tl.int32"
            if as_int32
            else " went to other addresses than each row times the row pitch plus the column (with rows this far apart)"
        ),
        section,
    )


@pytest.mark.t6_3
@pytest.mark.skipif(
    not INTERPRETING, reason="watches the interpreter's addresses; test_rows_past_2_31_elements on a GPU"
)
def test_combine_offsets_stay_int64(t6, monkeypatch):
    """combine_topk's N is int64 (the given signature), so (t * TOP_K + j) * N + cols is int64 too, and the slots
    of a long prefill past 2**31 elements are read where they are.  3 tokens, top-2, N = 2**32 + 48 (the interpreter
    types an int argument by its value, not by the signature: int64 from 2**32 on), the first BLOCK_N columns alone
    (one column block in the grid): every slot and token but the first starts past 2**32 elements.  The addresses
    are watched, and the ones outside the small tensors allocated here are never made; an offset cast to tl.int32
    anywhere on the way (N, a product, the sum) wraps."""
    tokens, top_k, N, block_n = 3, 2, 2**32 + 48, 16
    by_slot = torch.zeros(1, block_n, device=DEVICE)  # slot 0's first columns alone: the rest lie far past it
    out = torch.zeros(1, block_n, dtype=torch.float16, device=DEVICE)
    seen = watched(t6, monkeypatch, "combine_topk")
    t6.combine_topk[(tokens, 1)](by_slot, out, N, top_k, block_n)
    case = (
        f"combine_topk，{tokens} 个 token、top-{top_k}，N = 2**32 + 48（int64，给定的签名就是这样），只启动第一块 "
        f"BLOCK_N = {block_n} 列",
        f"combine_topk, {tokens} tokens, top-{top_k}, N = 2**32 + 48 (int64, as the given signature has it), the first "
        f"column block of BLOCK_N = {block_n} alone",
    )
    cols = np.arange(block_n, dtype=np.int64)
    for what, t, rows, name in (
        ("read", by_slot, tokens * top_k, ("by_slot 的读", "by_slot's reads")),
        ("write", out, tokens, ("out 的写", "out's writes")),
    ):
        as_int32 = wrapped_offsets(seen[what], t, (np.arange(rows, dtype=np.int64)[:, None] * N + cols).ravel())
        if as_int32 is not None:
            fail_wrapped(case, name, as_int32, "4.4")


@pytest.mark.t6_3
@pytest.mark.skipif(
    not INTERPRETING, reason="watches the interpreter's addresses; test_rows_past_2_31_elements on a GPU"
)
def test_row_offsets_stay_int64(probes, monkeypatch):
    """Past 2**31 elements of x or of the output the given moe_kernel makes the strides int64 (WIDE, §4.3), so a row
    times its stride is int64 in gathered_product and store_rows.  Each alone, through its probe, one tile of 3 live
    rows 2**32 + 48 elements apart (an int64 stride on the interpreter), 16 columns: the addresses are watched, and
    the ones outside the small tensors allocated here are never made; an offset cast to tl.int32 wraps."""
    S, bm, bn, K = 2**32 + 48, 16, 16, 16
    cols = np.arange(bn, dtype=np.int64)
    offsets = (np.arange(3, dtype=np.int64)[:, None] * S + cols).ravel()  # rows 0, 1, 2: sorted rows, x sorted
    slots = torch.arange(bm, dtype=torch.int32, device=DEVICE)
    out = torch.zeros(1, bn, dtype=torch.float16, device=DEVICE)
    acc = torch.randn(bm, bn, device=DEVICE)
    seen = watched(probes, monkeypatch, "store_probe")
    probes.store_probe[(1,)](out, acc, acc, slots, 0, 3, 0, bn, S, 1, False, False, bm, bn)
    as_int32 = wrapped_offsets(seen["write"], out, offsets)
    if as_int32 is not None:
        case = (
            "store_rows，第 0 到 2 行，stride_om = 2**32 + 48（int64）",
            "store_rows, rows 0 to 2, stride_om = 2**32 + 48 (int64)",
        )
        fail_wrapped(case, ("out 的写", "out's writes"), as_int32, "4.3")
    x = torch.zeros(1, K, dtype=torch.float16, device=DEVICE)
    w2d = torch.zeros(bn, K, dtype=torch.float16, device=DEVICE)
    rows = torch.zeros(bm, 2, dtype=torch.int32, device=DEVICE)
    seen = watched(probes, monkeypatch, "gather_probe")
    probes.gather_probe[(1,)](x, descriptor(w2d, [bn, K]), slots, acc, rows, 0, 3, 0, K, S, 1, 2, True, bm, bn, K)
    as_int32 = wrapped_offsets(seen["read"], x, offsets, skip=w2d)
    if as_int32 is not None:
        case = (
            "gathered_product，x 已排好序，第 0 到 2 行，stride_xm = 2**32 + 48（int64）",
            "gathered_product, x sorted, rows 0 to 2, stride_xm = 2**32 + 48 (int64)",
        )
        fail_wrapped(case, ("x 的读", "x's reads"), as_int32, "4.1")
