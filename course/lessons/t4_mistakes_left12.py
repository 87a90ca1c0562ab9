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
    # tests/t4/conftest.py's words, said where a check's meta tensor (a GPU's, no values) had a value read
    "reads-gpu-values": ("读了一个张量的值：这项检查的张量代表 GPU 上的张量", "read a tensor's value: this check's"),
}

DEVICE_CHECKED = "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n"

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
    mutant(
        "left12-check-inputs-reads-after-devices",
        "T4.4",
        "6.3",
        DEVICE_CHECKED,
        "    if bool(torch.isnan(a).any()) or bool(torch.isnan(b).any()):\n"
        '        raise ValueError("matmul: a or b holds NaN")\n' + DEVICE_CHECKED,
        "test_check_inputs_off_the_interpreter",
        "reads-gpu-values",
        zh="check_inputs 在查完设备之后读 a、b 的值（有没有 NaN）：每次调用一次主机同步；失败信息只有 torch 的英文 "
        "RuntimeError: Tensor.item() cannot be called on meta tensors（left12）",
        en="check_inputs reads a's and b's values (any NaN?) after the device check: a host sync in every call; the "
        "failure was torch's words alone, RuntimeError: Tensor.item() cannot be called on meta tensors (left12)",
    ),
    mutant(
        "left12-check-inputs-reads-bias",
        "T4.4",
        "6.3",
        DEVICE_CHECKED,
        "    if bias is not None and bool(torch.isnan(bias).any()):\n"
        '        raise ValueError("matmul: bias holds NaN")\n' + DEVICE_CHECKED,
        "test_check_inputs_off_the_interpreter",
        "reads-gpu-values",
        zh="check_inputs 在查完设备之后读 bias 的值：每次带 bias 的调用一次主机同步；整个测试套件都通过了（left12）",
        en="check_inputs reads bias's values after the device check: a host sync in every call with a bias; the whole "
        "suite passed (left12)",
    ),
    mutant(
        "left12-matmul-reads-values",
        "T4.4",
        "6.3",
        "    N = b.shape[1]\n    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "    N = b.shape[1]\n    if not bool(torch.isfinite(a).all()):\n"
        '        raise ValueError("matmul: a holds inf or NaN")\n'
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "test_default_launch_path_off_the_interpreter",
        "reads-gpu-values",
        zh="matmul 在 check_inputs 之后读 a 的值（是不是都有限）：每次调用一次主机同步；失败信息只有 torch 的英文 "
        "RuntimeError（left12）",
        en="matmul reads a's values (all finite?) after check_inputs: a host sync in every call; the failure was "
        "torch's RuntimeError alone (left12)",
    ),
    mutant(
        "lead31-matmul-reads-bias-values",
        "T4.4",
        "6.3",
        "    N = b.shape[1]\n    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "    N = b.shape[1]\n    if bias is not None and bool(torch.isnan(bias).any()):\n"
        '        raise ValueError("matmul: bias holds NaN")\n'
        "    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
        "test_default_launch_path_off_the_interpreter",
        "reads-gpu-values",
        zh="matmul 在 check_inputs 之后读 bias 的值（有没有 NaN）：每次调用一次主机同步；这个检查原先不带 bias 调用 "
        "matmul，整个测试集都放过了它（session 31）",
        en="matmul reads bias's values (any NaN?) after check_inputs: a host sync in every call; the check called "
        "matmul without a bias, and the whole suite let it through (session 31)",
    ),
    mutant(
        "left12-gpu-check-compares-cuda",
        "T4.4",
        "6.3",
        '    if a.device.type == "cpu" and not INTERPRETING:\n',
        '    if not INTERPRETING and a.device != torch.device("cuda"):\n'
        '        raise ValueError(f"matmul: inputs must be on the GPU, got {a.device}")\n'
        '    if a.device.type == "cpu" and not INTERPRETING:\n',
        "test_check_inputs_off_the_interpreter",
        zh="check_inputs 在解释器之外把设备和 torch.device(\"cuda\") 比，cuda:0 和它不相等，于是拒绝了 GPU 上的输入；"
        "失败信息说「bf16 只在 TRITON_INTERPRET 下拒绝」，可它拒绝的不是 bf16：float16 也一样被拒（left12）",
        en="check_inputs compares the device with torch.device(\"cuda\") off the interpreter, which cuda:0 does not "
        "equal, so it refuses inputs on a GPU; the failure said 'bf16 is refused only under TRITON_INTERPRET', where "
        "the refusal was no bf16's: float16 is refused alike (left12)",
    ),
)
