"""Lesson T4's mutants of our own from the twelfth round of leftovers (left12, 2026-12-05): each was caught with a
message that named no cause, or a cause its check had not detected, until that check was added or mended.  Only make
check runs them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t4_mistakes.CAUSES, LEFT12_CAUSES here).  t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT12_CAUSES = {
    # course/interpreter_spin.py's words, said where an access walked on outside every tensor of its launch
    "walks-past-tensors": ("循环却没有在张量到头时停下", "the loop did not stop where the tensors end"),
}

LEFT12 = (
    mutant(
        "left12-k-loop-counter-stays",
        "T4.2",
        "4.3",
        "    for k in range(0, k_steps):\n        k_remaining = K - k * BLOCK_K\n",
        "    k = 0\n    while k < k_steps:\n        k_remaining = K - k * BLOCK_K\n",
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "walks-past-tensors",
        zh="K 循环写成 while k < k_steps，k 从不加一，指针却照样往前挪：每一圈都读 A、B 外面更远的地方；检查先是跑满 "
        "60 s（make test 里 10 s CPU）超时，只说「死循环？」，有时读到没映射的内存直接崩溃（left12）",
        en="the K loop as while k < k_steps with k never advanced while the pointers still move: each pass reads "
        "farther past A and B; the check ran into the 60 s timeout (10 s of CPU under make test) with 'an endless "
        "loop?' alone, or crashed reading unmapped memory (left12)",
    ),
    mutant(
        "left12-k-bound-never-shrinks",
        "T4.2",
        "4.3",
        "    for k in range(0, k_steps):\n        k_remaining = K - k * BLOCK_K\n",
        "    k_remaining = K\n    while k_remaining > 0:\n",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "walks-past-tensors",
        zh="K 循环写成 while k_remaining > 0，k_remaining 从不变小，指针却照样往前挪；检查超时或崩溃，同上（left12）",
        en="the K loop as while k_remaining > 0 with k_remaining never made smaller while the pointers still move; the "
        "check timed out or crashed, as above (left12)",
    ),
)
