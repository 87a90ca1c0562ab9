"""Lesson T4's mutants of our own from the sixth hunt for unplanted mistakes (hunt6a, 2026-12-04): each
was let through, or caught with a message that named no cause, until the check named with it was added or
mended.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of t4_mistakes.CAUSES, HUNT6_CAUSES here).  t4_mistakes.py gathers them last, and
their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT6_CAUSES = {
    "c-not-contiguous": ("不是连续的 (M, N) 张量", "not a contiguous (M, N) tensor"),
    "leading-blocks-only": ("个 k 块（前", "alone (the first"),
    "columns-by-block-m": ("的列从 pid_n * BLOCK_M 取起", "columns taken from pid_n * BLOCK_M on"),
    "rows-by-block-n": ("的行从 pid_m * BLOCK_N 取起", "rows taken from pid_m * BLOCK_N on"),
    "gelu-without-half": ("少了 0.5：GELU 的两倍", "without the 0.5: twice the GELU"),
    "erf-over-2": ("erf 的参数除以 2 而不是 sqrt(2)", "the erf's argument divided by 2, not by sqrt(2)"),
    "erf-times-sqrt2": ("erf 的参数乘以 sqrt(2) 而不是除以它", "the erf's argument multiplied by sqrt(2), not divided"),
}

ERF = "tl.erf(acc * 0.7071067811865476)"
GELU_TEST = "test_bias_and_activation[40-16-False-gelu-torch.float16]"

OFFSETS = (  # mainloop's, followed by offs_k (the epilogue's are followed by c_ptrs)
    "    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n"
    "    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    offs_k"
)
UNEVEN = "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]"  # BLOCK_M 16, BLOCK_N 32

HUNT6 = (
    mutant(
        "hunt6-c-column-major",
        "T4.4",
        "6.2",
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "    c = torch.empty((N, M), device=a.device, dtype=a.dtype).t()\n",
        "test_matmul[64-64-64-row-major-torch.float16]",
        "c-not-contiguous",
        zh="matmul 把 C 分配成 (N, M) 再 .t()：数值对，可返回的 C 按列存放，调用者 .view() 会出错；"
        "整个 T4.4 都放过了（hunt6）",
        en="matmul allocates C as (N, M) and returns its .t(): the values are right, but C comes back column-major "
        "and a caller's .view() of it fails; the whole of T4.4 passed (hunt6)",
    ),
    mutant(
        "hunt6-inner-dims-rows-match",
        "T4.4",
        "6.3",
        "    if a.shape[1] != b.shape[0]:\n",
        "    if a.shape[0] != b.shape[0] and a.shape[1] != b.shape[0]:\n",
        "test_input_validation[inner dims differ]",
        zh="check_inputs 在 a、b 行数相同时也放行（当 A 可能是转置着给的）：(6, 5) @ (6, 3) 没有报错；"
        "原来的用例 (4, 5) @ (6, 3) 行数不同（hunt6）",
        en="check_inputs lets a through when a and b have as many rows (as if A might come transposed): "
        "(6, 5) @ (6, 3) raised nothing; the case had been (4, 5) @ (6, 3), rows unequal (hunt6)",
    ),
    mutant(
        "hunt6-k-loop-over-elements",
        "T4.2",
        "4",
        "    for k in range(0, k_steps):\n",
        "    for k in range(0, K, BLOCK_K):\n",
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "leading-blocks-only",
        zh="K 循环写成 range(0, K, BLOCK_K)，k 已是元素偏移，K - k * BLOCK_K 却又乘了一次："
        "第一个 k 块之后全被掩码遮掉；只给出相对误差（hunt6）",
        en="the K loop is range(0, K, BLOCK_K), so k is an element offset, and K - k * BLOCK_K multiplies it again: "
        "every k-block after the first is masked off; caught with a relative error alone (hunt6)",
    ),
    mutant(
        "hunt6-columns-by-block-m",
        "T4.2",
        "3",
        OFFSETS,
        OFFSETS.replace("offs_n = pid_n * BLOCK_N", "offs_n = pid_n * BLOCK_M"),
        UNEVEN,
        "columns-by-block-m",
        zh="mainloop 的列偏移写成 pid_n * BLOCK_M：方形 tile 时看不出；只给出相对误差和出错的列（hunt6）",
        en="mainloop offsets the columns by pid_n * BLOCK_M: square tiles hide it; caught with a relative error and "
        "the wrong columns alone (hunt6)",
    ),
    mutant(
        "hunt6-rows-by-block-n",
        "T4.2",
        "3",
        OFFSETS,
        OFFSETS.replace("offs_m = pid_m * BLOCK_M", "offs_m = pid_m * BLOCK_N"),
        UNEVEN,
        "rows-by-block-n",
        zh="mainloop 的行偏移写成 pid_m * BLOCK_N：方形 tile 时看不出；只给出相对误差（hunt6）",
        en="mainloop offsets the rows by pid_m * BLOCK_N: square tiles hide it; caught with a relative error alone "
        "(hunt6)",
    ),
    mutant(
        "hunt6-gelu-without-half",
        "T4.5",
        "5.2",
        "acc = 0.5 * acc * (1.0 + tl.erf",
        "acc = acc * (1.0 + tl.erf",
        GELU_TEST,
        "gelu-without-half",
        zh="GELU 少了 0.5：结果是 GELU 的两倍；只给出相对误差（hunt6）",
        en="the GELU without its 0.5: twice the GELU; caught with a relative error alone (hunt6)",
    ),
    mutant(
        "hunt6-erf-over-2",
        "T4.5",
        "5.2",
        ERF,
        "tl.erf(acc / 2)",
        GELU_TEST,
        "erf-over-2",
        zh="GELU 的 erf 参数写成 acc / 2（除以 2 而不是 sqrt(2)）：只给出相对误差（hunt6）",
        en="the GELU's erf taken of acc / 2 (divided by 2, not by sqrt(2)): caught with a relative error alone (hunt6)",
    ),
    mutant(
        "hunt6-erf-times-sqrt2",
        "T4.5",
        "5.2",
        ERF,
        "tl.erf(acc * 1.4142135623730951)",
        GELU_TEST,
        "erf-times-sqrt2",
        zh="GELU 的 erf 参数写成 acc * sqrt(2)（乘而不是除）：只给出相对误差（hunt6）",
        en="the GELU's erf taken of acc * sqrt(2) (multiplied, not divided): caught with a relative error alone "
        "(hunt6)",
    ),
)
