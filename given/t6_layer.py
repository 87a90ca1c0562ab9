"""What T6's moe_mlp takes (given: read it, nothing to write here): layer_inputs_named, the decorator above
`def moe_mlp` in mine/ and solutions/t6_moe.py (reached as t6_host.layer_inputs_named), which refuses a
layer's inputs by the names its caller gave them before the side's body runs.  Apart from t6_host.py,
which would pass 400 lines with it.
"""
import functools
import inspect

import torch


def layer_inputs_named(moe_mlp):
    """moe_mlp(x, w_gate_up, w_down, topk_ids, topk_weights, ...), refusing first, by the names its caller gave
    them, what its grouped_matmul calls would refuse as their own x and w (w_down's F as "w's K", against the
    hidden activations' "x"), or not name at all (a list for w_gate_up), and what no call of it would refuse:
    topk_weights None (the layer's output is the weighted sum; grouped_matmul's None is its own unweighted
    product).  Types, ranks, dtypes, devices, shapes and requires_grad only: no value is read (route checks
    the ids)."""
    signature = inspect.signature(moe_mlp)

    @functools.wraps(moe_mlp)
    def call(*args, **kwargs):
        try:
            given = signature.bind(*args, **kwargs).arguments
        except TypeError:  # a missing argument, say: moe_mlp's own call raises it
            return moe_mlp(*args, **kwargs)
        names = ("x", "w_gate_up", "w_down", "topk_ids", "topk_weights")
        x, w_gate_up, w_down, topk_ids, topk_weights = (given.get(n) for n in names)
        for name, t in zip(names, (x, w_gate_up, w_down, topk_ids, topk_weights), strict=True):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"moe_mlp: {name} must be a tensor, got {type(t).__name__}" + (
                    " (the router's [tokens, top_k] weights: each token's experts are summed weighted by them; for"
                    " an unweighted sum pass ones)" if name == "topk_weights" else ""))
        for name, t, dims in (("x", x, "[tokens, K]"), ("w_gate_up", w_gate_up, "[E, 2F, K]"), ("w_down", w_down,
                                                                                           "[E, K', F]")):
            kind = (t.dtype, t.device, t.dtype.is_floating_point)
            if t.dim() != dims.count(",") + 1 or kind != (x.dtype, x.device, True):
                raise ValueError(f"moe_mlp: {name} must be {dims}" + (", floating" if t is x else f", {x.dtype} on "
                                 f"{x.device} as x is") + f", got {tuple(t.shape)} {t.dtype} on {t.device}")
        (experts, two_f, K), (down_experts, _, F) = w_gate_up.shape, w_down.shape
        for wrong, words in ((K != x.shape[1], f"w_gate_up has K = {K}, x {x.shape[1]}"),
                             (two_f % 2, f"w_gate_up holds [gate; up], 2F rows, got {two_f}"),
                             (down_experts != experts, f"w_down has {down_experts} experts, w_gate_up {experts}"),
                             (F * 2 != two_f, f"w_down has F = {F}, w_gate_up's {two_f} rows F = {two_f // 2}"),
                             (topk_ids.dim() == 2 and len(topk_ids) != len(x), f"topk_ids has {len(topk_ids)} rows, "
                              f"x {len(x)} tokens")):  # topk_ids of another rank: route names it
            if wrong:
                raise ValueError(f"moe_mlp: {words}")
        needs_grad = [n for n, t in zip(names, (x, w_gate_up, w_down, topk_ids, topk_weights), strict=True)
                      if t.requires_grad]
        if needs_grad and torch.is_grad_enabled():  # as grouped_matmul's, by the layer's names (nn.Linear weights)
            raise ValueError(f"moe_mlp: {', '.join(needs_grad)} require grad, and moe_mlp has no backward: call it "
                             "under torch.no_grad() or torch.inference_mode(), or pass .detach()ed tensors")
        return moe_mlp(*args, **kwargs)

    return call
