"""Run an interpreted launch's programs in an order the test chooses, and record what each did.

Triton's interpreter (TRITON_INTERPRET=1) runs a grid's programs one after another in id order, so
every flag a stream-K program raises is up before any higher program waits for it: a fix-up that
reads a partial without waiting, or adds partials in the order they arrive, gives the right bits
there.  Inside `programs_run(order)` a launch runs its programs cooperatively instead: each in its
own thread, one at a time, starting in `order`; a program hands the turn to the next live one (in
that order, round the ring) after each atomic, each volatile load and each load that repeats the
one before it, which is where a program that waits for a flag spins.  An atomic that changes no
memory (a flag read with atomic_add(flag, 0), a compare-and-swap that fails) hands the turn over only
when the program has made one at that address before since its last turn, that is, when it spins
there: after the first read of a flag still down, the program runs on, so one that reads a flag once
and goes on without waiting meets a partial not yet written.  A higher program can then wait while
a lower one publishes, a partial can be read before it is written, and flags can come up out of id
order.  Programs named in `programs_run(order, held)` get the turn only from a program that spins: a reader
then meets their flags down even after a hand-over that would otherwise have let every publisher run.

It also records, per program, the memory operations in the order they ran (Event: load, store,
atomic or barrier; the addresses; an atomic's memory semantic and operands), so a test can check the
structure a CPU cannot show in numbers (a barrier between a partial's store and its flag; release and
acquire semantics).

This drives the interpreter through its private API (GridExecutor's helpers, the builder's
create_* methods); `check_api()` names what is missing when a Triton release has changed it.
"""

import contextlib
import random
import threading
from typing import NamedTuple

import numpy as np
import triton

from course.i18n import say

CHECKED_WITH = ("3.9",)  # the Triton releases whose interpreter this module was written against
BUILDER_HOOKS = (
    "create_masked_load",
    "create_masked_store",
    "create_atomic_rmw",
    "create_atomic_cas",
    "create_barrier",
)
EXECUTOR_PARTS = ("_init_args_hst", "_restore_args_dev")
MODULE_PARTS = (
    "GridExecutor",
    "interpreter_builder",
    "_patch_lang",
    "_implicit_cvt",
    "InterpreterError",
    "_interpreter",
    "_get_np_dtype",
)
MAX_TURNS_PER_PROGRAM = 5000  # hand-overs before the launch is called stuck: the tests' fix-ups take tens
# Hand-overs in a row, per program still running, with no memory changed by any program and none ending (a
# store of the values already there changes nothing: a loop that stopped advancing rewrites the same partial): every
# one of them then only reads flags that none of them raises.  A wait for a program that still works ends
# at that program's next write; without this, a lone program spinning on a flag nobody raises took the
# 5000 turns per program above, past the grader's 10 s of CPU for a check (learner6, 2026-12-04).
IDLE_TURNS_PER_PROGRAM = 1000


class Event(NamedTuple):
    kind: str  # "load", "store", "atomic" or "barrier"
    lo: int  # the lowest and highest address touched (0 for a barrier)
    hi: int
    sem: str | None  # an atomic's memory semantic: "relaxed", "acquire", "release" or "acq_rel"
    values: list | None  # an atomic's operand values
    scope: str | None = None  # an atomic's scope: "gpu" (the default), "cta" or "sys"


class InterpreterApiChanged(RuntimeError):
    pass


_turn_runs = []  # the Runs of the programs_run blocks now open (course/interpreter_spin.py asks)


def taking_turns():
    """Whether a launch now may run its programs in turns (inside programs_run)."""
    return bool(_turn_runs)


class ProgramsStuck(RuntimeError):
    pass


def check_api():
    """The interpreter module, or InterpreterApiChanged saying which private part this Triton lacks."""
    from triton.runtime import interpreter

    missing = [n for n in MODULE_PARTS if not hasattr(interpreter, n)]
    if not missing:
        missing += [f"GridExecutor.{n}" for n in EXECUTOR_PARTS if not hasattr(interpreter.GridExecutor, n)]
        missing += [f"InterpreterBuilder.{n}" for n in BUILDER_HOOKS if not hasattr(interpreter.interpreter_builder, n)]
    version = ".".join(triton.__version__.split(".")[:2])
    if missing or version not in CHECKED_WITH:
        raise InterpreterApiChanged(
            f"course/interpreter_order.py drives Triton's interpreter through its private API, written for "
            f"triton {', '.join(CHECKED_WITH)}; this is triton {triton.__version__}"
            + (f", which lacks {', '.join(missing)}" if missing else "")
            + ": install the version in requirements.txt, or update course/interpreter_order.py"
        )
    return interpreter


def orders(n, seed):
    """The orders the tests use for n programs: id order, reversed, and a seeded shuffle."""
    shuffled = list(range(n))
    random.Random(seed).shuffle(shuffled)
    return {"in id order": list(range(n)), "reversed": list(range(n))[::-1], "shuffled": shuffled}


class Run:
    """One launch's programs, taking turns.  events[pid]: what program pid did, in order."""

    def __init__(self, order, held=()):
        self.order = list(order)
        self.held = set(held)  # programs that get a turn only from one that spins, or once no other is left
        self.events = {}
        self.turn = None
        self.live = []
        self.turns = 0
        self.error = None
        self.cond = threading.Condition()
        self.local = threading.local()
        self.quiet = {}  # pid: the addresses its atomics read without changing since its last turn
        self.idle = 0  # hand-overs since a program last wrote memory or ended

    def _next_after(self, pid, spinning=True):
        """The next live program round the ring; past a held one, unless this hand-over is a spin."""
        at = self.live.index(pid) if pid in self.live else -1
        ring = [self.live[(at + 1 + i) % len(self.live)] for i in range(len(self.live))]
        free = ring if spinning else [p for p in ring if p not in self.held or p == pid]
        return (free or ring or [None])[0]

    def launch(self, grid, body, builder):
        """Run body(x, y, z) for every program of the grid, x in self.order (y = z = 0 only)."""
        if grid[1:] != (1, 1):
            raise ValueError("programs_run orders 1-D grids only")
        pids = self.order if sorted(self.order) == list(range(grid[0])) else list(range(grid[0]))
        self.live = list(pids)
        self.events = {p: [] for p in pids}
        self.turn = pids[0]
        threads = [threading.Thread(target=self._program, args=(p, body, builder), daemon=True) for p in pids]
        for t in threads:
            t.start()
        try:
            for t in threads:
                t.join()
        except BaseException:  # noqa: BLE001 (a timeout's signal, say): stop the threads at their next turn
            with self.cond:
                self.error = self.error or ProgramsStuck("the launch was interrupted")
                self.cond.notify_all()
            raise
        if self.error is not None:
            raise self.error

    def _program(self, pid, body, builder):
        self.local.pid = pid
        try:
            self._wait_for_turn(pid, builder)
            body(pid, 0, 0)
        except BaseException as e:  # noqa: BLE001 (any error in a program thread) the first error ends the launch: the others stop at their next turn
            with self.cond:
                self.error = self.error or e
        finally:
            with self.cond:
                self.idle = 0
                nxt = self._next_after(pid, spinning=False)
                self.live.remove(pid)
                self.turn = nxt if self.live and nxt != pid else (self.live[0] if self.live else None)
                self.cond.notify_all()

    def _wait_for_turn(self, pid, builder):
        with self.cond:
            self.cond.wait_for(lambda: self.turn == pid or self.error is not None)
            if self.error is not None:
                raise ProgramsStuck("another program failed")
        builder.grid_idx = (pid, 0, 0)

    def pass_turn(self, builder, spinning=True):
        """Called by the running program where it may be spinning: the next live program runs (a held
        one only where it spins)."""
        pid = getattr(self.local, "pid", None)
        if pid is None:
            return
        with self.cond:
            self.turns += 1
            if self.error is not None:
                raise ProgramsStuck("another program failed")
            if self.turns > MAX_TURNS_PER_PROGRAM * max(1, len(self.events)):
                self.error = self.error or ProgramsStuck(
                    say(
                        zh=f"程序按 {self.order} 的顺序轮流运行，互相等了 {self.turns} 轮：有一面旗永远没举起来？",
                        en=f"programs run in the order {self.order} waited on each other for "
                        f"{self.turns} turns: a flag that is never raised?",
                    )
                )
                self.cond.notify_all()
                raise self.error
            self.idle += 1
            if self.idle > IDLE_TURNS_PER_PROGRAM * max(1, len(self.live)):
                self.error = self.error or ProgramsStuck(
                    say(
                        zh=f"程序按 {self.order} 的顺序轮流运行：连续 {self.idle} 轮没有任何程序改动过内存"
                        f"（写进去的值和原来一样不算改动），也没有程序结束，程序 {self.live} 还在读它们的旗",
                        en=f"programs run in the order {self.order}: for {self.idle} turns in a row no program changed "
                        f"memory (a store of the values already there changes nothing) or ended, and programs "
                        f"{self.live} still read their flags",
                    )
                )
                self.cond.notify_all()
                raise self.error
            self.turn = self._next_after(pid, spinning)
            self.quiet.pop(pid, None)
            self.cond.notify_all()
        self._wait_for_turn(pid, builder)

    def after_atomic(self, builder, ptrs, changed):
        """Hand the turn over after an atomic that changed memory (a flag just raised can be seen
        before the next store), or after one that changed nothing where this program already read so
        since its last turn (it spins there); after the first such read, run on."""
        pid = getattr(self.local, "pid", None)
        where = (int(ptrs.min()), int(ptrs.max())) if ptrs.size else (0, 0)
        seen = self.quiet.setdefault(pid, set())
        if changed:
            self.idle = 0
        if changed or where in seen:
            self.pass_turn(builder, spinning=not changed)
        else:
            seen.add(where)

    def same_load_again(self):
        """Whether the running program's last two events are loads of the same addresses."""
        mine = self.events.get(getattr(self.local, "pid", None), [])
        return len(mine) > 1 and mine[-1].kind == mine[-2].kind == "load" and mine[-1][1:3] == mine[-2][1:3]

    def record(self, kind, ptrs, sem=None, values=None, scope=None):
        pid = getattr(self.local, "pid", None)
        if pid is not None and ptrs.size:
            self.events[pid].append(Event(kind, int(ptrs.min()), int(ptrs.max()), sem, values, scope))


def rmw_changed(out, now, mask):
    """Whether an atomic read-modify-write changed memory: the value after it (now) differs from
    the value it returned (out) in a lane of its mask."""
    on = mask.data.astype(bool)
    return bool((now.data[on] != out.data[on]).any())


def cas_changed(out, cmp, val):
    """Whether a compare-and-swap changed memory: it found cmp there and put another value."""
    return bool(((out.data == cmp.data) & (cmp.data != val.data)).any())


def store_changes(ptrs, value, mask):
    """Whether a masked store would change memory: some lane of its mask puts a value not there yet (a
    NaN always counts as a change).  Read as the interpreter reads, past every hook (no watch sees it)."""
    from triton.runtime import interpreter as interp

    on = mask.data.astype(bool)
    if not on.any():
        return False
    dtype = interp._get_np_dtype(ptrs.get_element_ty())
    there = interp._interpreter.load(ptrs.data, mask.data, np.zeros_like(ptrs.data, dtype=dtype), dtype)[on]
    return not (there == value.data[on].astype(dtype)).all()


def _sem_name(sem):
    name = getattr(sem, "name", str(sem)).lower()
    return {"acquire_release": "acq_rel"}.get(name, name)


@contextlib.contextmanager
def programs_run(order, held=()):
    """Within it, each interpreted launch runs its programs cooperatively, starting in `order`
    (a permutation of the program ids; a launch of another size runs in id order).  The programs in
    `held` get the turn only from a program that spins (or once no other is left): a reader then meets
    their flags down, and must wait.  Yields the Run, whose `events` hold the last launch's record."""
    interp = check_api()
    builder = interp.interpreter_builder
    run = Run(order, held)
    hooked = {name: getattr(builder, name) for name in BUILDER_HOOKS}
    own = {name: vars(builder)[name] for name in BUILDER_HOOKS if name in vars(builder)}  # a watch's, say

    def masked_load(ptrs, mask, other, cache_policy, is_volatile):
        run.record("load", ptrs.data[mask.data])
        out = hooked["create_masked_load"](ptrs, mask, other, cache_policy, is_volatile)
        if is_volatile or run.same_load_again():  # a plain load read twice running is a spin too
            run.pass_turn(builder)
        return out

    def masked_store(ptrs, value, mask, cache_policy):
        run.record("store", ptrs.data[mask.data])
        if store_changes(ptrs, value, mask):  # the same values again: no progress
            run.idle = 0
        return hooked["create_masked_store"](ptrs, value, mask, cache_policy)

    def atomic_rmw(op, ptr, val, mask, sem, scope):
        at = ptr.data[mask.data]
        run.record("atomic", at, _sem_name(sem), val.data[mask.data].tolist(), _sem_name(scope))
        out = hooked["create_atomic_rmw"](op, ptr, val, mask, sem, scope)
        now = hooked["create_masked_load"](ptr, mask, None, None, False)
        run.after_atomic(builder, at, rmw_changed(out, now, mask))
        return out

    def atomic_cas(ptr, cmp, val, sem, scope):
        run.record("atomic", ptr.data, _sem_name(sem), val.data.tolist(), _sem_name(scope))
        out = hooked["create_atomic_cas"](ptr, cmp, val, sem, scope)
        run.after_atomic(builder, ptr.data, cas_changed(out, cmp, val))
        return out

    def barrier():
        pid = getattr(run.local, "pid", None)
        if pid is not None:
            run.events[pid].append(Event("barrier", 0, 0, None, None))
        return hooked["create_barrier"]()

    def call(executor, *args_dev, **kwargs):
        # GridExecutor.__call__ with the loop over programs replaced by run.launch
        import inspect

        spec = inspect.getfullargspec(executor.fn)
        kwargs = {k: v for k, v in kwargs.items() if k in spec.args or k in spec.kwonlyargs}
        args_hst, kwargs_hst = executor._init_args_hst(args_dev, kwargs)
        for hook in executor.pre_run_hooks:
            hook(*args_hst, **kwargs_hst)
        scope = interp._patch_lang(executor.fn)
        try:
            args = inspect.getcallargs(executor.fn, *args_hst, **kwargs_hst)
            args = {n: a if n in executor.constexprs else interp._implicit_cvt(a) for n, a in args.items()}
            grid = executor.grid(args) if callable(executor.grid) else executor.grid
            grid = tuple(grid) + (1,) * (3 - len(grid))
            builder.set_grid_dim(*grid)

            def body(x, y, z):
                builder.set_grid_idx(x, y, z)
                executor.fn(**args)

            try:
                run.launch(grid, body, builder)
            except (InterpreterApiChanged, ProgramsStuck):
                raise
            except Exception as e:
                raise interp.InterpreterError(repr(e)) from e
        finally:
            scope.restore()
        executor._restore_args_dev(args_dev, args_hst, kwargs, kwargs_hst)

    original_call = interp.GridExecutor.__call__
    for name, fn in zip(BUILDER_HOOKS, (masked_load, masked_store, atomic_rmw, atomic_cas, barrier), strict=True):
        setattr(builder, name, fn)
    interp.GridExecutor.__call__ = call
    _turn_runs.append(run)
    try:
        yield run
    finally:
        _turn_runs.remove(run)
        interp.GridExecutor.__call__ = original_call
        for name in BUILDER_HOOKS:
            if name in own:  # what was set on the builder before (tests/bounds.py's AddressWatch) again
                setattr(builder, name, own[name])
            else:
                delattr(builder, name)  # the class's own methods show through again


def atomic_lanes_last_first(patch):
    """From now on (in the monkeypatch context `patch`) the interpreter's atomic read-modify-writes take
    their lanes last first, where it takes them in lane order: a GPU fixes no order among one atomic's
    lanes, so an atomic counter that hands out places then hands them out the other way round."""
    import numpy as np

    interp = check_api()
    builder = interp.interpreter_builder
    rmw = builder.create_atomic_rmw

    def flip(h):
        return interp.TensorHandle(np.flip(h.data).copy(), h.dtype)

    def last_first(op, ptr, val, mask, sem, scope):
        return flip(rmw(op, flip(ptr), flip(val), flip(mask), sem, scope))

    patch.setattr(builder, "create_atomic_rmw", last_first)
