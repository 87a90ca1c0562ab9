"""Lesson T4's mutants of our own from the hunt for unplanted mistakes (2026-12-03): each was let
through until the check named with it was added.  Only make check runs them (table=False, not in
§8); each must be caught by its test, whose message names its cause (a key of t4_mistakes.CAUSES)
or, for cause "", none.  t4_mistakes.py gathers them after the learner's.
"""

from course.lessons.t4_mistakes_own import mutant

HUNTER = (
    # a (1, N) bias has N elements: numel() alone takes it, and the launch's stride_bias is then N
    mutant(
        "own-bias-shape-by-numel",
        "T4.4",
        "6.3",
        "    if bias is not None and tuple(bias.shape) != (b.shape[1],):\n",
        "    if bias is not None and bias.numel() != b.shape[1]:\n",
        "test_input_validation[bias of shape (1, 3)]",
        zh="check_inputs 只比较 bias 的元素个数：形状 (1, N) 的 bias 也被接受，它的 stride(0) 是 N 而不是 1（hunter）",
        en="check_inputs compares the bias's element count alone: a bias of shape (1, N) is taken, whose "
        "stride(0) is N, not 1; every bias case of the suite was 1-D, and it passed (hunter)",
    ),
    # K = 33 over BLOCK_K = 16: cdiv(K - 1, BLOCK_K) is 2, one k-block short; no K of the suite was 1 past a block
    mutant(
        "own-k-loop-to-cdiv-k-minus-one",
        "T4.2",
        "4.1",
        "    k_steps = tl.cdiv(K, BLOCK_K)\n",
        "    k_steps = tl.cdiv(K - 1, BLOCK_K)\n",
        "test_mainloop[24-16-33-16-16-16-row-major-torch.float16]",
        "k-tail-dropped",
        zh="K 循环跑到 tl.cdiv(K - 1, BLOCK_K)：K 比 BLOCK_K 的倍数多 1 时漏掉最后一个 k-block（hunter）",
        en="the K loop runs to tl.cdiv(K - 1, BLOCK_K): the last k-block is left out where K is one past a "
        "multiple of BLOCK_K; every K of the suite had passed it (hunter)",
    ),
)
