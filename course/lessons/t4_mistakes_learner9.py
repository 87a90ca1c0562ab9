"""Lesson T4's mutants of our own from the ninth learner's walk (learner9, 2026-12-04): each was caught with a
message that named a wrong cause or none, until the check named with it was mended.  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t4_mistakes.CAUSES, LEARNER9_CAUSES here).  t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import A_LOAD, B_LOAD, mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER9_CAUSES = {
    "acc-replaced": ("用这一块的乘积换掉了 acc", "replaced acc with its block's product"),
    "grid-rows-only": ("它只数了 tile 的行数", "it counts the rows of tiles alone"),
    "grid-cols-only": ("它只数了 tile 的列数", "it counts the columns of tiles alone"),
    "row-major-order": ("整张图是行优先顺序", "The whole map is row-major order"),
    "block-strides-swapped": ("指针块把两个 stride 对调了", "pointer block built on its two strides swapped"),
    "cols-masked-with-m": ("也就是列掩码拿 offs_n 和 M 比了", "a column mask comparing offs_n with M"),
}

GRID = 'grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)'

LEARNER9 = (
    # T4.2: the K tail read unmasked, in both loads: told as "a mask missing or a wrong stride"
    mutant(
        "learner9-k-tail-unmasked",
        "T4.2",
        "4.1",
        A_LOAD + B_LOAD,
        "        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)\n"
        "        b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)\n",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "k-tail-lanes-on",  # left11: the tail's lanes seen on, whatever the mask compares (was masks-lack)
        zh="A 和 B 的 load 都只遮住 M、N 的边，K 的尾部没有掩码：失败信息只说「少了掩码或 stride 用错」（learner9）",
        en="A's and B's loads mask the M and N edges alone, the K tail unmasked: the failure said only 'a mask "
        "missing or a wrong stride' (learner9)",
    ),
    # T4.2: each step's product put in place of acc: a relative error alone
    mutant(
        "learner9-acc-replaced",
        "T4.2",
        "4.2",
        "acc = tl.dot(a, b, acc)",
        "acc = tl.dot(a, b)",
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "acc-replaced",
        zh="K 循环每一步 acc = tl.dot(a, b)，换掉 acc 而不是累加：失败信息只给出相对误差（learner9）",
        en="acc = tl.dot(a, b) in each step of the K loop, replacing acc instead of adding to it: the failure gave "
        "a relative error alone (learner9)",
    ),
    # T4.4: a grid that counts one side of the tiles; told as the area rounded up, or as a grid that ignores meta
    mutant(
        "learner9-grid-rows-only",
        "T4.4",
        "6.2",
        GRID,
        'grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)',
        "test_matmul[45-37-83-row-major-torch.float16]",
        "grid-too-small+grid-rows-only",
        zh="网格只有 cdiv(M, BLOCK_M) 个程序，少乘了 cdiv(N, BLOCK_N)：45x37 上被说成「面积整体向上取整」（learner9）",
        en="a grid of cdiv(M, BLOCK_M) programs, without the factor cdiv(N, BLOCK_N): on 45x37 it was told as "
        "'the area rounded up as a whole' (learner9)",
    ),
    mutant(
        "learner9-grid-rows-only-tuned",
        "T4.4",
        "6.2",
        GRID,
        'grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)',
        "test_default_launch_path_off_the_interpreter",
        "grid-rows-only",
        zh="同上，autotune 版的网格：被说成「要把网格写成 meta 的函数」，而它已经是（learner9）",
        en="the same, the autotuned launch's grid: told 'make it a function of meta', which it was (learner9)",
    ),
    mutant(
        "learner9-grid-cols-only",
        "T4.4",
        "6.2",
        GRID,
        'grid = lambda meta: (triton.cdiv(N, meta["BLOCK_N"]),)',
        "test_matmul[64-64-64-row-major-torch.float16]",
        "grid-too-small+grid-cols-only",
        zh="网格只有 cdiv(N, BLOCK_N) 个程序，少乘了 cdiv(M, BLOCK_M)：信息只说「它随 meta 变了，"
        "但数得不对」（learner9）",
        en="a grid of cdiv(N, BLOCK_N) programs, without the factor cdiv(M, BLOCK_M): the message said only 'it "
        "follows meta, but counts wrong' (learner9)",
    ),
    # T4.3: the columns' mask compared with M: "296 of 1665 cells of C were never written", no place, no cause
    mutant(
        "learner9-epilogue-cols-masked-with-m",
        "T4.3",
        "5.1",
        "c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
        "c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < M)",
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "cols-masked-with-m",
        zh="epilogue 的列掩码写成 offs_n < M：失败信息只说有多少个单元没被写过，不说在哪（learner9）",
        en="the epilogue's column mask written offs_n < M: the failure said how many cells were never written, not "
        "where (learner9)",
    ),
    # T4.1: inside a group the pids run along a row first, which is row-major order: the map alone was shown
    mutant(
        "learner9-row-first-in-group",
        "T4.1",
        "2",
        "pid_m = first_pid_m + pid_in_group % group_size_m\n    pid_n = pid_in_group // group_size_m",
        "pid_m = first_pid_m + pid_in_group // num_pid_n\n    pid_n = pid_in_group % num_pid_n",
        "test_tile_coords_worked_example",
        "row-major-order",
        zh="组内先沿一行走（pid_in_group // num_pid_n 是行），结果就是行优先顺序："
        "信息只给出 pid 5 算的 tile（learner9）",
        en="inside a group the pids run along a row first (pid_in_group // num_pid_n the row), which is row-major "
        "order: the message gave only the tile pid 5 computes (learner9)",
    ),
    # T4.2: a pointer block built on its two strides swapped: 'either a mask is missing or a wrong stride'
    mutant(
        "learner9-b-block-strides-swapped",
        "T4.2",
        "3",
        "b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn",
        "b_ptrs = b_ptr + offs_k[:, None] * stride_bn + offs_n[None, :] * stride_bk",
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "block-strides-swapped",
        zh="B 的指针块把 stride_bk、stride_bn 对调：失败信息只说「少了掩码或 stride 用错」；有个用例还被说成"
        "「K 的尾部没有掩码」（learner9）",
        en="B's pointer block built on stride_bn along K and stride_bk along N: the failure said 'a mask missing or "
        "a wrong stride', and one case would have been told as the K tail unmasked (learner9)",
    ),
    mutant(
        "learner9-a-block-strides-swapped",
        "T4.2",
        "3",
        "a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak",
        "a_ptrs = a_ptr + offs_m[:, None] * stride_ak + offs_k[None, :] * stride_am",
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "block-strides-swapped",
        zh="A 的指针块把 stride_am、stride_ak 对调：同上（learner9）",
        en="A's pointer block built on its two strides swapped: as above (learner9)",
    ),
)
