"""Lesson T4's helpers that more than one of its test files uses."""

import pytest
import torch

from course.i18n import cells, say
from course.messages import read, stub_report
from course.registry import lesson

from .operand_dtypes import check_operand_dtypes
from support import (
    INTERPRETING,
    PAD,
    LaunchWatch,
    changed_cells,
    same_tensor,
)

T4 = lesson("T4")


def see_loads(M, N, K, bm, bn, bk, dtype, pad=PAD, **layouts):
    """The `make loads` line that draws this case's loads and stores with the learner's own code;
    layouts: layout (of A), layout_b, layout_c, each given only when it is not row-major.  pad: the NaN
    around the case's tensors (poisoned_view's), so that make loads shows the strides the failure does."""
    flags = f"--m {M} --n {N} --k {K} --block {bm} {bn} {bk} --pad {pad}"
    flags += "".join(f" --{k.replace('_', '-')} {v}" for k, v in layouts.items() if v != "row-major")
    flags += " --dtype fp32" if dtype == torch.float32 else ""
    command = f'make loads ARGS="{flags}"'
    return say(zh=f"用 {command} 看看你自己的代码加载和写回了哪些元素", en=f"see your own loads: {command}")


BLOCK_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")


def require_configs(t4):
    if not t4.AUTOTUNE_CONFIGS:
        pytest.fail(stub_report("T4.4 AUTOTUNE_CONFIGS is empty", sections=("6.1",)), pytrace=False)


def launch_watch(t4, monkeypatch, run_tuned=True, case=None, bias=None, activation=None, step="T4.4", dtype=None):
    """matmul's two kernels under a LaunchWatch (tests/launch_watch.py).  With the case of the call it
    watches (and its bias, activation and step): when the kernel raises, the launch's flags are
    checked first, since HAS_BIAS or ACTIVATION at odds with the call (ACTIVATION=None for "none",
    say) take a T4.4 check into the body of T4.5, whose "not written yet" would blame a step the
    check does not need.  The launch's M, N, K are checked against the tensors it got before the
    kernel runs, and so are its strides (a kernel told M, K, N for M, N, K would write past C, one given
    B's strides swapped would read far outside B: a crash, not a message), and, given the caller's dtype,
    the operands' dtypes."""
    kernels = {"matmul_kernel": True, "matmul_kernel_autotuned": run_tuned}
    watch = LaunchWatch(t4, monkeypatch, kernels, wrapper="matmul")
    watch.read_grid = read("T4.4", "6.2")  # a grid that counts C in elements, told before it runs
    if case is not None:  # a launch that lacks a flag fails on its own, with Triton's words for what is missing
        watch.on_error = lambda args: (
            check_flags(args, bias, activation, case, step) if {"HAS_BIAS", "ACTIVATION"} <= args.keys() else None
        )
    if case is not None:
        watch.before = lambda args: check_sizes(args, case, step, dtype)
    return watch


def check_sizes(args, case, step, dtype=None):
    """Fail where the launch's M, N or K is larger than the A (M, K), B (K, N) and C (M, N) it got: the
    kernel would read and write past them.  Smaller ones touch nothing outside, and the checks after
    the launch name what they leave (cells never written, say)."""
    got = {k: args.get(k) for k in "MNK"}
    a, b, c = (args.get(k) for k in ("a_ptr", "b_ptr", "c_ptr"))
    if not all(isinstance(t, torch.Tensor) and t.dim() == 2 for t in (a, b, c)):
        return
    if a.shape[1] != b.shape[0]:
        return  # operands that do not fit together: the checks after the launch say which
    if (a.shape[0], b.shape[1]) != tuple(c.shape):  # the kernel would write M x N cells into it, or past it
        like = say(zh="，正是 a 的形状 (M, K)", en=", a's own shape, (M, K)") if c.shape == a.shape else ""
        want = (a.shape[0], b.shape[1])
        pytest.fail(
            say(
                zh=f"{case}：launch 的 C 形状是 {tuple(c.shape)}{like}，a {tuple(a.shape)} @ b {tuple(b.shape)} "
                f"的结果是 {want}：C 要建成 (M, N)，M = a.shape[0]，N = b.shape[1]；这里在内核运行之前就拦下了；"
                f"{launch_where(step)}",
                en=f"{case}: the launch's C has shape {tuple(c.shape)}{like}, where a {tuple(a.shape)} @ b "
                f"{tuple(b.shape)} gives {want}: make C (M, N), with M = a.shape[0] and N = b.shape[1]; stopped "
                f"before the kernel ran; {launch_where(step)}",
            ),
            pytrace=False,
        )
    check_operand_dtypes(a, b, dtype, case, launch_where(step))
    sizes = (a.shape[0], b.shape[1], a.shape[1])
    if all(isinstance(v, int) for v in got.values()) and any(g > w for g, w in zip(got.values(), sizes, strict=True)):
        said = ", ".join(f"{k}={v}" for k, v in got.items())
        want = ", ".join(f"{k}={v}" for k, v in zip("MNK", sizes, strict=True))
        pytest.fail(
            say(
                zh=f"{case}：launch 收到的是 {said}，它拿到的 A、B、C 是 {want}（M = a.shape[0]，N = b.shape[1]，"
                f"K = a.shape[1]，按内核参数的顺序传）；这里在内核运行之前就拦下了；{launch_where(step)}",
                en=f"{case}: the launch got {said}, where the A, B and C it got have {want} (M = a.shape[0], "
                f"N = b.shape[1], K = a.shape[1], in the order of the kernel's arguments); stopped before the kernel "
                f"ran; {launch_where(step)}",
            ),
            pytrace=False,
        )
    bias = args.get("bias_ptr")  # a pointer passed where there is no bias (HAS_BIAS False) is never read
    bias = bias if args.get("HAS_BIAS") is True and isinstance(bias, torch.Tensor) else None
    check_strides(args, a, b, c, bias, case, step, before=True)


def check_flags(args, bias, activation, case, step):
    """Fail unless the launch's HAS_BIAS and ACTIVATION are this call's."""
    for flag, want in (("HAS_BIAS", bias is not None), ("ACTIVATION", activation or "none")):
        got = args.get(flag)
        tensor = isinstance(got, torch.Tensor)  # compares element by element: say what it is instead
        if tensor or got != want:
            shown = (
                say(
                    zh=f"{flag} = 一个形状为 {tuple(got.shape)} 的张量（标志要传 bool 或字符串，不是张量本身）",
                    en=f"{flag} = a tensor of shape {tuple(got.shape)} (a flag is a bool or a string, not a tensor)",
                )
                if tensor
                else f"{flag}={got!r}"
            )
            pytest.fail(
                say(
                    zh=f"{case}：这次调用需要 {flag}={want!r}，launch 收到的却是 {shown}："
                    f"按调用的 bias 和 activation 设 HAS_BIAS 和 ACTIVATION，bias 和激活在内核里做"
                    f"（bias_and_activation）；{launch_where(step)}",
                    en=f"{case}: the launch got {shown} for this call, which needs "
                    f"{flag}={want!r}: set HAS_BIAS and ACTIVATION from the call's bias and activation; the "
                    f"kernel adds the bias and applies the activation (bias_and_activation); {launch_where(step)}",
                ),
                pytrace=False,
            )


def check_strides(args, a, b, c, bias, case, step, before=False):
    """Fail where a stride the launch got is not its tensor's own (a, b, c, bias: those tensors; before:
    the launch's own ones, checked before the kernel runs, where a stride swapped or assumed 1 would
    send the loads far outside A or B: a crash, not a message)."""
    given = {"stride_am": (a, 0), "stride_ak": (a, 1), "stride_bk": (b, 0), "stride_bn": (b, 1)}
    given.update({"stride_cm": (c, 0), "stride_cn": (c, 1)})
    if bias is not None:
        given["stride_bias"] = (bias, 0)
    wrong = {  # a stride along a dimension of size 1 is never used, so any value does there
        k: (args[k], t.stride(d))
        for k, (t, d) in given.items()
        if k in args and isinstance(t, torch.Tensor) and t.dim() > d and t.shape[d] > 1 and args[k] != t.stride(d)
    }
    if wrong:
        got = ", ".join(f"{k}={v[0]}" for k, v in wrong.items())
        want = ", ".join(f"{k}={v[1]}" for k, v in wrong.items())
        stopped = say(zh="；这里在内核运行之前就拦下了", en="; stopped before the kernel ran") if before else ""
        pytest.fail(
            say(
                zh=f"{case}：launch 收到的 stride 是 {got}，这些张量实际的 stride 是 {want}："
                f"把 a.stride(0)、a.stride(1)、b.stride(0)、b.stride(1)、c.stride(0)、c.stride(1)"
                f"{'、bias.stride(0)' if bias is not None else ''} 原样传给内核，"
                f"不要假定张量是连续存放的{stopped}；{launch_where(step)}",
                en=f"{case}: the launch got {got}, where the tensors' own strides are {want}: pass "
                f"a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)"
                f"{', bias.stride(0)' if bias is not None else ''} as they are, "
                f"never assume a tensor is contiguous{stopped}; {launch_where(step)}",
            ),
            pytrace=False,
        )


def check_launch(watch, c, a, b, bias, activation, case, step):
    """Fail unless C came whole from one launch that got this call's a, b (not copies), bias and
    flags, with a program for every tile."""

    def flags_and_bias(args):
        check_strides(args, a, b, c, bias, case, step)
        check_flags(args, bias, activation, case, step)
        if bias is not None and not same_tensor(args.get("bias_ptr"), bias):
            pytest.fail(
                say(
                    zh=f"{case}：launch 的 bias_ptr 不是调用者传进来的那个 bias 张量（直接传 bias 本身，"
                    f"配上 bias.stride(0)）；{launch_where(step)}",
                    en=f"{case}: the launch did not get the caller's bias tensor as bias_ptr (pass bias "
                    f"itself, with bias.stride(0)); {launch_where(step)}",
                ),
                pytrace=False,
            )

    launch, copy = read("T4.4", "6.2"), read("T4.4", "3.1", "6.2")
    watch.check(c, {"a": a, "b": b}, case, launch, copy, launch_where(step), also=flags_and_bias)
    if watch.launches:
        check_one_axis(watch.launches[0], case)
    if isinstance(c, torch.Tensor) and c.ndim == 2 and not c.is_contiguous():  # right values, wrong layout
        pytest.fail(
            say(
                zh=f"{case}：matmul 返回的 C 的 stride 是 {tuple(c.stride())}，不是连续的 (M, N) 张量（应为 "
                f"({c.shape[1]}, 1)）：数值虽然对，调用者对它 .view() 就会出错，torch.matmul 给的 C 也是连续的；"
                f"用 torch.empty((M, N), ...) 分配 C；{read('T4.4', '6.2')}",
                en=f"{case}: matmul returned a C with strides {tuple(c.stride())}, not a contiguous (M, N) tensor "
                f"(strides ({c.shape[1]}, 1)): its values are right, but a caller's .view() of it fails, and "
                f"torch.matmul's C is contiguous; allocate C as torch.empty((M, N), ...); {read('T4.4', '6.2')}",
            ),
            pytrace=False,
        )


def check_inputs_kept(before, after, case):
    """Fail when matmul changed one of the caller's tensors: before and after, {name: tensor}, a copy
    taken before the call and the tensor itself."""
    for name, changed in changed_cells(after, before).items():
        if changed:
            pytest.fail(
                say(
                    zh=f"{case}：matmul 改动了调用者的 {name}（调用之后有 {changed} 个元素变了）："
                    f"C 要是一块新分配的张量（torch.empty），输入一个也不能写；{read('T4.4', '6.2')}",
                    en=f"{case}: matmul changed the caller's {name} ({cells(changed)} differ after the call): "
                    f"C must be a tensor of its own (torch.empty), and no input may be written; "
                    f"{read('T4.4', '6.2')}",
                ),
                pytrace=False,
            )


def layouts(given):
    """{name: (shape, strides, storage offset, address)} of the tensors in given: what the caller holds."""
    return {
        name: (tuple(t.shape), t.stride(), t.storage_offset(), t.data_ptr())
        for name, t in given.items()
        if isinstance(t, torch.Tensor)
    }


def check_inputs_in_place(before, given, case):
    """Fail when matmul changed one of the caller's tensors in place, its values aside: before is
    layouts(given) taken before the call.  t.set_(t.contiguous()) keeps every value and the tensor's
    identity, so neither a copy of the values nor the launch's own arguments would show it."""
    for name, now in layouts(given).items():
        if now != before[name]:
            moved = now[3] != before[name][3]
            pytest.fail(
                say(
                    zh=f"{case}：matmul 就地改了调用者的 {name}：（形状, 步长, 偏移）原来是 {before[name][:3]}，"
                    f"现在是 {now[:3]}{'，数据也换了地方' if moved else ''}。调用者的张量要保持原样：不要对输入"
                    f"用 set_、t_、resize_ 或给 .data 赋值；视图按它自己的 stride 传给内核；"
                    f"{read('T4.4', '3.1', '6.2')}",
                    en=f"{case}: matmul altered the caller's {name} in place: its (shape, strides, offset) were "
                    f"{before[name][:3]}, now {now[:3]}{', its data elsewhere' if moved else ''}. Leave the "
                    f"caller's tensors as they are: no set_, t_, resize_ or assignment to .data on an input; pass "
                    f"a view to the kernel with its own strides; {read('T4.4', '3.1', '6.2')}",
                ),
                pytrace=False,
            )


def check_one_axis(launch, case):
    """Fail when the grid has programs along more than one axis: matmul_kernel numbers its programs
    with tl.program_id(axis=0) alone, so those along axis 1 or 2 redo the tiles of axis 0."""
    try:
        dims = tuple(int(d) for d in (launch.grid(dict(launch.args)) if callable(launch.grid) else launch.grid))
    except Exception:  # noqa: BLE001 - the autotuner's grid needs its meta; judged by what C holds
        return
    if len(dims) > 1 and any(d > 1 for d in dims[1:]):
        pytest.fail(
            say(
                zh=f"{case}：launch 的网格是 {dims}，不止第 0 维有程序；matmul_kernel 只用 tl.program_id(axis=0) "
                f"给程序编号，其他维上的程序只会重算第 0 维那些 tile，编号超出第 0 维程序数的 tile 没人算："
                f"返回一维的网格，(tile 数,)；{read('T4.4', '6.2')}",
                en=f"{case}: the launch's grid is {dims}, with programs along more than axis 0; matmul_kernel "
                f"numbers its programs with tl.program_id(axis=0) alone, so those along the other axes redo "
                f"axis 0's tiles, and a tile numbered past axis 0's programs is computed by nobody: return a 1-D "
                f"grid, (number of tiles,); {read('T4.4', '6.2')}",
            ),
            pytrace=False,
        )


def launch_where(step):
    """The launch is §6.2's for T4.4; for T4.5, what belongs in the kernel is §5.2's."""
    return read(step, "6.2") if step == "T4.4" else read(step)


def quick(t4):
    """The config for tests of what the kernel computes. Under the interpreter that is the default
    path anyway; on a GPU it skips autotuning, which would time every config for every new shape
    and layout (test_default_launch_path checks that the GPU's default path autotunes)."""
    return None if INTERPRETING else t4.INTERPRET_CONFIG


def wrapper_files(matmul):
    """The files of matmul and the wrappers its decorators put around it, outermost first (functools.wraps'
    __wrapped__): where a given decorator has been deleted, its file is missing here."""
    files, f = [], matmul
    while f is not None and len(files) < 10:
        files.append(getattr(getattr(f, "__code__", None), "co_filename", ""))
        f = getattr(f, "__wrapped__", None)
    return files
