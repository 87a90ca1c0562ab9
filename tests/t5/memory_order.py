"""The fix-up's memory order in the interpreter's record of a run (course/interpreter_order.py): what each
publisher and the owner did, in order, against what §4.2 asks (no test here: a helper of test_fix_up.py and
test_fix_up_memory_order.py)."""

from .stream_k_cases import FIX_BM, FIX_BN


def record_problems(events, partials, flags, n, only=None):
    """memory_order_problems of a pair run's record (pair_case's partials and flags, n programs: 0 .. n-2
    publish, n-1 collects)."""
    slot_bytes = FIX_BM * FIX_BN * 4

    def partial_slot(e):
        slot = (e.lo - partials.data_ptr()) // slot_bytes
        return slot if 0 <= e.lo - partials.data_ptr() < n * slot_bytes else None

    def flag_at(e):
        return (e.lo - flags.data_ptr()) // 4 if 0 <= e.lo - flags.data_ptr() < 4 * n else None

    return memory_order_problems(events, partial_slot, flag_at, range(n - 1), n - 1, only)


def memory_order_problems(events, partial_slot, flag_at, publishers, owner, only=None):
    """The fix-up's structure in the interpreter's record, as (zh, en) sentences, one per kind of
    problem with the programs it was seen in: each publisher stores its partial, then a barrier, then
    a release atomic on its flag; the owner reads each flag with an acquire atomic before it loads
    that partial.  only: the kinds of problem to say, None for all: "flag-first" (a publisher's flag
    up before its partial is stored) and "no-wait" (the owner's load with no atomic on that flag
    before it), the two that let the owner read a partial before it is written."""
    seen = {}  # (zh, en) with {who} and {sem} left open: [(program, sem), ...]
    kinds = {}  # (zh, en): its kind, where it has one

    def saw(zh, en, p, sem=None, kind=None):
        seen.setdefault((zh, en), []).append((p, sem))
        kinds[zh, en] = kind

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
            saw(
                "程序 {who} 先举 flag 后存 partial",
                "{who}: flag was raised before the partial is stored",
                p,
                kind="flag-first",
            )
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
        polled = loads and any(e.kind == "load" and flag_at(e) == p for e in mine[: loads[0]])  # a plain load
        if loads and not reads and polled:
            saw(
                'owner 等程序 {who} 的 flag 用的是普通的 tl.load（volatile 也一样），不是原子操作：普通 load 没有 '
                'acquire 语义，partial 的读取可能排在它前面（用 atomic_add(flag, 0, sem="acquire") 等）',
                "the owner waits for the flag of {who} with a plain tl.load (volatile or not), not an atomic: a load "
                "has no acquire semantics, so the partial's read may come before it (wait with atomic_add(flag, 0, "
                'sem="acquire"))',
                p,
                kind="no-wait",
            )
        elif loads and not reads:
            saw(
                "owner 读程序 {who} 的 partial 之前没有用原子操作等它的 flag",
                "the owner loads the partial of {who} without first waiting for its flag with an atomic",
                p,
                kind="no-wait",
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
        if only is not None and kinds[zh, en] not in only:
            continue
        ids = ", ".join(str(p) for p, _ in where)
        who_en = f"program{'s' if len(where) > 1 else ''} {ids}"
        said.append((zh.format(who=ids, sem=where[0][1]), en.format(who=who_en, sem=where[0][1])))
    return said
