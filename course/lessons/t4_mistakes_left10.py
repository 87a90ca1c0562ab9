"""Lesson T4's mutants of our own from the tenth leftovers helper (left10, 2026-12-04), which the hunts had left
caught with a relative error alone: k offsets taken % K, a pointer block built the other way round, and casts to
fp16 that round toward zero (in the loop and in the epilogue).  Only make check runs them (table=False, not in
§8); each must be caught by its test, whose message names its cause (a key of t4_mistakes.CAUSES, LEFT10_CAUSES
here).  t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT10_CAUSES = {
    "k-offsets-wrapped": ("绕回来又读了一遍前面的 k", "wrap around and read the first k's again"),
    "pointer-block-turned": ("的指针块建反了", "pointer block built the other way round"),
    "rounded-toward-zero": ("向零舍入", "rounded toward zero"),
}

OFFS_K = "    offs_k = tl.arange(0, BLOCK_K)\n"
A_BLOCK = "a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak"
B_BLOCK = "b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn"
DOT = "        acc = tl.dot(a, b, acc)"
RTZ = 'tl.float16, fp_downcast_rounding="rtz"'
FIRST = "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]"

LEFT10 = (
    mutant(
        "left10-k-offsets-mod-k",
        "T4.2",
        "4.1",
        OFFS_K,
        OFFS_K.replace("BLOCK_K)", "BLOCK_K) % K"),
        "test_mainloop[17-50-7-16-16-32-row-major-torch.float16]",
        "k-offsets-wrapped",
        zh="offs_k 取了 % K：K < BLOCK_K 时 K 之外的 lane 又读了前面的 k，失败信息只给了相对误差和错的格子（left10）",
        en="offs_k taken % K: with K < BLOCK_K the lanes past K read the first k's again; the failure gave a relative "
        "error and the wrong cells alone (left10)",
    ),
    mutant(
        "left10-b-block-turned",
        "T4.2",
        "3",
        B_BLOCK,
        "b_ptrs = b_ptr + offs_n[:, None] * stride_bn + offs_k[None, :] * stride_bk",
        FIRST,
        "pointer-block-turned",
        zh="B 的指针块建成 [BLOCK_N, BLOCK_K]：失败信息只给了相对误差和错的格子（left10）",
        en="B's pointer block built as [BLOCK_N, BLOCK_K]: the failure gave a relative error and the wrong cells "
        "alone (left10)",
    ),
    mutant(
        "left10-a-block-turned",
        "T4.2",
        "3",
        A_BLOCK,
        "a_ptrs = a_ptr + offs_k[:, None] * stride_ak + offs_m[None, :] * stride_am",
        FIRST,
        "pointer-block-turned",
        zh="A 的指针块建成 [BLOCK_K, BLOCK_M]（left10）",
        en="A's pointer block built as [BLOCK_K, BLOCK_M] (left10)",
    ),
    mutant(
        "left10-partials-rounded-toward-zero",
        "T4.2",
        "4.2",
        DOT,
        f"        acc += tl.dot(a, b).to({RTZ})",
        FIRST,
        "rounded-toward-zero",
        zh="每块 tl.dot 的结果向零舍入成 fp16 再累加：失败信息只给了相对误差（left10）",
        en="each block's tl.dot cast to fp16 rounding toward zero before it is added: the failure gave a relative "
        "error alone (left10)",
    ),
    mutant(
        "left10-operands-rounded-toward-zero",
        "T4.2",
        "4.2",
        DOT,
        f"        acc = tl.dot(a.to({RTZ}), b.to({RTZ}), acc)",
        FIRST.replace("float16", "float32"),
        "rounded-toward-zero",
        zh="float32 的 A、B 块向零舍入成 fp16 再 tl.dot：失败信息只给了相对误差（left10）",
        en="float32 blocks of A and B cast to fp16 rounding toward zero before tl.dot: the failure gave a relative "
        "error alone (left10)",
    ),
    mutant(
        "left10-epilogue-rounded-toward-zero",
        "T4.3",
        "5.1",
        "acc.to(c_ptr.dtype.element_ty)",
        'acc.to(c_ptr.dtype.element_ty, fp_downcast_rounding="rtz")',
        "test_epilogue[32-32-16-16-row-major-torch.float16]",
        "rounded-toward-zero",
        zh="epilogue 向零舍入成 C 的 dtype：失败信息只说 C 和 acc 转换后的值不同（left10）",
        en="the epilogue casts to C's dtype rounding toward zero: the failure said only that C differs from acc "
        "cast (left10)",
    ),
)
