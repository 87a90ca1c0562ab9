"""T5.2: the calls a real model makes into an out= it chose: matmul writes C into `out` only where
out can take it (the product's shape, dtype and device; a cell of its own for each element; no
memory shared with a, b or bias), and refuses it otherwise, on a first call and from a plan alike; and a
num_programs or a config under which no program would run (or a mode no rule knows), refused by its name."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import triton

from course.i18n import say
from course.messages import fail
from course.registry import lesson

from .common import T5, cfg, check_product, run_matmul
from launch_hooks import call_with_another_gpu_current
from support import DEVICE, TWO_GPUS, TWO_GPUS_REASON, grad_refusal_missed, random

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


def refused(t5, case, a, b, out, kind, config):
    """matmul(a, b, out=out) must raise `kind` naming out, with a, b and out as they were."""
    given = {"a": a, "b": b, "out": out}
    before = {name: t.clone() for name, t in given.items() if isinstance(t, torch.Tensor)}
    try:
        t5.matmul(a, b, out=out, config=config)
        got = say(zh="它却返回了一个结果", en="and it returned a result")
    except kind as e:
        if "out" in str(e):
            changed = [name for name, t in before.items() if not torch.equal(given[name], t)]
            if changed:
                fail(
                    T5,
                    f"{case}：拒绝之前改了 {', '.join(changed)}",
                    f"{case}: {', '.join(changed)} changed before the refusal",
                    "3.3",
                )
            return
        got = say(zh=f"它的 {kind.__name__} 没有提到 out：{e}", en=f"and its {kind.__name__} does not name out: {e}")
    fail(
        T5,
        f"{case}：matmul 应当抛 {kind.__name__}，{got}",
        f"{case}: matmul should raise a {kind.__name__}, {got}",
        "3.3",
    )


@pytest.mark.t5_2
def test_out_is_checked_on_a_first_call_and_from_a_plan(t5):
    """Six outs matmul cannot write C into, each refused; then a first call into a fresh out (which
    leaves a plan for its kind) and a call of that kind with out = a, refused too: the plan's key fixes
    out's shape and strides, not whether it lies over a.  A transposed out takes the product."""
    config = cfg(t5)
    a, b = random((32, 32), torch.float16), random((32, 32), torch.float16)
    cases = [
        (
            say(zh="形状为 (24, 32) 的 out", en="an out of shape (24, 32)"),
            torch.zeros(24, 32, dtype=torch.float16),
            ValueError,
        ),
        (say(zh="float32 的 out", en="an out in float32"), torch.zeros(32, 32, device=DEVICE), ValueError),
        (
            say(zh="由一行扩展出来的 out（stride 0）", en="an out expanded from one row (stride 0)"),
            torch.zeros(1, 32, device=DEVICE, dtype=torch.float16).expand(32, 32),
            ValueError,
        ),
        (say(zh="out 是一个 list", en="an out that is a list"), [[0.0] * 32] * 32, TypeError),
        (
            say(zh="开着梯度，out 要梯度", en="grad enabled, an out requiring grad"),
            torch.zeros(32, 32, device=DEVICE, dtype=torch.float16).requires_grad_(),
            ValueError,
        ),
        (say(zh="out 就是 a", en="out = a"), a, ValueError),
    ]
    for case, out, kind in cases:
        refused(t5, case, a, b, out.to(DEVICE) if isinstance(out, torch.Tensor) else out, kind, config)
    t5._plans.clear()
    case = say(zh="32x32x32 fp16，写进新的 out", en="32x32x32 fp16 into a fresh out")
    c = run_matmul(t5, case, "3.3", a, b, config=config, out=torch.empty_like(a))
    check_product(c, a, b, torch.float16, case, "3.3")
    refused(t5, say(zh="同一类调用，out = a", en="a call of the same kind with out = a"), a, b, a, ValueError, config)
    case = say(zh="32x32x32 fp16，out 是转置的视图", en="32x32x32 fp16 into a transposed view")
    c = run_matmul(t5, case, "3.3", a, b, config=config, out=torch.empty_like(a).t())
    check_product(c, a, b, torch.float16, case, "3.3")


@pytest.mark.t5_2
def test_a_plan_made_without_grad_mode_is_not_taken_with_it(t5):
    """Inference runs nn.Linear's weights, Parameters that require grad, under torch.no_grad(): matmul
    takes them there and keeps a plan for the kind.  The same call with grad enabled must not launch
    from that plan: your T4 check_inputs refuses it, since C would carry no gradient (T4 §6.3); nor may
    a plan made with grad enabled for a b that needs none serve a b that does."""
    config = cfg(t5)
    a, b = random((32, 32), torch.float16), random((32, 32), torch.float16).requires_grad_()
    case = say(zh="torch.no_grad() 下，b 要梯度", en="under torch.no_grad(), b requiring grad")
    t5._plans.clear()
    with torch.no_grad():
        c = run_matmul(t5, case, "3.3", a, b, config=config)
    check_product(c, a, b.detach(), torch.float16, case, "3.3")
    refused_with_grad(t5, a, b, config, say(zh="同一类调用，开着梯度", en="a call of the same kind with grad enabled"))
    # and a plan made with grad enabled on tensors that need none is not taken for one that does
    run_matmul(
        t5, say(zh="开着梯度，b 不要梯度", en="grad enabled, b needing none"), "3.3", a, b.detach(), config=config
    )
    refused_with_grad(t5, a, b, config, say(zh="开着梯度，b 要梯度", en="grad enabled, b requiring grad"))


def refused_with_grad(t5, a, b, config, case):
    got = grad_refusal_missed(lambda: t5.matmul(a, b, config=config))
    if got is None:
        return
    fail(
        lesson("T4"),
        f"{case}：matmul 应当抛 ValueError，{got}",
        f"{case}: matmul should raise a ValueError, {got}",
        "6.3",
    )


@pytest.mark.t5_2
def test_num_programs_and_config_that_run_nothing_are_refused(t5):
    """num_programs and config are matmul's arguments as much as out is (the tuning and the tests pass them).  A
    count of programs below 1, a Config whose GROUP_M or occupancy is 0, a mode no rule knows, a dict or a config
    without T5's fields for config: each is refused naming the argument (0 programs, or an occupancy of 0, launch
    no program and C comes back unwritten).  The call before them, with a config that fits, is right."""
    a, b = random((32, 32), torch.float16), random((32, 32), torch.float16)
    case = say(zh="32x32x32 fp16，num_programs=2", en="32x32x32 fp16, num_programs=2")
    check_product(run_matmul(t5, case, "1", a, b, config=cfg(t5), num_programs=2), a, b, torch.float16, case, "1")
    for what, options, kind, name in (
        ("num_programs=-1", {"num_programs": -1}, ValueError, "num_programs"),
        ("num_programs=0", {"num_programs": 0}, ValueError, "num_programs"),
        ("num_programs=2.5", {"num_programs": 2.5}, TypeError, "num_programs"),
        ("config.GROUP_M=0", {"config": replace(cfg(t5), GROUP_M=0)}, ValueError, "config"),
        ("config.occupancy=0", {"config": replace(cfg(t5), occupancy=0)}, ValueError, "config"),
        ('config.mode="Swap"', {"config": replace(cfg(t5), mode="Swap")}, ValueError, "config"),
        # both run on the interpreter; on an H100 the first did not compile, the second's C box was refused
        ("config.BLOCK_K=8", {"config": replace(cfg(t5), BLOCK_K=8)}, ValueError, "BLOCK_K"),
        ("config.BLOCK_N=4", {"config": replace(cfg(t5), BLOCK_N=4)}, ValueError, "BLOCK_N"),
        ("config={'BLOCK_M': 32}", {"config": {"BLOCK_M": 32}}, TypeError, "config"),
        (  # T4's kind: its type is called Config too, so "must be a Config, got Config" said nothing
            "config=triton.Config(dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=4))",
            {"config": triton.Config(dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=4))},
            TypeError,
            "triton.Config",
        ),
        (
            "config=SimpleNamespace(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=4)",
            {"config": SimpleNamespace(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=4)},
            TypeError,
            "config",
        ),
    ):
        try:
            t5.matmul(a, b, **options)
            got = say(zh="它却返回了一个结果", en="and it returned a result")
        except kind as e:
            if name in str(e):
                continue
            got = say(
                zh=f"它的 {kind.__name__} 没有提到 {name}：{e}", en=f"and its {kind.__name__} does not name {name}: {e}"
            )
        except Exception as e:  # noqa: BLE001 - an error from further in, told as it is
            got = say(zh=f"它却抛出了 {type(e).__name__}：{e}", en=f"and it raised {type(e).__name__}: {e}")
        fail(
            T5,
            f"matmul(a, b, {what})：应当抛出写着 {name} 的 {kind.__name__}，{got}",
            f"matmul(a, b, {what}): should raise a {kind.__name__} naming {name}, {got}",
            "1",
        )


@pytest.mark.t5_2
def test_numpy_integers_for_num_programs_and_config(t5):
    """numpy's integers are integers to Python (numbers.Integral), and a sweep over a numpy grid hands them over:
    num_programs=np.int64(2) and a Config whose numbers are np.int64 give the product plain ints give.  The given
    host makes them ints before the launch: Triton takes no np.int64 for a block size ("Shape element 0 must have
    type constexpr[int]")."""
    a, b = random((32, 32), torch.float16), random((32, 32), torch.float16)
    plain = cfg(t5)
    numbers = {f: np.int64(getattr(plain, f)) for f in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps")}
    case = say(
        zh="32x32x32 fp16，num_programs=np.int64(2)，config 的块大小是 np.int64",
        en="32x32x32 fp16, num_programs=np.int64(2), config's block sizes np.int64",
    )
    c = run_matmul(t5, case, "1", a, b, config=replace(plain, **numbers), num_programs=np.int64(2))
    check_product(c, a, b, torch.float16, case, "1")


@pytest.mark.t5_2
@pytest.mark.skipif(not TWO_GPUS, reason=TWO_GPUS_REASON)
def test_inputs_on_a_gpu_that_is_not_current(t5):
    """A layer of a model split over two GPUs: x and W.t() on cuda:1 while cuda:0 is current.  The
    default config and all stream-K (its workspace), each on a first call and from its plan (with a hook
    watching the launches, then without: the lean launch), run on cuda:1 (the given host's
    @on_inputs_device) and are right."""
    x, w = random((300, 96), torch.float16, "cuda:1"), random((200, 96), torch.float16, "cuda:1")
    t5._plans.clear()
    for config, programs in ((None, None), (cfg(t5, 64, 64, 32, mode="sk"), 8)):
        for call_zh, call_en, watched in (
            ("第一次调用", "a first call", True),
            ("按 plan 启动，有 launch hook", "from its plan, a launch hook set", True),
            ("按 plan 启动，没有 hook（精简的启动）", "from its plan, no hook (the lean launch)", False),
        ):
            case = say(
                zh=f"cuda:1 上的 x @ W.t()，config={config}（{call_zh}）",
                en=f"x @ W.t() on cuda:1, config={config} ({call_en})",
            )
            c, problem = call_with_another_gpu_current(
                "matmul",
                lambda config=config, programs=programs: t5.matmul(x, w.t(), config=config, num_programs=programs),
                watched,
            )
            if problem:
                fail(T5, f"{case}：{problem[0]}", f"{case}: {problem[1]}", "1")
            check_product(c, x, w.t(), torch.float16, case, "1")
