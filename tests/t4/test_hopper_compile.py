"""The kernel as a Hopper GPU compiles it (on the CPU): what the interpreter lets through and a GPU refuses."""

import pytest

from course.messages import read

from gpu_compile import check_compiles_for_hopper
from support import INTERPRETING

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


# ================================================================================================
# The kernel as a Hopper GPU compiles it (CPU): what the interpreter lets through and a GPU refuses
# ================================================================================================
T4_SIGNATURE = {
    **{name: "*fp16" for name in ("a_ptr", "b_ptr", "c_ptr", "bias_ptr")},
    **{
        name: "i32"
        for name in (
            "M",
            "N",
            "K",
            "stride_am",
            "stride_ak",
            "stride_bk",
            "stride_bn",
            "stride_cm",
            "stride_cn",
            "stride_bias",
        )
    },
}


T4_COMPILES = {  # step: the compiles that take in that step's code (constexpr branches prune the rest)
    "T4.3": [dict(constexprs=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, HAS_BIAS=False, ACTIVATION="none"))],
    "T4.5": [dict(constexprs=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, HAS_BIAS=True, ACTIVATION="gelu"))],
}


@pytest.mark.t4_3
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU every kernel of the suite is compiled for real")
def test_the_kernel_compiles_for_a_hopper_gpu(t4):
    check_compiles_for_hopper("T4.3", "matmul_kernel", T4_SIGNATURE, T4_COMPILES, read("T4.3", "5.1"))


@pytest.mark.t4_5
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU every kernel of the suite is compiled for real")
def test_the_fused_kernel_compiles_for_a_hopper_gpu(t4):
    check_compiles_for_hopper("T4.5", "matmul_kernel", T4_SIGNATURE, T4_COMPILES, read("T4.5", "5.2"))
