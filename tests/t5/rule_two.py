"""TMA's rule 2 (the row stride a multiple of 16 bytes) checked on the wrong stride: what tma_problem does with
tensors that keep every rule, for test_tma_rules.py and test_tma_rules_read.py (left37)."""

import re

import torch

from support import DEVICE

# Row-major tensors that keep all three rules, with rows 32 to 256 bytes apart: a rule of 16 bytes, or of 32 or
# 64, takes each of them on its row stride, stride(0) * element_size()
WIDE_ROWS = (
    (torch.float16, 8, 64),  # rows of 128 bytes
    (torch.float32, 16, 32),  # 128 bytes
    (torch.float16, 4, 128),  # 256 bytes
    (torch.float32, 2, 8),  # 32 bytes
)
# 16-byte elements: stride(1) * element_size() is 16 here, a multiple of 16, where for every 2- and 4-byte dtype it
# is not; rows of 3 of them, 48 bytes, keep rule 2 on stride(0) as well
COMPLEX_ROWS = (torch.complex128, 4, 3)


def problem_of(t5, t):
    """What tma_problem says of t, or the error it raised (judged as a refusal by the callers)."""
    try:
        return t5.tma_problem(t, "x")
    except Exception as e:  # noqa: BLE001 - a probe's own failure is told by the test that meets it
        return e


def numbers_out(message):
    """message with its numbers taken out (hexadecimal ones too): what one check of tma_problem says, whatever
    the tensor."""
    return re.sub(r"0[xX][0-9a-fA-F]+|\d+", "#", message)


def rule_2_on_stride_1(t5):
    """(zh, en) where tma_problem refuses every row-major fp16 and fp32 tensor of WIDE_ROWS (rows of 32 to 256
    bytes, every rule kept) in the words it gives fp16 rows of 18 bytes (rule 2's alone broken), numbers aside,
    and takes complex128 rows of 3 (16-byte elements): what (t.stride(1) * element_size()) % 16 does, once rule 1
    has made stride(1) 1; else None.  A rule 2 with more bytes, or on the width, takes the rows of 128 and 256 bytes;
    a refusal of everything refuses the complex128 rows too."""
    odd = problem_of(t5, torch.zeros(4, 9, dtype=torch.float16, device=DEVICE))
    if not isinstance(odd, str):
        return None
    wide = [torch.zeros(rows, cols, dtype=dt, device=DEVICE) for dt, rows, cols in WIDE_ROWS]
    said = [problem_of(t5, t) for t in wide]
    if not all(isinstance(s, str) and numbers_out(s) == numbers_out(odd) for s in said):
        return None
    dt, rows, cols = COMPLEX_ROWS
    if problem_of(t5, torch.zeros(rows, cols, dtype=dt, device=DEVICE)) is not None:
        return None
    return (
        "规矩 2 查在了 stride(1) 上（或者只查了元素的大小）：它拒绝每一个行主序的 fp16 和 fp32 张量，"
        "行距 32、128、256 字节的也一样，却接受 16 字节一个元素的 complex128；规矩 1 已经让 stride(1) 是 1，"
        "(stride(1) * element_size()) % 16 只看元素的大小。规矩 2 说的是行与行之间的距离："
        "(stride(0) * element_size()) % 16",
        "rule 2 was checked on stride(1) (or on the element's size alone): it refuses every row-major fp16 and "
        "fp32 tensor, rows 32, 128 and 256 bytes apart too, yet takes complex128, 16 bytes an element; rule 1 has "
        "made stride(1) 1 already, so (stride(1) * element_size()) % 16 looks at the element's size alone. Rule 2 "
        "is about the distance from one row to the next: (stride(0) * element_size()) % 16",
    )
