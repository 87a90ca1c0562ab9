"""Lesson T4's fixtures: the graded module, its probes, and the defences its wrapper's checks run under."""

import os

import pytest

from course.i18n import say
from course.messages import read

from .common import T4, check_inputs_in_place, check_inputs_kept, check_launch, launch_watch, layouts
from support import copies, meta_value_read, poison_allocations, refuse_torch_products


@pytest.fixture(scope="session")
def t4(graded_module):
    return graded_module(T4)


@pytest.fixture(scope="session")
def probes(t4):
    from course.lessons import t4_probes  # its kernels call the graded module's functions, so it loads after `t4`

    return t4_probes


@pytest.fixture
def poisoned_allocations(monkeypatch):
    """Every new floating tensor starts as NaN, so a tile the kernel never writes cannot pass."""
    poison_allocations(monkeypatch)


@pytest.fixture
def no_torch_matmul(monkeypatch):
    """Make torch's own products fail, so only the kernel can compute C."""
    refuse_torch_products(monkeypatch, "matmul_kernel")


@pytest.fixture
def watched(t4, monkeypatch):
    """matmul under a LaunchWatch: watched(a, b, step=..., **kwargs) returns C once its launch checks out."""

    def call(a, b, step="T4.4", **kwargs):
        case = f"{tuple(a.shape)} @ {tuple(b.shape)} {a.dtype}"
        bias, activation = kwargs.get("bias"), kwargs.get("activation")
        # the last call's watch, for a test that asks what ran
        call.watch = watch = launch_watch(
            t4, monkeypatch, case=case, bias=bias, activation=activation, step=step, dtype=getattr(a, "dtype", None)
        )
        given = {"a": a, "b": b, "bias": bias}
        before, where = copies(given), layouts(given)
        c = t4.matmul(a, b, **kwargs)
        check_inputs_in_place(where, given, case)
        check_inputs_kept(before, given, case)
        check_launch(watch, c, a, b, bias, activation, case, step)
        return c

    return call


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A check whose tensors stand for a GPU's (meta tensors: test_check_inputs_off_the_interpreter, the launch
    path off the interpreter, the large shapes) and that failed on a value read of one in the graded file: named,
    where torch's words alone said 'Tensor.item() cannot be called on meta tensors'."""
    try:
        return (yield)
    except Exception as e:  # noqa: BLE001 - only a meta tensor's value read is told here; the rest go on
        t4 = item.funcargs.get("t4")
        at = meta_value_read(e, {os.path.realpath(t4.__file__)}) if t4 is not None else None
        if not at:
            raise
        caught = e
    pytest.fail(  # outside `except`: no chained traceback
        say(
            zh=f"{at[0]}（{at[1]} 第 {at[2]} 行）读了一个张量的值：这项检查的张量代表 GPU 上的张量（meta 张量，"
            f"没有值可读：{type(caught).__name__}: {caught}）。matmul 的主机代码只看设备、类型和形状，不读值："
            "在 GPU 上每读一次值都要等 GPU 算完（一次主机同步），每次调用都要付，在 CUDA graph 的录制里还会出错；"
            f"{read('T4.4', '6.3')}",
            en=f"{at[0]} ({at[1]} line {at[2]}) read a tensor's value: this check's tensors stand for a GPU's (meta "
            f"tensors, which hold no values: {type(caught).__name__}: {caught}). matmul's host code looks at "
            "devices, dtypes and shapes, never at values: on a GPU each value read waits for the GPU to finish (a "
            f"host sync), in every call, and fails inside a CUDA graph capture; {read('T4.4', '6.3')}",
        ),
        pytrace=False,
    )
