"""T4.3 and T4.4 on a GPU: an LM head's logits over a long prefill, a C past 2**31 elements, stored
right (row times stride passes 2**31 there; the given matmul_kernel makes C's strides int64), and an
A too large for T4's int32 offsets refused (the given within_int32_reach), both §5.1."""

import pytest
import torch

from course.messages import fail

from .common import T4, quick
from support import BIG_GPU, BIG_GPU_REASON, fault_past_int32, random, rows_off_past_int32

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


@pytest.mark.t4_3
@pytest.mark.skipif(not BIG_GPU, reason=BIG_GPU_REASON)
def test_a_product_past_2_31_elements(t4):
    M, N, K = 20000, 128256, 64  # Llama 3's vocabulary: C has 2,565,120,000 elements
    x, w = random((M, K), torch.float16), random((N, K), torch.float16) / 8
    case = f"x @ W.t(), {M}x{N}x{K} fp16"
    c = t4.matmul(x, w.t(), config=quick(t4))
    problem = fault_past_int32() or rows_off_past_int32(c, x @ w.t(), N)  # a store that faulted shows first
    if problem:
        fail(T4, f"{case}：{problem[0]}", f"{case}: {problem[1]}", "5.1")
    del c
    torch.cuda.empty_cache()


@pytest.mark.t4_4
@pytest.mark.skipif(not BIG_GPU, reason=BIG_GPU_REASON)
def test_an_operand_past_int32_offsets_is_refused(t4):
    """An A whose offsets pass 2**31 - 1 (4.3 GB of fp16) is refused with a ValueError naming a, not
    launched: T4's offsets into A and B are int32 (the given within_int32_reach, §5.1)."""
    a = torch.empty((2**31 // 64 + 2, 64), device="cuda", dtype=torch.float16)
    b = random((64, 8), torch.float16)
    fault = None
    try:
        t4.matmul(a, b, config=quick(t4))
        fault = fault_past_int32()  # such a launch faults: name it, and leave the lost context alone below
        got = (f"它却启动了：{fault[0]}", f"and it launched: {fault[1]}") if fault else ("它却算了", "and it computed")
    except ValueError as e:
        got = (
            None
            if " a " in f" {e} " or "a (" in str(e)
            else (f"报错没有提到 a：{e}", f"the error does not name a: {e}")
        )
    del a
    if fault is None:
        torch.cuda.empty_cache()
    if got:
        fail(
            T4,
            f"偏移量超过 2**31 - 1 的 A 应当被拒绝（ValueError），{got[0]}",
            f"an A whose offsets pass 2**31 - 1 must be refused with a ValueError, {got[1]}",
            "5.1",
        )
