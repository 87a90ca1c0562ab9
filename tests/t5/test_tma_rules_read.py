"""T5.2: what tma_problem reads to judge a tensor (the rules themselves: test_tma_rules.py): rule 2 on the row
stride, stride(0), not the width; rule 3 on the base address, data_ptr(), not storage_offset()."""

import re

import pytest
import torch

from course.i18n import say
from course.messages import fail

from .common import T5
from .rule_two import rule_2_on_stride_1
from .unaligned import unaligned
from support import DEVICE

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


@pytest.mark.t5_2
def test_tma_problem_reads_the_row_stride_not_the_width(t5):
    """§3.2's rule 2 is on stride(0), the distance from one row to the next, not on the width: a view cut
    from wider rows has a width and a row stride that differ.  Each view is told against a contiguous
    tensor of its strides and one of its width: a verdict that follows the width, not the strides, is a
    rule read off shape[1]."""

    def fp16(rows, cols):
        return torch.zeros(rows, cols, dtype=torch.float16, device=DEVICE)

    cases = (  # (what, the view, a tensor of its strides, a tensor of its width, the view's right verdict)
        (
            (
                "从 fp16 (8, 33) 切出的 (8, 32)：宽 64 字节，行距 66 字节",
                "fp16 (8, 32) cut from an (8, 33): 64 bytes wide, rows 66 bytes apart",
            ),
            fp16(8, 33)[:, :32],
            fp16(8, 33),
            fp16(8, 32),
            False,
        ),
        (
            (
                "从 fp16 (8, 64) 切出的 (8, 33)：宽 66 字节，行距 128 字节",
                "fp16 (8, 33) cut from an (8, 64): 66 bytes wide, rows 128 bytes apart",
            ),
            fp16(8, 64)[:, :33],
            fp16(8, 64),
            fp16(8, 33),
            True,
        ),
    )
    for what, view, same_strides, same_width, legal in cases:
        said = t5.tma_problem(view, "tensor_q")
        if (said is None) == legal:
            continue
        width_said = t5.tma_problem(same_width, "tensor_q")
        # a refusal in the words of another rule than the width's tensor gets (rule 1's, say) is not rule 2 by the width
        by_width = ((width_said is None) == (said is None) != (t5.tma_problem(same_strides, "tensor_q") is None)) and (
            said is None or re.sub(r"\d+", "#", str(said)) == re.sub(r"\d+", "#", str(width_said))
        )
        cause = (
            (
                f"；判断跟着宽度走：它对同样 stride 的连续张量 {tuple(same_strides.shape)} 判的相反，对同样宽度的 "
                f"{tuple(same_width.shape)} 判的一样。第二条看的是 stride(0) * element_size()，行与行之间的距离，"
                "不是 shape[1]",
                f": the verdict follows the width: a contiguous {tuple(same_strides.shape)} with the same strides gets "
                f"the other verdict, one {tuple(same_width.shape)} as wide the same. Rule 2 reads stride(0) * "
                "element_size(), the distance from one row to the next, not shape[1]",
            )
            if by_width
            else ("", "")
        )
        on_stride_1 = None if by_width or not legal else rule_2_on_stride_1(t5)  # left37
        if on_stride_1:
            cause = (f"：{on_stride_1[0]}", f": {on_stride_1[1]}")
        if legal:
            fail(
                T5,
                f"{what[0]}（stride {tuple(view.stride())}）满足 TMA 的三条规矩，tma_problem 却说：{said}{cause[0]}",
                f"{what[1]} (strides {tuple(view.stride())}) keeps TMA's three rules, yet tma_problem says: {said}"
                f"{cause[1]}",
                "3.2",
            )
        fail(
            T5,
            f"{what[0]}（stride {tuple(view.stride())}）违反 TMA 的规矩：行距 66 字节，不是 16 的倍数；tma_problem "
            f"却返回 None{cause[0]}",
            f"{what[1]} (strides {tuple(view.stride())}) breaks a TMA rule: its rows are 66 bytes apart, not a "
            f"multiple of 16; yet tma_problem returned None{cause[1]}",
            "3.2",
        )


@pytest.mark.t5_2
def test_tma_problem_reads_the_base_address_itself(t5):
    """§3.2's rule 3 is on data_ptr(), the address of the first element, not on storage_offset(): memory
    shared through DLPack (as another library's tensors come) starts its own storage where the view
    starts, so a base 4 bytes past a 16-byte boundary has storage_offset() 0 there."""
    view = unaligned(8, 32, torch.float16)  # storage_offset() 2: the slice of a buffer that is aligned
    shared = torch.from_dlpack(view)  # the same memory, storage_offset() 0
    assert shared.storage_offset() == 0 and shared.data_ptr() % 16 == 4, say(
        zh="测试套件自己的准备出了问题：DLPack 共享的内存不再从视图的起点开始",
        en="the suite's own set-up: DLPack changed",
    )
    if t5.tma_problem(shared, "tensor_q") is None:
        why = ("", "")
        if t5.tma_problem(view, "tensor_q") is not None:
            why = (
                "；同一块内存做成 storage_offset() 为 2 的视图时它能查出来，所以它查的只是 storage_offset()，"
                "而基地址是 data_ptr()：存储本身也可能不对齐",
                ": the same memory as a view with storage_offset() 2 is refused, so it checks storage_offset() "
                "alone, where the base address is data_ptr(): the storage itself may start unaligned",
            )
        fail(
            T5,
            f"fp16 (8, 32)，基地址在 16 字节边界后 4 字节（经 DLPack 共享，storage_offset() 为 0），tma_problem 却返回 "
            f"None{why[0]}",
            f"fp16 (8, 32) whose base is 4 bytes past 16 (shared through DLPack, storage_offset() 0), yet tma_problem "
            f"returned None{why[1]}",
            "3.2",
        )
