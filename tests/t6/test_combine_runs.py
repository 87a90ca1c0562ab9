"""T6.3: the layer's result as a whole: the same bits from the same call (no float atomics), and the experts'
ends kept whatever order the programs run in (after test_combine.py, whose checks of the combine name more)."""

import pytest
import torch

from course.i18n import cells
from course.messages import fail

from .common import OUT_RTOL, T6, changed_cells, copies, make_ids, reference
from .test_combine import fail_on_float_atomics, watch_float_atomics
from support import DEVICE, INTERPRETING, rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


@pytest.mark.t6_3
def test_combine_is_deterministic_without_float_atomics(t6, monkeypatch):
    """The same call twice gives the same bits, and (on the CPU, where the interpreter runs the
    programs one by one and any order of adds would repeat) no float atomic ran."""
    tokens, top_k, experts, K, N = 24, 2, 4, 32, 24
    ids = make_ids("balanced", tokens, top_k, experts)
    x = torch.randn(tokens, K, device=DEVICE).half()
    w = torch.randn(experts, N, K, device=DEVICE).half()
    weights = torch.rand(tokens, top_k, device=DEVICE)
    r = t6.route(ids, experts)
    float_atomics = watch_float_atomics(monkeypatch)
    given = {"x": x, "w": w, "topk_weights": weights}
    before = copies(given)
    first = t6.grouped_matmul(x, w, r, weights, combine=True)
    monkeypatch.undo()
    changed = list(changed_cells(given, before))
    if changed:  # the second call would see other inputs: its other bits would say nothing of the order
        fail(
            T6,
            f"grouped_matmul 改动了调用者的 {'、'.join(changed)}",
            f"grouped_matmul changed the caller's {', '.join(changed)}",
            "4",
        )
    again = t6.grouped_matmul(x, w, r, weights, combine=True)
    fail_on_float_atomics(float_atomics)
    if not torch.equal(first, again):
        fail(
            T6,
            f"同一个调用跑两次，结果有 {int((first != again).sum())} 个单元的位不一样",
            f"the same call run twice gave {cells(int((first != again).sum()))} with other bits",
            "4.4",
        )


@pytest.mark.t6_3
@pytest.mark.skipif(not INTERPRETING, reason="program orders are chosen through the interpreter")
def test_expert_ends_hold_in_any_program_order(t6):
    """Experts ending inside a tile, the programs run in reverse: a tile that writes past its
    expert's last row then overwrites the next expert's rows after they were done."""
    from course.interpreter_order import programs_run

    counts = [5, 11, 3, 9]
    ids = torch.cat([torch.full((c,), e) for e, c in enumerate(counts)])[torch.randperm(sum(counts))]
    ids = ids.view(-1, 1).to(DEVICE)
    x = torch.randn(len(ids), 32, device=DEVICE).half()
    w = torch.randn(len(counts), 32, 32, device=DEVICE).half()
    r = t6.route(ids, len(counts))
    cfg = t6.Config(16, 32, 32, 1, 4, 1)
    for order in ([2, 1, 0], [1, 2, 0]):
        with programs_run(order):
            out = t6.grouped_matmul(x, w, r, config=cfg, num_programs=3)
        err = rel_err(out, reference(x, w, ids))
        if err > OUT_RTOL[torch.float16]:
            fail(
                T6,
                f"每个专家的行数 {counts}，BLOCK_M=16，程序按 {order} 的顺序运行：结果差 {err:.2e}（相对）",
                f"rows per expert {counts}, BLOCK_M=16, programs run in order {order}: off by {err:.2e} (relative)",
                "4.3",
            )
