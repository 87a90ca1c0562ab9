"""T4.4: the host wrapper's products: the whole of C, on every shape, layout and config, and empty
dimensions (what each launch is given and where C comes from: test_wrapper_launch.py)."""

import numpy as np
import pytest
import torch
import triton

from course.i18n import say
from course.messages import read

from .common import quick, require_configs
from .product_checks import check_product
from .test_input_validation import Launched
from .test_input_validation import _NoLaunch as NoLaunch
from support import (
    BOTH_LAYOUTS,
    DTYPES,
    INTERPRETING,
    layout_pairs,
    poisoned_view,
    random,
)

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


MATMUL_SHAPES = [(64, 64, 64), (45, 37, 83), (1, 50, 70), (50, 1, 33), (33, 40, 1), (96, 20, 200)]


@pytest.mark.t4_4
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", layout_pairs(2))
@pytest.mark.parametrize("M, N, K", MATMUL_SHAPES)
@pytest.mark.case_words(layout=BOTH_LAYOUTS)
def test_matmul(t4, watched, poisoned_allocations, dtype, layout, M, N, K):
    a, _ = poisoned_view(M, K, layout, dtype)
    b, _ = poisoned_view(K, N, layout.b, dtype)
    case = say(
        zh=f"{M}x{K} @ {K}x{N} {dtype}，A 为 {layout}、B 为 {layout.b}",
        en=f"{M}x{K} @ {K}x{N} {dtype}, A {layout}, B {layout.b}",
    )
    check_product(watched(a, b, config=quick(t4)), a, b, dtype, case, again=lambda: t4.matmul(a, b, config=quick(t4)))


@pytest.mark.t4_4
def test_matmul_of_plain_tensors_and_linear_weights(t4, watched):
    x, w = random((40, 72), torch.float16), random((24, 72), torch.float16)  # nn.Linear keeps W as (N, K)
    case = say(zh="x @ W.t()，没有 .contiguous()", en="x @ W.t() without .contiguous()")
    check_product(watched(x, w.t(), config=quick(t4)), x, w.t(), torch.float16, case)


@pytest.mark.t4_4
def test_grid_follows_the_config(t4, watched, poisoned_allocations):
    """The same product under configs of different block shapes: a fixed grid misses tiles."""
    a, b = random((100, 72), torch.float16), random((72, 90), torch.float16)
    for bm, bn, bk in ((16, 16, 16), (64, 32, 32), (32, 64, 16)):
        cfg = triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=2), num_warps=4, num_stages=2)
        case = say(zh=f"配置 BLOCK {bm}x{bn}x{bk}", en=f"config BLOCK {bm}x{bn}x{bk}")
        check_product(watched(a, b, config=cfg), a, b, torch.float16, case)
    # The same M with a narrow N, then a wide one: a grid kept by M alone gives the wide one too few programs.
    cfg = triton.Config(dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=2), num_warps=4, num_stages=2)
    a = random((77, 40), torch.float16)
    for n in (20, 90):
        b = random((40, n), torch.float16)
        case = say(zh=f"同样 M = 77，N = {n}", en=f"the same M = 77, N = {n}")
        check_product(watched(a, b, config=cfg), a, b, torch.float16, case)


@pytest.mark.t4_4
def test_a_config_of_numpy_integers(t4, watched):
    """A triton.Config whose numbers are numpy integers (a sweep over a numpy grid hands them over) gives the product
    that plain ints give, as T5's matmul takes them: the given config_checked hands your matmul a copy with plain
    ints, where Triton's launch stopped at "cannot convert 16 of type numpy.int64 to tensor".  The caller's config
    stays as it was."""
    a, b = random((40, 24), torch.float16), random((24, 36), torch.float16)
    sizes = {k: np.int64(v) for k, v in dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2).items()}
    cfg = triton.Config(sizes, num_warps=np.int64(4), num_stages=np.int64(2))
    case = say(zh="triton.Config 里的数都是 np.int64", en="a triton.Config whose numbers are np.int64")
    check_product(watched(a, b, config=cfg), a, b, torch.float16, case)
    assert all(isinstance(v, np.int64) for v in cfg.kwargs.values()), say(  # the given wrapper's copy, not the caller's
        zh=f"调用者的 config 被改了：{cfg.kwargs}", en=f"the caller's config was changed: {cfg.kwargs}"
    )


# triton.Configs that no launch can run right, each (its block parameters, the parameter the refusal must name).
WRONG_SIZES = [
    (dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=0), "GROUP_M"),  # C of garbage, numpy's warning alone
    (dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=-1), "GROUP_M"),  # reads and writes outside A, B, C
    (dict(BLOCK_M=48, BLOCK_N=32, BLOCK_K=32, GROUP_M=2), "BLOCK_M"),
    (dict(BLOCK_M=32, BLOCK_N=32, GROUP_M=2), "BLOCK_K"),
    (dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=8, GROUP_M=2), "BLOCK_K"),  # runs here; an H100 compile refused it
]


@pytest.mark.t4_4
def test_a_config_of_wrong_block_sizes_is_refused(t4, watched, monkeypatch):
    """A triton.Config without one of the four block parameters, with a block size that is no power of 2, or with
    a GROUP_M below 1 is refused by the given config_checked (given/t4_config.py) with an error naming the
    parameter, as T5's and T6's configs are, before anything is launched: GROUP_M=0 gave a C of garbage and
    GROUP_M=-1 a bus error (programs reading and writing outside the tensors).  The call before them, with
    GROUP_M=1 (the least there is: row-major order), is right; the wrong ones are not run."""
    a, b = random((40, 24), torch.float16), random((24, 36), torch.float16)
    least = triton.Config(dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=1), num_warps=4, num_stages=2)
    case = say(zh="GROUP_M=1 的 triton.Config", en="a triton.Config with GROUP_M=1")
    check_product(watched(a, b, config=least), a, b, torch.float16, case)
    for kernel in ("matmul_kernel", "matmul_kernel_autotuned"):
        if getattr(t4, kernel) is not None:
            monkeypatch.setattr(t4, kernel, NoLaunch(getattr(t4, kernel)))
    for sizes, name in WRONG_SIZES:
        try:
            t4.matmul(a, b, config=triton.Config(sizes, num_warps=4, num_stages=2))
            got = say(zh="没有报错", en="raised nothing")
        except Launched:
            got = say(zh="直接启动了 kernel", en="launched the kernel")
        except (TypeError, ValueError) as e:
            if name in str(e):
                continue
            got = f"{type(e).__name__}: {e}"
        pytest.fail(
            say(
                zh=f"matmul(a, b, config=triton.Config({sizes}))：{got}。给定的 @config_checked（given/t4_config.py）"
                f"本该在启动之前拒绝它，并说出 {name}；{read('T4.4', '6.2')}",
                en=f"matmul(a, b, config=triton.Config({sizes})): {got}. The given @config_checked (given/t4_config.py)"
                f" should refuse it before any launch, naming {name}; {read('T4.4', '6.2')}",
            ),
            pytrace=False,
        )


@pytest.mark.t4_4
def test_every_autotune_config_runs(t4, watched, poisoned_allocations):
    require_configs(t4)
    seen = set()
    for cfg in t4.AUTOTUNE_CONFIGS:
        kw = cfg.kwargs
        if INTERPRETING and tuple(kw.items()) in seen:
            continue  # the interpreter runs any num_warps and num_stages alike: these blocks are checked
        seen.add(tuple(kw.items()))
        M, N, K = kw["BLOCK_M"] + 3, kw["BLOCK_N"] + 5, kw["BLOCK_K"] + 7  # tails everywhere, two k-blocks
        a, b = random((M, K), torch.float16), random((K, N), torch.float16)
        check_product(watched(a, b, config=cfg), a, b, torch.float16, say(zh=f"配置 {cfg}", en=f"config {cfg}"))


@pytest.mark.t4_4
@pytest.mark.parametrize("M, N, K", [(0, 5, 7), (6, 0, 7), (0, 0, 0), (6, 5, 0)])
def test_empty_dimensions(t4, watched, poisoned_allocations, M, N, K):
    a, b = random((M, K), torch.float16), random((K, N), torch.float16)
    try:
        c = watched(a, b)
    except (TypeError, ValueError) as e:
        pytest.fail(
            say(
                zh=f"{M}x{K} @ {K}x{N}：matmul 拒绝了它（{type(e).__name__}: {e}），可这是合法的乘积："
                f"有一维是 0 的输入照样能乘，M 或 N 为 0 时 C 是空的，K 为 0 时 C 全是 0（torch.matmul 也这样）；"
                f"check_inputs 只拒绝真正不对的输入；{read('T4.4', '6.2', '6.3')}",
                en=f"{M}x{K} @ {K}x{N}: matmul refused it ({type(e).__name__}: {e}), yet it is a legal product: a "
                f"dimension of 0 multiplies all the same, C is empty when M or N is 0 and all zeros when K is 0 "
                f"(as torch.matmul gives); check_inputs refuses only what is wrong; {read('T4.4', '6.2', '6.3')}",
            ),
            pytrace=False,
        )
    assert tuple(c.shape) == (M, N) and c.dtype == torch.float16, say(
        zh=f"{M}x{K} @ {K}x{N}：应该得到 {(M, N)}、torch.float16，实际是 {tuple(c.shape)} {c.dtype}；"
        f"{read('T4.4', '6.2')}",
        en=f"{M}x{K} @ {K}x{N}: expected {(M, N)} torch.float16, got {tuple(c.shape)} {c.dtype}; {read('T4.4', '6.2')}",
    )
    assert torch.equal(c, torch.zeros_like(c)), say(
        zh=f"K = 0 时结果必须全是 0，实际是 {c}；{read('T4.4', '6.2')}",
        en=f"K = 0 must give zeros, got {c}; {read('T4.4', '6.2')}",
    )


# Legal operands of unusual strides, each (id, a, b, bias): torch.matmul takes them all, and so must matmul.
ODD_VIEWS = [
    ("a broadcast row (stride 0)", lambda r: (r(1, 40).expand(24, 40), r(40, 16), None)),
    ("b broadcast column (stride 0)", lambda r: (r(24, 40), r(40, 1).expand(40, 16), None)),
    ("bias every other element (stride 2)", lambda r: (r(24, 40), r(40, 16), r(32)[::2])),
    ("bias broadcast (stride 0)", lambda r: (r(24, 40), r(40, 16), r(1).expand(16))),
]
ODD_VIEWS_ZH = {
    "a broadcast row (stride 0)": "广播出来的 a 行（stride 0）",
    "b broadcast column (stride 0)": "广播出来的 b 列（stride 0）",
    "bias every other element (stride 2)": "隔一个取一个的 bias（stride 2）",
    "bias broadcast (stride 0)": "广播出来的 bias（stride 0）",
}


@pytest.mark.t4_4
def test_views_of_any_strides_are_taken(t4, monkeypatch):
    """Views whose strides are 0 or more than 1 are legal inputs: check_inputs refuses none of them.  Only
    the launch is reached, the kernel not run (so no bias_and_activation from T4.5 is needed)."""
    for kernel in ("matmul_kernel", "matmul_kernel_autotuned"):
        if getattr(t4, kernel) is not None:
            monkeypatch.setattr(t4, kernel, NoLaunch(getattr(t4, kernel)))
    for name, make in ODD_VIEWS:
        a, b, bias = make(lambda *shape: random(shape, torch.float16))
        strides = f"a {a.stride()}, b {b.stride()}" + (f", bias {bias.stride()}" if bias is not None else "")
        try:
            t4.matmul(a, b, bias=bias, config=quick(t4))
        except Launched:
            continue
        except (TypeError, ValueError) as e:
            refused = f"{type(e).__name__}: {e}"
        bias_copy = None if bias is None else bias.contiguous()
        try:  # the same shapes, contiguous: refused too, and the strides are not what was refused
            t4.matmul(a.contiguous(), b.contiguous(), bias=bias_copy, config=quick(t4))
        except (TypeError, ValueError):
            contiguous_refused = True
        except Launched:
            contiguous_refused = False
        if contiguous_refused:
            shapes = f"a {tuple(a.shape)}, b {tuple(b.shape)}" + ("" if bias is None else f", bias {tuple(bias.shape)}")
            pytest.fail(
                say(
                    zh=f"{ODD_VIEWS_ZH[name]}（{shapes}）：这是合法的输入（torch.matmul 也接受），matmul 却拒绝了它"
                    f"（{refused}）；同样形状的连续张量也被拒绝，所以拒绝它的不是 stride，是 check_inputs 对这些"
                    f"形状或 dtype 的判断；{read('T4.4', '6.3')}",
                    en=f"{name} ({shapes}): a legal input (torch.matmul takes it), yet matmul refused it ({refused}); "
                    f"contiguous tensors of the same shapes are refused too, so what refused it is not the strides "
                    f"but check_inputs' test of these shapes or dtypes; {read('T4.4', '6.3')}",
                ),
                pytrace=False,
            )
        pytest.fail(
            say(
                zh=f"{ODD_VIEWS_ZH[name]}（步长 {strides}）：这是合法的输入（torch.matmul 也接受），"
                f"matmul 却拒绝了它（{refused}），而同样形状的连续张量它接受：stride 是 0 或大于 1 的视图照样按它的 "
                f"stride 读；check_inputs 只拒绝真正不对的输入；{read('T4.4', '6.3')}",
                en=f"{name} (strides {strides}): a legal input (torch.matmul takes it), yet matmul refused it "
                f"({refused}), where it takes contiguous tensors of the same shapes: a view of stride 0 or more "
                f"than 1 is read through its strides like any other; check_inputs refuses only what is wrong; "
                f"{read('T4.4', '6.3')}",
            ),
            pytrace=False,
        )
