"""Lesson T4's mutants of our own from left36 (2026-12-05): a GELU taken on a half-precision tile (acc converted
to the input's dtype first, or the bias added in it), which Triton's tl.erf refuses and the learner read in
Triton's words alone until tests/t4/gelu_models.py's fail_if_math_refused named it (with triton_said's words); a
bias read from element pid_n on, the block's number taken for a column, told with a relative error alone until
bias_misuse_hint learnt it; and a grid that counts C's rows or columns in elements, now told before it runs
(tests/launch_watch.py, fail_if_grid_counts_elements).  Only make check runs them (table=False, not in §8); each
must be caught by its test, whose message names its cause (LEFT36_CAUSES here).
"""

from course.lessons.t4_mistakes_own import BIAS_OFFSETS, EXACT_GELU, mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT36_CAUSES = {
    "math-in-half": (
        "是这里的某一行把它（或加 bias 的结果）变成了半精度",
        "so a line there made it (or the sum with the bias) half",
    ),
    "bias-from-pid-n": ("每个 tile 的 bias 从第 pid_n 个元素读起", "each tile's bias read from element pid_n on"),
    "grid-in-elements": ("而不是按块数", "not in blocks"),
}

GRID = '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)\n'
BIAS_ADD = "        acc = acc + bias.to(tl.float32)[None, :]  # one bias value per column of C\n"

LEFT36 = (
    mutant(
        "left36-gelu-of-half-acc",
        "T4.5",
        "5.2",
        f"        {EXACT_GELU}",
        f"        acc = acc.to(tl.float16)\n        {EXACT_GELU}",
        "test_bias_and_activation[40-16-False-gelu-torch.float16]",
        "math-in-half",
        zh="bias_and_activation 先把 acc 转成 fp16 再做 GELU：tl.erf 不收 fp16，之前只有 Triton 的原话（left36）",
        en="bias_and_activation turns acc to fp16 before the GELU: tl.erf refuses fp16, told in Triton's words "
        "alone before (left36)",
    ),
    mutant(
        "left36-bias-added-in-input-dtype",
        "T4.5",
        "5.2",
        BIAS_ADD,
        "        acc = acc.to(bias.dtype) + bias[None, :]  # one bias value per column of C\n",
        "test_bias_and_activation[40-16-True-gelu-torch.float16]",
        "math-in-half",
        zh="bias_and_activation 在 bias 的 dtype（fp16）里加 bias，GELU 于是拿到 fp16 的块（left36）",
        en="bias_and_activation adds the bias in its dtype (fp16), so the GELU is given an fp16 block (left36)",
    ),
    mutant(
        "left36-bias-columns-from-pid-n",
        "T4.5",
        "5.2",
        BIAS_OFFSETS,
        "        offs_n = pid_n + tl.arange(0, BLOCK_N)\n        bias =",
        "test_bias_and_activation[70-32-True-none-torch.float16]",
        "bias-from-pid-n",
        zh="bias 的列是 pid_n + tl.arange(0, BLOCK_N)：块号当成了列号，之前只说了相对误差（left36）",
        en="the bias's columns are pid_n + tl.arange(0, BLOCK_N), the block's number taken for a column: a "
        "relative error alone before (left36)",
    ),
    # a grid of more programs than tiles was checked after the launch alone, and only for too few: under the
    # interpreter the extra programs ran until the CPU clock said 'an endless loop?', or, on a fast machine, passed
    mutant(
        "left36-grid-n-in-columns",
        "T4.4",
        "6.2",
        GRID,
        '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * N,)\n',
        "test_grid_follows_the_config",
        "grid-in-elements",
        zh="网格是 cdiv(M, BLOCK_M) * N：N 按列数了，多出 BLOCK_N 倍的程序；之前要么超时（像死循环），"
        "要么通过（left36）",
        en="the grid is cdiv(M, BLOCK_M) * N, N counted in columns: BLOCK_N times the programs; it timed out (as an "
        "endless loop) or passed before (left36)",
    ),
    mutant(
        "left36-grid-m-in-rows",
        "T4.4",
        "6.2",
        GRID,
        '    grid = lambda meta: (M * triton.cdiv(N, meta["BLOCK_N"]),)\n',
        "test_grid_follows_the_config",
        "grid-in-elements",
        zh="网格是 M * cdiv(N, BLOCK_N)：M 按行数了（left36）",
        en="the grid is M * cdiv(N, BLOCK_N), M counted in rows (left36)",
    ),
)
