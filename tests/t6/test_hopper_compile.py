"""The kernels as a Hopper GPU compiles them (on the CPU): what the interpreter lets through and a GPU refuses,
and the tile loop's flatten=FLATTEN, which the interpreter ignores, read from moe_kernel's Triton IR."""

import linecache

import pytest

from course.i18n import agree
from course.messages import fail, stub_report
from course.messages import read as where_to_read

from .common import T6
from .wide_ir import narrowed_strides
from gpu_compile import check_compiles_for_hopper
from loop_ir import flattened_loops
from support import INTERPRETING

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


# ================================================================================================
# The kernels as a Hopper GPU compiles them (CPU): an fp16 accumulator that turns fp32 inside the K
# loop, say, runs on the interpreter and stops the compiler. One child process compiles them all.
# ================================================================================================
def routing_kernel(name, **constexprs):
    return dict(kernel=name, constexprs=dict(BLOCK=128, E_BLOCK=8) | constexprs)


def grouped(**constexprs):
    """One compile of moe_kernel with 64x128x64 tiles: the constexprs, and w's box to match."""
    base = dict(
        TOP_K=2,
        BLOCK_M=64,
        BLOCK_N=128,
        BLOCK_K=64,
        GROUP_M=8,
        E_BLOCK=8,
        X_SORTED=False,
        HAS_WEIGHTS=False,
        BY_SLOT=False,
        ACTIVATION="none",
        TRACE=0,
        FLATTEN=False,
        WIDE=False,
    )
    cfg = base | constexprs
    out = {"out_ptr": "*fp32"} if cfg["BY_SLOT"] else {}
    return dict(constexprs=cfg, signature={"w_desc": f"tensordesc<fp16[{cfg['BLOCK_N']}, {cfg['BLOCK_K']}]>", **out})


T6_SIGNATURE = {
    **{name: "*i64" for name in ("ids_ptr",)},
    **{
        name: "*i32"
        for name in (
            "block_counts_ptr",
            "block_base_ptr",
            "counts_ptr",
            "offsets_ptr",
            "sorted_slots_ptr",
            "slot_pos_ptr",
            "trace_ptr",
        )
    },
    **{
        name: "i32"
        for name in (
            "num_slots",
            "num_experts",
            "num_blocks",
            "K",
            "stride_xm",
            "stride_xk",
            "stride_om",
            "stride_on",
            "NUM_PROGS",
        )
    },
    "N": "i32",
    "x_ptr": "*fp16",
    "out_ptr": "*fp16",
    "weights_ptr": "*fp32",
    "by_slot_ptr": "*fp32",
}


T6_COMPILES = {  # step: the compiles that take in that step's code (constexpr branches prune the rest)
    "T6.1": [
        routing_kernel("count_experts"),
        dict(kernel="scan_counts", constexprs=dict(SCAN_ROWS=16, E_BLOCK=8)),
        routing_kernel("scatter_slots"),
    ],
    "T6.3": [
        grouped(),
        grouped(X_SORTED=True, HAS_WEIGHTS=True, BY_SLOT=True),
        dict(kernel="combine_topk", constexprs=dict(TOP_K=2, BLOCK_N=128), signature={"N": "i64"}),
    ],
    "T6.4": [grouped(X_SORTED=False, ACTIVATION="swiglu")],
}


ON_THE_GPU = "on a GPU every kernel of the suite is compiled for real"


@pytest.mark.t6_1
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason=ON_THE_GPU)
def test_the_routing_kernels_compile_for_a_hopper_gpu(t6):
    check_compiles_for_hopper("T6.1", "count_experts", T6_SIGNATURE, T6_COMPILES, where_to_read("T6.1", "2.3"))


@pytest.mark.t6_3
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason=ON_THE_GPU)
def test_the_grouped_kernel_and_the_combine_compile_for_a_hopper_gpu(t6):
    check_compiles_for_hopper("T6.3", "moe_kernel", T6_SIGNATURE, T6_COMPILES, where_to_read("T6.3", "4"))


@pytest.mark.t6_4
@pytest.mark.hopper_compile
@pytest.mark.skipif(not INTERPRETING, reason=ON_THE_GPU)
def test_the_swiglu_kernel_compiles_for_a_hopper_gpu(t6):
    check_compiles_for_hopper("T6.4", "moe_kernel", T6_SIGNATURE, T6_COMPILES, where_to_read("T6.4", "5.1"))


# moe_kernel as the host launches it for x or out past 2**31 elements: WIDE, its strides int64 (§4.3); the gather
# and the store by slot, weighted.  Its IR is made beside the flatten test's, in the same process.
WIDE_IR = grouped(WIDE=True, HAS_WEIGHTS=True, BY_SLOT=True)


def tile_loop_ir():
    """{False: ..., True: ...}: the tile loop's flattened loops (record-only, TRACE=2); "also": WIDE_IR's IR."""
    cfg = grouped(TRACE=2)
    signature = T6_SIGNATURE | WIDE_IR["signature"]  # out_ptr *fp32 for the store by slot; TRACE=2 stores nothing
    return flattened_loops("T6", "moe_kernel", signature, cfg["constexprs"], also=WIDE_IR["constexprs"])


@pytest.mark.t6_3
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU test_rows_past_2_31_elements runs such offsets for real")
def test_offsets_from_the_wide_strides_stay_int64(t6):
    """With WIDE the host's int64 strides reach gathered_product and store_rows: an offset worked out from them
    and cast to int32 wraps past 2**31 elements, which no tensor of the interpreter's tests is.  Read from the
    IR: an arith.trunci of a value computed from a stride is named, at its line."""
    kind, said = tile_loop_ir()["also"]
    if kind == "stub":
        pytest.fail(stub_report(said), pytrace=False)
    cut = narrowed_strides(said) if kind == "ir" else []  # an error: the Hopper compile test names it
    if cut:
        function, path, line = cut[0]
        code = linecache.getline(path, line).strip() if path and line else ""
        fail(
            T6,
            f"WIDE=True 时（x 或 out 超过 2**31 个元素，§4.3）moe_kernel 的 stride 是 int64，可 {function} 在 "
            f"t6_moe.py 第 {line} 行把由它们算出的值截成了 int32：{code}；超过 2**31 它会回绕，GPU 上的读写就落到"
            "别处：偏移保持算出来的类型（不要 .to(tl.int32)）",
            f"with WIDE=True (x or out past 2**31 elements, §4.3) moe_kernel's strides are int64, yet {function} "
            f"narrows a value worked out from them to int32 at t6_moe.py line {line}: {code}; past 2**31 it wraps, "
            "and on a GPU the load or store lands elsewhere: keep the offsets in the type they come out in (no "
            ".to(tl.int32))",
            "4.3",
        )


@pytest.mark.t6_2
def test_the_tile_loop_flattens_only_when_told(t6):
    """flatten=True only where the config's FLATTEN is (§3.4): the host sets it for the plain launches its tuned
    configs flatten, and leaves it off for SwiGLU's and the combine's (flattened, the combine's float32 epilogue asks
    more shared memory than an H200 has: given/t6_host.py).
    A loop that ignores FLATTEN (a while loop, say) only misses a speed hint.  The interpreter ignores flatten,
    so it is read from moe_kernel's Triton IR, record-only (TRACE=2: the tile loop without the product's): at most
    one loop carries tt.flatten with FLATTEN=True, none with FLATTEN=False."""
    found = tile_loop_ir()
    for flatten, (kind, said) in ((f, found[f]) for f in (False, True)):
        if kind == "stub":
            pytest.fail(stub_report(said), pytrace=False)
        if kind == "error":
            fail(
                T6,
                f"用 FLATTEN={flatten} 生成 moe_kernel 的 Triton IR 时出错：{said}",
                f"making moe_kernel's Triton IR with FLATTEN={flatten} failed: {said}",
                "3.4",
            )
    off, on = found[False][1], found[True][1]
    if off != 0 or on > 1:
        fail(
            T6,
            f"FLATTEN=False 时 moe_kernel 的 IR 里有 {off} 个带 flatten 的循环，FLATTEN=True 时有 {on} 个，"
            "应当是 0 个和至多 1 个：config 没让展平的启动不能展平"
            "（合并那次启动展平以后要的 shared memory 比 H200 的还多）；"
            "tile 循环写成 tl.range(..., flatten=FLATTEN)，把 FLATTEN 原样传下去",
            f"with FLATTEN=False {off} {agree(off, 'loop', 'loops')} of moe_kernel's IR "
            f"{agree(off, 'carries', 'carry')} flatten, with FLATTEN=True {on}; 0 and at most 1 expected: a launch "
            "whose config leaves it off must not flatten (the combine's launch, flattened, asks more shared memory "
            "than an H200 has); the tile loop is "
            "tl.range(..., flatten=FLATTEN), FLATTEN passed on as it is",
            "3.4",
        )
