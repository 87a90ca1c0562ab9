"""moe_mlp's two launches as T6.4's test_moe_mlp_in_two_launches (test_moe_mlp.py) watched them: the
block sizes each ran with against the caller's config, and whether the down launch read h weighted
between the launches."""

import torch

from course.messages import fail

from .common import T6
from support import rel_err

BLOCKS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")


def check_config_reached(launched, cfg):
    """moe_mlp's config, where the caller gives one, is the block sizes of both its launches (§5.2:
    it hands config on to each grouped_matmul; pick_config chooses only for a call that gives none)."""
    want = tuple(getattr(cfg, k) for k in BLOCKS)
    for name, launch in zip(("gate/up", "down"), launched[:2], strict=True):
        got = tuple(launch.args.get(k) for k in BLOCKS)
        if got != want:
            said = ", ".join(f"{k}={v}" for k, v in zip(BLOCKS, got, strict=True))
            given = ", ".join(f"{k}={v}" for k, v in zip(BLOCKS, want, strict=True))
            fail(
                T6,
                f"moe_mlp：调用者给的 config（{given}）没有传到 {name} 那次启动（它用的是 {said}）："
                "把 config=config 交给两次 grouped_matmul",
                f"moe_mlp: the caller's config ({given}) did not reach the {name} launch (it ran with {said}): hand "
                "config=config on to both grouped_matmul calls",
                "5.2",
            )


def weighted_h(gate_up_args, down_args, weights):
    """Whether the down launch's x is the gate/up launch's h with each sorted row times its slot's routing
    weight (h weighted between the two launches), and not h itself."""
    h, given = gate_up_args.get("out_ptr"), down_args.get("x_ptr")
    slots = gate_up_args.get("sorted_slots_ptr")
    if not all(isinstance(t, torch.Tensor) for t in (h, given, slots)) or given.shape != h.shape or not h.numel():
        return False
    scale = weights.reshape(-1)[slots.long()].double()[:, None]
    return rel_err(given, h.double() * scale) < 1e-2 < rel_err(given, h)
