"""T4.4: the host wrapper refuses what its kernel cannot compute, before any launch (where it runs, grad mode,
bf16 on the interpreter, activation names: test_input_modes.py)."""

import os
import re

import pytest
import torch

from course import seam
from course.i18n import say
from course.messages import read

from .common import layouts
from support import DEVICE, meta_value_read

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


def bad_inputs():
    f16 = lambda *s: torch.randn(*s).to(torch.float16)  # noqa: E731
    return [  # (id, a, b, kwargs, exception, words the message must contain)
        ("a is a list", [[1.0]], f16(1, 1), {}, TypeError, ["list"]),
        (
            "int32 inputs",
            torch.ones(2, 2, dtype=torch.int32),
            torch.ones(2, 2, dtype=torch.int32),
            {},
            TypeError,
            ["int32"],
        ),
        ("mixed dtypes", f16(2, 3), torch.randn(3, 2), {}, TypeError, ["float16", "float32"]),
        ("3-D a", f16(2, 3, 4), f16(4, 2), {}, ValueError, ["(2, 3, 4)"]),
        ("1-D a", f16(3), f16(3, 2), {}, ValueError, ["(3,)"]),
        ("3-D b", f16(4, 3), f16(3, 5, 2), {}, ValueError, ["(3, 5, 2)"]),
        ("1-D b", f16(4, 3), f16(3), {}, ValueError, ["(3,)"]),
        # a and b with as many rows: a check that takes a.shape[0] == b.shape[0] too lets it through
        ("inner dims differ", f16(6, 5), f16(6, 3), {}, ValueError, ["(6, 5)", "(6, 3)"]),
        # a wider than b is tall: a check of a.shape[1] < b.shape[0] alone lets it through, and B is read past its end
        ("inner dims differ, a wider", f16(4, 6), f16(5, 3), {}, ValueError, ["(4, 6)", "(5, 3)"]),
        # no rows, so nothing to compute, and still no product: torch.matmul refuses it too
        ("inner dims differ, a with 0 rows", f16(0, 5), f16(6, 3), {}, ValueError, ["(0, 5)", "(6, 3)"]),
        ("3-D a with 0 elements", f16(0, 3, 4), f16(4, 2), {}, ValueError, ["(0, 3, 4)"]),
        ("bias shape", f16(4, 5), f16(5, 3), {"bias": f16(4)}, ValueError, ["(4,)"]),
        # N values in a row: a check of bias.numel() alone lets it through, and stride(0) is then N, not 1
        ("bias of shape (1, 3)", f16(4, 5), f16(5, 3), {"bias": f16(1, 3)}, ValueError, ["(1, 3)"]),
        # N values down a column: a check of bias.shape[0] alone lets it through (len(bias) too)
        ("bias of shape (3, 1)", f16(4, 5), f16(5, 3), {"bias": f16(3, 1)}, ValueError, ["(3, 1)"]),
        ("bias dtype", f16(4, 5), f16(5, 3), {"bias": torch.randn(3)}, TypeError, ["float32"]),
        ("activation", f16(4, 5), f16(5, 3), {"activation": "relu"}, ValueError, ["relu"]),
        ("devices differ", f16(4, 5), torch.empty(5, 3, dtype=torch.float16, device="meta"), {}, ValueError, ["meta"]),
        ("float64 inputs", torch.randn(2, 3).double(), torch.randn(3, 2).double(), {}, TypeError, ["float64"]),
        ("bias is a list", f16(4, 5), f16(5, 3), {"bias": [0.0, 0.0, 0.0]}, TypeError, ["list"]),
        (
            "bias on another device",
            f16(4, 5),
            f16(5, 3),
            {"bias": torch.empty(3, dtype=torch.float16, device="meta")},
            ValueError,
            ["meta"],
        ),
        # with grad enabled: C would have no grad_fn, and training would skip the layer without an error
        ("a requires grad", f16(4, 5).requires_grad_(), f16(5, 3), {}, ValueError, ["grad"]),
        ("bias requires grad", f16(4, 5), f16(5, 3), {"bias": f16(3).requires_grad_()}, ValueError, ["grad"]),
    ]


# Each case's words in Chinese, for the Chinese messages and case labels (the English ones say the ids)
BAD_INPUTS_ZH = {
    "a is a list": "a 是 list",
    "int32 inputs": "int32 的输入",
    "mixed dtypes": "dtype 不一样",
    "3-D a": "三维的 a",
    "1-D a": "一维的 a",
    "3-D b": "三维的 b",
    "1-D b": "一维的 b",
    "inner dims differ": "内维不同",
    "inner dims differ, a wider": "内维不同，a 的列比 b 的行多",
    "inner dims differ, a with 0 rows": "内维不同，a 有 0 行",
    "3-D a with 0 elements": "有 0 个元素的三维 a",
    "bias shape": "bias 的形状不对",
    "bias of shape (1, 3)": "形状为 (1, 3) 的 bias",
    "bias of shape (3, 1)": "形状为 (3, 1) 的 bias",
    "bias dtype": "bias 的 dtype 不对",
    "activation": "不认识的 activation",
    "devices differ": "设备不同",
    "float64 inputs": "float64 的输入",
    "bias is a list": "bias 是 list",
    "bias on another device": "bias 在另一个设备上",
    "a requires grad": "a 要梯度",
    "bias requires grad": "bias 要梯度",
}


# A floating dtype's other names, as the explainers write them (fp16, bf16, fp32) and as torch has them
# (torch.half, torch.double): "a is fp16, b is fp32" names float16 and float32; and the name of its tensor type,
# which Tensor.type() says ("a is a torch.HalfTensor, b is a torch.FloatTensor").
DTYPE_NAMES = {
    "float16": ("fp16", "half", "HalfTensor"),
    "bfloat16": ("bf16", "BFloat16Tensor"),
    "float32": ("fp32", "FloatTensor"),
    "float64": ("fp64", "double", "DoubleTensor"),
    "int32": ("IntTensor",),
}
# Other words that say the same in Chinese, which a Chinese learner's messages may be written in: "a 需要梯度"
WORD_NAMES = {"grad": ("梯度",)}


def numbers_named(message, numbers):
    """Whether each of numbers stands in message as a number of its own ("= 5", "(5)"; not the 5 of 15 or 2.5)."""
    return all(re.search(rf"(?<![\d.]){n}(?![\d.])", message) for n in numbers)


def rank_named(message, rank):
    """Whether message names a tensor's number of dimensions, rank: 3-D, 3D, 3 dims, 3 dimensions, ndim 3,
    dim() == 3, 3 维."""
    said = rf"(?<![\d.]){rank}\s*-?\s*(?:D\b|d\b|dim|维)|\b(?:ndim|dim\(\)|dims?)\s*(?:==?|is|of|:)?\s*{rank}(?![\d.])"
    return re.search(said, message) is not None


# Where the shapes are not named, other words that show the caller as much: the rank of the tensor that is not
# 2-D ("a must be 2-D, got a 3-D tensor"), the two sizes that differ ("a.shape[1] = 5 != b.shape[0] = 6").
# {case id: (whether the message says it so, those words for the failure: (zh, en))}
OTHER_WORDS = {
    **{
        name: (
            lambda m, a, b, t=t: rank_named(m, t(a, b).ndim),
            lambda a, b, t=t: (f"它的维数 {t(a, b).ndim}", f"its rank, {t(a, b).ndim}-D"),
        )
        for name, t in (
            ("3-D a", lambda a, b: a),
            ("1-D a", lambda a, b: a),
            ("3-D b", lambda a, b: b),
            ("1-D b", lambda a, b: b),
            ("3-D a with 0 elements", lambda a, b: a),
        )
    },
    **{
        name: (
            lambda m, a, b: numbers_named(m, (a.shape[1], b.shape[0])),
            lambda a, b: (
                f"不相等的两个大小 {a.shape[1]} 和 {b.shape[0]}",
                f"the two sizes that differ, {a.shape[1]} and {b.shape[0]}",
            ),
        )
        for name in ("inner dims differ", "inner dims differ, a wider", "inner dims differ, a with 0 rows")
    },
}


def mentions(message, word):
    """Whether message names word; a shape such as "(2, 3, 4)" may be written in any readable form:
    (2, 3, 4), [2, 3, 4], torch.Size([2, 3, 4]), or, with two dimensions or more, 2x3x4 (x or ×,
    spaced or not); a lone number ("3") does not read as a shape.  A floating dtype may go by its short
    name or its tensor type's too (DTYPE_NAMES), and "grad" its Chinese word (WORD_NAMES), as a word of its own,
    in any case."""
    dims = re.fullmatch(r"\((\d+(?:, \d+)*),?\)", word)
    if not dims:
        return word in message or any(
            re.search(rf"(?<![A-Za-z0-9]){name}(?![A-Za-z0-9])", message, re.IGNORECASE)
            for name in DTYPE_NAMES.get(word, ()) + WORD_NAMES.get(word, ())
        )
    sizes = dims[1].split(", ")
    bracketed = r",\s*".join(sizes)
    if re.search(rf"[(\[]\s*{bracketed}\s*,?\s*[)\]]", message):
        return True
    crossed = r"\s*[x×]\s*".join(sizes)
    return len(sizes) > 1 and re.search(rf"(?<![\d.]){crossed}(?![\d.])", message) is not None


class Launched(Exception):
    """Raised in place of a launch: the inputs got past the checks."""


class _NoLaunch:
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            raise Launched()

        return launch

    def __getattr__(self, name):
        return getattr(self.kernel, name)


@pytest.mark.t4_4
@pytest.mark.parametrize("case", bad_inputs(), ids=lambda c: c[0])
@pytest.mark.case_words(id_zh=BAD_INPUTS_ZH)
def test_input_validation(t4, monkeypatch, case):
    """Bad inputs must be refused before the launch: reaching the kernel, or a body of another step
    not written yet, means matmul accepted them, whatever the kernel would have done next."""
    name, a, b, kwargs, exc, words = case
    name_zh = BAD_INPUTS_ZH[name]
    move = lambda t: t.to(DEVICE) if isinstance(t, torch.Tensor) and t.device.type == "cpu" else t  # noqa: E731
    a, b = move(a), move(b)
    kwargs = {k: move(v) for k, v in kwargs.items()}
    for kernel in ("matmul_kernel", "matmul_kernel_autotuned"):
        if getattr(t4, kernel) is not None:
            monkeypatch.setattr(t4, kernel, _NoLaunch(getattr(t4, kernel)))
    given = {"a": a, "b": b, **kwargs}
    held, wanted_grad = layouts(given), [n for n, t in layouts(given).items() if given[n].requires_grad]
    after = lambda: caller_changed(given, held, wanted_grad)  # noqa: E731 - said with whatever else is wrong
    accepted = say(
        zh=f"{name_zh}：matmul 接受了这个输入{{}}；它应该抛出 {exc.__name__}，并在信息里写明 {words}；"
        f"{read('T4.4', '6.3')}",
        en=f"{name}: matmul accepted it{{}}; it must raise {exc.__name__} naming {words}; {read('T4.4', '6.3')}",
    )
    try:
        t4.matmul(a, b, **kwargs)
    except Launched:
        went = say(zh="（都已经走到 launch 内核这一步了）", en=" (it went on to launch the kernel)")
        pytest.fail(accepted.format(went + after()), pytrace=False)
    except NotImplementedError as e:
        stub = seam.stub_message(e)
        caught = e  # .tolist() of the case's meta tensor, where it is one: told below
        if stub is not None or not meta_value_read(e, {os.path.realpath(t4.__file__)}):
            if stub is None or stub.startswith("T4.4"):
                raise
            went = say(
                zh=f"（一直走到了还没写的 {stub.split(':')[0]}）",
                en=f" (it went on as far as {stub.split(':')[0]}, not written yet)",
            )
            pytest.fail(accepted.format(went + after()), pytrace=False)
    except Exception as e:  # noqa: BLE001 - which exception it is, is what this test checks
        caught = e
    else:
        pytest.fail(accepted.format(after()), pytrace=False)
    at = meta_value_read(caught, {os.path.realpath(t4.__file__)})
    if at:  # a value read of the case's meta tensor, in the learner's own code
        pytest.fail(
            say(
                zh=f"{name_zh}：{at[0]}（{at[1]} 第 {at[2]} 行）读了一个张量的值，当时还没有拒绝它：这个用例把它放在 "
                f"meta 设备上，代表另一个设备，meta 张量没有值可读（{type(caught).__name__}: {caught}）。"
                "检查只看设备、类型和形状，不读值：在 GPU 上每读一次值都要等 GPU 算完（一次主机同步），"
                f"每次调用都要付；{read('T4.4', '6.3')}",
                en=f"{name}: {at[0]} ({at[1]} line {at[2]}) read a tensor's value before refusing it: this case puts "
                f"that tensor on the meta device, which stands for another device and holds no values "
                f"({type(caught).__name__}: {caught}). The checks look at devices, dtypes and shapes, never at "
                "values: on a GPU each value read waits for the GPU (a host sync), in every call; "
                f"{read('T4.4', '6.3')}",
            ),
            pytrace=False,
        )
    assert isinstance(caught, exc), say(
        zh=f"{name_zh}：应该抛出 {exc.__name__}，实际是 {type(caught).__name__}: {caught}；{read('T4.4', '6.3')}",
        en=f"{name}: expected {exc.__name__}, got {type(caught).__name__}: {caught}; {read('T4.4', '6.3')}",
    )
    missing = [w for w in words if not mentions(str(caught), w)]
    said_so, other = OTHER_WORDS.get(name, (lambda m, a, b: False, None))
    if missing and said_so(str(caught), a, b):
        missing = []
    alone = say(zh=f"（或{other(a, b)[0]}）", en=f" (or {other(a, b)[1]})") if other else ""
    assert not missing, say(
        zh=f"{name_zh}：报错信息应该写明 {missing}{alone}，调用者才知道错在哪；实际是 {str(caught)!r}；"
        f"{read('T4.4', '6.3')}",
        en=f"{name}: the message should name {missing}{alone} so the caller sees what is wrong; "
        f"got {str(caught)!r}; {read('T4.4', '6.3')}",
    )
    changed = after()
    assert not changed, (
        say(zh=f"{name_zh}：matmul 拒绝了它", en=f"{name}: matmul refused it")
        + changed
        + say(zh=f"；{read('T4.4', '6.3')}", en=f"; {read('T4.4', '6.3')}")
    )


def caller_changed(given, held, wanted_grad):
    """What the call did to the caller's tensors (given, {name: tensor}; held, their layouts before it; wanted_grad,
    those that required grad), as words to add to the failure ("" where nothing): a check that clears requires_grad
    (requires_grad_(False)) to get past its own refusal, or that mends an input in place (bias.squeeze_(0))."""
    cleared = [n for n in wanted_grad if not given[n].requires_grad]
    moved = [n for n, now in layouts(given).items() if now[:3] != held[n][:3]]
    said = ""
    if cleared:
        said += say(
            zh=f"；而且调用之后调用者的 {cleared} 不再 requires_grad 了：matmul 只能读 requires_grad，不能改它"
            "（requires_grad_(False) 让模型的权重以后不再训练），要拒绝",
            en=f"; and after the call the caller's {cleared} no longer require grad: matmul may read requires_grad, "
            "never set it (a requires_grad_(False) stops the model's weights training), so refuse",
        )
    if moved:
        said += say(
            zh=f"；而且它就地改了调用者的 {moved}（形状、步长或偏移变了）：不要对输入用 set_、t_、resize_ 或给 .data "
            "赋值，也不要用 squeeze_ 之类就地改形状",
            en=f"; and it altered the caller's {moved} in place (shape, strides or offset): no set_, t_, resize_ or "
            "assignment to .data on an input, nor squeeze_ and its kind",
        )
    return said
