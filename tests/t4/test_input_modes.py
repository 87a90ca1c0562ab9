"""T4.4: matmul's checks where it runs: CPU tensors with and without the interpreter, bf16 on the interpreter,
inputs that require grad under no_grad, and activation names the kernel does not know (what it refuses
outright, input by input: test_input_validation.py)."""

import os

import pytest
import torch

from course import ROOT
from course.i18n import say
from course.messages import read, stub_report
from course.warm import run_python

from .on_gpu import OnSecondGpu, on_gpu
from .product_checks import check_product
from launch_watch import LaunchWatch
from support import INTERPRETING, OUT_RTOL, random, rel_err

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


@pytest.mark.t4_4
def test_cpu_tensors_need_the_interpreter(t4):
    a, b = torch.randn(4, 5).half(), torch.randn(5, 3).half()
    if not INTERPRETING:
        with pytest.raises(ValueError, match="TRITON_INTERPRET"):
            t4.matmul(a, b)
        return
    # Already interpreting here, so ask a fresh process without it.
    code = (
        "import torch\nfrom course import seam\nfrom course.registry import lesson\n"
        "t4 = seam.load(lesson('T4'))\ntry:\n"
        "    t4.matmul(torch.ones(4, 5).half(), torch.ones(5, 3).half())\n"
        "    print('NO ERROR')\nexcept Exception as e:\n"
        # a ValueError of the learner's own class (class InputError(ValueError)) is a ValueError too
        "    sub = isinstance(e, ValueError) and type(e) is not ValueError\n"
        "    print(type(e).__name__ + (' (a ValueError)' if sub else ''), e)\n"
    )
    env = dict(os.environ, TRITON_INTERPRET="0")  # a child forked warm where safe (course/warm.py), else fresh
    _, out, err = run_python(["-c", code], ROOT, env, 120)
    said = (out + err).strip().splitlines()[-1:] or ["nothing"]
    if said[0].startswith("NotImplementedError "):
        pytest.fail(stub_report(said[0].split(" ", 1)[1]), pytrace=False)
    raised_value_error = said[0].startswith("ValueError ") or " (a ValueError) " in said[0]
    assert raised_value_error and "TRITON_INTERPRET" in said[0], say(
        zh=f"没开 TRITON_INTERPRET=1 时传入 CPU 张量，必须抛出 ValueError，并说明怎么打开它；"
        f"实际是：{said[0]}；{read('T4.4', '6.3')}",
        en=f"CPU tensors without TRITON_INTERPRET=1 must raise ValueError saying how to switch it on; "
        f"got: {said[0]}; {read('T4.4', '6.3')}",
    )


@pytest.mark.t4_4
@pytest.mark.skipif(not INTERPRETING, reason="on a GPU bf16 products and the CPU tensors' refusal run for real")
def test_check_inputs_off_the_interpreter(t4, monkeypatch):
    """With INTERPRETING False and a GPU said to be there, as on a GPU machine: bf16 is taken (it is refused
    only where the interpreter's tl.dot would get it wrong), and CPU tensors are refused, naming
    TRITON_INTERPRET, GPU or not, and inputs on two GPUs are refused.  Only check_inputs runs; the "GPU"
    tensors are meta ones that say they are on cuda:0 or cuda:1 (device, is_cuda, get_device), so a check by
    device type or is_cuda takes them as a GPU's, and a value read of one fails (named by tests/t4/conftest.py)."""
    monkeypatch.setattr(t4, "INTERPRETING", False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # however the check tells a GPU
    a, b = on_gpu((8, 12)), on_gpu((12, 8))
    try:
        t4.check_inputs(a, b)
    except (TypeError, ValueError) as e:
        try:  # the same in float16: refused too, the refusal is no bf16's
            t4.check_inputs(on_gpu((8, 12), torch.float16), on_gpu((12, 8), torch.float16))
        except (TypeError, ValueError):
            pytest.fail(
                say(
                    zh=f"不在解释器下（就像在 GPU 上）时，check_inputs 拒绝了 cuda:0 上的输入，bf16 和 float16 都拒绝："
                    f"{e}；cuda:0 上的这些输入是合法的，看抛出它的那项检查比较的是什么；{read('T4.4', '6.3')}",
                    en=f"off the interpreter (as on a GPU) check_inputs refused inputs on cuda:0, in bf16 and in "
                    f"float16 alike: {e}; these inputs on cuda:0 are legal: look at what the check that raised it "
                    f"compares; {read('T4.4', '6.3')}",
                ),
                pytrace=False,
            )
        pytest.fail(
            say(
                zh=f"不在解释器下（就像在 GPU 上）时，check_inputs 拒绝了 bf16 输入：{e}；"
                f"bf16 只在 TRITON_INTERPRET 下拒绝（解释器的 tl.dot 算错它），GPU 上它算得对；{read('T4.4', '6.3')}",
                en=f"off the interpreter (as on a GPU) check_inputs refused bf16 inputs: {e}; bf16 is refused only "
                f"under TRITON_INTERPRET (the interpreter's tl.dot gets it wrong); a GPU computes it right; "
                f"{read('T4.4', '6.3')}",
            ),
            pytrace=False,
        )
    bias = on_gpu((8,))
    try:
        t4.check_inputs(a, b, bias, "gelu")
    except (TypeError, ValueError) as e:
        pytest.fail(
            say(
                zh=f"不在解释器下（就像在 GPU 上）时，check_inputs 拒绝了同一对 bf16 输入加上形状 (8,) 的 bias 和 "
                f"activation='gelu'：{e}；这些输入都合法；{read('T4.4', '6.3')}",
                en=f"off the interpreter (as on a GPU) check_inputs refused the same bf16 inputs with a bias of shape "
                f"(8,) and activation='gelu': {e}; these inputs are all legal; {read('T4.4', '6.3')}",
            ),
            pytrace=False,
        )
    second = on_gpu((12, 8), kind=OnSecondGpu)
    try:
        t4.check_inputs(a, second)
    except ValueError:
        pass
    else:
        pytest.fail(
            say(
                zh=f"a 在 cuda:0、b 在 cuda:1，check_inputs 却放过了：两块 GPU 上的输入要抛出 ValueError 并说出设备；"
                f"比较整个设备，cuda:0 不是 cuda:1；{read('T4.4', '6.3')}",
                en=f"check_inputs took a on cuda:0 with b on cuda:1: inputs on two GPUs must raise ValueError naming "
                f"the devices; compare the devices whole: cuda:0 is not cuda:1; {read('T4.4', '6.3')}",
            ),
            pytrace=False,
        )
    try:
        t4.check_inputs(torch.ones(4, 5).half(), torch.ones(5, 3).half())
    except ValueError as e:
        if "TRITON_INTERPRET" in str(e):
            return
    pytest.fail(
        say(
            zh=f"不在解释器下、又有 GPU 时，check_inputs 放过了 CPU 张量：不管有没有 GPU，CPU 张量都要解释器，"
            f"抛出 ValueError 并说明怎么打开 TRITON_INTERPRET；{read('T4.4', '6.3')}",
            en=f"off the interpreter, with a GPU there, check_inputs took CPU tensors: CPU tensors need the "
            f"interpreter whether or not a GPU is there; raise ValueError saying how to switch TRITON_INTERPRET on; "
            f"{read('T4.4', '6.3')}",
        ),
        pytrace=False,
    )


@pytest.mark.t4_4
@pytest.mark.skipif(not INTERPRETING, reason="bf16 runs for real on a GPU")
def test_bf16_is_never_silently_wrong_on_the_interpreter(t4):
    a, b = random((20, 24), torch.bfloat16), random((24, 12), torch.bfloat16)
    try:
        c = t4.matmul(a, b)
    except (TypeError, ValueError) as e:
        assert "bf16" in str(e).lower() or "bfloat16" in str(e).lower(), say(  # "BF16" names it too
            zh=f"拒绝 bf16 时要说明原因（信息里写出 bf16 或 bfloat16）：{e}；{read('T4.4', '6.3')}",
            en=f"say why bf16 is refused (name bf16 or bfloat16): {e}; {read('T4.4', '6.3')}",
        )
        return
    err = rel_err(c, a.double() @ b.double()) if isinstance(c, torch.Tensor) and c.shape == (20, 12) else None
    assert err is None or err <= OUT_RTOL[torch.bfloat16], say(
        zh=f"bf16 在解释器上跑了，结果是错的（相对误差 {err:.2e}）：解释器的 tl.dot 把 bf16 的位模式当数乘"
        f"（triton issue 11584）。在 check_inputs 里拒绝它：TRITON_INTERPRET 下遇到 bf16 抛出 TypeError；"
        f"{read('T4.4', '6.3')}",
        en=f"bf16 ran on the interpreter and came out wrong (relative error {err:.2e}): the interpreter's tl.dot "
        f"multiplies bf16 bit patterns (triton issue 11584). Refuse it in check_inputs: raise TypeError for "
        f"bf16 under TRITON_INTERPRET; {read('T4.4', '6.3')}",
    )
    check_product(c, a, b, torch.bfloat16, say(zh="解释器下的 bf16", en="bf16 under the interpreter"))


@pytest.mark.t4_4
def test_inputs_that_require_grad_are_taken_without_grad_mode(t4):
    """Inference runs nn.Linear's weights, Parameters that require grad, under torch.no_grad() or
    torch.inference_mode(): there matmul computes as usual (it refuses them only with grad enabled)."""
    a, b = random((8, 12), torch.float32).requires_grad_(), random((12, 8), torch.float32).requires_grad_()
    for mode, context in (("torch.no_grad()", torch.no_grad), ("torch.inference_mode()", torch.inference_mode)):
        case = say(zh=f"{mode} 下，a 和 b 都 requires_grad", en=f"under {mode}, a and b requiring grad")
        try:
            with context():
                c = t4.matmul(a, b)
        except (TypeError, ValueError) as e:
            pytest.fail(
                say(
                    zh=f"{case}：matmul 拒绝了：{e}；只在开着梯度（torch.is_grad_enabled()）时拒绝要梯度的输入；"
                    f"{read('T4.4', '6.3')}",
                    en=f"{case}: matmul refused it: {e}; refuse inputs that require grad only with grad enabled "
                    f"(torch.is_grad_enabled()); {read('T4.4', '6.3')}",
                ),
                pytrace=False,
            )
        cleared = [name for name, t in (("a", a), ("b", b)) if not t.requires_grad]
        assert not cleared, say(
            zh=f"{case}：调用之后调用者的 {cleared} 不再 requires_grad 了：matmul 只能读 requires_grad，不能改它"
            f"（模型的权重要接着训练）；{read('T4.4', '6.3')}",
            en=f"{case}: after the call the caller's {cleared} no longer require grad: matmul may read "
            f"requires_grad, never set it (the model's weights train on afterwards); {read('T4.4', '6.3')}",
        )
        check_product(c, a.detach(), b.detach(), torch.float32, case)


@pytest.mark.t4_4
def test_nn_linear_s_weight_is_taken_transposed_and_as_it_is(t4):
    """A model hands matmul its nn.Linear weight W, a torch.nn.Parameter of shape (N, K), under torch.no_grad():
    as W.t() (x @ W.t() is what the layer computes) and, where the shapes fit, as W itself.  A Parameter is a
    subclass of torch.Tensor: a check of type(t) is torch.Tensor refuses it where isinstance takes it."""
    x = random((16, 24), torch.float32)
    weight = torch.nn.Parameter(random((40, 24), torch.float32))  # nn.Linear(24, 40)'s weight
    square = torch.nn.Parameter(random((24, 24), torch.float32))
    calls = (
        (say(zh="x @ W.t()，W 是 nn.Linear 的权重", en="x @ W.t(), W an nn.Linear weight"), weight.t()),
        (say(zh="x @ W，W 是 24x24 的 torch.nn.Parameter", en="x @ W, W a 24x24 torch.nn.Parameter"), square),
    )
    for case, b in calls:
        try:
            with torch.no_grad():
                c = t4.matmul(x, b)
        except (TypeError, ValueError) as e:
            with torch.no_grad():
                # the same values as a plain torch.Tensor (b.detach()) taken?
                taken = isinstance(b, torch.nn.Parameter) and accepts(t4.matmul, x, b.detach())
            because = (
                say(
                    zh="同样的值换成普通的 torch.Tensor（b.detach()）就通过了：检查用的是 type(t) is torch.Tensor 一类"
                    "的写法，而 Parameter 是 torch.Tensor 的子类；用 isinstance(t, torch.Tensor)",
                    en="the same values as a plain torch.Tensor (b.detach()) pass: the check asks something like "
                    "type(t) is torch.Tensor, and a Parameter is a subclass of torch.Tensor; ask "
                    "isinstance(t, torch.Tensor)",
                )
                if taken
                else say(zh="torch.no_grad() 下应当照常计算", en="under torch.no_grad() it should compute as usual")
            )
            pytest.fail(
                say(
                    zh=f"{case}：matmul 拒绝了：{e}；{because}；{read('T4.4', '6.3')}",
                    en=f"{case}: matmul refused it: {e}; {because}; {read('T4.4', '6.3')}",
                ),
                pytrace=False,
            )
        check_product(c, x, b.detach(), torch.float32, case)


def accepts(call, *args):
    try:
        call(*args)
    except (TypeError, ValueError):
        return False
    return True


@pytest.mark.t4_4
@pytest.mark.parametrize("activation", ["GELU", "Gelu", "none"])
def test_an_activation_the_kernel_does_not_know_never_reaches_it(t4, monkeypatch, activation):
    """bias_and_activation applies the GELU for ACTIVATION == "gelu" alone, and no activation for any
    other value, without an error: "GELU" taken by a check that folds case (activation.lower()) and passed
    on as it is gives C without its GELU.  matmul may refuse such a name (ValueError, naming it) or
    launch the kernel with a flag it knows, "gelu" or "none"; the launch is recorded here, not run."""
    watch = LaunchWatch(t4, monkeypatch, {"matmul_kernel": False, "matmul_kernel_autotuned": False}, wrapper="matmul")
    a, b = random((8, 12), torch.float16), random((12, 8), torch.float16)
    try:
        t4.matmul(a, b, activation=activation)
    except ValueError as e:
        assert activation in str(e), say(
            zh=f"activation={activation!r} 被拒绝了，但信息里没写出它：{e}；{read('T4.4', '6.3')}",
            en=f"activation={activation!r} was refused, but the message does not name it: {e}; {read('T4.4', '6.3')}",
        )
        return
    flags = [launch.args.get("ACTIVATION") for launch in watch.launches]
    known = "none" if activation == "none" else "gelu"
    assert flags and all(f == known for f in flags), say(
        zh=f"matmul 接受了 activation={activation!r}，launch 收到的 ACTIVATION 却是 {flags}：bias_and_activation "
        f"只认 'gelu'，别的值一律不做激活，也不报错，C 就悄悄少了这一步。check_inputs 只接受 None 和 'gelu'"
        f"（比较值本身，不要先 .lower()），别的值抛出 ValueError；{read('T4.4', '6.3')}",
        en=f"matmul took activation={activation!r}, and the launch got ACTIVATION={flags}: bias_and_activation "
        f"knows 'gelu' alone and applies no activation for any other value, without an error, so C silently "
        f"lacks it. Let check_inputs take None and 'gelu' only (compare the value itself, not its .lower()) "
        f"and raise ValueError for anything else; {read('T4.4', '6.3')}",
    )
