"""Lesson T4's mutants of our own from session 28's lead (2026-12-04), after hunt9 left them caught with a
relative error or the NaN alone: a pointer block moved by BLOCK_M or BLOCK_N strides along K, where BLOCK_K
belongs, or built on one stride in both directions.  Only make check runs them (table=False, not in §8); each
must be caught by its test, whose message names its cause (a key of t4_mistakes.CAUSES, LEAD28_CAUSES here).
t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEAD28_CAUSES = {
    "block-size-advance": ("用在了 BLOCK_K 的位置", "where BLOCK_K belongs"),
    "one-stride-block": ("两个方向都乘了", "in both of its directions"),
}

A_MOVE = "        a_ptrs += BLOCK_K * stride_ak\n"
B_MOVE = "        b_ptrs += BLOCK_K * stride_bk\n"
A_BLOCK = "    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak\n"
B_BLOCK = "    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn\n"

LEAD28 = (
    mutant(
        "lead28-a-moved-by-block-m",
        "T4.2",
        "4.3",
        A_MOVE,
        A_MOVE.replace("BLOCK_K", "BLOCK_M"),
        "test_mainloop[40-24-64-16-16-32-row-major-torch.float16]",
        "block-size-advance",
        zh="a_ptrs 每次前移 BLOCK_M * stride_ak：失败信息只给了相对误差和错的格子（hunt9 记下，lead28）",
        en="a_ptrs advanced by BLOCK_M * stride_ak: the failure gave a relative error and the wrong cells alone "
        "(found by hunt9, lead28)",
    ),
    mutant(
        "lead28-b-moved-by-block-n",
        "T4.2",
        "4.3",
        B_MOVE,
        B_MOVE.replace("BLOCK_K", "BLOCK_N"),
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "block-size-advance",
        zh="b_ptrs 每次前移 BLOCK_N * stride_bk：失败信息只说读到了 A、B 之外，列出了每一种可能（lead28）",
        en="b_ptrs advanced by BLOCK_N * stride_bk: the failure said a load read outside A or B and listed every "
        "possible cause (lead28)",
    ),
    mutant(
        "lead28-a-block-on-stride-am",
        "T4.2",
        "3",
        A_BLOCK,
        A_BLOCK.replace("offs_k[None, :] * stride_ak", "offs_k[None, :] * stride_am"),
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "one-stride-block",
        zh="A 的 k 偏移也乘了 stride_am：失败信息只说读到了 A、B 之外，列出了每一种可能（hunt9 记下，lead28）",
        en="A's k offsets times stride_am too: the failure said a load read outside A or B and listed every "
        "possible cause (found by hunt9, lead28)",
    ),
    mutant(
        "lead28-b-block-on-stride-bn",
        "T4.2",
        "3",
        B_BLOCK,
        B_BLOCK.replace("offs_k[:, None] * stride_bk", "offs_k[:, None] * stride_bn"),
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "one-stride-block",
        zh="B 的 k 偏移乘了 stride_bn：失败信息只说读到了 A、B 之外（lead28）",
        en="B's k offsets times stride_bn: the failure said a load read outside A or B (lead28)",
    ),
)
