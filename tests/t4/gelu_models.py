"""GELU and what a learner may write for it, as float64 functions, and the hint test_bias_and_gelu.py
gives where a result is one of them (no test here: a helper of that file)."""

import math
import os
import traceback

import pytest
import torch

from course import seam
from course.errors import error_chain
from course.i18n import say
from course.messages import math_dtype_words, read

from support import rel_err


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))  # exact GELU, x * Phi(x)


def tanh_gelu(x):
    """The tanh approximation of GELU (GPT-2's, PyTorch's approximate="tanh"): not what T4.5 asks."""
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def sigmoid_gelu(x):
    """The sigmoid approximation of GELU, x * sigmoid(1.702 x) (Hendrycks and Gimpel's): not what T4.5 asks."""
    return x * torch.sigmoid(1.702 * x)


APPROXIMATIONS = (  # (function, zh, en) for each approximation of GELU, or slip in its constants, a learner may write
    (tanh_gelu, "GELU 的 tanh 近似", "the tanh approximation of GELU"),
    (
        sigmoid_gelu,
        "GELU 的 sigmoid 近似 x * sigmoid(1.702 x)",
        "the sigmoid approximation of GELU, x * sigmoid(1.702 x)",
    ),
    (
        lambda x: 2 * gelu(x),
        "x * (1 + erf(x / sqrt(2)))，少了 0.5：GELU 的两倍",
        "x * (1 + erf(x / sqrt(2))), without the 0.5: twice the GELU",
    ),
    (
        lambda x: 0.5 * x * (1.0 + torch.erf(x / 2)),
        "0.5 * x * (1 + erf(x / 2))，erf 的参数除以 2 而不是 sqrt(2)",
        "0.5 * x * (1 + erf(x / 2)), the erf's argument divided by 2, not by sqrt(2)",
    ),
    (
        lambda x: 0.5 * x * (1.0 + torch.erf(x)),
        "0.5 * x * (1 + erf(x))，erf 的参数没有除以 sqrt(2)",
        "0.5 * x * (1 + erf(x)), the erf's argument not divided by sqrt(2)",
    ),
    (
        lambda x: 0.5 * x * torch.erf(x / math.sqrt(2.0)),
        "0.5 * x * erf(x / sqrt(2))，少了 erf 前面的 1 +",
        "0.5 * x * erf(x / sqrt(2)), without the 1 + before the erf",
    ),
    (
        lambda x: 0.5 * x * (1.0 + torch.erf(x * math.sqrt(2.0))),
        "0.5 * x * (1 + erf(x * sqrt(2)))，erf 的参数乘以 sqrt(2) 而不是除以它",
        "0.5 * x * (1 + erf(x * sqrt(2))), the erf's argument multiplied by sqrt(2), not divided by it",
    ),
    (  # tl.erf(acc) * 0.7071...: the 1 / sqrt(2) outside the erf's parentheses (hunt36)
        lambda x: 0.5 * x * (1.0 + torch.erf(x) / math.sqrt(2.0)),
        "0.5 * x * (1 + erf(x) / sqrt(2))，1 / sqrt(2) 乘在了 erf 的括号外面",
        "0.5 * x * (1 + erf(x) / sqrt(2)), the 1 / sqrt(2) outside the erf's parentheses",
    ),
)


def approximation_hint(out, x, rtol):
    """What to say when out is one approximation of GELU of x (the pre-activation, in float64) within
    rtol, or None."""
    for low in (torch.float16, torch.bfloat16):  # the exact GELU, its result rounded before the epilogue
        if rel_err(out, gelu(x).to(low).double()) <= rtol < rel_err(out, gelu(x)):
            return say(
                zh=f"这正是精确的 GELU 先舍入成 {low} 的结果：bias_and_activation 要返回 float32，"
                "转成 C 的 dtype 只在 epilogue 里做一次",
                en=f"it is the exact GELU rounded to {low}: bias_and_activation returns float32, and the one "
                "cast to C's dtype is the epilogue's",
            )
    for approx, zh, en in APPROXIMATIONS:
        if rel_err(out, approx(x)) <= rtol:
            far = rel_err(approx(x), gelu(x))
            return say(
                zh=f"这是 {zh}，和课程要求的精确（erf）GELU 差 {far:.0e}："
                "要的是 0.5 * x * (1 + erf(x / sqrt(2)))，用 tl.erf",
                en=f"this is {en}, {far:.0e} away from the exact (erf) GELU the lesson asks for: "
                "0.5 * x * (1 + erf(x / sqrt(2))), with tl.erf",
            )
    return None


def bias_misuse_hint(out, acc, bias, activation, rtol, bn=None, has_bias=True):
    """What to say when out is the tile with the bias multiplied in, acc * bias[None, :], or with its first element
    alone added to every column, acc + bias[0], or (bn, BLOCK_N, given) with each tile's bias read from element
    pid_n on, the block's number taken for its first column, then the activation, within rtol; or, has_bias
    False, with the bias added all the same; else None.  acc: the tile's first N columns; bias: its N elements."""
    act = gelu if activation == "gelu" else (lambda t: t)
    acc, b = acc.double(), bias.double()
    if not has_bias:  # the probe hands a real bias over either way: only HAS_BIAS says whether to add it
        if rel_err(out, act(acc + b[None, :])) > rtol:
            return None
        return say(
            zh="结果正好是加了 bias 的结果，可这里 HAS_BIAS=False：加 bias 的分支要看 HAS_BIAS 本身（if HAS_BIAS:）；"
            "HAS_BIAS 是 True 或 False，`if HAS_BIAS is not None` 总是成立",
            en="it is exactly the result with the bias added, but HAS_BIAS=False here: let HAS_BIAS itself decide "
            "(if HAS_BIAS:); it is True or False, so `if HAS_BIAS is not None` always holds",
        )
    if bn is not None and bn > 1:
        n = torch.arange(b.numel(), device=b.device)
        at = n // bn + n % bn  # column j of tile pid_n read at pid_n + j; masked off (0) from N on
        from_pid = torch.where(at < b.numel(), b[at.clamp(max=b.numel() - 1)], torch.zeros_like(b))
        if rel_err(out, act(acc + from_pid[None, :])) <= rtol:
            return say(
                zh="结果正好是每个 tile 的 bias 从第 pid_n 个元素读起：块号当成了列号；"
                "tile 的列是 offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
                en="it is exactly each tile's bias read from element pid_n on: the block's number taken for a "
                "column; a tile's columns are offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            )
    if rel_err(out, act(acc * b[None, :])) <= rtol:
        return say(
            zh="结果正好是 acc 乘了 bias（acc * bias[None, :]）：bias 是加上去的，acc + bias[None, :]",
            en="it is exactly acc multiplied by the bias, acc * bias[None, :]: the bias is added, acc + bias[None, :]",
        )
    if b.numel() > 1 and rel_err(out, act(acc + b[0])) <= rtol:
        return say(
            zh="结果正好是每一列都加了 bias[0]：bias 要按列读，bias_ptr + offs_n * stride_bias，每列加它自己的那一个",
            en="it is exactly bias[0] added to every column: read the bias per column, bias_ptr + offs_n * "
            "stride_bias, each column adding its own",
        )
    return None


def fail_if_math_refused(case, e):
    """Fail, naming the cause, where e is Triton's refusal of a math function's half-precision block (tl.erf given an
    fp16 tile: course.messages.math_dtype_words) on its way through bias_and_activation, whose acc arrives float32
    from the probe (and from the mainloop): a line of the learner's made it half precision.  Return for any other
    error, which the caller raises on."""
    chain = error_chain(e)
    words = math_dtype_words("\n".join(str(x) for x in chain))
    if not words:
        return
    frames = [f for x in chain for f in traceback.extract_tb(x.__traceback__) if seam.graded_file(f.filename)]
    at = (
        f"{os.path.basename(frames[-1].filename)} line {frames[-1].lineno}: {(frames[-1].line or '').strip()}"
        if frames
        else ""
    )
    pytest.fail(
        say(
            zh=f"{case}：Triton 拒绝了 epilogue 里的一步" + (f"（{at}）" if at else "") + f"：{words}。acc 进 "
            "bias_and_activation 时是 float32 的，是这里的某一行把它（或加 bias 的结果）变成了半精度：bias 和 GELU "
            f"都在 float32 里做，转成 C 的 dtype 是存储时的事；{read('T4.5')}",
            en=f"{case}: Triton refused a step of the epilogue" + (f" ({at})" if at else "") + f": {words}. acc "
            "enters bias_and_activation in float32, so a line there made it (or the sum with the bias) half "
            f"precision: the bias and the GELU are taken in float32, and the cast to C's dtype is the store's; "
            f"{read('T4.5')}",
        ),
        pytrace=False,
    )
