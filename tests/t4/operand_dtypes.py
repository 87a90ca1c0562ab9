"""T4.4: a launch whose operands are not in the caller's dtype (the launch watch's check before the kernel runs)."""

import pytest

from course.i18n import say


def check_operand_dtypes(a, b, dtype, case, where):
    """Fail where the launch's A or B (a, b: its a_ptr, b_ptr) is not in dtype, the caller's: the kernel would
    multiply copies converted to another dtype, not the caller's tensors.  dtype None: nothing to compare."""
    converted = {k: t.dtype for k, t in (("a", a), ("b", b)) if dtype is not None and t.dtype != dtype}
    if converted:
        said = ", ".join(f"{k} {v}" for k, v in converted.items())
        pytest.fail(
            say(
                zh=f"{case}：调用者的 a、b 是 {dtype}，launch 收到的却是 {said}：内核乘的是转换成另一种 dtype 的副本，"
                f"不是调用者的张量；把 a、b 原样交给内核；这里在内核运行之前就拦下了；{where}",
                en=f"{case}: the caller's a and b are {dtype}, yet the launch got {said}: the kernel would multiply "
                f"copies converted to another dtype, not the caller's tensors; hand a and b to the kernel as they "
                f"are; stopped before the kernel ran; {where}",
            ),
            pytrace=False,
        )
