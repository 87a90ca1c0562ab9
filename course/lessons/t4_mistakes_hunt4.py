"""Lesson T4's mutants of our own from the fourth hunt for unplanted mistakes (hunt4a, 2026-12-03): each
was let through until the check named with it was added.  Only make check runs them (table=False, not
in §8); each must be caught by its test, whose message names its cause (a key of t4_mistakes.CAUSES,
HUNT4_CAUSES here).  t4_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT4_CAUSES = {
    "activation-flag-unknown": ("bias_and_activation 只认 'gelu'", "knows 'gelu' alone"),
    "c-on-default-device": ("torch 的默认设备设成 meta 时", "with torch's default device set to meta"),
    "caller-changed-in-place": ("不要对输入用 set_、t_、resize_", "no set_, t_, resize_ or assignment to .data"),
    "c-shape-not-mn": ("C 要建成 (M, N)", "make C (M, N), with M = a.shape[0]"),
}

HUNT4 = (
    # "GELU" passes a check that folds case, and reaches the kernel as ACTIVATION="GELU": bias_and_activation
    # compares with "gelu", so C comes back without its GELU and without an error
    mutant(
        "hunt4-activation-case-folded",
        "T4.4",
        "6.3",
        "    if activation not in ACTIVATIONS:\n",
        '    if activation is not None and activation.lower() != "gelu":\n',
        "test_an_activation_the_kernel_does_not_know_never_reaches_it[GELU]",
        "activation-flag-unknown",
        zh="check_inputs 先 .lower() 再比较 activation：'GELU' 被接受，内核收到 ACTIVATION='GELU'，"
        "不做 GELU 也不报错（hunt4）",
        en="check_inputs compares activation.lower() with 'gelu': 'GELU' is taken, the kernel gets "
        "ACTIVATION='GELU' and applies no GELU, without an error; the suite asked only for 'relu' (hunt4)",
    ),
    # under the interpreter every tensor is a CPU tensor, torch's default device too: C made without
    # device= was always where a was
    mutant(
        "hunt4-c-on-default-device",
        "T4.4",
        "6.2",
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "    c = torch.empty((M, N), dtype=a.dtype)\n",
        "test_c_is_made_on_the_inputs_device",
        "c-on-default-device",
        zh="C 用 torch.empty((M, N), dtype=a.dtype) 建，没给 device：C 落在 torch 的默认设备上，"
        "不一定是输入所在的设备（hunt4）",
        en="C made as torch.empty((M, N), dtype=a.dtype), without device=: it lands on torch's default "
        "device, not necessarily the inputs'; under the interpreter both were always the CPU (hunt4)",
    ),
    # every value stays and the launch gets the caller's tensor object, so neither the copy check nor the
    # launch watch saw it; the caller's view now has other strides and storage
    mutant(
        "hunt4-set-contiguous-into-caller",
        "T4.4",
        "6.2",
        "    M, K = a.shape\n    N = b.shape[1]\n",
        "    for t in (a, b):\n        if not t.is_contiguous():\n            t.set_(t.contiguous())\n"
        "    M, K = a.shape\n    N = b.shape[1]\n",
        "test_matmul[64-64-64-column-major-torch.float16]",
        "caller-changed-in-place",
        zh="matmul 用 t.set_(t.contiguous()) 把不连续的输入就地换成连续的：值不变，"
        "调用者的视图却换了步长和存储（hunt4）",
        en="matmul makes a non-contiguous input contiguous in place, t.set_(t.contiguous()): every value stays, "
        "and the caller's view gets other strides and storage (hunt4)",
    ),
    # C of a's shape (M, K): where K > N the kernel wrote inside it and the grid check blamed the grid (it
    # counted C's tiles), where K < N the interpreter crashed writing past it
    mutant(
        "hunt4-c-empty-like-a",
        "T4.4",
        "6.2",
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "    c = torch.empty_like(a)\n",
        "test_matmul[45-37-83-row-major-torch.float16]",
        "c-shape-not-mn",
        zh="C 用 torch.empty_like(a) 建：形状是 (M, K)，不是 (M, N)；消息曾说网格太小，或解释器直接崩溃（hunt4）",
        en="C made as torch.empty_like(a): shape (M, K), not (M, N); the message had said the grid was too small "
        "(it counted C's tiles), or the interpreter crashed writing past C (hunt4)",
    ),
)
