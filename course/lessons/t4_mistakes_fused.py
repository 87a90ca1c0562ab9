"""Lesson T4's classic mistakes of T4.5, the fused bias and GELU (§5.2), for its explainer §8 table.
Kept beside t4_mistakes.py, which gathers them after T4.1-T4.4's into its TABLE (one file was 406
lines); their causes are keys of t4_mistakes.CAUSES, with the other steps' words.
"""

from course.lesson_data import Mistake

# bias_and_activation's two blocks, as in the reference: the bias-after-gelu mistake swaps them.
BIAS_BLOCK = (
    "    if HAS_BIAS:\n        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
    "        bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)\n"
    "        acc = acc + bias.to(tl.float32)[None, :]  # one bias value per column of C\n"
)
GELU_BLOCK = (
    "    if ACTIVATION == \"gelu\":\n"
    "        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))  # exact GELU: x * Phi(x)\n"
)

FUSED = (
    Mistake(
        "bias-in-torch",
        "T4.5",
        "kernel 里不加 bias、不做 GELU，交给 torch 在启动之后做",
        "bias and GELU left out of the kernel and done in torch after the launch",
        "5.2",
        'flags = dict(HAS_BIAS=bias is not None, ACTIVATION=activation or "none")',
        'flags = dict(HAS_BIAS=False, ACTIVATION="none")',
        "test_bias_and_gelu[48-48-40-True-gelu-torch.float16]",
    ),
    Mistake(
        "bias-unmasked",
        "T4.5",
        "加载 bias 时没有掩码",
        "the bias loaded without a mask",
        "5.2",
        "bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)",
        "bias = tl.load(bias_ptr + offs_n * stride_bias)",
        "test_bias_and_activation[70-32-True-none-torch.float16]",
        cause="bias-past-end",
    ),
    Mistake(
        "bias-after-gelu",
        "T4.5",
        "先 GELU 再加 bias",
        "the bias added after the GELU",
        "5.2",
        BIAS_BLOCK + GELU_BLOCK,
        GELU_BLOCK + BIAS_BLOCK,
        "test_bias_and_gelu[48-48-40-True-gelu-torch.float16]",
        cause="bias-after-gelu",
    ),
    Mistake(
        "tanh-gelu",
        "T4.5",
        "用 GELU 的 tanh 近似代替精确的 erf 版本",
        "the tanh approximation of GELU instead of the exact (erf) one",
        "5.2",
        "acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))",
        "acc = acc * tl.sigmoid(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))",
        "test_bias_and_gelu[48-48-40-True-gelu-torch.float32]",
        cause="tanh-gelu",
    ),
    Mistake(
        "bias-by-row",
        "T4.5",
        "bias 按行而不是按列加",
        "the bias added per row, not per column",
        "5.2",
        "acc = acc + bias.to(tl.float32)[None, :]",
        "acc = acc + bias.to(tl.float32)[:, None]",
        "test_bias_is_one_value_per_column",
        cause="bias-by-row",
    ),
    Mistake(
        "bias-stride",
        "T4.5",
        "bias 的 stride 被忽略",
        "the bias stride ignored",
        "5.2",
        "bias_ptr + offs_n * stride_bias",
        "bias_ptr + offs_n",
        "test_bias_and_activation[70-32-True-none-torch.float16]",
        cause="bias-unit-stride",
    ),
)
