"""T4.4: what the host wrapper launches: the kernel itself on the caller's tensors, with each call's own bias
and activation and a new C on the inputs' device (the path without a config: test_default_launch_path.py; the
products themselves: test_wrapper.py)."""

import gc
import math
import weakref

import pytest
import torch
import triton

from course.i18n import cells, say
from course.messages import read

from .common import check_flags, check_launch, check_one_axis, check_strides, launch_watch, quick, wrapper_files
from .product_checks import check_product
from launch_hooks import call_with_another_gpu_current
from launch_watch import LaunchWatch
from support import TWO_GPUS, TWO_GPUS_REASON, HandedToTorch, random

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


@pytest.mark.t4_4
def test_each_call_launches_with_its_own_bias_and_activation(t4, monkeypatch):
    """One shape called again and again, with and without a bias and a GELU: each launch gets that call's
    HAS_BIAS and ACTIVATION, not an earlier call's (flags kept between calls).  The kernel is not run:
    only the launches are read, so T4.4 does not need T4.5's bias_and_activation."""
    # the bias every other element (stride 2), as T4.5's tests hand it: a stride_bias of 1 is caught here too
    a, b, bias = random((48, 40), torch.float16), random((40, 48), torch.float16), random((96,), torch.float16)[::2]
    watch = LaunchWatch(t4, monkeypatch, {"matmul_kernel": False, "matmul_kernel_autotuned": False}, wrapper="matmul")
    calls = [(None, None), (bias, None), (None, "gelu"), (bias, "gelu"), (None, None)]
    wanted, unlaunched, seen, suspect = [], [], [], None
    for i, (with_bias, activation) in enumerate(calls):
        before = len(watch.launches)
        t4.matmul(a, b, bias=with_bias, activation=activation, config=quick(t4))
        if len(watch.launches) == before:
            unlaunched.append(i)
        want = (with_bias is not None, activation or "none")
        args = watch.launches[-1].args if len(watch.launches) == i + 1 else {}
        got = tuple(None if isinstance(x, torch.Tensor) else x for x in (args.get("HAS_BIAS"), args.get("ACTIVATION")))
        if len(watch.launches) == i + 1:
            seen.append(got)
        if not suspect and len(watch.launches) == i + 1 and got != want and got in wanted:  # a tensor: check_flags
            # the same call again right after one whose flags are others: flags kept from the last call follow it
            other = next(c for c in calls if (c[0] is not None, c[1] or "none") not in (got, want))
            t4.matmul(a, b, bias=other[0], activation=other[1], config=quick(t4))
            t4.matmul(a, b, bias=with_bias, activation=activation, config=quick(t4))
            again = tuple(watch.launches[-1].args.get(flag) for flag in ("HAS_BIAS", "ACTIVATION"))
            del watch.launches[i + 1 :]
            suspect = (i, activation, want, got, again != got)
        wanted.append(want)
    # flags that follow the call before, or one set of flags for calls that need others: an earlier call's
    if suspect and (suspect[4] or (len(seen) == len(calls) and len(set(seen)) == 1)):
        i, activation, want, got, _ = suspect
        pytest.fail(
            say(
                zh=f"第 {i + 1} 次调用（bias={'有' if want[0] else '无'}，activation={activation!r}）的 launch "
                f"收到 HAS_BIAS={got[0]!r}、ACTIVATION={got[1]!r}，这是前面某次调用的标志：每次调用都按它自己的 "
                f"bias 和 activation 重新设 HAS_BIAS 和 ACTIVATION，不要在调用之间留着；{read('T4.4', '6.2')}",
                en=f"call {i + 1} (bias {'given' if want[0] else 'None'}, activation={activation!r}) launched with "
                f"HAS_BIAS={got[0]!r}, ACTIVATION={got[1]!r}, the flags of an earlier call: set HAS_BIAS and "
                f"ACTIVATION from each call's own bias and activation, and keep none between calls; "
                f"{read('T4.4', '6.2')}",
            ),
            pytrace=False,
        )
    repeats = [(i, calls.index(calls[i])) for i in unlaunched if calls.index(calls[i]) < i]
    if repeats:  # the same tensors and flags as an earlier call, and no launch: its C came from no kernel run
        i, j = repeats[0]
        pytest.fail(
            say(
                zh=f"第 {i + 1} 次调用和第 {j + 1} 次的 a、b、bias、activation 完全相同，它却没有 launch 内核："
                f"它返回的 C 不是这次 launch 算出来的，是早先那次调用留下来的（那之后张量的值可能已经变了）；"
                f"每次调用都要 launch 一次，按张量此刻的值计算；{read('T4.4', '6.2')}",
                en=f"call {i + 1}, with the same a, b, bias and activation as call {j + 1}, launched nothing: the C "
                f"it returned was computed by no launch of its own, but kept from the earlier call (whose tensors "
                f"may hold other values by now); launch once per call, on the values the tensors hold at that "
                f"call; {read('T4.4', '6.2')}",
            ),
            pytrace=False,
        )
    assert len(watch.launches) == len(calls), say(
        zh=f"{len(calls)} 次调用只 launch 了 {len(watch.launches)} 次：每次调用 launch 一次内核；{read('T4.4', '6.2')}",
        en=f"{len(calls)} calls launched {len(watch.launches)} times: one launch per call; {read('T4.4', '6.2')}",
    )
    for launch, (with_bias, activation) in zip(watch.launches, calls, strict=True):
        check_flags(launch.args, with_bias, activation, "48x40 @ 40x48 float16", "T4.4")
        if with_bias is not None:  # only the bias's: a, b and C have checks of their own in test_matmul
            check_strides(
                {"stride_bias": launch.args.get("stride_bias")},
                a,
                b,
                None,
                bias,
                "48x40 @ 40x48 float16, bias every other element",
                "T4.4",
            )


@pytest.mark.t4_4
def test_matmul_keeps_no_reference_to_its_tensors(t4, monkeypatch):
    """After matmul returns and the caller lets go of a, b, bias and C, nothing may hold them: a wrapper
    or check that keeps the tensors it was given (a list, a cache, a default argument) keeps every
    activation of a model alive.  The kernel is not run (T4.4 does not need T4.5)."""
    a, b, bias = random((48, 40), torch.float16), random((40, 48), torch.float16), random((48,), torch.float16)
    watch = LaunchWatch(t4, monkeypatch, {"matmul_kernel": False, "matmul_kernel_autotuned": False}, wrapper="matmul")
    c = t4.matmul(a, b, bias=bias, activation="gelu", config=quick(t4))
    refs = {name: weakref.ref(t) for name, t in (("a", a), ("b", b), ("bias", bias), ("C", c))}
    watch.launches.clear()  # the watch's own record of the launch holds them too
    del a, b, bias, c
    gc.collect()
    held = [name for name, ref in refs.items() if ref() is not None]
    assert not held, say(
        zh=f"matmul 返回、调用者也放手之后，{'、'.join(held)} 还被留着（列表、缓存或默认参数里）：模型的每个"
        f"输入都会一直占着内存；检查和包装函数在调用结束后什么张量都不要留；{read('T4.4', '6.2', '6.3')}",
        en=f"after matmul returned and the caller let go, {', '.join(held)} still held (in a list, a cache or "
        f"a default argument): every input of a model would stay in memory; the checks and the wrapper keep "
        f"no tensor past the call; {read('T4.4', '6.2', '6.3')}",
    )


@pytest.mark.t4_4
def test_every_call_returns_a_new_c(t4, monkeypatch, poisoned_allocations):
    """Two calls of one shape on contiguous square inputs: C must be a fresh tensor each time (in any
    layout: a column-major C is still the product), neither A or B (the kernel would then read cells
    it has already overwritten) nor a buffer kept from an earlier call (the next call would overwrite
    that result), launched one program per tile."""
    n = 64
    a1, b1, a2, b2 = (random((n, n), torch.float16) for _ in range(4))
    kept = {"a": a1.clone(), "b": b1.clone()}
    case = say(zh=f"{n}x{n} @ {n}x{n} float16，连续两次调用", en=f"{n}x{n} @ {n}x{n} float16, called twice")
    watch = launch_watch(t4, monkeypatch, case=case)
    c1 = t4.matmul(a1, b1, config=quick(t4))
    first = c1.clone()
    c2 = t4.matmul(a2, b2, config=quick(t4))
    for name, was in kept.items():
        now = a1 if name == "a" else b1
        assert torch.equal(now, was), say(
            zh=f"{case}：matmul 改动了它的输入 {name}（{(now != was).sum().item()} 个元素变了）："
            f"C 要写进一个新的张量，不能写进 A 或 B；{read('T4.4', '6.2')}",
            en=f"{case}: matmul changed its input {name} ({cells((now != was).sum().item())}): write C into "
            f"a new tensor, never into A or B; {read('T4.4', '6.2')}",
        )
    changed = (c1 != first).sum().item()
    shared = isinstance(c2, torch.Tensor) and c2.untyped_storage().data_ptr() == c1.untyped_storage().data_ptr()
    why_zh, why_en = (
        ("两次调用返回的 C 是同一块内存", "both calls returned C in one buffer")
        if shared
        else ("第二次调用写进了第一次的 C 所在的内存", "the second call wrote into memory the first C lies in")
    )
    assert changed == 0, say(
        zh=f"{case}：第二次调用改动了第一次调用返回的 C（{changed} 个元素变了）：{why_zh}；"
        f"每次调用都要用 torch.empty 分配新的 C；{read('T4.4', '6.2')}",
        en=f"{case}: the second call changed the C the first call returned ({cells(changed)}): {why_en}; "
        f"allocate a new C with torch.empty on every call; {read('T4.4', '6.2')}",
    )
    for launch in watch.launches:
        check_one_axis(launch, case)
        args = launch[1]
        if not all(isinstance(args.get(k), int) for k in ("BLOCK_M", "BLOCK_N")):
            continue  # the autotuned kernel: its grid depends on the autotuner's choice
        programs = math.prod(int(d) for d in (launch.grid(dict(args)) if callable(launch.grid) else launch.grid))
        tiles = triton.cdiv(n, args["BLOCK_M"]) * triton.cdiv(n, args["BLOCK_N"])
        assert programs <= tiles, say(
            zh=f"{case}：launch 的网格有 {programs} 个程序，比 C 的 {tiles} 个 tile 多：每个 tile 一个程序，"
            f"多出来的程序对应不到 C 的任何 tile；{read('T4.4', '6.2')}",
            en=f"{case}: the launch's grid has {programs} programs, more than the {tiles} tiles of C: one "
            f"program per tile; the extra ones map to no tile of C; {read('T4.4', '6.2')}",
        )
    check_product(c1, a1, b1, torch.float16, case)


@pytest.mark.t4_4
def test_wrapper_launches_the_kernel(t4, monkeypatch, no_torch_matmul):
    """Handing the product to torch would pass every numeric test, and teach nothing."""
    watch = launch_watch(t4, monkeypatch, case="40x30 @ 30x20")
    a, b = random((40, 30), torch.float16), random((30, 20), torch.float16)
    cfg = triton.Config(dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2), num_warps=2, num_stages=3)
    try:
        c = t4.matmul(a, b, config=cfg)
    except HandedToTorch as e:
        pytest.fail(f"{e}; {read('T4.4', '6.2')}", pytrace=False)
    times = watch.count("matmul_kernel")
    assert times == 1, say(
        zh=f"matmul(config=...) 启动了 {times} 次 matmul_kernel，应该只启动一次：一次 launch 算出整个 C；"
        f"{read('T4.4', '6.2')}",
        en=f"matmul(config=...) launched matmul_kernel {times} times, expected once: one "
        f"launch computes all of C; {read('T4.4', '6.2')}",
    )
    # The block sizes first: a launch with another config's (INTERPRET_CONFIG's, say) ignored this one.
    blocks = {k: watch.launches[0][1].get(k) for k in cfg.kwargs}
    assert blocks == cfg.kwargs, say(
        zh=f"matmul(config=...) 的 launch 收到的是 {blocks}，不是传进来的配置 {cfg.kwargs}：给了 config 就用它启动"
        f"（解释器下也一样），INTERPRET_CONFIG 只在没给 config 时用；{read('T4.4', '6.2')}",
        en=f"matmul(config=...) launched with {blocks}, not the config it was given, {cfg.kwargs}: a config given "
        f"is the one to launch with (under the interpreter too); INTERPRET_CONFIG is for calls without one; "
        f"{read('T4.4', '6.2')}",
    )
    # The interpreter ignores num_warps and num_stages, so only this can tell config.kwargs (which
    # drops them) from config.all_kwargs().
    got = {k: watch.launches[0][1].get(k) for k in ("num_warps", "num_stages")}
    assert got == {"num_warps": 2, "num_stages": 3}, say(
        zh=f"配置是 num_warps=2, num_stages=3，launch 收到的却是 {got}：传 **config.all_kwargs()，它带着这两项；"
        f"**config.kwargs 不带；{read('T4.4', '6.2')}",
        en=f"the launch got {got} from a config with num_warps=2, num_stages=3: pass **config.all_kwargs(), "
        f"which holds them, not **config.kwargs; {read('T4.4', '6.2')}",
    )
    check_launch(watch, c, a, b, None, None, "40x30 @ 30x20", "T4.4")
    # A config of another type (its block sizes as a dict or a tuple) is refused by the given @config_checked
    # (given/t4_config.py) before any of matmul's own code runs: it would reach config.all_kwargs() in your body.
    for wrong in (dict(cfg.kwargs), (16, 16, 16, 2)):
        launches = watch.count("matmul_kernel")
        try:
            t4.matmul(a, b, config=wrong)
            got = None
        except TypeError as e:
            if "triton.Config" in str(e) and watch.count("matmul_kernel") == launches:  # the given check's refusal
                continue
            got = f"TypeError: {e}"
        except Exception as e:  # noqa: BLE001 - whatever else it raised is what the message shows
            got = f"{type(e).__name__}: {e}"
        shown = say(zh="没有报错", en="raised nothing") if got is None else got.splitlines()[0]
        gone = not any(name.endswith("t4_config.py") for name in wrapper_files(t4.matmul))
        pytest.fail(
            say(
                zh=f"matmul(a, b, config={wrong!r})：{shown}。给定的 @config_checked（given/t4_config.py）本该在 "
                "matmul "
                "的代码运行之前，就用一个 TypeError 拒绝不是 triton.Config 的 config"
                + ("，可 matmul 上面已经没有 @config_checked 了：把那一行放回去（make upgrade 会放回）" if gone else "")
                + f"；{read('T4.4', '6.2')}",
                en=f"matmul(a, b, config={wrong!r}): {shown}. The given @config_checked (given/t4_config.py) refuses "
                "a config that is no triton.Config with a TypeError before any of matmul's code runs"
                + (
                    ", and matmul no longer carries @config_checked: put that line back (make upgrade does)"
                    if gone
                    else ""
                )
                + f"; {read('T4.4', '6.2')}",
            ),
            pytrace=False,
        )


@pytest.mark.t4_4
def test_c_is_made_on_the_inputs_device(t4, monkeypatch):
    """C goes where a and b are, whatever torch's default device: a program that sets one (with
    torch.device("cuda"): ..., torch.set_default_device) still calls matmul on its own tensors.  Here the
    default is the meta device, which holds no data; the launches are recorded, not run."""
    watch = LaunchWatch(t4, monkeypatch, {"matmul_kernel": False, "matmul_kernel_autotuned": False}, wrapper="matmul")
    a, b = random((40, 30), torch.float16), random((30, 20), torch.float16)
    with torch.device("meta"):
        c = t4.matmul(a, b, config=quick(t4))
    into = [launch.args.get("c_ptr") for launch in watch.launches]
    where = sorted({str(t.device) for t in [c, *into] if isinstance(t, torch.Tensor)})
    assert where == [str(a.device)], say(
        zh=f"torch 的默认设备设成 meta 时，a、b 在 {a.device} 上，matmul 却把 C 放在了 {where}："
        f"C 要建在输入所在的设备上，torch.empty((M, N), device=a.device, dtype=a.dtype)，"
        f"不要依赖默认设备；{read('T4.4', '6.2')}",
        en=f"with torch's default device set to meta and a, b on {a.device}, matmul made C on {where}: make C "
        f"on the inputs' device, torch.empty((M, N), device=a.device, dtype=a.dtype), not on the default "
        f"device; {read('T4.4', '6.2')}",
    )


@pytest.mark.t4_4
@pytest.mark.skipif(not TWO_GPUS, reason=TWO_GPUS_REASON)
def test_inputs_on_a_gpu_that_is_not_current(t4):
    """A layer of a model split over two GPUs: x and W.t() on cuda:1 while cuda:0 is current.  The
    autotuned launch and a config's both run on cuda:1 (matmul's given @on_inputs_device), right."""
    x, w = random((200, 96), torch.float16, "cuda:1"), random((72, 96), torch.float16, "cuda:1")
    for config in (None, quick(t4)):
        case = say(zh=f"cuda:1 上的 x @ W.t()，config={config}", en=f"x @ W.t() on cuda:1, config={config}")
        c, problem = call_with_another_gpu_current("matmul", lambda config=config: t4.matmul(x, w.t(), config=config))
        assert problem is None, say(
            zh=f"{case}：{problem[0]}；{read('T4.4', '6.2')}", en=f"{case}: {problem[1]}; {read('T4.4', '6.2')}"
        )
        check_product(c, x, w.t(), torch.float16, case)
