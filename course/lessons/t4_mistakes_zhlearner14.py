"""Lesson T4's mutants of our own from the fourteenth Chinese-reading learner's walk (zhlearner14, 2026-12-05):
each was let through by its step, or caught with a message that named a wrong cause, until the check named with
it was added or mended.  Only make check runs them (table=False, not in §8); each must be caught by its test,
whose message names its cause (a key of t4_mistakes.CAUSES, ZHLEARNER14_CAUSES here) or, for cause "", none.
t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
ZHLEARNER14_CAUSES = {
    "store-mask-lets-row-m": ("正好是第 M 行这一行", "exactly row M alone"),
    "store-row-mask-against-n": ("行掩码拿 offs_m[:, None] 和 N 比了", "the row mask compares offs_m[:, None] with N"),
    "k-mask-by-block-n": ("K 掩码的界每一步减去 BLOCK_N", "the K mask's bound shrinking by BLOCK_N"),
    "bias-multiplied": ("acc 乘了 bias", "acc multiplied by the bias"),
    "bias-first-element": ("每一列都加了 bias[0]", "bias[0] added to every column"),
    "store-columns-by-block-m": ("列从 pid_n * BLOCK_M 起", "columns start at pid_n * BLOCK_M"),  # own-store-...
    "store-rows-by-block-n": (
        "offs_m = pid_m * BLOCK_N + tl.arange(0, BLOCK_M) 写不到的行",
        "the rows a store with offs_m = pid_m * BLOCK_N",
    ),
    "coords-not-int32": ("返回的 pid_m 或 pid_n 却不是 int32", "returned a pid_m or pid_n that is not int32"),
    "one-block-frozen": ("在循环里从不前移", "never moves and"),
    "erf-of-x": ("erf 的参数没有除以 sqrt(2)", "the erf's argument not divided by sqrt(2)"),
    "refused-for-its-shapes": ("同样形状的连续张量也被拒绝", "contiguous tensors of the same shapes are refused too"),
}

C_MASK = "    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)\n"
EXACT_GELU = "acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))"
BIAS_SHAPE = "    if bias is not None and tuple(bias.shape) != (b.shape[1],):\n"

# A tanh GELU through tl.extra.libdevice.tanh is no mutant here: on the interpreter the call gives None, and the
# failure's first line is Triton's own English (which the language check refuses); the note that follows it,
# failure_words.libdevice_note, is tested in tools/tests/test_libdevice_note.py.
ZHLEARNER14 = (
    mutant(
        "zhlearner14-tile-coords-int64",
        "T4.1",
        "2",
        "    group_id = pid // num_pid_in_group\n",
        "    group_id = pid.to(tl.int64) // num_pid_in_group\n",
        "test_tile_coords_worked_example",
        "coords-not-int32",
        zh="pid 转成 int64 再算：T4 全部通过，到了 T5 才在 TMA 的 load 上报 Expected a 32-bit integer（zhlearner14）",
        en="pid cast to int64 before the arithmetic: T4 passed whole, and T5 failed later at a TMA load with Expected "
        "a 32-bit integer (zhlearner14)",
    ),
    mutant(
        "zhlearner14-k-remaining-by-block-m",
        "T4.2",
        "4.1",
        "        k_remaining = K - k * BLOCK_K\n",
        "        k_remaining = K - k * BLOCK_M\n",
        "test_mainloop[16-16-72-16-16-32-row-major-torch.float16]",
        "k-tail-lanes-on",
        zh="k_remaining = K - k * BLOCK_M：每个用例的 BLOCK_M 都等于 BLOCK_K，或者 K 没有尾部，T4.2 全部通过"
        "（zhlearner14）",
        en="k_remaining = K - k * BLOCK_M: every case had BLOCK_M equal to BLOCK_K, or no K tail, and T4.2 passed "
        "whole (zhlearner14)",
    ),
    mutant(
        "zhlearner14-k-remaining-by-block-n",
        "T4.2",
        "4.1",
        "        k_remaining = K - k * BLOCK_K\n",
        "        k_remaining = K - k * BLOCK_N\n",
        "test_mainloop[20-40-40-16-32-16-row-major-torch.float16]",
        "k-mask-by-block-n",
        zh="k_remaining = K - k * BLOCK_N：BLOCK_N 大于 BLOCK_K 时后面的 k 块被掩码遮掉，消息只说了前几个 k 块的乘积，"
        "还列出 range(0, K, BLOCK_K)，像是循环写错了（zhlearner14 留下的，lead 补上）",
        en="k_remaining = K - k * BLOCK_N: with BLOCK_N above BLOCK_K the later k-blocks were masked off, and the "
        "message said the leading k-blocks' product and listed range(0, K, BLOCK_K), as if the loop were wrong "
        "(left by zhlearner14, done by the lead)",
    ),
    mutant(
        "zhlearner14-bias-multiplied",
        "T4.5",
        "5.2",
        "        acc = acc + bias.to(tl.float32)[None, :]  # one bias value per column of C\n",
        "        acc = acc * bias.to(tl.float32)[None, :]\n",
        "test_bias_and_activation[40-16-True-none-torch.float16]",
        "bias-multiplied",
        zh="acc 乘 bias 而不是加：消息只给了相对误差和错的格子（zhlearner14 留下的，lead 补上）",
        en="acc multiplied by the bias, not added: the message gave a relative error and the cells (left by "
        "zhlearner14, done by the lead)",
    ),
    mutant(
        "zhlearner14-bias-first-element-everywhere",
        "T4.5",
        "5.2",
        "        bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)\n",
        "        bias = tl.load(bias_ptr + 0 * offs_n, mask=offs_n < N, other=0.0)\n",
        "test_bias_and_activation[40-16-True-none-torch.float16]",
        "bias-first-element",
        zh="每一列都读 bias[0]：消息只给了相对误差和错的格子（zhlearner14 留下的，lead 补上）",
        en="bias[0] read for every column: the message gave a relative error and the cells (left by zhlearner14, "
        "done by the lead)",
    ),
    mutant(
        "zhlearner14-store-rows-by-block-n",
        "T4.3",
        "5.1",
        "    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
        "    c_ptrs",
        "    offs_m = pid_m * BLOCK_N + tl.arange(0, BLOCK_M)\n    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
        "    c_ptrs",
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "store-rows-by-block-n",
        zh="epilogue 的行偏移用了 pid_m * BLOCK_N：消息只说了哪些行没写（lead）",
        en="the epilogue's rows offset by pid_m * BLOCK_N: the message said only which rows went unwritten (lead)",
    ),
    mutant(
        "zhlearner14-a-ptrs-never-move",
        "T4.2",
        "4.3",
        "        a_ptrs += BLOCK_K * stride_ak\n",
        "",
        "test_mainloop[32-32-64-16-16-16-row-major-torch.float16]",
        "one-block-frozen",
        zh="只忘了移 a_ptrs（b_ptrs 照常前移）：消息只给了相对误差和错的格子，§4.3 却说测试认得出忘了移指针"
        "（zhlearner14）",
        en="a_ptrs alone never moved (b_ptrs did): the message gave a relative error and the cells, where §4.3 says "
        "the test knows a pointer that never moves (zhlearner14)",
    ),
    mutant(
        "zhlearner14-inner-dims-checked-one-way",
        "T4.4",
        "6.3",
        "    if a.shape[1] != b.shape[0]:\n",
        "    if a.shape[1] < b.shape[0]:\n",
        "test_input_validation[inner dims differ, a wider]",
        zh="内维只查了一个方向（a.shape[1] < b.shape[0]）：a 的列比 b 的行多时照样 launch，B 被读过末尾，"
        "T4.4 全部通过（zhlearner14）",
        en="the inner dimensions checked one way (a.shape[1] < b.shape[0]): an a wider than b is tall was launched, "
        "B read past its end, and T4.4 passed whole (zhlearner14)",
    ),
    mutant(
        "zhlearner14-store-mask-le-m",
        "T4.3",
        "5.1",
        C_MASK,
        C_MASK.replace("< M)", "<= M)"),
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "store-unmasked+store-mask-lets-row-m",
        zh="写回的掩码写成 offs_m <= M：消息说「掩码里少了行的条件」，可条件在，错的是 <=（zhlearner14）",
        en="the store's mask with offs_m <= M: the message said 'the mask lacks the rows' condition', which was "
        "there, written with <= (zhlearner14)",
    ),
    mutant(
        "zhlearner14-store-mask-crossed",
        "T4.3",
        "5.1",
        C_MASK,
        "    c_mask = (offs_m[:, None] < N) & (offs_n[None, :] < M)\n",
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "store-unmasked+store-row-mask-against-n",
        zh="写回的掩码把 M 和 N 对调了：消息说「掩码里少了行的条件」，可条件在，比的是 N（zhlearner14）",
        en="the store's mask with M and N swapped: the message said 'the mask lacks the rows' condition', which was "
        "there, against N (zhlearner14)",
    ),
    mutant(
        "zhlearner14-bias-shape-against-k",
        "T4.4",
        "6.3",
        BIAS_SHAPE,
        BIAS_SHAPE.replace("(b.shape[1],)", "(a.shape[1],)"),
        "test_views_of_any_strides_are_taken",
        "legal-view-refused+refused-for-its-shapes",
        zh="bias 的形状拿 a.shape[1]（K）比：第一条失败说「stride 是 0 或大于 1 的视图照样按它的 stride 读」，"
        "可拒绝它的是形状检查，不是 stride（zhlearner14）",
        en="bias's shape checked against a.shape[1] (K): the first failure said 'a view of stride 0 or more than 1 "
        "is read through its strides', where the shape check refused it, not the strides (zhlearner14)",
    ),
    mutant(
        "zhlearner14-gelu-erf-of-x",
        "T4.5",
        "5.2",
        EXACT_GELU,
        "acc = 0.5 * acc * (1.0 + tl.erf(acc))",
        "test_bias_and_activation[40-16-False-gelu-torch.float16]",
        "erf-of-x",
        zh="GELU 写成 0.5 * x * (1 + erf(x))，漏了除以 sqrt(2)：消息只给了相对误差和错的格子（zhlearner14）",
        en="GELU as 0.5 * x * (1 + erf(x)), without the division by sqrt(2): the message gave a relative error and "
        "the cells alone (zhlearner14)",
    ),
)
