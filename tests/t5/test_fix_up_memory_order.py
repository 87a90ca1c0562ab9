"""T5.3: the fix-up's memory order, read from the interpreter's record and from the compiled kernel."""

import pytest

from course.messages import fail

from .common import T5
from .memory_order import record_problems
from .stream_k_cases import FIX_BM, FIX_BN, pair_case
from support import INTERPRETING

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


def ttir_problems(ttir, role):
    """The same structure in a compiled probe's TTIR (GPU): publish_probe stores, then a barrier
    (gpu.barrier; ttg.barrier in newer Triton), then a release atomic; collect_probe reads its flags
    with an acquire atomic before its last load."""
    lines = ttir.splitlines()
    at = {op: [i for i, line in enumerate(lines) if op in line] for op in ("tt.store", "tt.load")}
    at["barrier"] = [i for i, line in enumerate(lines) if "gpu.barrier" in line or "ttg.barrier" in line]
    atomics = [(i, line) for i, line in enumerate(lines) if "tt.atomic_rmw" in line or "tt.atomic_cas" in line]
    problems = []
    if role == "publish":
        if not at["tt.store"]:
            return [("publish_probe 里没有 store", "publish_probe has no store")]
        if not atomics:  # the stores there may raise the flag too, but a plain store has no release semantics
            return [
                (
                    "publish_probe 里没有原子操作：flag 要用 atomic_xchg 举起",
                    "publish_probe has no atomic: the flag is raised with atomic_xchg",
                )
            ]
        # the raise: the first atomic after the last store, else the first (as memory_order_problems)
        rise, line = next(((i, line) for i, line in atomics if i > at["tt.store"][-1]), atomics[0])
        if rise < at["tt.store"][-1]:
            problems.append(("先举 flag 后存 partial", "the flag was raised before the partial is stored"))
        elif not any(at["tt.store"][-1] < i < rise for i in at["barrier"]):
            problems.append(
                (
                    "存 partial 和举 flag 之间没有 tl.debug_barrier()",
                    "no tl.debug_barrier() between storing the partial and raising the flag",
                )
            )
        if not any(s in line for s in (" release,", " acq_rel,")):
            problems.append(("举 flag 的原子操作不是 release 语义", "the flag is raised without release semantics"))
        if " cta," in line:
            problems.append(('举 flag 用的是 scope="cta"', 'the flag is raised with scope="cta"'))
    else:
        waits = [i for i, line in atomics if " acquire," in line or " acq_rel," in line]
        if any(" cta," in line for i, line in atomics if i in waits):
            problems.append(('等 flag 用的是 scope="cta"', 'the flag is awaited with scope="cta"'))
        before = [i for i, _ in atomics if at["tt.load"] and i < at["tt.load"][-1]]  # before the last load
        if not at["tt.load"]:
            problems.append(("collect_probe 里没有 load：没有读 partial", "collect_probe has no load: no partial read"))
        elif not before:
            problems.append(
                ("读最后一个 partial 之前没有原子操作读 flag", "no atomic reads a flag before the last partial is read")
            )
        elif not any(i in waits for i in before):
            problems.append(
                (
                    "读最后一个 partial 之前读 flag 的原子操作都不是 acquire 语义",
                    "the atomics that read a flag before the last partial is read are all without acquire semantics",
                )
            )
    return problems


@pytest.mark.t5_3
def test_publish_and_collect_memory_order(probes):
    """What numbers cannot show on a CPU and show only sometimes on a GPU: the partial is stored, then a
    barrier, then the flag goes up with release semantics; the owner waits with acquire semantics
    before it reads a partial.  On the CPU from the interpreter's record of each program; on a GPU
    from the compiled kernels' TTIR."""
    n = 4
    src, partials, flags, out, _ = pair_case(n)
    if INTERPRETING:
        from course.interpreter_order import programs_run

        with programs_run(range(n)) as run:
            probes.publish_collect_probe[(n,)](src, partials, flags, out, FIX_BM, FIX_BN)
        problems = record_problems(run.events, partials, flags, n)
    else:
        publish = probes.publish_probe[(n,)](src, partials, flags, FIX_BM, FIX_BN)
        collect = probes.collect_probe[(1,)](src[0], partials, flags, out, 0, n, FIX_BM, FIX_BN)
        problems = ttir_problems(publish.asm["ttir"], "publish") + ttir_problems(collect.asm["ttir"], "collect")
    if problems:
        fail(
            T5,
            "sk_publish_partial / sk_collect_partials 的内存顺序：" + "；".join(zh for zh, _ in problems),
            "sk_publish_partial / sk_collect_partials, memory order: " + "; ".join(en for _, en in problems),
            "4.2",
        )
