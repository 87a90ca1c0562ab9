"""Lesson T6's host side, given: nothing to write here.  One file for both sides: mine/t6_moe.py and
solutions/t6_moe.py each end with `host = t6_host.bind(sys.modules[__name__])`, as T5's files bind
given/t5_host.py: a Host bound to that module, whose route and grouped_matmul the file names for its
own code, and the names the tests and the tools read set on the module, as if its file defined them.

What runs on the host around the kernels: the Routing, route's three launches, the checks of a
hand-made routing (check_offsets), the block sizes (Config, pick_config), grouped_matmul's one
launch of moe_kernel (and the combine's), and the plans of §6.4 that launch a later call of the
same kind without Triton's argument binding.

Each function that launches takes the side's module first (`side`) and reads on it, at each call,
the side's kernels, its checks and the T5 and T4 pieces it imports (side.moe_kernel,
side.check_expert_inputs, side.tensor_key, ...): what stands in for one of them there, as the
suite's launch watches do, is what runs.  The plans are the side's too (side._plans,
side._route_plans): one side's compiled kernels never launch for the other's.
"""

import functools
import inspect
import numbers
import operator
import os
from dataclasses import dataclass, replace

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

from .launch_device import on_inputs_device
from .t4_limits import reach
from .t5_config import check_launch_options
from .t5_host import KeptPlans
from .t6_layer import layer_inputs_named  # noqa: F401 - the sides decorate moe_mlp with it from here

INTERPRETING = os.environ.get("TRITON_INTERPRET") == "1"
ROUTE_BLOCK = 128  # slots per program of the routing kernels
SCAN_ROWS = 16  # per-block histograms summed at once by scan_counts
MAX_EXPERTS = triton.language.TRITON_MAX_TENSOR_NUMEL // SCAN_ROWS  # scan_counts' [SCAN_ROWS, E_BLOCK] block: 65,536


@dataclass(frozen=True)
class Routing:
    """The slots sorted by expert.  counts[e]: expert e's rows; offsets[e]: the end of its rows in
    sorted order (torch._grouped_mm's offs); sorted_slots[pos]: the slot at sorted position pos;
    slot_pos[s]: where slot s went.  checked: made by route(), so its invariants hold."""

    counts: torch.Tensor
    offsets: torch.Tensor
    sorted_slots: torch.Tensor
    slot_pos: torch.Tensor
    num_tokens: int
    top_k: int
    checked: bool = False

    @property
    def num_experts(self):
        return self.counts.numel()


# The names a side's module shows of the host side (bind), besides what its file names itself (Routing,
# check_offsets, and the Host's route and grouped_matmul, which its own code calls).
HOST_NAMES = ("Config", "CONFIGS", "pick_config", "upper_bound_tiles")


class Host:
    """The host side bound to one side's module (`side`): route and grouped_matmul, called as the side's
    own, read the side's kernels and checks at each call; the plans (§6.4) are this side's alone."""

    def __init__(self, side):
        self.side = side
        self.plans = KeptPlans()  # plan_key -> GroupedPlan, the most recent KeptPlans.LIMIT
        self.route_plans = KeptPlans()  # route_key -> route's three kernels, compiled
        self.route = _bound(side, route)
        self.grouped_matmul = _bound(side, grouped_matmul)


def bind(side):
    """A Host for `side`, the module of mine/ or solutions/ t6_moe.py, with the names above set on that
    module, as if its file defined them; its plans as `_plans` and `_route_plans` (a test clears them)."""
    host = Host(side)
    for name in HOST_NAMES:
        setattr(side, name, globals()[name])
    side._plans, side._route_plans = host.plans, host.route_plans
    return host


def _bound(side, fn):
    """fn with `side` passed first, signed and named as fn without it, run on its inputs' GPU."""
    @on_inputs_device  # launched on the first tensor's GPU, whichever device is current (launch_device.py)
    def call(*args, **kwargs):
        return fn(side, *args, **kwargs)

    functools.update_wrapper(call, fn)
    signature = inspect.signature(fn)
    call.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])  # no side
    return call


# ----------------------------------------------------------------------------------------------
# §2.3 route: the counting sort's three launches
# ----------------------------------------------------------------------------------------------
def route(side, topk_ids, num_experts, *, check_ids=True):
    """The Routing of topk_ids [T, top_k] over num_experts experts: three launches, no host sync
    (but check_ids's look at the ids; pass check_ids=False under CUDA graph capture)."""
    if isinstance(num_experts, numbers.Integral) and not isinstance(num_experts, bool):
        num_experts = int(num_experts)  # np.int64(8) as T5's num_programs: a plain int for the checks and kernels
    side.check_routing_inputs(topk_ids, num_experts, check_ids and not _capturing(topk_ids))
    if isinstance(num_experts, int) and num_experts > MAX_EXPERTS:  # else Triton: "numel (2097152) exceeds triton ..."
        raise ValueError(f"route: num_experts must be at most {MAX_EXPERTS}, got {num_experts}: scan_counts sums "
                         f"[{SCAN_ROWS}, E_BLOCK] blocks, and Triton's blocks hold at most 2**20 elements")
    tokens, top_k = topk_ids.shape
    slots = tokens * top_k
    dev = topk_ids.device
    ids = flat(topk_ids)  # a view where it can be: the caller's tensor is only read
    e_block = max(2, triton.next_power_of_2(num_experts))
    blocks = triton.cdiv(slots, ROUTE_BLOCK)
    counts = torch.zeros(num_experts, device=dev, dtype=torch.int32)
    offsets = torch.zeros(num_experts, device=dev, dtype=torch.int32)
    sorted_slots = torch.empty(slots, device=dev, dtype=torch.int32)
    slot_pos = torch.empty(slots, device=dev, dtype=torch.int32)
    if slots:
        block_counts = torch.empty((blocks, e_block), device=dev, dtype=torch.int32)
        block_base = torch.empty_like(block_counts)
        launches = (
            (side.count_experts, (blocks,), (ids, block_counts, slots, num_experts, ROUTE_BLOCK, e_block)),
            (side.scan_counts, (1,), (block_counts, block_base, counts, offsets, blocks, num_experts, SCAN_ROWS,
                                      e_block)),
            (side.scatter_slots, (blocks,), (ids, block_base, counts, offsets, sorted_slots, slot_pos, slots,
                                             num_experts, ROUTE_BLOCK, e_block)),
        )
        launch_in_order(side, route_key(side, topk_ids, num_experts), launches, dev)
    return Routing(counts, offsets, sorted_slots, slot_pos, tokens, top_k, checked=True)


def flat(t):
    """t's elements in row-major order, 1-D with stride 1, as the kernels index topk_ids and
    topk_weights: a view where there is one, else a copy.  reshape(-1) alone may give a view with
    another stride: topk_ids[:, :1] of a [T, 2] tensor has stride 2, an expanded tensor stride 0."""
    return t.reshape(-1).contiguous()


def _capturing(t):  # not a tensor (a list, say): check_routing_inputs refuses it
    return isinstance(t, torch.Tensor) and t.is_cuda and torch.cuda.is_current_stream_capturing()


def route_key(side, topk_ids, num_experts):
    """What route's launches hang on (the ids' shape, strides, dtype, device, alignment; the expert
    count), or None while the suite stands in for one of its kernels, watching the launch."""
    kernels = (side.count_experts, side.scan_counts, side.scatter_slots)
    if not all(isinstance(k, triton.runtime.JITFunction) for k in kernels):
        return None
    return side.tensor_key(topk_ids), num_experts


def launch_in_order(side, key, launches, device):
    """Each (kernel, grid, arguments) launched in turn: through kernel[grid] the first time, then, on
    a GPU with no launch hook set, the compiled kernels directly, without Triton's argument binding (§6.4).
    side._route_plans: route_key -> route's three kernels, compiled."""
    compiled = side._route_plans.get(key) if key is not None else None
    if compiled is not None and side.no_launch_hooks():
        for kernel, (_, grid, args) in zip(compiled, launches, strict=True):
            side.run_compiled(kernel, grid, device, args)
        return
    made = [kernel[grid](*args) for kernel, grid, args in launches]
    if key is not None and device.type == "cuda" and None not in made:
        side._route_plans[key] = made


# ----------------------------------------------------------------------------------------------
# §4 A hand-made routing's offsets, checked on the host (check_expert_inputs calls it)
# ----------------------------------------------------------------------------------------------
def check_offsets(routing):
    """A hand-made Routing's offsets: non-decreasing, each the previous plus the expert's count,
    the last one the number of slots, num_tokens * top_k; and its sorted_slots each slot once, since the
    kernel reads x's row and (combine) writes the row of each (a host sync: route()'s own routings skip it)."""
    offsets, counts = routing.offsets.long().cpu(), routing.counts.long().cpu()
    slots = routing.sorted_slots.numel()
    if slots != routing.num_tokens * routing.top_k or routing.slot_pos.numel() != slots:
        raise ValueError(f"grouped_matmul: routing has {slots} sorted slots and {routing.slot_pos.numel()} slot "
                         f"positions for num_tokens * top_k = {routing.num_tokens * routing.top_k}")
    if (counts < 0).any() or (offsets.diff() < 0).any():
        raise ValueError(f"grouped_matmul: routing.offsets must not decrease, got {offsets.tolist()[:16]}")
    if offsets.numel() and (int(offsets[-1]) != slots or not torch.equal(offsets, counts.cumsum(0))):
        raise ValueError(f"grouped_matmul: routing.offsets must be the running sum of counts ending at "
                         f"{slots} rows, got {offsets.tolist()[:16]}")
    held = routing.sorted_slots.long().cpu()  # a slot past them: a row of x read, one of out written, past the end
    outside = held[(held < 0) | (held >= slots)]
    if outside.numel():
        raise ValueError(f"grouped_matmul: routing.sorted_slots holds slot {int(outside[0])}, outside [0, {slots}) "
                         f"for num_tokens * top_k = {slots}")
    twice = (torch.bincount(held, minlength=slots) > 1).nonzero().flatten()
    if twice.numel():
        raise ValueError(f"grouped_matmul: routing.sorted_slots holds slot {int(twice[0])} more than once: each "
                         "slot goes to one sorted row")


# ----------------------------------------------------------------------------------------------
# Block sizes (tuned on the H200 by content/t6.md §6: change the table and pick_config only)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    BLOCK_M: int = 64
    BLOCK_N: int = 128
    BLOCK_K: int = 64
    GROUP_M: int = 8
    num_warps: int = 4
    num_stages: int = 3
    FLATTEN: bool = False  # tl.range(..., flatten=True): the next tile's loads overlap this tile's epilogue


CONFIGS = {
    "interpret": Config(16, 32, 32, 2, 4, 1),  # the CPU: small boxes, several tiles per expert
    "few": Config(16, 256, 128, 8, 4, 3),  # at most 16 rows per expert: read the weights fast
    "some": Config(64, 256, 64, 8, 8, 4),  # at most 64 rows per expert, or 64-row blocks waste less
    "many": Config(128, 256, 64, 8, 8, 4, True),  # measured: 128 x 256 tiles beat 128 x 128 by 1.3-1.4x;
}  # flatten: Mixtral 4096 (a tuning case) 0.90 -> 0.94 of grouped_mm, H200 2026-12-02 (t6 §6).  Not with
# SwiGLU (not measured) nor a combine: its float32 tile's epilogue beside a flattened pipeline asks
# 327,712 B of shared memory, past the H200's 232,448 (measured)


def pick_config(rows, N, K, num_experts, dtype, sms, activation=None):
    """The block sizes for `rows` sorted rows over num_experts experts, N x K weights each."""
    if INTERPRETING:
        return CONFIGS["interpret"]
    per_expert = rows / max(1, num_experts)
    padded = {bm: -(-per_expert // bm) * bm for bm in (64, 128)}  # an expert's rows in whole m-blocks
    wide = per_expert > 64 and padded[128] <= 1.1 * padded[64]
    cfg = CONFIGS["few" if per_expert <= 16 else "many" if wide else "some"]
    if dtype == torch.float32:  # 4-byte elements: half the k-box in the same shared memory
        cfg = Config(cfg.BLOCK_M, cfg.BLOCK_N, max(32, cfg.BLOCK_K // 2), cfg.GROUP_M, cfg.num_warps, 3)
    if activation == "swiglu":  # two accumulators (gate, up): half the columns keeps them in registers
        cfg = Config(cfg.BLOCK_M, max(64, cfg.BLOCK_N // 2), cfg.BLOCK_K, cfg.GROUP_M, cfg.num_warps, cfg.num_stages)
    return cfg


# ----------------------------------------------------------------------------------------------
# §1, §4 The host wrapper: one launch of moe_kernel (and the combine's)
# ----------------------------------------------------------------------------------------------
def grouped_matmul(side, x, w, routing, topk_weights=None, *, combine=False, activation=None, x_sorted=False,
                   config=None, num_programs=None, trace=None):
    """One persistent launch over every expert's tiles.  x [T, K] (or [T*top_k, K] in sorted order
    with x_sorted); w [E, N, K] as nn.Linear stores it ([E, 2F, K], gate rows then up rows, for
    activation="swiglu", giving F columns).  Returns [T*top_k, N] in sorted order, scaled by
    topk_weights [T, top_k] where given; with combine, [T, N]: each token's top_k rows summed.
    trace: int32 zeros, TRACE_INTS per tile of upper_bound_tiles (tests).
    A later call of the same kind (shapes, strides, dtypes, devices, alignment, options, and a
    routing made by route()) launches from the first one's plan, on a GPU (t6 §6)."""
    key = plan_key(side, x, w, routing, topk_weights, combine, activation, x_sorted, config, num_programs, trace)
    plan = side._plans.get(key) if key is not None else None
    if plan is not None:
        return plan.launch(x, w, routing, topk_weights)
    if isinstance(routing, Routing) and not routing.checked:  # made by hand: its counts may be np.int64
        routing = plain_counts(routing)
    side.check_expert_inputs(x, w, routing, topk_weights, activation, x_sorted)
    if INTERPRETING and x.dtype == torch.bfloat16:  # as T4's check_inputs: a wrong answer, not an error, else
        raise TypeError("grouped_matmul: bfloat16 is refused under TRITON_INTERPRET: the interpreter's tl.dot "
                        "multiplies bf16 bit patterns (triton issue 11584); use float16 or float32 on CPU")
    needs_grad = [name for name, t in (("x", x), ("w", w), ("topk_weights", topk_weights)) if t is not None and
                  t.requires_grad]
    if needs_grad and torch.is_grad_enabled():  # as T4's check_inputs: the result would have no grad_fn
        raise ValueError(f"grouped_matmul: {', '.join(needs_grad)} require grad, and grouped_matmul has no "
                         "backward: call it under torch.no_grad() or torch.inference_mode(), or pass .detach()ed "
                         "tensors")
    config, num_programs = check_launch_options("grouped_matmul", config, num_programs)  # plain ints; 0: refused
    if not routing.checked:  # made by hand: its tensors may be views (stride 2, say); the kernels index them as 1-D
        routing = replace(routing, **{name: flat(getattr(routing, name)) for name in ROUTING_TENSORS})
    experts, w_rows, K = w.shape
    N = w_rows // 2 if activation == "swiglu" else w_rows
    slots = routing.sorted_slots.numel()
    out_rows = routing.num_tokens if combine else slots
    sms = num_programs or side.num_sms(x.device)
    cfg = config or pick_config(slots, N, K, experts, x.dtype, sms, activation)
    out = torch.empty((slots, N), device=x.device, dtype=torch.float32 if combine else x.dtype)
    if slots == 0 or N == 0 or K == 0:
        return torch.zeros((out_rows, N), device=x.device, dtype=x.dtype)
    w2d = w.reshape(experts * w_rows, K)  # a view of a contiguous w: TMA reads the caller's weights
    if side.tma_problem(w2d, "w") is not None:
        w2d, key = side.aligned_copy(w2d), None  # e.g. fp16 with K not a multiple of 8
    w_desc = TensorDescriptor.from_tensor(w2d, [cfg.BLOCK_N, cfg.BLOCK_K])
    tiles = upper_bound_tiles(slots, N, experts, cfg)
    programs = side.persistent_grid(tiles, sms)
    weights = flat(topk_weights) if topk_weights is not None else out
    args = dict(
        x_ptr=x, w_desc=w_desc, out_ptr=out, weights_ptr=weights, sorted_slots_ptr=routing.sorted_slots,
        counts_ptr=routing.counts, offsets_ptr=routing.offsets, trace_ptr=out if trace is None else trace, N=N, K=K,
        num_experts=experts, stride_xm=x.stride(0), stride_xk=x.stride(1), stride_om=out.stride(0),
        stride_on=out.stride(1), NUM_PROGS=programs, TOP_K=routing.top_k, BLOCK_M=cfg.BLOCK_M, BLOCK_N=cfg.BLOCK_N,
        BLOCK_K=cfg.BLOCK_K, GROUP_M=cfg.GROUP_M, E_BLOCK=max(2, triton.next_power_of_2(experts)), X_SORTED=x_sorted,
        HAS_WEIGHTS=topk_weights is not None, BY_SLOT=combine, ACTIVATION=activation or "none",
        TRACE=0 if trace is None else 1, FLATTEN=cfg.FLATTEN and activation is None and not combine,
        WIDE=max(reach(x, past=257), reach(out, past=257)) >= 2**31)  # masked lanes too: blocks of up to 256 (§4.3)
    if "WIDE" not in side.moe_kernel.arg_names:  # a mine/ begun before moe_kernel took it (2026-12-03)
        del args["WIDE"]
    options = dict(num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    kernel = side.moe_kernel[(programs,)](**args, **options)
    if key is not None and kernel is not None and x.is_cuda and list(args) == list(side.moe_kernel.arg_names):
        side._plans[key] = GroupedPlan(side, kernel, args, options, x.dtype if combine else None)
    return combined(side, out, out_rows, N, routing.top_k, x.dtype) if combine else out


def plain_counts(routing):
    """A hand-made routing with num_tokens and top_k as plain ints: a numpy integer (np.int64(2), read off a
    numpy array) or a 0-d integer tensor is taken, as route's num_experts is, where the launch stopped at Triton's
    "cannot convert 2 of type numpy.int64 to tensor" (TOP_K); what is no count (2.0, True, -1) is refused, naming it."""
    counts = {}
    for name in ("num_tokens", "top_k"):
        v = getattr(routing, name)
        try:
            counts[name] = operator.index(v)  # an integer of any kind: int, np.int64, tensor(5)
        except TypeError:
            counts[name] = None
        if isinstance(v, bool) or counts[name] is None:
            raise TypeError(f"grouped_matmul: routing.{name} must be an int, got {type(v).__name__} {v!r}")
        if counts[name] < 0:
            raise ValueError(f"grouped_matmul: routing.{name} must be at least 0, got {v}")
    return replace(routing, **counts)


def combined(side, by_slot, rows, N, top_k, dtype):
    """[rows, N] in dtype: each token's top_k float32 rows of by_slot summed by combine_topk."""
    y = torch.empty((rows, N), device=by_slot.device, dtype=dtype)
    block_n = min(1024, triton.next_power_of_2(N))
    side.combine_topk[(rows, triton.cdiv(N, block_n))](by_slot, y, N, top_k, block_n)
    return y


def upper_bound_tiles(slots, N, experts, cfg):
    """At least the tiles any routing of `slots` rows gives: each non-empty expert wastes less than
    one m-block, so sum of cdiv(count_e, BM) <= cdiv(slots, BM) + min(E, slots)."""
    return (triton.cdiv(slots, cfg.BLOCK_M) + min(experts, slots)) * triton.cdiv(N, cfg.BLOCK_N)


# ----------------------------------------------------------------------------------------------
# §6.4 Plans: a later call of one kind, launched without Triton's argument binding
# ----------------------------------------------------------------------------------------------
ROUTING_TENSORS = ("counts", "offsets", "sorted_slots", "slot_pos")


def plan_key(side, x, w, routing, topk_weights, combine, activation, x_sorted, config, num_programs, trace):
    """What grouped_matmul's checks and choices read, or None (no plan): with a trace, or a routing
    not made by route() (its offsets are checked on the host at every call), or a kernel stood in for
    (the suite watching the launch).  side._plans: plan_key -> GroupedPlan."""
    if trace is not None or not isinstance(routing, Routing) or not routing.checked:
        return None
    if not isinstance(side.moe_kernel, triton.runtime.JITFunction) or not isinstance(side.combine_topk,
                                                                                     triton.runtime.JITFunction):
        return None
    try:
        key = (side.tensor_key(x), side.tensor_key(w), side.tensor_key(topk_weights),
               *(side.tensor_key(getattr(routing, name)) for name in ROUTING_TENSORS), routing.num_tokens,
               routing.top_k, combine, activation, x_sorted, config, num_programs, torch.is_grad_enabled())
        hash(key)
    except (AttributeError, TypeError):  # not tensors, say: check_expert_inputs names what is wrong
        return None
    return key


class GroupedPlan:
    """The first call's launch again, with this call's tensors and the first call's numbers (the key
    fixes them): the compiled moe_kernel run without Triton's argument binding, the weights' tensor
    map kept per address as T5's Plan keeps its operands' (t5.perf §2).  Where a launch hook is set,
    through moe_kernel[grid] as the first call; where this Triton's launcher is not 3.6's kind,
    through the compiled kernel's own launcher."""

    TENSORS = ("x_ptr", "w_desc", "out_ptr", "weights_ptr", "sorted_slots_ptr", "counts_ptr", "offsets_ptr",
               "trace_ptr")

    def __init__(self, side, kernel, args, options, combine_dtype):
        self.side, self.kernel, self.options, self.combine_dtype = side, kernel, options, combine_dtype
        out, self.box = args["out_ptr"], args["w_desc"].block_shape
        self.out, self.device, self.programs = (out.shape, out.dtype), out.device, args["NUM_PROGS"]
        self.rest = [value for name, value in args.items() if name not in self.TENSORS]  # held: no tensor
        self.raw = side.RawLaunch.of(kernel, [self.box])  # the weights' tensor map kept per address

    def descriptor(self, w):
        w2d = w.reshape(-1, w.shape[-1])
        return TensorDescriptor(w2d, list(w2d.shape), list(w2d.stride()), self.box)

    def launch(self, x, w, routing, topk_weights):
        side = self.side
        out = torch.empty(self.out[0], device=self.device, dtype=self.out[1])
        weights = out if topk_weights is None else flat(topk_weights)
        rows = (out, weights, routing.sorted_slots, routing.counts, routing.offsets, out)  # out again: the trace
        if not side.no_launch_hooks():  # a profiler's hook: the public launch, which calls it
            side.moe_kernel[(self.programs,)](x, self.descriptor(w), *rows, *self.rest, **self.options)
        elif self.raw is not None:
            self.raw.launch(self.programs, self.device, (x,), (w.reshape(-1, w.shape[-1]),), *rows, *self.rest)
        else:
            side.run_compiled(self.kernel, (self.programs,), self.device, (x, self.descriptor(w), *rows, *self.rest))
        if self.combine_dtype is None:
            return out
        return combined(side, out, routing.num_tokens, self.out[0][1], routing.top_k, self.combine_dtype)
