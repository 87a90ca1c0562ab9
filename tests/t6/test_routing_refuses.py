"""T6.1: what route refuses, bad input, naming the argument (what it ignores: test_routing_ignores.py)."""

import pytest
import torch

from course import seam
from course.errors import root_cause
from course.messages import fail

from .common import T6, names_one_of
from .stray import input_to_refuse
from support import DEVICE

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


BAD_ROUTES = [  # (what, ids, num_experts, the argument the error must name)
    ("an id >= num_experts", lambda: torch.tensor([[0, 4], [1, 2]]), 4, "topk_ids"),
    # in the last token's row alone: a check of the first token's ids (topk_ids[0]) lets it through
    ("an id >= num_experts in the last row", lambda: torch.tensor([[0, 1], [2, 3], [1, 4]]), 4, "topk_ids"),
    # -1 (a dropped slot, for some routers) and -3: a check that rewrites negatives in place (to -1, say)
    # before it raises would leave a lone -1 as it was, and the caller's tensor would look untouched
    ("negative ids", lambda: torch.tensor([[0, -1], [-3, 2]]), 4, "topk_ids"),
    # int64 2**32 + 1: a range check on the ids narrowed to int32 first sees expert 1 and lets it through
    ("an int64 id of 2**32 + 1", lambda: torch.tensor([[0, 2**32 + 1], [1, 2]]), 4, "topk_ids"),
    ("float ids", lambda: torch.tensor([[0.0, 1.0]]), 4, "topk_ids"),
    # bool is no integer type: routed, True and False would read as experts 1 and 0
    ("bool ids", lambda: torch.tensor([[True, False], [False, True]]), 4, "topk_ids"),
    ("1-D ids", lambda: torch.tensor([0, 1, 2]), 4, "topk_ids"),
    # 3-D: a check that refuses fewer than 2 dimensions alone lets [tokens, top_k, 1] through to route's unpacking
    ("3-D ids", lambda: torch.zeros((3, 2, 1), dtype=torch.int64), 4, "topk_ids"),
    # a list of lists, as a router written in Python might hand over: no tensor
    ("ids a list, not a tensor", lambda: [[0, 1], [2, 3]], 4, "topk_ids"),
    ("num_experts = 0", lambda: torch.tensor([[0, 1]]), 0, "num_experts"),
    # no ids at all: a check of num_experts that lets 0 through is not saved by the range check of the ids
    ("num_experts = 0 for no tokens", lambda: torch.empty((0, 2), dtype=torch.int64), 0, "num_experts"),
    ("num_experts = 4.0", lambda: torch.tensor([[0, 1]]), 4.0, "num_experts"),
    # a count read from a config file as text: compared with 1 before its type is checked, it raises a TypeError
    # naming no argument (early37)
    ("num_experts a string", lambda: torch.tensor([[0, 1]]), "8", "num_experts"),
    ("num_experts = True", lambda: torch.tensor([[0, 0]]), True, "num_experts"),  # an int to isinstance, no count
    # a count read off a tensor without .item(): handed to the kernels, a tensor argument is a pointer, not a count
    ("num_experts a 0-dim tensor", lambda: torch.tensor([[0, 1]]), torch.tensor(4), "num_experts"),
    # past the given host's limit (MAX_EXPERTS, 65536): Triton refused scan_counts' [16, 131072] block, unnamed
    ("num_experts = 65537", lambda: torch.tensor([[0, 65536]]), 65537, "num_experts"),
]


# An id not below num_experts is as much a num_experts too small for these ids: an error naming either argument
# names the one at fault (an id below 0 is wrong whatever num_experts is, and names topk_ids alone)
EITHER = {"an id >= num_experts", "an id >= num_experts in the last row", "an int64 id of 2**32 + 1"}


# Each case's words in Chinese, for the Chinese messages (the English ones say BAD_ROUTES' own, also the ids)
BAD_ROUTES_ZH = {
    "an id >= num_experts": "有一个专家号 >= num_experts",
    "an id >= num_experts in the last row": "最后一行里有一个专家号 >= num_experts",
    "negative ids": "负的专家号",
    "an int64 id of 2**32 + 1": "int64 的专家号 2**32 + 1",
    "float ids": "浮点的专家号",
    "bool ids": "bool 的专家号",
    "1-D ids": "一维的专家号",
    "3-D ids": "三维的专家号",
    "ids a list, not a tensor": "专家号是 list，不是张量",
    "num_experts = 0": "num_experts = 0",
    "num_experts = 0 for no tokens": "没有 token 时 num_experts = 0",
    "num_experts = 4.0": "num_experts = 4.0",
    "num_experts a string": "num_experts 是字符串 \"8\"",
    "num_experts = True": "num_experts = True",
    "num_experts = 65537": "num_experts = 65537",
    "num_experts a 0-dim tensor": "num_experts 是一个 0 维张量",
}


@pytest.mark.t6_1
@pytest.mark.parametrize("what, make, experts, name", BAD_ROUTES, ids=[b[0] for b in BAD_ROUTES])
@pytest.mark.case_words(id_zh=BAD_ROUTES_ZH)
def test_route_refuses_bad_input(t6, what, make, experts, name):
    what_zh = BAD_ROUTES_ZH[what]
    ids = make()
    ids = ids.to(DEVICE) if isinstance(ids, torch.Tensor) else ids  # a list stays one
    before = ids.clone() if isinstance(ids, torch.Tensor) else None
    deeper = None  # an error from further in than the checks
    pointer = ("", "")
    if isinstance(experts, torch.Tensor):  # taken where an int is asked for: the kernels get a pointer
        pointer = (
            "；张量不是 int：交给 kernel 的张量参数是一个指针，不是专家数",
            "; a tensor is no int: handed to a kernel, a tensor argument is a pointer, not a count",
        )
    try:
        with input_to_refuse():  # a launch on it should not be made: its stray accesses are stopped
            t6.route(ids, experts)
    except (ValueError, TypeError) as e:
        names = (name, "num_experts") if what in EITHER else (name,)
        if not names_one_of(str(e), names):
            # the ids of no tokens, [0, top_k], refused: they are valid, num_experts alone is wrong here
            empty = isinstance(ids, torch.Tensor) and ids.dim() == 2 and not ids.numel() and "topk_ids" in str(e)
            if empty:  # a refusal of valid ids: not a message that misses a name
                fail(
                    T6,
                    f"{what_zh}：route 抛出了 {type(e).__name__}，拒绝的是 topk_ids：{e}；"
                    f"可形状为 {list(ids.shape)} 的 topk_ids（0 个 token）是合法的，这里错的只有 num_experts",
                    f"{what}: route raised {type(e).__name__} refusing topk_ids: {e}; yet topk_ids of shape "
                    f"{list(ids.shape)} (no tokens) are valid, and num_experts alone is wrong here",
                    "2.3",
                )
            fail(
                T6,
                f"{what_zh}：route 抛出了 {type(e).__name__}，但信息没有说出出错的参数 {' 或 '.join(names)}：{e}",
                f"{what}: route raised {type(e).__name__}, but its message does not name the argument "
                f"{' or '.join(names)}: {e}",
                "2.3",
            )
    except NotImplementedError as e:
        if seam.stub_message(e) is not None:
            raise  # a body not written yet: the suite says so in its own words
        deeper = f"{type(e).__name__} ({str(e)[:200]})"
    except Exception as e:  # noqa: BLE001 - an error from further in (a kernel, say) is what this reports
        inner = root_cause(e)  # the interpreter wraps a kernel's error, sometimes more than once
        deeper = f"{type(inner).__name__} ({str(inner)[:200]})"
    else:
        changed = before is not None and before.shape == ids.shape and not torch.equal(ids, before)
        fail(
            T6,
            f"{what_zh}：route 应当抛出 ValueError（或 TypeError）并说出 {name}，却什么也没抛"
            + pointer[0]
            + ("；而且它就地改动了调用者的 topk_ids（route 只该读它们，坏的号要拒绝，不要改掉）" if changed else ""),
            f"{what}: route should raise a ValueError (or TypeError) naming {name}, and raised nothing"
            + pointer[1]
            + (
                "; and it changed the caller's topk_ids in place (route only reads them: refuse bad ids, never mend "
                "them)"
                if changed
                else ""
            ),
            "2.3",
        )
    if deeper:  # reported outside the except, so that the traceback of the learner's error stays out of it
        fail(
            T6,
            f"{what_zh}：route 抛出了 {deeper}，而不是写着 {name} 的 ValueError（或 TypeError）："
            f"这样的输入要在 check_routing_inputs 里、任何一次启动之前拒绝{pointer[0]}",
            f"{what}: route raised {deeper}, not a ValueError (or TypeError) naming {name}: refuse such input "
            f"in check_routing_inputs, before any launch{pointer[1]}",
            "2.3",
        )
    if before is not None and not torch.equal(ids, before):
        fail(T6, f"{what_zh}：route 改动了调用者的 topk_ids", f"{what}: route changed the caller's topk_ids", "2.3")
