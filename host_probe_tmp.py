"""Throwaway: Plan.launch's raw path, piece by piece, with the GPU held busy (64x64x64 fp16)."""
import threading, copy
import torch, triton
from triton import knobs
import solutions.t5_persistent as ref
from tools.gpu.heldout import host_cost
M = N = K = 64
a = torch.randn(M, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, N, device="cuda", dtype=torch.float16)
ref.matmul(a, b); ref.matmul(a, b)
plan = ref._plans[ref.plan_key(a, b, None, None, None, None, None, None, True)]
launch_c, metas, tensor_map, coop, early = plan.raw
run, function, packed, metadata, current_stream, rest = plan.direct
dev = plan.device
def p1():
    c = torch.empty(plan.c_shape, device=dev, dtype=a.dtype)
    descs = plan.descs.get(threading.get_ident())
    return c
def p2():
    c = p1()
    stream = current_stream(dev.index)
    hooks = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
    return c, stream
def p3():
    c, stream = p2()
    maps = []
    for slot, t in enumerate((a, b, c)):
        known = plan.maps[slot].get(t.data_ptr()) or []
        maps += known
    return c, stream, maps
def p4():
    c, stream, maps = p3()
    launch_c(plan.programs, 1, 1, stream, function, coop, early, None, None, packed, None, None, None, *maps, None, None, None, None, *rest)
    return c
for name, f in (("empty+descs", p1), ("+stream+hooks", p2), ("+maps", p3), ("+launch", p4), ("Plan.launch", lambda: plan.launch(a, b, None, None)), ("torch.matmul", lambda: torch.matmul(a, b))):
    print(f"{name:20s} {host_cost(f, torch):7.2f} us  maps kept: {[len(m) for m in plan.maps]}", flush=True)
print("rest", len(rest), [type(x).__name__ for x in rest])
