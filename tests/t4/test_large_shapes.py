"""T4.4: matmul launches its kernel for products of a model's size too.  Every other product of the CPU
suite is small, so a wrapper that hands the products past some size to torch (for speed, say) passed
them all.  The operands here live on the meta device and the kernel is only recorded, never run, so
these products cost nothing to ask for."""

import pytest
import torch

from course.i18n import say
from course.messages import fail

from .common import T4
from shortcuts import HandedToTorch, refuse_torch_products
from support import LaunchWatch, same_tensor

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's

# (M, N, K): a prefill through a square layer of 8192, and a decode step of one token into Llama 3's
# vocabulary (a C of 128,256 logits): both far past anything the interpreter can compute.
LARGE = ((8192, 8192, 8192), (1, 128256, 4096))


@pytest.mark.t4_4
def test_large_products_launch_the_kernel_too(t4, monkeypatch):
    refuse_torch_products(monkeypatch, "matmul_kernel")
    monkeypatch.setattr(t4, "check_inputs", lambda *args, **kwargs: None)  # meta tensors: no device to check
    for M, N, K in LARGE:
        kernels = {"matmul_kernel": False, "matmul_kernel_autotuned": False}
        watch = LaunchWatch(t4, monkeypatch, kernels, wrapper="matmul")
        a, b = (torch.empty(s, dtype=torch.float16, device="meta") for s in ((M, K), (K, N)))
        case = f"{M}x{K} @ {K}x{N} fp16"
        try:
            t4.matmul(a, b)
        except HandedToTorch as e:
            fail(
                T4,
                f"{case}（元张量，内核只记录不运行）：matmul 把这个大乘积交给了 torch（{e}）：CPU 上其余的乘积都小，"
                "所以别的测试看不到；不管多大，C 都由 matmul_kernel 的一次 launch 算出",
                f"{case} (meta tensors, the kernel recorded, not run): matmul handed this large product to torch "
                f"({e}); every other product on the CPU is small, so no other test sees it: whatever its size, "
                "one launch of matmul_kernel computes C",
                "6.2",
            )
        launches = watch.launches
        if len(launches) != 1 or not same_tensor(launches[0].args.get("a_ptr"), a):
            got = say(
                zh=f"启动了 {len(launches)} 次内核" + ("，a_ptr 不是调用者的 a" if len(launches) == 1 else ""),
                en=f"it launched a kernel {len(launches)} times" + (", a_ptr not the caller's a" if launches else ""),
            )
            fail(
                T4,
                f"{case}（元张量，内核只记录不运行）：{got}：不管多大，C 都由 matmul_kernel 的一次 launch 算出",
                f"{case} (meta tensors, the kernel recorded, not run): {got}: whatever its size, one launch of "
                "matmul_kernel computes C",
                "6.2",
            )
