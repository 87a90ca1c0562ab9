"""Lesson T4's mutants of our own from the sixteenth styles round (styles16, 2026-12-05): a mainloop on block
pointers (tl.make_block_ptr, tl.advance), as older tutorials and kernels write it.  Triton 3.9 took them out, and its
NotImplementedError reached the learner as a raw traceback in English; the suite now says what it means in the
learner's language, at the graded line (course/messages.block_pointer_words).  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t4_mistakes.CAUSES, STYLES16_CAUSES here).  t4_mistakes.py gathers them last, and their causes too.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
STYLES16_CAUSES = {
    # tests/conftest.py: Triton's refusal of tl.make_block_ptr, said in the learner's language
    "block-pointers-gone": ("没有块指针了", "has no block pointers"),
}

STYLES16 = (
    mutant(
        "styles16-block-pointer-mainloop",
        "T4.2",
        "3",
        "    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak\n",
        "    a_ptrs = tl.make_block_ptr(a_ptr, shape=(M, K), strides=(stride_am, stride_ak),\n"
        "                               offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))\n",
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "block-pointers-gone",
        zh="mainloop 用 tl.make_block_ptr 做 A 的块指针，而 Triton 3.9 已经去掉了块指针：Triton 的英文报错"
        "原样给了学习者（styles16）",
        en="mainloop makes A's block with tl.make_block_ptr, which Triton 3.9 took out: Triton's English error reached "
        "the learner raw (styles16)",
    ),
)
