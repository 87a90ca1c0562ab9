"""T6.3: what grouped_matmul refuses, and no tokens at all."""

import os
from dataclasses import replace

import pytest
import torch
import triton

from course import seam
from course.errors import root_cause
from course.i18n import say
from course.messages import fail

from .common import T6, fail_if_raised, names_one_of, raised_by
from .stray import input_to_refuse
from support import DEVICE, meta_value_read

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


def bad_inputs(t6):
    """(what, call, the arguments the error may name, one at least[, keyword arguments]), each on a fresh
    small problem; a mismatch between x and w may name either (or, for two devices, the devices), and so may one
    between x's rows or topk_weights' shape and the routing's tokens and top_k."""
    x = torch.randn(6, 32, device=DEVICE).half()
    w = torch.randn(3, 16, 32, device=DEVICE).half()
    r = t6.route(torch.tensor([[0, 1], [2, 0], [1, 1], [0, 2], [2, 2], [1, 0]], device=DEVICE), 3)
    bad_offsets = t6.Routing(r.counts, r.offsets.flip(0).contiguous(), r.sorted_slots, r.slot_pos, 6, 2)
    short_offsets = t6.Routing(r.counts, r.offsets - 1, r.sorted_slots, r.slot_pos, 6, 2)
    # 10 slots (0..9, so no store lands past them), offsets and counts that agree with them, for 6 tokens x
    # top_k 2: the combine would read 2 rows past the buffer
    ten, order = torch.tensor([4, 3, 3], dtype=torch.int32, device=DEVICE), torch.randperm(10, device=DEVICE)
    few_slots = t6.Routing(ten, ten.cumsum(0).int(), order.int(), order.argsort().int(), 6, 2)
    # route's offsets and counts, with slot 12 (past 0..11) in place of slot 0 (the combine would write a row past its
    # buffer), or with one slot in two sorted rows (the row of the slot left out never written)
    past_end = t6.Routing(r.counts, r.offsets, torch.where(r.sorted_slots == 0, 12, r.sorted_slots), r.slot_pos, 6, 2)
    twice = t6.Routing(r.counts, r.offsets, torch.where(r.sorted_slots == 0, 1, r.sorted_slots), r.slot_pos, 6, 2)
    # route's routing with each tensor widened to int64 (§4: 1-D int32 on x's device); its offsets check out
    wide = t6.Routing(r.counts.long(), r.offsets.long(), r.sorted_slots.long(), r.slot_pos.long(), 6, 2)
    # route's routing by hand with top_k 2.0: it ran into Triton's "unexpected type fp32" in the kernel
    float_k = t6.Routing(r.counts, r.offsets, r.sorted_slots, r.slot_pos, 6, 2.0)
    # T4's kind of config, a triton.Config: called Config too, so "must be a Config, got Config" said nothing
    t4_kind = triton.Config(dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=32, GROUP_M=2), num_warps=4, num_stages=1)
    # counts and offsets int32, sorted_slots and slot_pos int64 as torch.argsort gives them: each of the four is checked
    argsorted = replace(r, sorted_slots=r.sorted_slots.long(), slot_pos=r.slot_pos.long(), checked=False)
    # route's routing, its tensors on another device than x (meta here: a GPU routing beside a CPU x, say)
    away = replace(
        r, **{name: getattr(r, name).to("meta") for name in ("counts", "offsets", "sorted_slots", "slot_pos")}
    )
    return [
        ("x and w of two dtypes", (x, w.float(), r), ("x", "w")),
        ("w 2-D", (x, w[0], r), ("w",)),
        ("x 3-D, [6, 32, 2]", (torch.randn(6, 32, 2, device=DEVICE).half(), w, r), ("x",)),  # rows and K as x's
        ("x 1-D", (torch.randn(32, device=DEVICE).half(), w, r), ("x",)),
        ("w 4-D, [3, 16, 32, 1]", (x, w[..., None], r), ("w",)),  # experts and K as w's
        ("w's K differs from x's", (x, w[:, :, :16].contiguous(), r), ("x", "w")),
        ("w with 4 experts for a routing of 3", (x, torch.randn(4, 16, 32, device=DEVICE).half(), r), ("w", "routing")),
        ("x with 5 rows for 6 tokens", (x[:5], w, r), ("x", "routing")),
        # one row more than the routing's tokens: x and the routing are of two batches; run, the row is never read
        ("x with 7 rows for 6 tokens", (torch.randn(7, 32, device=DEVICE).half(), w, r), ("x", "routing")),
        ("topk_weights [6, 3] for top_k 2", (x, w, r, torch.rand(6, 3, device=DEVICE)), ("topk_weights", "routing")),
        ("topk_weights [5, 2] for 6 tokens", (x, w, r, torch.rand(5, 2, device=DEVICE)), ("topk_weights", "routing")),
        ("topk_weights of integers", (x, w, r, torch.ones(6, 2, dtype=torch.int32, device=DEVICE)), ("topk_weights",)),
        ("topk_weights on another device than x", (x, w, r, torch.rand(6, 2, device="meta")), ("topk_weights",)),
        ("topk_weights a list, not a tensor", (x, w, r, [[0.5, 0.5]] * 6), ("topk_weights",)),
        ("routing a dict, not a Routing", (x, w, {"counts": r.counts, "offsets": r.offsets}), ("routing",)),
        ("x a list, not a tensor", (x.tolist(), w, r), ("x",)),
        ("w a list, not a tensor", (x, w.tolist(), r), ("w",)),
        ("offsets not monotone", (x, w, bad_offsets), ("offsets",)),
        ("offsets not ending at the rows", (x, w, short_offsets), ("offsets",)),
        (
            "a routing of 10 slots for 6 tokens x top_k 2",
            (x, w, few_slots),
            ("routing", "sorted_slots"),
            {"combine": True},
        ),
        (
            "hand-made sorted_slots holding slot 12, past 0..11",
            (x, w, past_end),
            ("sorted_slots",),
            {"combine": True},
        ),
        (
            "hand-made sorted_slots holding slot 1 twice",
            (x, w, twice),
            ("sorted_slots",),
            {"combine": True},
        ),
        ("num_programs=-1", (x, w, r), ("num_programs",), {"num_programs": -1}),
        ("a config with GROUP_M=0", (x, w, r), ("config", "GROUP_M"), {"config": t6.Config(16, 32, 32, 0, 4, 1)}),
        ("a config with BLOCK_K=8", (x, w, r), ("config", "BLOCK_K"), {"config": t6.Config(16, 32, 8, 1, 4, 1)}),
        ("a triton.Config (T4's kind) for config", (x, w, r), ("triton.Config",), {"config": t4_kind}),
        ("a hand-made Routing whose top_k is 2.0", (x, w, float_k), ("top_k",), {"combine": True}),
        ("x and w on two devices", (x, w.to("meta"), r), ("x", "w", "device", "devices")),
        (
            "a hand-made Routing of int64 tensors",
            (x, w, wide),
            ("routing", "counts", "offsets", "sorted_slots", "slot_pos"),
        ),
        (
            "a hand-made Routing whose sorted_slots and slot_pos are int64 (torch.argsort's)",
            (x, w, argsorted),
            ("routing", "sorted_slots", "slot_pos"),
        ),
        (
            "a Routing on another device than x",
            (x, w, away),
            ("routing", "counts", "offsets", "sorted_slots", "slot_pos", "device"),
        ),
        ("x and w in float64", (x.double(), w.double(), r), ("x", "w")),
        ("w of 15 rows for swiglu ([gate; up]: 2F)", (x, w[:, :15].contiguous(), r), ("w",), {"activation": "swiglu"}),
        ("activation='gelu'", (x, w, r), ("activation",), {"activation": "gelu"}),  # run, it would be no activation
        (
            "topk_weights [2, 6], transposed, for 6 tokens with top_k 2",
            (x, w, r, torch.rand(2, 6, device=DEVICE)),
            ("topk_weights", "routing"),
        ),
        # x_sorted: one row per slot, 12 here; the 6 rows sit in a buffer of 12, so a kernel let run reads x's own.
        (
            "x_sorted=True with x of 6 rows for 12 slots",
            (torch.randn(12, 32, device=DEVICE).half()[:6], w, r),
            ("x", "routing"),
            {"x_sorted": True},
        ),
    ]


# Each case's words in Chinese, for the Chinese messages (the English ones say bad_inputs' own)
BAD_INPUTS_ZH = {
    "x and w of two dtypes": "x 和 w 的类型不一样",
    "w 2-D": "二维的 w",
    "x 3-D, [6, 32, 2]": "三维的 x，[6, 32, 2]",
    "x 1-D": "一维的 x",
    "w 4-D, [3, 16, 32, 1]": "四维的 w，[3, 16, 32, 1]",
    "w's K differs from x's": "w 的 K 和 x 的 K 不一样",
    "w with 4 experts for a routing of 3": "w 有 4 个专家，routing 只有 3 个",
    "x with 5 rows for 6 tokens": "x 只有 5 行，token 却有 6 个",
    "x with 7 rows for 6 tokens": "x 有 7 行，token 却只有 6 个",
    "topk_weights [6, 3] for top_k 2": "top_k 是 2，topk_weights 却是 [6, 3]",
    "topk_weights [5, 2] for 6 tokens": "6 个 token，topk_weights 却是 [5, 2]",
    "topk_weights of integers": "整数的 topk_weights",
    "topk_weights on another device than x": "topk_weights 和 x 不在同一个设备上",
    "topk_weights a list, not a tensor": "topk_weights 是 list，不是张量",
    "routing a dict, not a Routing": "routing 是 dict，不是 Routing",
    "x a list, not a tensor": "x 是 list，不是张量",
    "w a list, not a tensor": "w 是 list，不是张量",
    "offsets not monotone": "offsets 不是单调不减的",
    "offsets not ending at the rows": "offsets 的最后一个不等于行数",
    "a routing of 10 slots for 6 tokens x top_k 2": "6 个 token、top_k 2，routing 却只有 10 个 slot",
    "hand-made sorted_slots holding slot 12, past 0..11": "手工造的 sorted_slots 里有 0..11 之外的 12",
    "hand-made sorted_slots holding slot 1 twice": "手工造的 sorted_slots 里 slot 1 出现了两次",
    "num_programs=-1": "num_programs=-1",
    "a config with GROUP_M=0": "GROUP_M=0 的 config",
    "a config with BLOCK_K=8": "BLOCK_K=8 的 config",
    "a triton.Config (T4's kind) for config": "config 是 triton.Config（T4 的那种）",
    "a hand-made Routing whose top_k is 2.0": "手工造的 Routing，top_k 是 2.0",
    "x and w on two devices": "x 和 w 在两个设备上",
    "a hand-made Routing of int64 tensors": "手工造的、张量是 int64 的 Routing",
    "a hand-made Routing whose sorted_slots and slot_pos are int64 (torch.argsort's)": (
        "手工造的 Routing，sorted_slots 和 slot_pos 是 int64（torch.argsort 给的）"
    ),
    "a Routing on another device than x": "Routing 和 x 不在同一个设备上",
    "x and w in float64": "float64 的 x 和 w",
    "w of 15 rows for swiglu ([gate; up]: 2F)": "swiglu 的 w 只有 15 行（[gate; up] 要 2F 行）",
    "activation='gelu'": "activation='gelu'",
    "topk_weights [2, 6], transposed, for 6 tokens with top_k 2": "6 个 token、top_k 2，topk_weights 却是转置的 [2, 6]",
    "x_sorted=True with x of 6 rows for 12 slots": "x_sorted=True，12 个 slot，x 却只有 6 行",
}


@pytest.mark.t6_3
def test_grouped_matmul_refuses_bad_input(t6):
    for what, args, names, *named in bad_inputs(t6):
        name, name_zh = " or ".join(names), " 或 ".join(names)
        what_zh = BAD_INPUTS_ZH[what]
        before = [a.clone() if isinstance(a, torch.Tensor) and a.device.type != "meta" else None for a in args]
        deeper = read_at = None  # an error from further in than the checks (a kernel's, say)
        try:
            with input_to_refuse():  # a launch on it should not be made: its stray accesses are stopped
                t6.grouped_matmul(*args, **(named[0] if named else {}))
        except NotImplementedError as e:
            if seam.stub_message(e) is not None:
                raise  # a body not written yet: the suite says so in its own words
            deeper = f"{type(e).__name__} ({str(e)[:200]})"  # torch's, say: a meta tensor copied for a launch
            read_at = meta_value_read(e, {os.path.realpath(t6.__file__)})  # .tolist() of the meta tensor, in yours
        except (ValueError, TypeError) as e:
            if not names_one_of(str(e), names):
                fail(
                    T6,
                    f"{what_zh}：grouped_matmul 抛出了 {type(e).__name__}，但信息没有说出 {name_zh}：{e}",
                    f"{what}: grouped_matmul raised {type(e).__name__}, but its message does not name {name}: {e}",
                    "4",
                )
        except Exception as e:  # noqa: BLE001 - an error from further in is what this reports
            read_at = meta_value_read(e, {os.path.realpath(t6.__file__)})  # a value read of the meta tensor, in yours
            inner = root_cause(e)  # the interpreter wraps a kernel's error, sometimes more than once
            deeper = f"{type(inner).__name__} ({str(inner)[:200]})"
        else:
            # check_offsets' values, where the routing's four tensors are int32 (not where a dtype is the fault)
            by_hand = (
                isinstance(args[2], t6.Routing)
                and not args[2].checked
                and {"offsets", "sorted_slots"} & set(names)
                and all(
                    getattr(args[2], n).dtype == torch.int32 for n in ("counts", "offsets", "sorted_slots", "slot_pos")
                )
            )
            fail(
                T6,
                f"{what_zh}：grouped_matmul 应当抛出 ValueError（或 TypeError）并说出 {name_zh}，却什么也没抛"
                + (
                    "；这是手工造的 Routing（checked 为假）：给定的 check_offsets 查它的 offsets 和 sorted_slots"
                    if by_hand
                    else ""
                ),
                f"{what}: grouped_matmul should raise a ValueError (or TypeError) naming {name}, and raised nothing"
                + (
                    "; a hand-made Routing (checked false): the given check_offsets checks its offsets and sorted_slots"
                    if by_hand
                    else ""
                ),
                "4",
            )
        if read_at:  # the checks themselves read a value of the tensor this case put on the meta device
            fail(
                T6,
                f"{what_zh}：{read_at[0]}（{read_at[1]} 第 {read_at[2]} 行）读了一个张量的值，当时还没有拒绝它"
                f"（{deeper}）：这个用例把它放在 meta 设备上，代表另一个设备，meta 张量没有值可读。检查只看设备、类型"
                "和形状，不读值：在 GPU 上每读一次值，每次调用就多一次主机同步（§3.4）；手工造的 Routing 的 offsets "
                "交给给定的 check_offsets",
                f"{what}: {read_at[0]} ({read_at[1]} line {read_at[2]}) read a tensor's value before refusing it "
                f"({deeper}): this case puts that tensor on the meta device, which stands for another device and "
                "holds no values. The checks look at devices, dtypes and shapes, never at values: on a GPU each value "
                "read is a host sync in every call (§3.4); a hand-made Routing's offsets go to the given check_offsets",
                "4",
                "3.4",
            )
        if deeper:  # told outside the except, so that the traceback of the learner's error stays out of it
            fail(
                T6,
                f"{what_zh}：grouped_matmul 抛出了 {deeper}，而不是写着 {name_zh} 的 ValueError（或 TypeError）："
                "这样的输入要在 check_expert_inputs 里、启动之前拒绝",
                f"{what}: grouped_matmul raised {deeper}, not a ValueError (or TypeError) naming {name}: refuse such "
                "input in check_expert_inputs, before the launch",
                "4",
            )
        for a, b in zip(args, before, strict=True):
            if b is not None and not torch.equal(a, b):
                fail(
                    T6,
                    f"{what_zh}：grouped_matmul 改动了调用者的参数",
                    f"{what}: grouped_matmul changed a caller's argument",
                    "4",
                )
    # A hand-made Routing taken once, then its offsets changed in place (flipped, as "offsets not monotone"'s,
    # which was refused above): the same tensors at the same addresses, yet no longer valid.
    x, w = torch.randn(6, 32, device=DEVICE).half(), torch.randn(3, 16, 32, device=DEVICE).half()
    r = t6.route(torch.tensor([[0, 1], [2, 0], [1, 1], [0, 2], [2, 2], [1, 0]], device=DEVICE), 3)
    kept = t6.Routing(r.counts, r.offsets.clone(), r.sorted_slots, r.slot_pos, 6, 2)
    case = say(zh="手工造的 Routing，第一次调用", en="a hand-made Routing, its first call")
    fail_if_raised(case, "grouped_matmul", raised_by(lambda: t6.grouped_matmul(x, w, kept))[1], "4")
    kept.offsets.copy_(kept.offsets.flip(0))
    try:
        with input_to_refuse():
            t6.grouped_matmul(x, w, kept)
    except (ValueError, TypeError):
        return
    except Exception:  # noqa: BLE001 - refused further in: the cases above tell that kind
        return
    fail(
        T6,
        "手工造的 Routing 第一次调用时是对的，然后它的 offsets 被就地改成了不单调的（和上面被拒绝的\"offsets not "
        "monotone\"一样），第二次调用却照单全收：同一个 Routing、同一块内存，查过一次就不再查了。它的张量在两次调用之间"
        "可以改变：手工造的 Routing（checked 为假）每次调用都要交给 check_offsets",
        "a hand-made Routing was valid at its first call, then its offsets were changed in place to ones not "
        "monotone (as \"offsets not monotone\", refused above), and the second call took them: checked once, the "
        "same Routing at the same addresses was not checked again.  Its tensors may change between calls: a "
        "hand-made Routing (checked false) goes to check_offsets at every call",
        "4",
    )


@pytest.mark.t6_3
@pytest.mark.parametrize("combine", [False, True], ids=["sorted", "combined"])
@pytest.mark.case_words(id_zh={"sorted": "按排好的顺序写", "combined": "合并"})
def test_grouped_matmul_of_no_tokens(t6, combine):
    """0 tokens is valid input: an empty [0, N] result, not an error (each expert has 0 rows)."""
    empty = torch.empty(0, dtype=torch.int32, device=DEVICE)
    none = torch.zeros(3, dtype=torch.int32, device=DEVICE)
    r = t6.Routing(none, none.clone(), empty, empty.clone(), 0, 2)
    x = torch.empty((0, 32), device=DEVICE).half()
    w = torch.randn(3, 16, 32, device=DEVICE).half()
    weights = torch.empty((0, 2), device=DEVICE)
    case = say(
        zh=f"0 个 token，3 个专家，x 是 [0, 32]，combine={combine}",
        en=f"0 tokens, 3 experts, x [0, 32], combine={combine}",
    )
    out, error = raised_by(lambda: t6.grouped_matmul(x, w, r, weights, combine=combine))
    fail_if_raised(case, "grouped_matmul", error, "4")
    if tuple(out.shape) != (0, 16) or out.dtype != x.dtype:
        fail(
            T6,
            f"{case}：结果应当是 {x.dtype} 的 [0, 16]，得到 {out.dtype} {tuple(out.shape)}",
            f"{case}: the result should be [0, 16] in {x.dtype}, got {out.dtype} {tuple(out.shape)}",
            "4",
        )


@pytest.mark.t6_3
def test_grouped_matmul_takes_an_odd_n_without_swiglu(t6):
    """[gate; up]'s even row count is swiglu's rule alone (§4): a plain product's w may have any N, an odd one
    too.  Where N = 15 is refused, N = 17 too and N = 16 taken, the refusal is told as the parity rule applied
    without swiglu (learner37)."""
    x = torch.randn(6, 32, device=DEVICE).half()
    r = t6.route(torch.tensor([[0, 1], [2, 0], [1, 1], [0, 2], [2, 2], [1, 0]], device=DEVICE), 3)

    def refused(n):
        return raised_by(lambda: t6.grouped_matmul(x, torch.randn(3, n, 32, device=DEVICE).half(), r))[1]

    error = refused(15)
    if error and not refused(16) and refused(17):
        fail(
            T6,
            f"w 是 [3, 15, 32]，没有 activation：这是合法的输入，grouped_matmul 却抛出了 {error}；N = 17 也被拒绝，"
            "N = 16 却收下了：偶数行的规则（[gate; up]，2F 行）用在了没有 swiglu 的乘法上；它只在 "
            "activation == 'swiglu' 时才成立",
            f"w [3, 15, 32], no activation: valid input, yet grouped_matmul raised {error}; N = 17 is refused too, "
            "and N = 16 taken: the even row count rule ([gate; up], 2F rows) was applied without swiglu; it holds "
            "only where activation == 'swiglu'",
            "4",
        )
    case = say(zh="w 是 [3, 15, 32]（N 是奇数），没有 activation", en="w [3, 15, 32] (an odd N), no activation")
    fail_if_raised(case, "grouped_matmul", error, "4")
