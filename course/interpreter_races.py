"""Writes that nothing orders, found in an interpreted launch's record (lesson-neutral, silent).

The interpreter runs a launch's programs one after another in id order, and each program's operations one
after another, so a plain store followed by an atomic on the same cell always lands first there.  On a GPU
neither holds: two programs of one launch run in no set order (no barrier spans programs), and within one
program a store and an atomic made by different lanes (different threads, often different warps) are ordered
only by a barrier between them (tl.debug_barrier()).  An atomic histogram into cells that a plain store
cleared in the same launch is then a race, which the interpreter always wins.

    unordered_writes(patch)   from now on (in the monkeypatch context `patch`) each interpreted launch's
                              plain stores, atomics and barriers are recorded per program; yields a list
                              that gets an UnorderedWrite for each atomic that landed on cells a plain store
                              of the same launch wrote with nothing ordering the two

It drives the interpreter through the private parts that course/interpreter_order.py's check_api checks.
"""

from typing import NamedTuple

import numpy as np

from course.interpreter_order import check_api


class UnorderedWrite(NamedTuple):
    kernel: str  # the launched kernel's name
    program: int  # the program whose atomic it was
    stored_by: int  # the program whose plain store wrote those cells first (== program: the same program)
    cells: int  # how many of the atomic's active lanes landed on such cells


class _Launch:
    def __init__(self, kernel):
        self.kernel = kernel
        self.stored_by = {}  # address: the first program that stored there in this launch
        self.since_barrier = {}  # program: {address: (lane, shape)} its stores since its last barrier
        self.found = set()  # (program, stored_by) already reported: one UnorderedWrite each


def unordered_writes(patch):
    """A list that each interpreted launch from now on (while `patch` lasts) adds an UnorderedWrite to for
    every atomic whose active lanes landed on cells that a plain store of the same launch wrote first, made by
    another program, or by the same program from another lane with no barrier since.  An atomic on a cell its
    own lane stored (the same lane of a tensor of the same shape) is ordered by the lane's own program order."""
    interp = check_api()
    builder = interp.interpreter_builder
    found, now = [], []
    store, rmw, cas, barrier = (
        getattr(builder, n) for n in ("create_masked_store", "create_atomic_rmw", "create_atomic_cas", "create_barrier")
    )
    call = interp.GridExecutor.__call__

    def program():
        return int(builder.grid_idx[0])

    def launched(executor, *args, **kwargs):
        now.append(_Launch(getattr(executor.fn, "__name__", "?")))
        try:
            return call(executor, *args, **kwargs)
        finally:
            now.pop()

    def stored(ptrs, value, mask, *rest, **named):
        if now:
            run, pid = now[-1], program()
            addresses = np.asarray(ptrs.data)
            on = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
            mine = run.since_barrier.setdefault(pid, {})
            for lane in np.flatnonzero(on.ravel()):
                at = int(addresses.ravel()[lane])
                run.stored_by.setdefault(at, pid)
                mine[at] = (int(lane), addresses.shape)
        return store(ptrs, value, mask, *rest, **named)

    def atomic(ptrs, on):
        run, pid = now[-1], program()
        addresses = np.asarray(ptrs.data)
        on = np.broadcast_to(on, addresses.shape)
        mine = run.since_barrier.get(pid, {})
        hits = {}
        for lane in np.flatnonzero(on.ravel()):
            at = int(addresses.ravel()[lane])
            first = run.stored_by.get(at)
            if first is None:
                continue
            if first != pid:
                hits[first] = hits.get(first, 0) + 1
            elif at in mine and mine[at] != (int(lane), addresses.shape):
                hits[pid] = hits.get(pid, 0) + 1
        for by, cells in hits.items():
            if (pid, by) not in run.found:
                run.found.add((pid, by))
                found.append(UnorderedWrite(run.kernel, pid, by, cells))

    def atomic_rmw(op, ptr, val, mask, *rest, **named):
        if now:
            atomic(ptr, np.asarray(mask.data, dtype=bool))
        return rmw(op, ptr, val, mask, *rest, **named)

    def atomic_cas(ptr, cmp, val, *rest, **named):
        if now:
            atomic(ptr, np.ones(np.shape(ptr.data), dtype=bool))
        return cas(ptr, cmp, val, *rest, **named)

    def barriered():
        if now:
            now[-1].since_barrier.pop(program(), None)
        return barrier()

    patch.setattr(interp.GridExecutor, "__call__", launched)
    for name, fn in (
        ("create_masked_store", stored),
        ("create_atomic_rmw", atomic_rmw),
        ("create_atomic_cas", atomic_cas),
        ("create_barrier", barriered),
    ):
        patch.setattr(builder, name, fn)
    return found
