"""T5.1's flatten=FLATTEN, read from t5_kernel's Triton IR (tests/loop_ir.py): the parameters' types and
the other constexprs of the one kernel it makes, count-only, so that the tile loop alone is read."""

from loop_ir import flattened_loops as kernel_flattened_loops

SIGNATURE = {
    "a_desc": "tensordesc<fp16[32, 32]>",
    "b_desc": "tensordesc<fp16[32, 32]>",
    "c_desc": "tensordesc<fp16[32, 32]>",
    "bias_ptr": "*fp16",
    "partials_ptr": "*fp32",
    "flags_ptr": "*i32",
    "trace_ptr": "*i32",
    **{name: "i32" for name in ("M", "N", "K", "stride_bias", "sk_tiles", "NUM_PROGS")},
}
# TRACE=2 (count only): the tile loop and T4's tile_coords alone, without the TMA step's code
CONSTEXPRS = dict(
    BLOCK_M=32,
    BLOCK_N=32,
    BLOCK_K=32,
    GROUP_M=4,
    EPILOGUE_SUBTILE=1,
    B_KMAJOR=False,
    HAS_BIAS=False,
    ACTIVATION="none",
    USE_SK=False,
    SWAP_AB=False,
    TRACE=2,
    PDL=False,
)


def flattened_loops(timeout=120):
    """{flatten: ("flattened loops", how many loops of t5_kernel's IR carry tt.flatten) or ("stub", its
    message) or ("error", the innermost complaint)} for FLATTEN False and True."""
    return kernel_flattened_loops("T5", "t5_kernel", SIGNATURE, CONSTEXPRS, timeout)
