"""Lesson T5's host wrapper (given: read it, nothing to write here): matmul, the plan it keeps for
each kind of call, and the launch below Triton's argument binding (content/t5.perf.md §2).

The same for mine/ and solutions/.  A side's t5_persistent.py ends with
`host = t5_host.bind(sys.modules[__name__])`: a Host bound to that module, which looks up the side's
functions (check_inputs, tma_ready, tma_problem, aligned_copy, make_descriptors, persistent_grid,
stream_k_split, t5_kernel) on the module at each call, so that a test watching one there
(tests/launch_watch.py, tests/bounds.py) sees every call.  bind sets matmul and the other names the
tests, the tools and T6 read on the module, as if the file defined them.  A Host's caches (plans,
workspaces, tuned configs) are its own: one side's are never the other's.  The configs are in
given/t5_config.py.  Banners name the section of content/t5.md (t5.en.md).
"""
import copy
import math
import threading
from dataclasses import replace

import torch
import triton
from triton import knobs
from triton.runtime import driver
from triton.tools.tensor_descriptor import TensorDescriptor

from . import t5_config
from .launch_device import on_inputs_device
from .t5_config import AUTOTUNE, INTERPRETING, TUNE_CACHE, TUNE_FROZEN, launches_early, num_sms, pick_config
from .t5_out import check_out, out_shares_nothing

# The names a side's module shows of the host side (bind): t5_config's, this file's, and its Host's methods.
CONFIG_NAMES = ("INTERPRETING", "INTERPRET_PROGS", "Config", "INTERPRET_CONFIG", "TUNED", "pick_config",
                "rule_config", "wave_use", "AUTOTUNE", "TUNE_FROZEN", "TUNE_CACHE", "shape_bucket", "tune_candidates",
                "device_facts", "num_sms", "launches_early")
HOST_NAMES = ("tensor_key", "plan_key", "same_memory", "Plan", "KeptPlans", "no_launch_hooks", "run_compiled",
              "RawLaunch")
BOUND_NAMES = ("matmul", "first_call", "tuned_config", "stream_k_plan", "workspace")


def bind(side):
    """A Host for `side`, the module of mine/ or solutions/ t5_persistent.py, with the names above set
    on that module, as if its file defined them; its plans as `_plans` (a test clears them)."""
    host = Host(side)
    for name in CONFIG_NAMES:
        setattr(side, name, getattr(t5_config, name))
    for name in HOST_NAMES:
        setattr(side, name, globals()[name])
    for name in BOUND_NAMES:
        setattr(side, name, getattr(host, name))
    side._plans = host.plans
    return host


# ----------------------------------------------------------------------------------------------
# §1 The host wrapper (given)
# ----------------------------------------------------------------------------------------------
# An eager call must cost about what torch.matmul's does (content/t5.perf.md §2), so matmul does the
# full work below once per kind of call (first_call) and keeps what it worked out as a Plan; a later
# call of the same kind goes straight to the launch.  The kind (plan_key) holds everything the checks,
# the config choice, tma_ready and make_descriptors read: each tensor's type, shape, strides, dtype,
# device and address mod 16, and the options.  Your functions are deterministic in those, so a plan
# repeats what they did; a call they refused never leaves a plan, and neither does one with a trace.
class Host:
    """The host side bound to one side's module (`side`): the side's functions are looked up on it at
    each call; the caches below are this side's alone."""

    def __init__(self, side):
        self.side = side
        self.workspaces = {}  # (device, stream, programs, BLOCK_M, BLOCK_N) -> (partials, flags)
        self.plans = KeptPlans()  # plan_key -> Plan
        self.tuned = None  # bucket -> Config, read from TUNE_CACHE on first use (tuned_config)

    def stream_k_plan(self, num_tiles, k_blocks, sms, mode):
        """(sk_tiles, programs) for a Config's mode, by your stream_k_split.  "tail" (§6.1): the last wave
        however full, with one full wave before it, goes to stream-K; a single wave is left to "auto"."""
        persistent_grid, stream_k_split = self.side.persistent_grid, self.side.stream_k_split
        if mode in ("dp", "swap"):
            return 0, persistent_grid(num_tiles, sms)
        if mode == "tail" and num_tiles > sms and num_tiles % sms:
            return stream_k_split(num_tiles % sms + sms, k_blocks, sms, "sk")
        if mode == "split":  # split-K: as many programs per tile as fit, so each run is a tile's 1/S of K
            per_tile = min(sms // max(num_tiles, 1), k_blocks)
            if per_tile > 1:
                return stream_k_split(num_tiles, k_blocks, num_tiles * per_tile, "sk")
            mode = "dp"  # more tiles than half the slots: whole tiles
        return stream_k_split(num_tiles, k_blocks, sms, "auto" if mode == "tail" else mode)

    def workspace(self, device, programs, block_m, block_n):
        """(partials, flags): a float32 tile and an int32 flag per program, the flags at 0 (a correct
        kernel leaves them at 0).  Two launches sharing one must not overlap: each would take the other's
        partials, and a program could wait forever on a flag.  So there is one per stream (launches on a
        stream run one after another), and under CUDA graph capture a fresh one per launch, zeroed inside
        the graph: no graph shares one with another graph or with eager calls."""
        def fresh():
            cells = programs * block_m * block_n
            if device.type != "cuda":  # the interpreter: a guard of 15 more slots behind the partials, in no tensor the
                # kernel is given, so a slot past the workspace is told as a stray, never landing in a or b by chance
                return (torch.empty(16 * cells, device=device, dtype=torch.float32)[:cells],
                        torch.zeros(programs, device=device, dtype=torch.int32))
            return (torch.empty(cells, device=device, dtype=torch.float32),
                    torch.zeros(programs, device=device, dtype=torch.int32))

        if device.type != "cuda":
            stream = None
        elif torch.cuda.is_current_stream_capturing():
            return fresh()
        else:
            stream = driver.active.get_current_stream(device.index)  # the raw handle, as Triton's launch reads it
        key = (device, stream, programs, block_m, block_n)
        if key not in self.workspaces:
            self.workspaces[key] = fresh()
        return self.workspaces[key]

    def tuned_config(self, a, b, b_kmajor, bias, activation, sms):
        """The bucket's config (tuning it now if T5_AUTOTUNE allows), or None: then pick_config decides."""
        if not AUTOTUNE or INTERPRETING or 0 in (*a.shape, b.shape[1]):
            return None
        from triton.testing import do_bench

        if self.tuned is None:
            self.tuned = t5_config.read_tuned(TUNE_CACHE)
        M, K = a.shape
        N = b.shape[1]
        bucket = t5_config.shape_bucket(M, N, K, a.dtype, b_kmajor)
        if bucket not in self.tuned and not TUNE_FROZEN and not torch.cuda.is_current_stream_capturing():
            scratch = torch.empty((M, N), device=a.device, dtype=a.dtype)
            times = {}
            for cfg in t5_config.tune_candidates(M, N, K, a.dtype, sms):
                def call(cfg=cfg):
                    self.matmul(a, b, bias=bias, activation=activation, config=cfg, num_programs=sms, out=scratch)
                try:
                    times[cfg] = do_bench(call, warmup=5, rep=25, return_mode="median")
                except Exception:  # noqa: BLE001 - a candidate that does not compile here is not a winner
                    continue
            if times:
                self.tuned[bucket] = min(times, key=times.get)
                t5_config.save_tuned(TUNE_CACHE, self.tuned)
        cfg = self.tuned.get(bucket)
        if cfg is not None and cfg.mode == "swap":  # BLOCK_M fits M, as in rule_config
            cfg = replace(cfg, BLOCK_M=max(16, triton.next_power_of_2(M)))
        return None if cfg is None else replace(cfg, pdl=M <= 64 or M * N * K <= 2048**3)  # as pick_config (§6.4)

    @on_inputs_device  # launched on a's GPU, whichever device is current (launch_device.py)
    def matmul(self, a, b, *, bias=None, activation=None, config=None, num_programs=None, out=None, trace=None,
               tma_fallback=True):
        """C = activation(a @ b + bias) in the inputs' dtype, by t5_kernel.

        config: a Config (default: pick_config).  num_programs: the "SM count" to plan for (default:
        the device's).  out: an (M, N) tensor of the inputs' dtype, on their device, to write C into
        (check_out says what else it must keep).  trace: int32 zeros, 5 per tile: the
        kernel counts each tile's epilogues and k-blocks there (tests).  tma_fallback=False: refuse,
        rather than copy, an operand that breaks TMA's rules.
        """
        key = plan_key(a, b, bias, activation, config, num_programs, out, trace, tma_fallback)
        plan = self.plans.get(key) if key is not None else None
        if plan is not None:
            if out is not None:  # the key fixes out's shape, strides and dtype, not whether it lies over a or b
                out_shares_nothing(out, a, b, bias)
            return plan.launch(a, b, bias, out)
        return self.first_call(key, a, b, bias, activation, config, num_programs, out, trace, tma_fallback)

    def first_call(self, key, a, b, bias, activation, config, num_programs, out, trace, tma_fallback):
        """matmul's full path: your checks, the config, tma_ready, make_descriptors, the launch; a Plan
        for the next call of this kind when nothing had to be copied."""
        side = self.side
        side.check_inputs(a, b, bias, activation)
        if out is not None:
            check_out(out, a, b, bias)
        config, num_programs = t5_config.check_launch_options("matmul", config, num_programs, t5_config.MODES)
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), device=a.device, dtype=a.dtype) if out is None else out
        if M == 0 or N == 0:
            return c
        a_in, b_in = a, b
        if K == 0:  # a TMA box needs a dimension of at least 1: a product of zeros instead, bias and act still fused
            a, b, K = torch.zeros((M, 1), device=a.device, dtype=a.dtype), torch.zeros((1, N), device=a.device,
                                                                                      dtype=a.dtype), 1
            key = None
        sms = num_programs or num_sms(a.device)
        a, b, b_kmajor = side.tma_ready(a, b, tma_fallback)
        pitch = min(math.gcd(t.stride(0) * t.element_size(), 128) for t in (a, b))  # 128: rows TMA reads fastest
        cfg = config or self.tuned_config(a_in, b_in, b_kmajor, bias, activation, sms)
        cfg = cfg or pick_config(M, N, K, a.dtype, sms, pitch)
        # A TMA store writes whole 16-byte chunks: measured on the H200 (triton 3.6, 2026-11-30), one into a
        # 37 x 45 view wrote columns 45-47 too.  So C's rows must be whole chunks, or C goes through a copy.
        whole_chunks = c.shape[1] * c.element_size() % 16 == 0
        c_tma = c if side.tma_problem(c, "c") is None and whole_chunks else side.aligned_copy(c)  # e.g. fp16 with odd N
        BM, BN, BK, sub = cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, cfg.EPILOGUE_SUBTILE
        descs = side.make_descriptors(a, b, c_tma, b_kmajor, BM, BN, BK, sub)
        num_tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
        k_blocks = triton.cdiv(K, BK)
        slots = sms * cfg.occupancy  # the program slots: SMs x programs per SM
        sk_tiles, programs = self.stream_k_plan(num_tiles, k_blocks, slots, cfg.mode)
        early = cfg.pdl and launches_early(a.device)
        # the stream-K workspace; without stream-K the kernel never reads these two pointers
        partials, flags = self.workspace(a.device, programs, BM, BN) if sk_tiles else (c_tma, c_tma)
        args = dict(a_desc=descs[0], b_desc=descs[1], c_desc=descs[2], bias_ptr=c_tma if bias is None else bias,
                    partials_ptr=partials, flags_ptr=flags, trace_ptr=c_tma if trace is None else trace,
                    M=M, N=N, K=K, stride_bias=0 if bias is None else bias.stride(0), sk_tiles=sk_tiles,
                    NUM_PROGS=programs, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=cfg.GROUP_M, EPILOGUE_SUBTILE=sub,
                    B_KMAJOR=b_kmajor, HAS_BIAS=bias is not None, ACTIVATION=activation or "none",
                    FLATTEN=cfg.FLATTEN, USE_SK=sk_tiles > 0, SWAP_AB=cfg.mode == "swap",
                    TRACE=0 if trace is None else 1, PDL=early)
        options = dict(num_warps=cfg.num_warps, num_stages=cfg.num_stages, **({"launch_pdl": True} if early else {}))
        kernel = side.t5_kernel[(programs,)](**args, **options)
        if c_tma is not c:
            c.copy_(c_tma)
        elif key is not None and a is a_in and same_memory(b, b_in.t() if b_kmajor else b_in) and all(
                isinstance(d, TensorDescriptor) and d.base is t for d, t in zip(descs, (a, b, c), strict=True)):
            self.plans[key] = Plan(self, kernel, args, options, b_kmajor, a.device, (M, N))
        return c


class KeptPlans(dict):
    """A dict of plans that keeps the LIMIT most recently made: a model whose shapes change from call to
    call (a sequence length, a batch) would otherwise keep one plan, its descriptors and tensor maps, per
    shape it ever saw.  Past LIMIT the oldest goes; a call of its kind then makes it again (first_call)."""

    LIMIT = 256

    def __setitem__(self, key, plan):
        self.pop(key, None)
        while len(self) >= self.LIMIT:
            del self[next(iter(self))]
        super().__setitem__(key, plan)


def tensor_key(t):
    return None if t is None else (type(t), t.shape, t.stride(), t.dtype, t.device, t.data_ptr() % 16, t.requires_grad)


def plan_key(a, b, bias, activation, config, num_programs, out, trace, tma_fallback):
    if trace is not None:
        return None
    try:
        key = (tensor_key(a), tensor_key(b), tensor_key(bias), tensor_key(out), activation, config, num_programs,
               tma_fallback, torch.is_grad_enabled())  # check_inputs refuses inputs that require grad in grad mode
        hash(key)
    except (AttributeError, TypeError):  # not tensors, say: check_inputs names what is wrong
        return None
    return key


def same_memory(x, y):
    return x.data_ptr() == y.data_ptr() and x.shape == y.shape and x.stride() == y.stride()


class Plan:
    """What first_call worked out for one kind of call, and the launch itself for the next one: the
    descriptors are reused with the new tensors as their bases (shape, strides and box are the same,
    by the key), one set per thread; the compiled kernel is launched directly, without Triton's
    argument binding, where this Triton lets us (else through t5_kernel[grid] as before).  Where its
    launcher is Triton 3.6's and no launch hook is set, below the launcher's Python wrapper, with each
    operand's tensor map kept per address (t5.perf §2)."""

    def __init__(self, host, kernel, args, options, b_kmajor, device, c_shape):
        self.host = host  # the side's Host: its t5_kernel and its workspaces
        self.b_kmajor, self.device, self.c_shape, self.options = b_kmajor, device, c_shape, options
        self.programs, self.has_bias = args["NUM_PROGS"], args["HAS_BIAS"]
        self.sk = (args["NUM_PROGS"], args["BLOCK_M"], args["BLOCK_N"]) if args["USE_SK"] else None
        names = list(args)  # t5_kernel's parameters, in order: 7 tensors, then what the plan fixes
        self.first, self.rest = names[:7], {n: args[n] for n in names[7:]}
        self.rest_values = tuple(self.rest.values())
        descs = (args["a_desc"], args["b_desc"], args["c_desc"])
        for d in descs:
            d.base = None  # hold no tensor past the call
        self.descs = {threading.get_ident(): descs}
        self.kernel = self.raw = None
        if kernel is not None and device.type == "cuda" and names == list(host.side.t5_kernel.arg_names):
            self.kernel = kernel  # B's descriptor reads W itself when b is W.t() (§3.2)
            self.raw = RawLaunch.of(kernel, [d.block_shape for d in descs], transposed=(False, b_kmajor, False))

    def launch(self, a, b, bias, out):
        c = torch.empty(self.c_shape, device=self.device, dtype=a.dtype) if out is None else out
        descs = self.descs.get(threading.get_ident())
        if descs is None:
            descs = self.descs[threading.get_ident()] = tuple(copy.copy(d) for d in next(iter(self.descs.values())))
        partials, flags = self.host.workspace(self.device, *self.sk) if self.sk else (c, c)
        if self.kernel is None:
            operands = (a, b.t() if self.b_kmajor else b, c)  # what each descriptor's base is
            for d, t in zip(descs, operands, strict=True):
                d.base = t
            values = (*descs, bias if self.has_bias else c, partials, flags, c)
            kernel = self.host.side.t5_kernel  # looked up at each launch: a test may watch it
            kernel[(self.programs,)](**dict(zip(self.first, values, strict=True)), **self.rest, **self.options)
            for d in descs:
                d.base = None
            return c
        # a pointer the kernel never reads goes as None (0): the launcher then asks the driver nothing about it
        pointers = (bias if self.has_bias else None, *((partials, flags) if self.sk else (None, None)), None)
        if self.raw is not None and no_launch_hooks():
            self.raw.launch(self.programs, self.device, (), (a, b, c), *pointers, *self.rest_values)
            return c
        for d, t in zip(descs, (a, b.t() if self.b_kmajor else b, c), strict=True):
            d.base = t
        run_compiled(self.kernel, (self.programs,), self.device, (*descs, *pointers, *self.rest_values))
        for d in descs:
            d.base = None
        return c


def no_launch_hooks():
    """Whether no launch hook is set (Triton 3.6 keeps empty chains, not None): a launch then passes
    None for both, and the launcher needs no launch metadata to hand one."""
    hooks = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
    return all(h is None or not getattr(h, "calls", True) for h in hooks)


def run_compiled(kernel, grid, device, args):
    """A compiled kernel run on the device's current stream through its own launcher, without Triton's
    argument binding (t5.perf §2); a launch hook set (a profiler's) is called with the launch's metadata."""
    stream = driver.active.get_current_stream(device.index)
    grid = (*grid, *(1,) * (3 - len(grid)))
    hooks = (None, None) if no_launch_hooks() else (knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook)
    meta = None if hooks[0] is None else kernel.launch_metadata(grid, stream, *args)
    kernel.run(*grid, stream, kernel.function, kernel.packed_metadata, meta, *hooks, *args)


class RawLaunch:
    """Triton 3.6's compiled launcher below its Python wrapper, for a kernel that takes TensorDescriptors:
    each descriptor's tensor map is encoded once per tensor address, not once per call (t5.perf §2),
    and passed as the wrapper would pass it (the map, then the shape and strides).  No launch hook is
    called: use it where no_launch_hooks()."""

    KEPT = 16  # tensor maps kept per descriptor: activations at ever new addresses start it again

    @classmethod
    def of(cls, kernel, boxes, transposed=None):
        """A RawLaunch for the compiled kernel with descriptors of these block shapes, in order, each
        over its tensor or, where `transposed` says so, over the tensor's .t(); or None where this
        Triton's launcher differs or wants scratch memory: launch through run_compiled then."""
        try:
            from triton.backends.nvidia.driver import make_tensordesc_arg

            run = kernel.run
            wrapper = run.launch
            free = dict(zip(wrapper.__code__.co_freevars, (c.cell_contents for c in wrapper.__closure__), strict=True))
            metas = free["tensordesc_meta"]
            if len(metas) != len(boxes) or None in metas or run.global_scratch_size or run.profile_scratch_size:
                return None
            return cls(kernel, free["launcher"], metas, make_tensordesc_arg, boxes, transposed or [False] * len(boxes))
        except (AttributeError, ImportError, KeyError, TypeError):
            return None

    def __init__(self, kernel, launcher, metas, encode, boxes, transposed):
        self.kernel, self.launcher, self.metas, self.encode = kernel, launcher, metas, encode
        self.boxes, self.transposed = boxes, transposed
        self.cooperative, self.early = kernel.run.launch_cooperative_grid, kernel.run.launch_pdl
        self.maps = [{} for _ in boxes]  # per descriptor: its tensor's address -> the launcher's arguments

    def tensor_map(self, slot, t):
        known = self.maps[slot].get(t.data_ptr())
        if known is None:
            if len(self.maps[slot]) >= self.KEPT:
                self.maps[slot].clear()
            base = t.t() if self.transposed[slot] else t
            d = TensorDescriptor(base, list(base.shape), list(base.stride()), list(self.boxes[slot]))
            known = self.maps[slot][t.data_ptr()] = self.encode(d, self.metas[slot])
        return known

    def launch(self, programs, device, head, described, *tail):
        """programs x 1 x 1 programs on the device's current stream, with the kernel's arguments in
        order: those before its descriptors (head), the descriptors' tensors (described), the rest."""
        maps = [value for slot, t in enumerate(described) for value in self.tensor_map(slot, t)]
        stream = driver.active.get_current_stream(device.index)
        self.launcher(programs, 1, 1, stream, self.kernel.function, self.cooperative, self.early, None, None,
                      self.kernel.packed_metadata, None, None, None, *head, *maps, *tail)
