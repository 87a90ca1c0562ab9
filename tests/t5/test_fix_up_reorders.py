"""T5.3: the fix-up's two halves, publish and collect, run again with every op free to reorder its
elements (tl.reshape with can_reorder=True, tl.cat) giving them last first (tests/reorder.py): a slot
written or read through such a reshape is right on the interpreter alone, where the order happens to
stay; on a GPU the compiler may lay the elements out another way."""

import pytest
import torch

from course.messages import fail

from .common import T5
from .stream_k_cases import FIX_BM, FIX_BN, spread_tiles
from reorder import order_taken
from support import DEVICE

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


@pytest.mark.t5_3
def test_sk_publish_and_collect_keep_the_order_of_the_tile(probes, monkeypatch):
    """Program p's slot is the tile row-major (§4.2), whatever order a reshape free to reorder gives; and
    the owner adds each slot's cell to the same cell of its tile.  Tiles twice as tall as wide, as in
    test_sk_publish_partial_alone."""
    n, first, pid, bm, bn = 4, 1, 3, 2 * FIX_BM, FIX_BN
    src, acc = spread_tiles(n, bm, bn), spread_tiles(1, bm, bn)[0]

    def published():
        partials = torch.zeros((n, bm, bn), device=DEVICE)
        probes.publish_probe[(n,)](src, partials, torch.zeros(n, dtype=torch.int32, device=DEVICE), bm, bn)
        return partials

    def collected():
        out = torch.zeros_like(acc)
        probes.collect_probe[(1,)](acc, src, torch.ones(n, dtype=torch.int32, device=DEVICE), out, first, pid, bm, bn)
        return out

    fail_if_order_taken(monkeypatch, published, published(), "sk_publish_partial", "4.2")
    fail_if_order_taken(
        monkeypatch, collected, collected(), f"sk_collect_partials(first_pid={first}, pid={pid})", "4.2"
    )


def fail_if_order_taken(monkeypatch, run, before, case, section):
    """Fail, naming them, where run() gives another result with the ops free to reorder taken last first."""
    words = order_taken(monkeypatch, run, before)
    if words:
        fail(T5, f"{case}：{words[0]}", f"{case}: {words[1]}", section)
