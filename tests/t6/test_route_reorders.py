"""T6.1: the routing again with every op free to reorder its elements (tl.reshape with can_reorder=True,
tl.cat) giving them last first (tests/reorder.py): a rank or a place taken through such a reshape is
right on the interpreter alone, where the order happens to stay."""

import pytest
import torch

from course.i18n import say
from course.messages import fail

from .common import T6, make_ids
from .test_routing import guarded_route
from reorder import order_taken
from support import INTERPRETING

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's

FIELDS = ("counts", "offsets", "sorted_slots", "slot_pos")


@pytest.mark.t6_1
@pytest.mark.skipif(not INTERPRETING, reason="the elements' order is chosen through the interpreter")
def test_route_keeps_no_order_a_reorder_may_change(t6, monkeypatch):
    ids = make_ids("skewed", 200, 2, 5)  # 400 slots: four blocks
    again = say(zh="可以重排元素的操作倒序给出元素", en="ops free to reorder giving their elements last first")

    def routed(case):
        r = guarded_route(t6, monkeypatch, ids, 5, case)
        return torch.cat([getattr(r, f).flatten().long() for f in FIELDS])

    words = order_taken(monkeypatch, lambda: routed(again), routed(say(zh="路由", en="the routing")))
    if words:
        fail(T6, f"路由同一组 topk_ids：{words[0]}", f"the routing of the same topk_ids: {words[1]}", "2.2")
