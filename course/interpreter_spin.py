"""Name a program that would wait for good under Triton's interpreter, instead of timing out.

Under TRITON_INTERPRET=1 a launch's programs run one after another, so nothing else writes memory
while one of them runs.  A program that reads the same addresses again and again with an atomic
that changes nothing (a flag read as atomic_add(flag, 0), a compare-and-swap that fails) or with a
volatile load, gets the same values each time and writes nothing there itself in between, would
read them forever: it waits for a write that only a program after it (or none) could make.
`spin_watch()` counts such reads of the running program and, at SPINS in a row, raises
ProgramWaitsForever from inside the kernel, so the failure names the line that waits, the program
and the value it keeps reading, where the test would otherwise time out ("an endless loop?").

A loop that goes round without advancing need not read one flag (a while loop whose counter stopped
moving, whose pass loads the same tiles, stores the same partial that is already there, or bumps the same
trace counter): the watch also counts, per program, each access (load, store or atomic: its kind, addresses
and the values loaded, stored or added) made again since the program's last progress, a change of memory by
an access it had not made before (a store of the values already there changes nothing; the same atomic
add again is no progress).  A working program repeats one access only as often as its launch's data
allows: `repeat_limit(elements, lanes)` times, REPEAT_FACTOR times the launch's elements (all its
tensors') over the access's lanes, at least REPEAT_FLOOR; past that the launch fails at once, naming the
kernel, the program, the access and its graded lines, and both counts.

A loop whose counter stopped moving while its pointers still move makes a new access each pass, which the
repeat count never sees: it reads on past its tensors until it crashes or times out.  So the watch also
follows, per program and per line of code that makes an access (`_site`), the walk of its addresses: where
a block of them lies wholly outside every tensor of the launch and has moved by the same step as the pass
before, it adds that step; past WALK_STEPS such steps in a row and, in all, farther than the bytes of all the
launch's tensors together (or past WALK_LONG such steps, however short), the launch fails at once, naming the
program, the access, its step and how far it went.  A mask left out or a wrong stride may step outside too,
but no farther than the walk over its tensor was meant to go, so those keep their own checks.

Inside interpreter_order.programs_run the programs take turns, so a read repeated there may be
answered by another program: the SPINS and IDLE counts stand aside (that module names programs stuck in
turns), and the repeat count starts again at any program's progress.
"""

import contextlib
import os
import sys

from course import ROOT, interpreter_order
from course.i18n import say

# Reads of one unchanged value in a row: a wait in the lessons reads its flag once per pass, and
# the interpreter makes about ten thousand such reads a second, so the failure comes at once.
SPINS = 1000
# Atomic reads in a row, at any addresses, none of which changed memory (plain stores between them do not
# count): a program going round a loop whose counter stopped moving (it rewrites the same partial, reads the
# same flags), which the same-address count above misses where it reads two places in turn.
IDLE = 4000
# Callables (program, byte address, values read there) -> words, in the reader's language, on what that address is (a
# suite's address watch knows the running launch's tensors), or "": the first one that answers adds its words.
DESCRIBERS = []
# One access (same kind, addresses and values) made again with no memory changed in between, per program:
# a working program remakes one only while it works through its launch's data (the bias of each tile of a
# persistent program, when the C it stores holds those values already), so at most about as many times as
# the launch's tensors hold elements over the access's lanes; the limit is REPEAT_FACTOR times that, at
# least REPEAT_FLOOR.  Measured (2026-12-04, SOLUTION=1 and both other styles, every check): no program made
# one access more than 4 times with nothing changed between, 50 times under the floor.  The planted loops
# that stopped advancing (T5.3's it_end // k_blocks: 4000 atomics, 5 to 60 s a check) now stop after 200 to
# 300 passes.  SPINS and IDLE above still stop a wait on one flag first.
REPEAT_FACTOR = 4
REPEAT_FLOOR = 200
# An access's walk outside every tensor of its launch: at least WALK_STEPS steps of one size in a row, and in
# all farther than the bytes the launch's tensors hold together.  Measured (2026-12-05,
# SOLUTION=1 and both other styles, every check): no walk steps outside at all.  T4's K loop whose k never
# advances fails after 3 to 40 passes, in under a second, before it reads far enough to crash.
WALK_STEPS = 3
# Or WALK_LONG steps of one size in a row outside them, however short: a mask left out takes a K loop outside
# for as many passes as the loop has (K / BLOCK_K), far fewer in the interpreted checks.
WALK_LONG = 128
HOOKS = ("create_atomic_rmw", "create_atomic_cas", "create_masked_load", "create_masked_store")


class ProgramWaitsForever(RuntimeError):
    pass


def repeat_limit(elements, lanes):
    """How many times a program may make one access of `lanes` lanes again, nothing changed in between, in a
    launch whose tensors hold `elements` elements in all."""
    return max(REPEAT_FLOOR, REPEAT_FACTOR * elements // max(1, lanes))


def launch_elements(args, kwargs):
    """The elements of all the tensors a launch is given (a descriptor's, its base's)."""
    import torch

    tensors = [getattr(a, "base", a) for a in (*args, *kwargs.values())]
    return sum(t.numel() for t in tensors if isinstance(t, torch.Tensor))


def launch_spans(args, kwargs):
    """[first byte, past the last byte) of the memory of each tensor a launch is given (a descriptor's base's)."""
    import torch

    tensors = [getattr(a, "base", a) for a in (*args, *kwargs.values())]
    spans = []
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.numel():
            below = sum((n - 1) * -s for n, s in zip(t.shape, t.stride(), strict=True) if s < 0)
            above = sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True) if s > 0)
            first = t.data_ptr() - below * t.element_size()
            spans.append((first, t.data_ptr() + (above + 1) * t.element_size()))
    return spans


class _Watch:
    def __init__(self):
        self.last = None  # (program, addresses, values) of the last unchanged read
        self.count = 0
        self.idle = (None, 0)  # (program, unchanged atomic reads since its last change) of any addresses
        self.kernel, self.elements = "?", 0  # the launch now running: its kernel's name, its tensors' elements
        self.program, self.seen = None, {}  # the running program; {program: {access: times made since progress}}
        self.made = {}  # {program: the accesses it has made}
        self.spans, self.nbytes = (), 0  # [first byte, past the last) of each tensor of the launch; their bytes
        self.walks = {}  # {(program, kind, site): [last first address, its step, steps in a row outside, bytes]}

    def launched(self, kernel, elements, spans=()):
        self.kernel, self.elements, self.program, self.seen, self.made = kernel, elements, None, {}, {}
        self.spans, self.nbytes, self.walks = tuple(spans), sum(end - first for first, end in spans), {}

    def wrote(self):
        self.last, self.count = None, 0

    def access(self, builder, kind, ptrs, values, changed):
        """One load, store or atomic of the running program (values: those loaded, stored or added).  A change
        of memory by an access not made before is progress; fail where one access is made again past
        repeat_limit since the last progress (by any program: inside programs_run they take turns)."""
        if not ptrs.size:
            return
        program = tuple(builder.grid_idx)
        if program != self.program and not interpreter_order.taking_turns():
            self.seen, self.made, self.walks = {}, {}, {}  # the programs before it have ended
        self.program = program
        if self.spans:
            self.walked(program, kind, ptrs)
        made = self.made.setdefault(program, set())
        key = (kind, ptrs.shape, hash(ptrs.tobytes()), hash(values.tobytes()))
        if changed and key not in made:
            self.seen = {}
        made.add(key)
        seen = self.seen.setdefault(program, {})
        times = seen[key] = seen.get(key, 0) + 1
        limit = repeat_limit(self.elements, ptrs.size)
        if times > limit:
            self.seen, self.made = {}, {}
            raise ProgramWaitsForever(_repeat_message(self.kernel, program, kind, ptrs, times, self.elements, limit))

    def walked(self, program, kind, ptrs):
        """Follow the walk of this access's line outside the launch's tensors; fail where it went too far."""
        low, high = int(ptrs.min()), int(ptrs.max())
        outside = all(high < first or low >= end for first, end in self.spans)
        walk = self.walks.setdefault((program, kind, _site()), [low, 0, 0, 0])
        step, walk[0] = low - walk[0], low
        if not outside or step == 0 or step != walk[1]:
            walk[1:] = [step, 0, 0]
            return
        walk[2] += 1
        walk[3] += abs(step)
        if walk[2] >= WALK_LONG or (walk[2] >= WALK_STEPS and walk[3] > self.nbytes):
            self.walks = {}
            raise ProgramWaitsForever(
                _walk_message(self.kernel, program, kind, ptrs, step, walk[2], walk[3], self.nbytes)
            )

    def read(self, builder, ptrs, values, changed, operand=None):
        self.access(builder, "atomic", ptrs, values if operand is None else operand, changed)
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


_OURS = {}  # {code object: whether it is Triton's, this module's or the suite's (a check's own load hook)}
_SUITE = str(ROOT / "tests") + os.sep


def _site():
    """(file, line) of the innermost frame outside Triton, this module and the suite: the kernel's line making the
    access."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        ours = _OURS.get(code)
        if ours is None:
            name = code.co_filename
            ours = _OURS[code] = "/triton/" in name or name == __file__ or name.startswith(_SUITE)
        if not ours:
            return code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


def _where():
    """The graded file's lines now running, innermost first: ('file line a', 'line b', ...) or ()."""
    import sys

    from course import seam

    lines, frame = [], sys._getframe(1)
    while frame is not None:
        graded = seam.graded_file(frame.f_code.co_filename)
        if graded:
            lines.append(f"line {frame.f_lineno}" if lines else f"{graded} line {frame.f_lineno}")
        frame = frame.f_back
    return tuple(lines)


def _repeat_message(kernel, program, kind, ptrs, times, elements, limit):
    pid = program[0] if program[1:] == (0, 0) else program
    where = _where()
    kind_zh = {"load": "load", "store": "store", "atomic": "原子操作"}[kind]
    at_zh = f"（{where[0]}" + "".join(f"，由 {w} 调用" for w in where[1:]) + "）" if where else ""
    at_en = f" ({where[0]}" + "".join(f", called from {w}" for w in where[1:]) + ")" if where else ""
    return say(
        zh=f"{kernel} 的程序 {pid} 把同一个 {kind_zh}{at_zh}（{ptrs.size} 个地址，从 {int(ptrs.min())} 起，同样的值）"
        f"做了 {times} 次，其间它没有前进过：内存要么没变（store 写进去的值和原来一样不算改变），"
        "要么只被它重复做过的访问改动（同一个原子加再做一次不算前进）；"
        f"这次启动的张量一共只有 {elements} 个元素，一个在干活的程序把同一次访问重复 {limit} 次就足够走完它们。"
        "它在一个不再前进的循环里打转：每一圈做的都是同样的访问；解释器一次只运行一个程序，它会永远转下去",
        en=f"program {pid} of {kernel} made the same {kind}{at_en} ({ptrs.size} addresses from {int(ptrs.min())}, "
        f"the same values) {times} times without progress in between: memory either did not change (a store of the "
        "values already there changes nothing) or changed only by accesses it had made before (the same atomic add "
        f"again is no progress); this launch's tensors hold {elements} elements in all, and {limit} repeats of one "
        "access are more than a working program needs to go through them: it goes round a loop that no longer "
        "advances, each pass making the same accesses; the interpreter runs one program at a time, so it would go "
        "round for good",
    )


def _walk_message(kernel, program, kind, ptrs, step, steps, walked, nbytes):
    pid = program[0] if program[1:] == (0, 0) else program
    where = _where()
    kind_zh = {"load": "load", "store": "store", "atomic": "原子操作"}[kind]
    at_zh = f"（{where[0]}" + "".join(f"，由 {w} 调用" for w in where[1:]) + "）" if where else ""
    at_en = f" at {where[0]}" + "".join(f", called from {w}" for w in where[1:]) if where else ""
    far = (
        say(
            zh=f"，比所有张量加起来的 {nbytes} 个字节还远",
            en=f", farther than the {nbytes} bytes all the tensors hold together",
        )
        if walked > nbytes
        else ""
    )
    return say(
        zh=f"{kernel} 的程序 {pid} 的 {kind_zh}{at_zh}每一圈都把地址挪 {step} 个字节，已经连着 {steps} 圈落在这次"
        f"启动的所有张量外面（{ptrs.size} 个地址，最低 {int(ptrs.min())}），在外面走了 {walked} 个字节{far}。"
        "指针还在往前挪，循环却没有在张量到头时停下：它会一直读写到张量外面去，直到崩溃或超时",
        en=f"the {kind}{at_en} of program {pid} of {kernel} moves its addresses {step} bytes each pass and has been "
        f"outside every tensor of this launch for {steps} passes in a row ({ptrs.size} addresses from "
        f"{int(ptrs.min())}), {walked} bytes out there{far}. Its pointers still move but the loop did not stop where "
        "the tensors end: it would go on reading and writing past them until a crash or a timeout",
    )


def _message(program, values, address):
    pid = program[0] if program[1:] == (0, 0) else program
    seen = values.reshape(-1)[:4].tolist()
    words = next((w for w in (d(program, address, seen) for d in DESCRIBERS) if w), "") if address is not None else ""
    base = say(
        zh=f"程序 {pid} 在同一个地址连续读了 {SPINS} 次，每次都读到 {seen}，中间谁也没写过那里：解释器一次只运行一个"
        "程序、按程序号的顺序，它等的时候别的程序不会运行，所以它会永远等下去。它在等一个只有后面的程序（或者没有"
        "程序）才会写的值",
        en=f"program {pid} read the same addresses {SPINS} times in a row and got {seen} each time, with nothing "
        "written there in between: the interpreter runs one program at a time, in id order, so no other program "
        "runs while it waits, and it would wait for good. It waits for a value only a later program (or none) "
        "writes",
    )
    # what reads 0 for good: the examples hold only where it read 0 (a wait that read 1 or 2 is told by a describer)
    zero = say(
        zh="，比如一面还没有人举起的旗，或者一面在它读到之前就被放回 0 的旗",
        en=", such as a flag nobody has raised yet, or one set back to 0 before its reader saw it",
    )
    return base + (zero if not values.any() else "") + words


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
        watch.read(self, ptr.data[on], out.data[on], interpreter_order.rmw_changed(out, now, mask), val.data[on])
        return out

    def atomic_cas(self, ptr, cmp, val, sem, scope):
        out = original["create_atomic_cas"](self, ptr, cmp, val, sem, scope)
        watch.read(self, ptr.data, out.data, interpreter_order.cas_changed(out, cmp, val), val.data)
        return out

    def masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
        out = original["create_masked_load"](self, ptrs, mask, other, cache_policy, is_volatile)
        on = mask.data.astype(bool)
        if is_volatile:
            watch.read(self, ptrs.data[on], out.data[on], False)
        else:
            watch.access(self, "load", ptrs.data[on], out.data[on], False)
        return out

    def masked_store(self, ptrs, value, mask, cache_policy):
        watch.wrote()
        on = mask.data.astype(bool)
        watch.access(self, "store", ptrs.data[on], value.data[on], interpreter_order.store_changes(ptrs, value, mask))
        return original["create_masked_store"](self, ptrs, value, mask, cache_policy)

    def init_args(self, args_dev, kwargs):
        args, named = init_original(self, args_dev, kwargs)
        watch.launched(getattr(self.fn, "__name__", "?"), launch_elements(args_dev, kwargs), launch_spans(args, named))
        return args, named

    for name, fn in zip(HOOKS, (atomic_rmw, atomic_cas, masked_load, masked_store), strict=True):
        setattr(cls, name, fn)
    init_original = interp.GridExecutor._init_args_hst
    interp.GridExecutor._init_args_hst = init_args
    try:
        yield watch
    finally:
        interp.GridExecutor._init_args_hst = init_original
        for name, fn in original.items():
            setattr(cls, name, fn)
