"""Lesson T4's mutants of our own from the leftovers session (left8, 2026-12-04): each was let through, or
caught with a message that named no cause, until the check named with it was added or mended.  Only make
check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a
key of t4_mistakes.CAUSES, LEFT8_CAUSES here).  t4_mistakes.py gathers them last, and their causes into its
CAUSES.  An error raised by the learner's own line (tl.arnage) names its body's sections now too, but is no
mutant here: make check wants a mutant's one-line reason in the learner's language, and a raised error's
is Python's own words (tools/tests/test_learner_loop.py tests the note).
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT8_CAUSES = {
    "k-mask-inclusive": ("K 尾部的掩码放过了 k == K", "the K tail's mask lets k == K through"),
    "offsets-int32": ("就像偏移是 int32", "as if the offsets were int32"),
}

C_PTRS = "    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn\n"

LEFT8 = (
    # T4.3: offsets that wrap past 2**31 on a large C; the CPU saw nothing (a GPU with 40 GB alone)
    mutant(
        "left8-epilogue-offsets-to-int32",
        "T4.3",
        "5.1",
        C_PTRS,
        "    c_ptrs = c_ptr + (offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn).to(tl.int32)\n",
        "test_epilogue_offsets_stay_int64",
        "offsets-int32",
        zh="epilogue 把 C 的偏移转成 tl.int32：C 超过 2**31 个元素时回绕；CPU 上整个 T4.3 都放过了（left8）",
        en="epilogue casts C's offsets to tl.int32: past 2**31 elements they wrap; on the CPU the whole of T4.3 "
        "passed (left8)",
    ),
    mutant(
        "left8-epilogue-strides-to-int32",
        "T4.3",
        "5.1",
        C_PTRS,
        "    c_ptrs = c_ptr + offs_m[:, None] * tl.cast(stride_cm, tl.int32) + offs_n[None, :] * stride_cn\n",
        "test_epilogue_offsets_stay_int64",
        "offsets-int32",
        zh="epilogue 把 stride_cm 转回 tl.int32，丢掉了给好的 int64：同上（left8）",
        en="epilogue casts stride_cm back to tl.int32, undoing the given int64: as above (left8)",
    ),
    # T4.2: K spans several k-steps; the reads one past K were told as "a mask missing or a wrong stride"
    mutant(
        "left8-a-k-mask-le",
        "T4.2",
        "4.1",
        "(offs_k[None, :] < k_remaining), other=0.0)",
        "(offs_k[None, :] <= k_remaining), other=0.0)",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "k-mask-inclusive",
        zh="A 的 K 尾部掩码写成 <=，K 跨好几个 k 步：失败信息只说「少了掩码或 stride 用错」（left8）",
        en="A's K-tail mask written with <=, K over several k-steps: the failure said only 'a mask missing or a "
        "wrong stride' (left8)",
    ),
    mutant(
        "left8-b-k-mask-le",
        "T4.2",
        "4.1",
        "(offs_k[:, None] < k_remaining)",
        "(offs_k[:, None] <= k_remaining)",
        "test_mainloop[64-16-130-32-16-32-column-major-torch.float32]",
        "k-mask-inclusive",
        zh="B 的 K 尾部掩码写成 <=，K 跨好几个 k 步：同上（left8）",
        en="B's K-tail mask written with <=, K over several k-steps: as above (left8)",
    ),
)
