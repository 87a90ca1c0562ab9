"""T6.1, T6.3, T6.4: numpy integers where the calls take a count (num_experts, num_programs, a Config's block
sizes, a hand-made Routing's num_tokens and top_k), as T5's matmul takes them: a sweep over a numpy grid, or an
expert count read from a numpy array, hands them over.  numpy's integers are integers to Python (numbers.Integral);
the given host turns them into ints before the side's checks and the launches, where Triton takes no np.int64 for a
block size."""

import numpy as np
import pytest
import torch

from course.i18n import say
from course.messages import fail

from .common import T6, fail_if_raised, make_ids, raised_by
from .layer import layer_inputs
from .routings import check_routing
from support import DEVICE

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


def numpy_config(t6):
    """The interpreter's Config with every integer field a np.int64 (FLATTEN stays a bool)."""
    cfg = t6.Config(16, 32, 32, 2, 4, 1)
    return t6.Config(*(v if isinstance(v, bool) else np.int64(v) for v in vars(cfg).values()))


def same_as_plain(case, got, want, section):
    if not torch.equal(got, want):
        fail(
            T6,
            f"{case}：结果和用普通 int 调用时不一样",
            f"{case}: the result differs from the same call with plain ints",
            section,
        )


@pytest.mark.t6_1
@pytest.mark.parametrize("kind", [np.int64, np.int32], ids=["np.int64", "np.int32"])
def test_route_takes_a_numpy_integer_for_num_experts(t6, kind):
    """route(ids, np.int64(5)) is route(ids, 5): before the given host took numpy's integers, check_routing_inputs
    refused one as 'not a positive int' (T5's matmul took np.int64 num_programs all along)."""
    ids = make_ids("skewed", 11, 2, 5)
    case = say(
        zh=f"num_experts=np.{kind.__name__}(5)，11 个 token，top_k=2",
        en=f"num_experts=np.{kind.__name__}(5), 11 tokens, top_k=2",
    )
    r, error = raised_by(lambda: t6.route(ids, kind(5)))
    fail_if_raised(case, "route", error, "2.3")
    check_routing(r, ids, 5, case)


@pytest.mark.t6_3
def test_grouped_matmul_takes_numpy_integers_for_its_options(t6):
    """num_programs=np.int64(2) and a Config whose block sizes are np.int64 give what plain ints give: before
    the given host made them ints, the interpreter stopped with "cannot convert 2 of type numpy.int64 to tensor"."""
    ids = make_ids("balanced", 9, 2, 4)
    x = torch.randn(9, 32, device=DEVICE).half()
    w = (torch.randn(4, 48, 32, device=DEVICE) / 32**0.5).half()
    r = t6.route(ids, 4)
    want = t6.grouped_matmul(x, w, r, config=t6.Config(16, 32, 32, 2, 4, 1), num_programs=2)
    case = say(
        zh="grouped_matmul，num_programs=np.int64(2)，config 的各个数都是 np.int64",
        en="grouped_matmul, num_programs=np.int64(2), every number of config a np.int64",
    )
    got, error = raised_by(lambda: t6.grouped_matmul(x, w, r, config=numpy_config(t6), num_programs=np.int64(2)))
    fail_if_raised(case, "grouped_matmul", error, "4")
    same_as_plain(case, got, want, "4")


@pytest.mark.t6_3
def test_grouped_matmul_takes_a_hand_made_routing_of_numpy_counts(t6):
    """A Routing made by hand whose num_tokens and top_k are numpy integers (read off a numpy array) gives what
    plain ints give, with the combine too: before the given host made them ints, the interpreter stopped with
    "cannot convert 2 of type numpy.int64 to tensor" (TOP_K)."""
    ids = make_ids("skewed", 9, 2, 4)
    x = torch.randn(9, 32, device=DEVICE).half()
    w = (torch.randn(4, 48, 32, device=DEVICE) / 32**0.5).half()
    weights = torch.rand(9, 2, device=DEVICE)
    r = t6.route(ids, 4)
    tensors = (r.counts, r.offsets, r.sorted_slots, r.slot_pos)
    plain = t6.Routing(*tensors, 9, 2)
    for combine in (False, True):
        want = t6.grouped_matmul(x, w, plain, weights, combine=combine)
        case = say(
            zh=f"手工造的 Routing，num_tokens=np.int64(9)，top_k=np.int64(2)，combine={combine}",
            en=f"a hand-made Routing with num_tokens=np.int64(9), top_k=np.int64(2), combine={combine}",
        )
        hand = t6.Routing(*tensors, np.int64(9), np.int64(2))
        got, error = raised_by(
            lambda hand=hand, combine=combine: t6.grouped_matmul(x, w, hand, weights, combine=combine)
        )
        fail_if_raised(case, "grouped_matmul", error, "4")
        same_as_plain(case, got, want, "4")


@pytest.mark.t6_4
def test_moe_mlp_takes_a_config_of_numpy_integers(t6):
    """moe_mlp hands its config to both grouped_matmul calls as it is: one of np.int64 block sizes gives the
    layer that plain ints give."""
    x, w_gate_up, w_down, weights = layer_inputs(9, 2, 4, 32, 16)
    ids = make_ids("balanced", 9, 2, 4)
    want = t6.moe_mlp(x, w_gate_up, w_down, ids, weights, config=t6.Config(16, 32, 32, 2, 4, 1))
    case = say(zh="moe_mlp，config 的各个数都是 np.int64", en="moe_mlp, every number of config a np.int64")
    got, error = raised_by(lambda: t6.moe_mlp(x, w_gate_up, w_down, ids, weights, config=numpy_config(t6)))
    fail_if_raised(case, "moe_mlp", error, "5.2")
    same_as_plain(case, got, want, "5.2")
