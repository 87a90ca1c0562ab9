"""T5.3: the fix-up's memory order, read from the interpreter's record and from the compiled kernel."""

import pytest

from course.messages import fail

from .common import T5
from .stream_k_cases import FIX_BM, FIX_BN, pair_case
from support import INTERPRETING

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


def memory_order_problems(events, partial_slot, flag_at, publishers, owner):
    """The fix-up's structure in the interpreter's record, as (zh, en) sentences, one per kind of
    problem with the programs it was seen in: each publisher stores its partial, then a barrier, then
    a release atomic on its flag; the owner reads each flag with an acquire atomic before it loads
    that partial."""
    seen = {}  # (zh, en) with {who} and {sem} left open: [(program, sem), ...]

    def saw(zh, en, p, sem=None):
        seen.setdefault((zh, en), []).append((p, sem))

    for p in publishers:
        mine = events[p]
        stores = [i for i, e in enumerate(mine) if e.kind == "store" and partial_slot(e) == p]
        raised = [i for i, e in enumerate(mine) if e.kind == "atomic" and flag_at(e) == p]
        if not stores or not raised:
            if not stores:
                saw("程序 {who} 没有把 partial 存进自己的槽", "{who}: no partial stored in its own slot", p)
            if not raised and any(e.kind == "store" and flag_at(e) == p for e in mine):
                saw(
                    '程序 {who} 用普通的 tl.store 举 flag，不是原子操作：普通 store 没有 release 语义'
                    '（用 atomic_xchg(flag, 1, sem="release")）',
                    "{who}: flag raised by a plain tl.store, not an atomic: a store has no release semantics "
                    '(atomic_xchg(flag, 1, sem="release"))',
                    p,
                )
            elif not raised:
                saw("程序 {who} 没有举 flag", "{who}: no flag raised", p)
            continue
        # the raise: the first atomic on its flag after the partial's last store, else its first one (an
        # atomic before the store that only reads the flag, waiting for it to be down, raises nothing)
        rise = next((i for i in raised if i > stores[-1]), raised[0])
        if rise < stores[-1]:
            saw("程序 {who} 先举 flag 后存 partial", "{who}: flag was raised before the partial is stored", p)
        elif not any(e.kind == "barrier" for e in mine[stores[-1] : rise]):
            saw(
                "程序 {who} 存 partial 和举 flag 之间没有 tl.debug_barrier()",
                "{who}: no tl.debug_barrier() between storing the partial and raising the flag",
                p,
            )
        if mine[rise].sem not in ("release", "acq_rel"):
            saw(
                '程序 {who} 举 flag 用的是 sem="{sem}"，不是 release 语义',
                '{who}: flag raised with sem="{sem}", without release semantics',
                p,
                mine[rise].sem,
            )
        if mine[rise].scope == "cta":
            saw(
                '程序 {who} 举 flag 用的是 scope="cta"：只对自己这个程序可见，owner 是另一个程序（用默认的 "gpu"）',
                '{who}: flag raised with scope="cta", which reaches only its own program; the owner is another '
                'program (leave the default, "gpu")',
                p,
            )
    mine = events[owner]
    for p in publishers:
        loads = [i for i, e in enumerate(mine) if e.kind == "load" and partial_slot(e) == p]
        reads = [i for i, e in enumerate(mine) if e.kind == "atomic" and flag_at(e) == p and loads and i < loads[0]]
        if loads and not reads:
            saw(
                "owner 读程序 {who} 的 partial 之前没有用原子操作等它的 flag",
                "the owner loads the partial of {who} without first waiting for its flag with an atomic",
                p,
            )
        elif loads and not any(mine[i].sem in ("acquire", "acq_rel") for i in reads):
            saw(
                'owner 等程序 {who} 的 flag 用的是 sem="{sem}"，不是 acquire 语义',
                'the owner waits for the flag of {who} with sem="{sem}", without acquire semantics',
                p,
                mine[reads[-1]].sem,
            )
        elif loads and any(mine[i].scope == "cta" and mine[i].sem in ("acquire", "acq_rel") for i in reads):
            saw(
                'owner 等程序 {who} 的 flag 用的是 scope="cta"：看不到别的程序的写（用默认的 "gpu"）',
                'the owner waits for the flag of {who} with scope="cta", which does not see other programs\' '
                'writes (leave the default, "gpu")',
                p,
            )
    said = []
    for (zh, en), where in seen.items():
        ids = ", ".join(str(p) for p, _ in where)
        who_en = f"program{'s' if len(where) > 1 else ''} {ids}"
        said.append((zh.format(who=ids, sem=where[0][1]), en.format(who=who_en, sem=where[0][1])))
    return said


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
        if not waits or not at["tt.load"] or waits[0] > at["tt.load"][-1]:
            problems.append(
                (
                    "读 partial 之前没有原子操作等 flag，或者等的不是 acquire 语义",
                    "no atomic waits for a flag before a partial is read, or it waits without acquire semantics",
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

        slot_bytes = FIX_BM * FIX_BN * 4

        def partial_slot(e):
            slot = (e.lo - partials.data_ptr()) // slot_bytes
            return slot if 0 <= e.lo - partials.data_ptr() < n * slot_bytes else None

        def flag_at(e):
            return (e.lo - flags.data_ptr()) // 4 if 0 <= e.lo - flags.data_ptr() < 4 * n else None

        with programs_run(range(n)) as run:
            probes.publish_collect_probe[(n,)](src, partials, flags, out, FIX_BM, FIX_BN)
        problems = memory_order_problems(run.events, partial_slot, flag_at, range(n - 1), n - 1)
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
