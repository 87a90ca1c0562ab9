"""The defences against shortcuts that change torch for a test: allocations that start as poison
(a tensor the kernel never wrote cannot pass) and torch's products refused (torch computing the
product fails).  Lesson-neutral, like support.py, which every lesson's tests import them from.

    poison_allocations(monkeypatch)  every new floating tensor starts as NaN (integers: a value too)
    refuse_torch_products(monkeypatch, kernel)   torch's products (TORCH_PRODUCTS) raise HandedToTorch
    refuse_products(monkeypatch, refuse)         each of TORCH_PRODUCTS replaced by a refusal of your own
"""

import torch

from course.i18n import say


def poison_allocations(monkeypatch, floats=float("nan"), integers=None):
    """Every new tensor of torch.empty and its kin starts as a known value, not as whatever memory
    held: a floating one as `floats` (NaN: a tile the kernel never writes cannot pass), an integer
    one (bool aside) as `integers` (an index never written then reads the same in every run, and so
    does its message).  None leaves that kind as torch makes it."""

    def poisoned(make):
        def wrapper(*args, **kwargs):
            t = make(*args, **kwargs)
            if t.is_floating_point():
                value = floats
            else:
                value = None if t.dtype == torch.bool or t.is_complex() else integers
            return t if value is None else t.fill_(value)

        return wrapper

    for name in ("empty", "empty_like", "empty_strided"):
        monkeypatch.setattr(torch, name, poisoned(getattr(torch, name)))
    monkeypatch.setattr(torch.Tensor, "new_empty", poisoned(torch.Tensor.new_empty))


class HandedToTorch(AssertionError):
    pass


def refuse_torch_products(monkeypatch, kernel):
    """Make torch's own products fail, so only the kernel (named in the message) can compute C."""

    def refuse(name):
        def refused(*args, **kwargs):
            raise HandedToTorch(
                say(
                    zh=f"包装函数调用了 {name}：乘积必须由 {kernel} 算出来",
                    en=f"the wrapper called {name}: the product must come from {kernel}",
                )
            )

        return refused

    refuse_products(monkeypatch, refuse)


# torch's own products, any of which hands a lesson's work to torch: every lesson refuses them all.
TORCH_PRODUCTS = (
    (torch, ("matmul", "mm", "bmm", "baddbmm", "addmm", "einsum", "tensordot", "mv", "_grouped_mm")),
    (torch.nn.functional, ("linear",)),
    (torch.Tensor, ("__matmul__", "__rmatmul__", "matmul", "mm", "bmm", "baddbmm", "addmm")),
)


def refuse_products(monkeypatch, refuse):
    """Each of TORCH_PRODUCTS (that this torch has) replaced by refuse(its name): a function that fails."""
    for mod, names in TORCH_PRODUCTS:
        for name in names:
            if hasattr(mod, name):
                monkeypatch.setattr(mod, name, refuse(f"{getattr(mod, '__name__', 'Tensor')}.{name}"))
