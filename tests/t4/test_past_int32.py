"""T4.3 on a GPU: an LM head's logits over a long prefill, a C past 2**31 elements, stored right.
Row times stride passes 2**31 there; the given matmul_kernel makes the strides int64 (§5.1)."""

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
