"""T4.4: matmul without a config: on the interpreter it launches the plain kernel with INTERPRET_CONFIG, off it
matmul_kernel_autotuned with a grid that is a function of meta (what else the wrapper launches:
test_wrapper_launch.py)."""

import math

import pytest
import torch
import triton

from course.i18n import say
from course.messages import read

from .common import launch_watch
from launch_watch import LaunchWatch, one_side_words
from support import INTERPRETING, random

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


@pytest.mark.t4_4
def test_default_launch_path(t4, monkeypatch, no_torch_matmul):
    """Interpreter: INTERPRET_CONFIG on the plain kernel, never autotune. GPU: the autotuned kernel."""
    # Under the interpreter the autotuner would fail ("0 active drivers") before we could say why.
    watch = launch_watch(t4, monkeypatch, run_tuned=not INTERPRETING, case="40x30 @ 30x20")
    a, b = random((40, 30), torch.float16), random((30, 20), torch.float16)
    t4.matmul(a, b)
    plain, tuned = watch.count("matmul_kernel"), watch.count("matmul_kernel_autotuned")
    if INTERPRETING:
        assert (plain, tuned) == (1, 0), say(
            zh=f"在 TRITON_INTERPRET 下，matmul 必须用 INTERPRET_CONFIG 启动 matmul_kernel（没有 GPU 驱动，"
            f"autotune 跑不起来）；实际启动了普通内核 {plain} 次、autotune 版 {tuned} 次；{read('T4.4', '6.2')}",
            en=f"under TRITON_INTERPRET matmul must launch matmul_kernel with INTERPRET_CONFIG (autotune cannot "
            f"run without a GPU driver); it launched the plain kernel {plain} and the autotuned "
            f"one {tuned} times; {read('T4.4', '6.2')}",
        )
    else:
        assert (plain, tuned) == (0, 1), say(
            zh=f"在 GPU 上，不带 config 的 matmul 必须启动 matmul_kernel_autotuned；实际启动了普通内核 {plain} 次、"
            f"autotune 版 {tuned} 次；{read('T4.4', '6.2')}",
            en=f"on a GPU matmul without config must launch matmul_kernel_autotuned; it launched the plain "
            f"kernel {plain} and the autotuned one {tuned} times; {read('T4.4', '6.2')}",
        )


@pytest.mark.t4_4
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU test_default_launch_path sees the autotuned launch itself")
def test_default_launch_path_off_the_interpreter(t4, monkeypatch):
    """INTERPRET_CONFIG is the interpreter's alone: with INTERPRETING False (as on a GPU) matmul without a
    config launches matmul_kernel_autotuned.  On the CPU the launch is only recorded, never run: the
    operands live on the meta device (not "cpu"), torch.cuda.is_available() says True, and the input
    checks, which would refuse CPU tensors off the interpreter, are stood aside."""
    monkeypatch.setattr(t4, "INTERPRETING", False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # however the wrapper tells a GPU
    monkeypatch.setattr(t4, "check_inputs", lambda *args, **kwargs: None)
    watch = LaunchWatch(t4, monkeypatch, {"matmul_kernel": False, "matmul_kernel_autotuned": False}, wrapper="matmul")
    a, b = (torch.empty(s, dtype=torch.float16, device="meta") for s in ((1000, 30), (30, 900)))
    bias = torch.empty(900, dtype=torch.float16, device="meta")  # a GPU's: no value can be read (host syncs)
    t4.matmul(a, b, bias=bias, activation="gelu")
    plain, tuned = watch.count("matmul_kernel"), watch.count("matmul_kernel_autotuned")
    first = watch.of("matmul_kernel")[0].args if plain else {}
    if not tuned and first and all(first.get(k) == v for k, v in t4.INTERPRET_CONFIG.kwargs.items()):
        said = say(
            zh="它用 INTERPRET_CONFIG 启动了普通的 matmul_kernel：INTERPRET_CONFIG 只给解释器用",
            en="it launched the plain matmul_kernel with INTERPRET_CONFIG, which is the interpreter's alone",
        )
    else:
        said = say(
            zh=f"它启动了普通内核 {plain} 次、autotune 版 {tuned} 次",
            en=f"it launched the plain kernel {plain} and the autotuned one {tuned} times",
        )
    assert (plain, tuned) == (0, 1), say(
        zh=f"INTERPRETING 为 False 时（就像在 GPU 上），不带 config 的 matmul 必须启动 matmul_kernel_autotuned；"
        f"{said}；{read('T4.4', '6.2')}",
        en=f"with INTERPRETING False (as on a GPU) matmul without a config must launch matmul_kernel_autotuned; "
        f"{said}; {read('T4.4', '6.2')}",
    )
    check_tuned_grid(t4, watch.of("matmul_kernel_autotuned")[0], 1000, 900)


def check_tuned_grid(t4, launch, M, N):
    """The autotuner launches each of its configs with the one grid it was given: the grid must count
    each config's own tiles (a function of meta), as many programs as cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)."""
    got = {k: launch.args.get(k) for k in ("M", "N")}
    if got != {"M": M, "N": N}:  # the sizes the wrapper worked out are wrong: the grid's count follows them
        pytest.fail(
            say(
                zh=f"结果应为 {M}x{N} 的乘积，autotune 版的 launch 拿到的却是 M={got['M']}、N={got['N']}："
                f"M 是 a.shape[0]，N 是 b.shape[1]（K 是 a.shape[1]），网格和 kernel 都按它们数 tile；"
                f"{read('T4.4', '6.2')}",
                en=f"for a product whose C is {M}x{N} the autotuned launch got M={got['M']}, N={got['N']}: "
                f"M is a.shape[0] and N is b.shape[1] (K is a.shape[1]), and the grid and the kernel count "
                f"the tiles from them; {read('T4.4', '6.2')}",
            ),
            pytrace=False,
        )
    found = {}  # {config's blocks: (programs, tiles)}
    for cfg in t4.AUTOTUNE_CONFIGS:
        try:
            dims = launch.grid({**launch.args, **cfg.all_kwargs()}) if callable(launch.grid) else launch.grid
            programs = math.prod(int(d) for d in dims)
        except Exception:  # noqa: BLE001 - a grid this cannot read: the GPU's run judges it by C
            return
        tiles = triton.cdiv(M, cfg.kwargs["BLOCK_M"]) * triton.cdiv(N, cfg.kwargs["BLOCK_N"])
        found[f"{cfg.kwargs['BLOCK_M']}x{cfg.kwargs['BLOCK_N']}"] = (programs, tiles)
    short = {k: v for k, v in found.items() if v[0] < v[1]}
    fixed = len({p for p, _ in found.values()}) == 1 and len({t for _, t in found.values()}) > 1
    blocks = {key: tuple(int(x) for x in key.split("x")) for key in found}  # {"128x256": (128, 256)}
    for side, count in (("rows", lambda m, n: triton.cdiv(M, m)), ("cols", lambda m, n: triton.cdiv(N, n))):
        if short and not fixed and all(found[key][0] == count(*mn) for key, mn in blocks.items()):
            pytest.fail(
                say(
                    zh=f"{M}x{N} 的 C 上，autotune 版的网格给各配置的程序数与 tile 数是 {found}（程序数, tile 数）："
                    f"网格随配置变了，但 {one_side_words(side)}；{read('T4.4', '6.2')}",
                    en=f"on a {M}x{N} C the autotuned launch's grid gives each config (programs, tiles) {found}: "
                    f"the grid follows the config, but {one_side_words(side)}; {read('T4.4', '6.2')}",
                ),
                pytrace=False,
            )
    assert not short and not fixed, say(
        zh=f"{M}x{N} 的 C 上，autotune 版的网格给各配置的程序数与 tile 数是 {found}（程序数, tile 数）："
        + ("网格不随配置变，" if fixed else "有的配置程序比 tile 少，")
        + f"autotuner 用同一个网格启动每个配置：网格要是 meta 的函数，lambda meta: (triton.cdiv(M, meta['BLOCK_M']) "
        f"* triton.cdiv(N, meta['BLOCK_N']),)；{read('T4.4', '6.2')}",
        en=f"on a {M}x{N} C the autotuned launch's grid gives each config (programs, tiles) {found}: "
        + ("the grid stays the same whatever the config; " if fixed else "some configs get fewer programs than tiles; ")
        + f"the autotuner launches every config with that one grid, so make it a function of meta, lambda meta: "
        f"(triton.cdiv(M, meta['BLOCK_M']) * triton.cdiv(N, meta['BLOCK_N']),); {read('T4.4', '6.2')}",
    )
