"""Lesson T4's mutants of our own from the eleventh round of leftovers (left11, 2026-12-04): each was caught with a
message that named a cause its check had not detected, until that message was mended.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t4_mistakes.CAUSES, LEFT11_CAUSES here).  t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT11_CAUSES = {
    "reads-values": ("读了一个张量的值，当时还没有拒绝它", "read a tensor's value before refusing it"),
    # every lane of the K tail read: the check sees the lanes on, not whether the mask lacks the condition or
    # compares with too large a bound (k_unmasked, learner9's and hunt9's K-tail mutants say these words too)
    "k-tail-lanes-on": ("没有关掉 K 尾部的 lane", "leave the K tail's lanes on"),
}

LEFT11 = (
    mutant(
        "left11-a-k-mask-by-steps",
        "T4.2",
        "4.1",
        "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining), other=0.0)\n",
        "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k), other=0.0)\n",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "k-tail-lanes-on",
        zh="A 的 K 掩码拿 offs_k 和 K - k 比，k 数的却是第几步：最后一步的 K 尾部全开着；失败信息说掩码里少了 "
        "offs_k < K - k * BLOCK_K，还说是拿 K 来比（left11）",
        en="A's K mask compares offs_k with K - k where k counts steps: the last step's K tail is all on; the failure "
        "said the masks lack offs_k < K - k * BLOCK_K and compare with K (left11)",
    ),
    mutant(
        "left11-check-inputs-reads-values",
        "T4.4",
        "6.3",
        "    if a.ndim != 2 or b.ndim != 2:\n",
        '    if bool(torch.isnan(a).any()) or bool(torch.isnan(b).any()):\n'
        '        raise ValueError("matmul: a or b holds NaN")\n'
        "    if a.ndim != 2 or b.ndim != 2:\n",
        "test_input_validation[devices differ]",
        "reads-values",
        zh="check_inputs 在查设备之前读张量的值（有没有 NaN）：失败信息是「应该抛出 ValueError，实际是 RuntimeError: "
        "Tensor.item() cannot be called on meta tensors」，没说是自己的代码读了 meta 张量的值（left11）",
        en="check_inputs reads the tensors' values (any NaN?) before the device check: the failure said 'expected "
        "ValueError, got RuntimeError: Tensor.item() cannot be called on meta tensors', not that the code itself read "
        "a meta tensor's value (left11)",
    ),
)
