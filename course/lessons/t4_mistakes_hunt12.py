"""Lesson T4's mutants of our own from the twelfth mistake hunt (hunt12, 2026-12-05): grids of more programs
than tiles or along a second axis, products of K = 1 or N = 1 done on the host, a second launch, A's strides
assumed or swapped at the launch, C overwritten after it, a store mask with <=, and a bias on another device or
requiring grad.  All were caught; one message said more than its test had seen (the grid along a second axis
left tiles to nobody, so only where axis 0 is short) and was mended.  Only make check runs them (table=False,
not in §8); each must be caught by its test, whose message names its cause (a key of t4_mistakes.CAUSES,
HUNT12_CAUSES here) or, for cause "", says what it saw.  t4_mistakes.py gathers them last.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT12_CAUSES = {
    "grid-over-tiles": ("多出来的程序对应不到 C 的任何 tile", "the extra ones map to no tile of C"),
    "grid-axis-1": ("不止第 0 维有程序", "with programs along more than axis 0"),
}


def own(key, step, en, section, old, new, test, cause=""):
    """One of this hunt's mutants: the same words in both languages' report (make check's alone)."""
    return mutant(key, step, section, old, new, test, cause, en, en)


HUNT12 = (
    own(
        "hunt12-grid-doubled",
        "T4.4",
        "the grid counts twice the tiles of C: the extra programs map to no tile and store nothing; C "
        "stays right (hunt12, caught)",
        "6.2",
        '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)\n',
        '    grid = lambda meta: (2 * triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)\n',
        "test_every_call_returns_a_new_c",
        "grid-over-tiles",
    ),
    own(
        "hunt12-grid-one-program-more",
        "T4.4",
        "the grid counts one program more than the tiles of C (hunt12, caught)",
        "6.2",
        '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)\n',
        '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]) + 1,)\n',
        "test_every_call_returns_a_new_c",
        "grid-over-tiles",
    ),
    own(
        "hunt12-grid-second-axis-two",
        "T4.4",
        "the grid is (tiles, 2): every tile is computed and stored by two programs, C stays right; the "
        "message had said the other tiles are computed by nobody, which is so only where axis 0 is short "
        "(hunt12: mended)",
        "6.2",
        '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)\n',
        '    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), 2)\n',
        "test_matmul[64-64-64-row-major-torch.float16]",
        "grid-axis-1",
    ),
    own(
        "hunt12-k-one-outer-product",
        "T4.4",
        "a product of K = 1 done on the host as a broadcast outer product, no launch (hunt12, caught)",
        "6.2",
        "    if M == 0 or N == 0:\n",
        "    if K == 1 and bias is None and activation is None:\n"
        "        return (a.float() * b.float()).to(a.dtype)\n"
        "    if M == 0 or N == 0:\n",
        "test_matmul[33-40-1-row-major-torch.float16]",
        "",
    ),
    own(
        "hunt12-n-one-by-broadcast",
        "T4.4",
        "a product of N = 1 done on the host as a broadcast product and a sum, no launch (hunt12, caught)",
        "6.2",
        "    if M == 0 or N == 0:\n",
        "    if N == 1 and M > 0 and bias is None and activation is None:\n"
        "        return (a.float() * b.float().t()).sum(1, keepdim=True).to(a.dtype)\n"
        "    if M == 0 or N == 0:\n",
        "test_matmul[50-1-33-row-major-torch.float16]",
        "",
    ),
    own(
        "hunt12-launch-twice",
        "T4.4",
        "matmul launches the kernel twice with the same arguments: C right, the work done twice (hunt12, caught)",
        "6.2",
        "        matmul_kernel[grid](*args, **config.all_kwargs(), **flags)\n",
        "        matmul_kernel[grid](*args, **config.all_kwargs(), **flags)\n"
        "        matmul_kernel[grid](*args, **config.all_kwargs(), **flags)\n",
        "test_matmul[64-64-64-row-major-torch.float16]",
        "",
    ),
    own(
        "hunt12-launch-a-strides-swapped",
        "T4.4",
        "the launch passes a.stride(1), a.stride(0), swapped (hunt12, caught)",
        "6.2",
        "K, a.stride(0), a.stride(1), b.stride(0)",
        "K, a.stride(1), a.stride(0), b.stride(0)",
        "test_matmul[64-64-64-row-major-torch.float16]",
        "launch-strides",
    ),
    own(
        "hunt12-launch-a-contiguous-assumed",
        "T4.4",
        "the launch passes K, 1 for A's strides: a contiguous A assumed (hunt12, caught)",
        "6.2",
        "K, a.stride(0), a.stride(1), b.stride(0)",
        "K, K, 1, b.stride(0)",
        "test_matmul[64-64-64-row-major-torch.float16]",
        "launch-strides",
    ),
    own(
        "hunt12-store-mask-le",
        "T4.3",
        "the store's mask written with <= M and <= N: a row and a column past C written (hunt12, caught)",
        "5.1",
        "    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)\n",
        "    c_mask = (offs_m[:, None] <= M) & (offs_n[None, :] <= N)\n",
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        "store-unmasked",
    ),
    own(
        "hunt12-c-overwritten-by-float64",
        "T4.4",
        "after the launch, C is overwritten by a float64 broadcast product in torch (no torch product "
        "called) (hunt12, caught)",
        "6.2",
        "    # ---- T4.4 end ----\n    return c",
        "    if bias is None and activation is None and M * N * K:\n"
        "        c.copy_((a.double()[:, :, None] * b.double()[None]).sum(1).to(c.dtype))\n"
        "    # ---- T4.4 end ----\n"
        "    return c",
        "test_matmul[64-64-64-row-major-torch.float16]",
        "changed-after-launch",
    ),
    own(
        "hunt12-bias-device-unchecked",
        "T4.4",
        "check_inputs compares a's and b's devices alone: a bias on another device is taken (hunt12, caught)",
        "6.3",
        "    devices = {name: str(t.device) for name, t in tensors.items()}\n",
        '    devices = {name: str(t.device) for name, t in tensors.items() if name != "bias"}\n',
        "test_input_validation[bias on another device]",
        "",
    ),
    own(
        "hunt12-grad-check-skips-bias",
        "T4.4",
        "check_inputs refuses a and b that require grad, not a bias that does (hunt12, caught)",
        "6.3",
        "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n",
        '    needs_grad = [name for name, t in tensors.items() if t.requires_grad and name != "bias"]\n',
        "test_input_validation[bias requires grad]",
        "",
    ),
)
