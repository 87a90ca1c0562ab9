"""Name a program that would wait for good under Triton's interpreter, instead of timing out.

Under TRITON_INTERPRET=1 a launch's programs run one after another, so nothing else writes memory
while one of them runs.  A program that reads the same addresses again and again with an atomic
that changes nothing (a flag read as atomic_add(flag, 0), a compare-and-swap that fails) or with a
volatile load, gets the same values each time and writes nothing there itself in between, would
read them forever: it waits for a write that only a program after it (or none) could make.
`spin_watch()` counts such reads of the running program and, at SPINS in a row, raises
ProgramWaitsForever from inside the kernel, so the failure names the line that waits, the program
and the value it keeps reading, where the test would otherwise time out ("an endless loop?").

Inside interpreter_order.programs_run the programs take turns, so a read repeated there may be
answered by another program: the watch stands aside (that module names programs stuck in turns).
"""

import contextlib

from course import interpreter_order
from course.i18n import say

# Reads of one unchanged value in a row: a wait in the lessons reads its flag once per pass, and
# the interpreter makes about ten thousand such reads a second, so the failure comes at once.
SPINS = 1000
# Atomic reads in a row, at any addresses, none of which changed memory (plain stores between them do not
# count): a program going round a loop whose counter stopped moving (it rewrites the same partial, reads the
# same flags), which the same-address count above misses where it reads two places in turn.
IDLE = 4000
# Callables (program, byte address) -> words, in the reader's language, on what that address is (a suite's address
# watch knows the running launch's tensors), or "": the first one that answers adds its words to the message.
DESCRIBERS = []
HOOKS = ("create_atomic_rmw", "create_atomic_cas", "create_masked_load", "create_masked_store")


class ProgramWaitsForever(RuntimeError):
    pass


class _Watch:
    def __init__(self):
        self.last = None  # (program, addresses, values) of the last unchanged read
        self.count = 0
        self.idle = (None, 0)  # (program, unchanged atomic reads since its last change) of any addresses

    def wrote(self):
        self.last, self.count = None, 0

    def read(self, builder, ptrs, values, changed):
        if interpreter_order.taking_turns() or not ptrs.size:
            return
        program = tuple(builder.grid_idx)
        if changed:
            self.wrote()
            self.idle = (program, 0)
            return
        now = (program, ptrs.tobytes(), values.tobytes())
        self.count = self.count + 1 if now == self.last else 1
        self.last = now
        self.idle = (program, self.idle[1] + 1 if self.idle[0] == program else 1)
        if self.count >= SPINS:
            self.wrote()
            raise ProgramWaitsForever(_message(now[0], values, int(ptrs.reshape(-1)[0])))
        if self.idle[1] >= IDLE:
            self.wrote()
            self.idle = (None, 0)
            raise ProgramWaitsForever(_idle_message(program))


def _message(program, values, address):
    pid = program[0] if program[1:] == (0, 0) else program
    seen = values.reshape(-1)[:4].tolist()
    words = next((w for w in (d(program, address) for d in DESCRIBERS) if w), "") if address is not None else ""
    base = say(
        zh=f"程序 {pid} 在同一个地址连续读了 {SPINS} 次，每次都读到 {seen}，中间谁也没写过那里：解释器一次只运行一个"
        "程序、按程序号的顺序，它等的时候别的程序不会运行，所以它会永远等下去。它在等一个只有后面的程序（或者没有"
        "程序）才会写的值，比如一面还没有人举起的旗，或者一面在它读到之前就被放回 0 的旗",
        en=f"program {pid} read the same addresses {SPINS} times in a row and got {seen} each time, with nothing "
        "written there in between: the interpreter runs one program at a time, in id order, so no other program "
        "runs while it waits, and it would wait for good. It waits for a value only a later program (or none) "
        "writes, such as a flag nobody has raised yet, or one set back to 0 before its reader saw it",
    )
    return base + words


def _idle_message(program):
    pid = program[0] if program[1:] == (0, 0) else program
    return say(
        zh=f"程序 {pid} 连续做了 {IDLE} 次原子操作，没有一次改动了内存（中间的普通 store 也不算前进）："
        "它在一个不再前进的循环里打转，比如循环变量不再变小的 while（每一圈算出同一段、写同一个部分和、读同样的旗），"
        "或者一个永远等不到的等待；解释器一次只运行一个程序，它会永远转下去",
        en=f"program {pid} made {IDLE} atomic operations in a row and none of them changed memory (plain stores in "
        "between do not count as progress): it goes round a loop that no longer advances, such as a while loop "
        "whose counter stopped decreasing (each pass the same segment, the same partial written, the same flags "
        "read), or a wait nothing can end; the interpreter runs one program at a time, so it would go round for good",
    )


@contextlib.contextmanager
def spin_watch():
    """Within it, every interpreted launch fails with ProgramWaitsForever where a program spins."""
    interp = interpreter_order.check_api()
    cls = type(interp.interpreter_builder)
    original = {name: cls.__dict__[name] for name in HOOKS}
    watch = _Watch()

    def atomic_rmw(self, op, ptr, val, mask, sem, scope):
        out = original["create_atomic_rmw"](self, op, ptr, val, mask, sem, scope)
        now = original["create_masked_load"](self, ptr, mask, None, None, False)
        on = mask.data.astype(bool)
        watch.read(self, ptr.data[on], out.data[on], interpreter_order.rmw_changed(out, now, mask))
        return out

    def atomic_cas(self, ptr, cmp, val, sem, scope):
        out = original["create_atomic_cas"](self, ptr, cmp, val, sem, scope)
        watch.read(self, ptr.data, out.data, interpreter_order.cas_changed(out, cmp, val))
        return out

    def masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
        out = original["create_masked_load"](self, ptrs, mask, other, cache_policy, is_volatile)
        if is_volatile:
            on = mask.data.astype(bool)
            watch.read(self, ptrs.data[on], out.data[on], False)
        return out

    def masked_store(self, ptrs, value, mask, cache_policy):
        watch.wrote()
        return original["create_masked_store"](self, ptrs, value, mask, cache_policy)

    for name, fn in zip(HOOKS, (atomic_rmw, atomic_cas, masked_load, masked_store), strict=True):
        setattr(cls, name, fn)
    try:
        yield watch
    finally:
        for name, fn in original.items():
            setattr(cls, name, fn)
