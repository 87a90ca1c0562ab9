"""t5.matmul with torch's own products refused (support.refuse_torch_products) while it runs: the
product must come from t5_kernel, not from a torch.matmul hidden in a function the wrapper calls
(make_descriptors copying torch's product into C, say, the kernel then writing elsewhere)."""

import traceback

import pytest

from course.messages import fail

from .common import T5
from .crashes import T5_FILES
from bounds import place
from support import HandedToTorch, refuse_torch_products


def matmul_in_kernel(t5, case, section, *args, **kwargs):
    """t5.matmul(*args, **kwargs) with torch's products refused; a call to one fails the test,
    naming the line of the lesson's file that made it."""
    with pytest.MonkeyPatch.context() as patch:
        refuse_torch_products(patch, "t5_kernel")
        try:
            return t5.matmul(*args, **kwargs)
        except HandedToTorch as e:
            ours = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.endswith(T5_FILES)]
            where = place(ours[-1], code=False) if ours else ""
            fail(
                T5,
                f"{case}：{e}" + (f"（在 {where}）" if where else ""),
                f"{case}: {e}" + (f" (at {where})" if where else ""),
                section,
            )
