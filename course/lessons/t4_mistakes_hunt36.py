"""Lesson T4's mutants of our own from hunt36 (2026-12-05), a newcomer's first attempts: three grouped-order slips
that tests/t4/test_tile_order.py showed as a picture alone until tests/t4/order_slips.py learnt their maps; a bias
added though HAS_BIAS is False (the flag tested as `is not None`, or the pointer tested instead), told with a
relative error alone until gelu_models.bias_misuse_hint learnt it; a GELU with 1/sqrt(2) outside the erf's
parentheses; acc += tl.dot(a, b, acc), which adds acc twice; and masks joined with Python's `and`, which the
interpreter reads as the second condition alone (a GPU compile as &), told 'the mask lacks' a condition it has
until tests/t4/source_reads.py quoted the line.  Only make check runs them (table=False, not in §8); each must be
caught by its test, whose message names its cause (HUNT36_CAUSES here).
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT36_CAUSES = {
    "group-size-maximum": ("这正是 group_size_m 用 tl.maximum 的结果", "It is what group_size_m = tl.maximum("),
    "position-mod-group-m": (
        "这正是 pid_in_group = pid % GROUP_M 的结果",
        "It is what pid_in_group = pid % GROUP_M gives",
    ),
    "column-from-pid": ("这正是 pid_n = pid // group_size_m 的结果", "It is what pid_n = pid // group_size_m gives"),
    "bias-without-has-bias": ("可这里 HAS_BIAS=False", "but HAS_BIAS=False here"),
    "erf-scale-outside": ("1 / sqrt(2) 乘在了 erf 的括号外面", "the 1 / sqrt(2) outside the erf's parentheses"),
    "mask-joined-with-and": ("用 Python 的 and/or 连接", "joins with Python's and/or"),
    "acc-added-twice": ("结果正好是 acc += tl.dot(a, b, acc)", "it is exactly acc += tl.dot(a, b, acc)"),
}

HAS_BIAS_BRANCH = "    if HAS_BIAS:\n"

HUNT36 = (
    mutant(
        "hunt36-group-size-maximum",
        "T4.1",
        "2",
        "tl.minimum(num_pid_m - first_pid_m, GROUP_M)",
        "tl.maximum(num_pid_m - first_pid_m, GROUP_M)",
        "test_tile_coords_exact_map[4-4-2]",
        "group-size-maximum",
        zh="group_size_m 用 tl.maximum 取了较大的那个：之前只给出 pid 的图（hunt36）",
        en="group_size_m taken with tl.maximum, the larger: a picture of the pids alone before (hunt36)",
    ),
    mutant(
        "hunt36-pid-in-group-mod-group-m",
        "T4.1",
        "2",
        "pid_in_group = pid % num_pid_in_group",
        "pid_in_group = pid % GROUP_M",
        "test_tile_coords_exact_map[4-4-2]",
        "position-mod-group-m",
        zh="pid_in_group = pid % GROUP_M：组内位置按 GROUP_M 个 pid 算了；之前只给出 pid 的图（hunt36）",
        en="pid_in_group = pid % GROUP_M, the position counted in GROUP_M pids: a picture alone before (hunt36)",
    ),
    mutant(
        "hunt36-pid-n-from-pid",
        "T4.1",
        "2",
        "pid_n = pid_in_group // group_size_m",
        "pid_n = pid // group_size_m",
        "test_tile_coords_exact_map[4-4-2]",
        "column-from-pid",
        zh="pid_n = pid // group_size_m：除的是 pid 本身，不是组内位置；之前只给出 pid 的图（hunt36）",
        en="pid_n = pid // group_size_m, pid itself divided, not its position in the group: a picture alone "
        "before (hunt36)",
    ),
    mutant(
        "hunt36-has-bias-is-not-none",
        "T4.5",
        "5.2",
        HAS_BIAS_BRANCH,
        "    if HAS_BIAS is not None:\n",
        "test_bias_and_activation[40-16-False-gelu-torch.float16]",
        "bias-without-has-bias",
        zh="if HAS_BIAS is not None：HAS_BIAS 是 False 时也加 bias；之前只说了相对误差（hunt36）",
        en="if HAS_BIAS is not None: the bias added when HAS_BIAS is False too; a relative error alone before (hunt36)",
    ),
    mutant(
        "hunt36-bias-pointer-tested",
        "T4.5",
        "5.2",
        HAS_BIAS_BRANCH,
        "    if bias_ptr is not None:\n",
        "test_bias_and_activation[40-16-False-gelu-torch.float16]",
        "bias-without-has-bias",
        zh="if bias_ptr is not None：看指针不看 HAS_BIAS，探针交来真 bias 时 HAS_BIAS=False 也加了；之前只说了相对误差"
        "（hunt36）",
        en="if bias_ptr is not None: the pointer tested, not HAS_BIAS, so a real bias is added with HAS_BIAS=False; "
        "a relative error alone before (hunt36)",
    ),
    mutant(
        "hunt36-erf-scale-outside",
        "T4.5",
        "5.2",
        "tl.erf(acc * 0.7071067811865476)",
        "tl.erf(acc) * 0.7071067811865476",
        "test_bias_and_activation[40-16-False-gelu-torch.float16]",
        "erf-scale-outside",
        zh="GELU 写成 0.5 * acc * (1 + tl.erf(acc) * 0.7071...)：1/sqrt(2) 放在括号外；之前只说了相对误差（hunt36）",
        en="GELU as 0.5 * acc * (1 + tl.erf(acc) * 0.7071...), the 1/sqrt(2) outside the parentheses: a relative "
        "error alone before (hunt36)",
    ),
    # on a GPU Triton compiles `and` between blocks as & (deprecated); the interpreter runs Python's `and`
    mutant(
        "hunt36-store-mask-joined-with-and",
        "T4.3",
        "5.1",
        "c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
        "c_mask = (offs_m[:, None] < M) and (offs_n[None, :] < N)",
        "test_epilogue[37-45-16-32-every-other-column-torch.float16]",
        "store-unmasked+mask-lacks-rows+mask-joined-with-and",
        zh="store 的掩码用 and 连接：解释器里只剩列的条件；之前只说少了行的条件，而学员的掩码里明明有（hunt36）",
        en="the store's mask joined with `and`: the columns' condition alone under the interpreter; told 'the mask "
        "lacks the rows'' alone before, though the learner's mask has it (hunt36)",
    ),
    mutant(
        "hunt36-a-mask-joined-with-and",
        "T4.2",
        "4.1",
        "mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining)",
        "mask=(offs_m[:, None] < M) and (offs_k[None, :] < k_remaining)",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "masks-lack+mask-joined-with-and",
        zh="A 的 load 掩码用 and 连接：解释器里只剩 K 的条件；之前只说掩码里少了行的条件（hunt36）",
        en="A's load mask joined with `and`: K's condition alone under the interpreter; told 'the masks lack "
        "offs_m < M' alone before (hunt36)",
    ),
    mutant(
        "hunt36-b-mask-joined-with-and",
        "T4.2",
        "4.1",
        "mask=(offs_k[:, None] < k_remaining) & (offs_n[None, :] < N)",
        "mask=(offs_k[:, None] < k_remaining) and (offs_n[None, :] < N)",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "k-tail-lanes-on+mask-joined-with-and",
        zh="B 的 load 掩码用 and 连接：解释器里只剩列的条件，K 尾部的 lane 开着；之前只说了 K 尾部（hunt36）",
        en="B's load mask joined with `and`: the columns' condition alone under the interpreter, the K tail's lanes "
        "on; told of the K tail alone before (hunt36)",
    ),
    mutant(
        "hunt36-acc-added-twice",
        "T4.2",
        "4",
        "acc = tl.dot(a, b, acc)",
        "acc += tl.dot(a, b, acc)",
        "test_mainloop[32-32-64-16-16-16-column-major-torch.float16]",
        "acc-added-twice",
        zh="acc += tl.dot(a, b, acc)：tl.dot 已经加了 acc，每步把之前的和翻倍；之前只说了相对误差（hunt36）",
        en="acc += tl.dot(a, b, acc): tl.dot adds acc already, so every step doubles the sum so far; a relative "
        "error alone before (hunt36)",
    ),
)
