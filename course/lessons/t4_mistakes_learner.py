"""Lesson T4's mutants of our own found by a learner's run of 2026-12-02 (t4learner3): mistakes the
suite caught under another cause, or let through, until the checks named with each were added.  Only
make check runs them (table=False).  Kept beside t4_mistakes_own.py, which would pass 400 lines with
them; t4_mistakes.py gathers them after it, and their causes (LEARNER_CAUSES) into its CAUSES.
The cause sigmoid-gelu (session 17) is own-sigmoid-gelu's, in t4_mistakes_own.py.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER_CAUSES = {
    "reads-outside": ("个没被掩码挡住的 lane 读到了 A、B 之外", "not masked off, read outside A and B"),
    "bias-read-outside": ("bias 的 load 有没被掩码挡住的 lane", "lanes of the bias load, not masked off"),
    "gelu-skipped": ("而这次 ACTIVATION='gelu'", "with no GELU applied, and ACTIVATION='gelu' here"),
    "input-written": ("matmul 改动了调用者的", "matmul changed the caller's"),
    "c-transposed": ("C 正好是 acc 的转置", "C holds acc transposed"),
    "key-lacks-m-or-n": ("M、N 一变，最好的 tile 大小就变", "M and N change the best tile size"),
    "unit-advance": ("每次只前移 BLOCK_K 个元素", "by BLOCK_K elements, as if the stride along K were 1"),
    "sigmoid-gelu": ("GELU 的 sigmoid 近似", "the sigmoid approximation of GELU"),
}

LEARNER = (
    # both blocks moved BLOCK_K elements: on column-major A (along M) and every-other-column B
    mutant(
        "own-both-advance-block-k-elements",
        "T4.2",
        "4.3",
        "        a_ptrs += BLOCK_K * stride_ak\n        b_ptrs += BLOCK_K * stride_bk\n",
        "        a_ptrs += BLOCK_K\n        b_ptrs += BLOCK_K\n",
        "test_mainloop[32-32-64-16-16-16-column-major-torch.float16]",
        "unit-advance",
        zh="两个指针块每次都只前移 BLOCK_K 个元素",
        en="both pointer blocks advanced by BLOCK_K elements",
    ),
    # one K step (K=7 < BLOCK_K): every advance is the same loop, so no advance may be blamed
    mutant(
        "own-a-k-mask-le-one-step",
        "T4.2",
        "4.1",
        "(offs_k[None, :] < k_remaining), other=0.0)",
        "(offs_k[None, :] <= k_remaining), other=0.0)",
        "test_mainloop[17-50-7-16-16-32-row-major-torch.float16]",
        "k-mask-inclusive",  # named since left8's address watch (t4_mistakes_left8.py)
        zh="A 的 K 尾部掩码写成 <=（只有一步 K）",
        en="A's K-tail mask written with <= (a single K step)",
    ),
    # the values right, the reads not: a load with no mask, its lanes past the edges zeroed by tl.where
    mutant(
        "own-a-load-unmasked-then-where",
        "T4.2",
        "4.1",
        "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining), other=0.0)\n",
        "        a = tl.where((offs_m[:, None] < M) & (offs_k[None, :] < k_remaining), tl.load(a_ptrs), 0.0)\n",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "reads-outside",
        zh="A 的 load 不带掩码，越界的 lane 事后用 tl.where 清零",
        en="A loaded without a mask, the lanes past its edges zeroed by tl.where afterwards",
    ),
    # T4.5 through T4.4's wrapper: the bias's stride 2 passed as 1 (NaN in the odd columns, from the padding)
    mutant(
        "own-launch-bias-stride-one",
        "T4.5",
        "5.2",
        "c.stride(0), c.stride(1), 0 if bias is None else bias.stride(0))",
        "c.stride(0), c.stride(1), 0 if bias is None else 1)",
        "test_bias_and_gelu[48-48-40-True-None-torch.float16]",
        "launch-strides",
        zh="launch 的 stride_bias 传了 1，不是 bias.stride(0)",
        en="the launch's stride_bias passed as 1, not bias.stride(0)",
    ),
    # T4.5: the bias's values right, its reads not: no mask, the lanes past N zeroed by tl.where
    mutant(
        "own-bias-unmasked-then-where",
        "T4.5",
        "5.2",
        "bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)",
        "bias = tl.where(offs_n < N, tl.load(bias_ptr + offs_n * stride_bias), 0.0)",
        "test_bias_and_activation[70-32-True-none-torch.float16]",
        "bias-read-outside",
        zh="bias 的 load 不带掩码，列号 >= N 的 lane 事后用 tl.where 清零",
        en="the bias loaded without a mask, the lanes past N zeroed by tl.where afterwards",
    ),
    # T4.5: GELU under the wrong flag; with K = 0, gelu(0) + bias is bias too: no bias-after-GELU there
    mutant(
        "own-gelu-flag-inverted",
        "T4.5",
        "5.2",
        '    if ACTIVATION == "gelu":\n',
        '    if ACTIVATION != "gelu":\n',
        "test_bias_and_gelu[20-9-0-True-gelu-torch.float16]",
        "gelu-skipped",
        zh="GELU 的条件写反了",
        en="the GELU's condition inverted",
    ),
    # T4.4: C is A's own storage where it fits: the caller's a overwritten
    mutant(
        "own-c-written-into-a",
        "T4.4",
        "6.2",
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "    c = a[:, :N] if K >= N else torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "test_matmul[45-37-83-row-major-torch.float16]",
        "input-written",
        zh="C 借用 A 的存储（K >= N 时），调用者的 a 被覆盖",
        en="C taken from A's storage where K >= N, overwriting the caller's a",
    ),
    # T4.3: C's strides swapped: on a square C every store stays inside it, C = acc transposed
    mutant(
        "own-c-strides-swapped",
        "T4.3",
        "5.1",
        "offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn",
        "offs_m[:, None] * stride_cn + offs_n[None, :] * stride_cm",
        "test_epilogue[32-32-16-16-row-major-torch.float16]",
        "c-transposed",
        zh="C 的两个 stride 对调",
        en="C's strides swapped",
    ),
    # T4.4: a key without M: the message's example must be M's, not K's
    mutant(
        "own-key-without-m",
        "T4.4",
        "6.1",
        'key=["M", "N", "K", "stride_bn"]',
        'key=["N", "K", "stride_bn"]',
        "test_autotuned_kernel",
        "key-lacks-m-or-n",
        zh="autotune 的 key 里没有 M",
        en="an autotune key without M",
    ),
)
