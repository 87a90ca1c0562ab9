"""The kernel as a Hopper GPU compiles it (on the CPU): what the interpreter lets through and a GPU refuses."""

import pytest

from course.messages import read as where_to_read

from gpu_compile import check_compiles_for_hopper
from support import INTERPRETING

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


# ================================================================================================
# The kernel as a Hopper GPU compiles it (CPU): what the interpreter lets through and a GPU refuses
# ================================================================================================
def t5_variant(kmajor, **constexprs):
    """One compile of t5_kernel with 64x128x64 tiles: the constexprs, and B's box for its layout."""
    base = dict(
        BLOCK_M=64,
        BLOCK_N=128,
        BLOCK_K=64,
        GROUP_M=8,
        EPILOGUE_SUBTILE=1,
        B_KMAJOR=kmajor,
        HAS_BIAS=True,
        ACTIVATION="gelu",
        FLATTEN=False,
        USE_SK=False,
        SWAP_AB=False,
        TRACE=0,
        PDL=False,
    )
    sub = constexprs.get("EPILOGUE_SUBTILE", 1)
    return dict(
        constexprs=base | constexprs,
        signature={
            "b_desc": "tensordesc<fp16[128, 64]>" if kmajor else "tensordesc<fp16[64, 128]>",
            "c_desc": f"tensordesc<fp16[64, {128 // sub}]>",
        },
    )


T5_SIGNATURE = {
    "a_desc": "tensordesc<fp16[64, 64]>",
    "bias_ptr": "*fp16",
    "partials_ptr": "*fp32",
    "flags_ptr": "*i32",
    "trace_ptr": "*i32",
    **{name: "i32" for name in ("M", "N", "K", "stride_bias", "sk_tiles", "NUM_PROGS")},
}


HOPPER_VARIANTS = {  # step: the compiles that take in that step's code (constexpr branches prune the rest)
    "T5.2": [t5_variant(False), t5_variant(True)],
    "T5.3": [t5_variant(False, USE_SK=True), t5_variant(True, USE_SK=True)],
    "T5.4": [t5_variant(False, USE_SK=True, EPILOGUE_SUBTILE=2)],
}


ON_THE_GPU = "on a GPU every kernel of the suite is compiled for real"


@pytest.mark.t5_2
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason=ON_THE_GPU)
def test_the_kernel_compiles_for_a_hopper_gpu(t5):
    check_compiles_for_hopper("T5.2", "t5_kernel", T5_SIGNATURE, HOPPER_VARIANTS, where_to_read("T5.2", "3.1"))


@pytest.mark.t5_3
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason=ON_THE_GPU)
def test_the_stream_k_kernel_compiles_for_a_hopper_gpu(t5):
    check_compiles_for_hopper("T5.3", "t5_kernel", T5_SIGNATURE, HOPPER_VARIANTS, where_to_read("T5.3", "4.2"))


@pytest.mark.t5_4
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason=ON_THE_GPU)
def test_the_subtiled_kernel_compiles_for_a_hopper_gpu(t5):
    check_compiles_for_hopper("T5.4", "t5_kernel", T5_SIGNATURE, HOPPER_VARIANTS, where_to_read("T5.4", "5"))
