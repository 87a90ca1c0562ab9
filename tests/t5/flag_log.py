"""What the stream-K flags went through in the running launch, for the words on a wait that never ends.

course/interpreter_spin.py stops a program that reads one flag a thousand times and finds it 0; on its own it
can only say 'a flag nobody has raised yet, or one set back to 0 before its reader saw it'.  FlagLog records,
while a watched launch runs, every atomic read-modify-write on a tensor whose parameter name starts with
'flags' (which program, which element, the value it wrote or added, the value it found), so that the words can
say which of the two happened and who put the flag back: the owner of the flag itself, after waiting on it
(an owner that collects its own partial), or the waiting program itself (its reset came before its wait, or
its loop went back to a flag it had already taken).  The rest stays with stray.py's describers."""

from dataclasses import dataclass

import numpy as np

from course.i18n import say


@dataclass
class Event:
    program: int
    index: int
    xchg: bool  # an atomic_xchg; else an atomic add (of 0: a read)
    val: int
    old: int

    @property
    def new(self):
        return self.val if self.xchg else self.old + self.val


class FlagLog:
    """The flag events of the launch now running under `watch` (an AddressWatch), in the order made."""

    def __init__(self, watch, monkeypatch):
        self.watch, self.events, self._launch = watch, [], None
        from triton._C.libtriton import ir
        from triton.runtime import interpreter

        builder = interpreter.interpreter_builder
        self._xchg, self._add = ir.ATOMIC_OP.XCHG, ir.ATOMIC_OP.ADD
        rmw = builder.create_atomic_rmw  # the address watch's, set up just before

        def logged(op, ptr, val, mask, *rest, **named):
            out = rmw(op, ptr, val, mask, *rest, **named)
            if op in (self._xchg, self._add):
                self._log(tuple(builder.grid_idx), op == self._xchg, ptr, val, mask, out)
            return out

        monkeypatch.setattr(builder, "create_atomic_rmw", logged)

    def _log(self, program, xchg, ptr, val, mask, out):
        if not self.watch._named or program[1:] != (0, 0):
            return
        if self._launch is not self.watch._named:  # a new launch (its list of tensors is made afresh)
            self.events, self._launch = [], self.watch._named
        addresses = np.asarray(ptr.data).reshape(-1)
        if addresses.size != 1:  # a flag is one integer: a wait or a raise acts on one lane
            return
        if not bool(np.asarray(mask.data).reshape(-1)[0]):
            return
        near = self.watch.nearest(int(addresses[0]))
        if near is None or not near[0].startswith("flags") or not 0 <= near[1] < near[2]:
            return
        value, old = int(np.asarray(val.data).reshape(-1)[0]), int(np.asarray(out.data).reshape(-1)[0])
        if not xchg and value == 0 and old == 0:  # a wait's read that found the flag down tells nothing new
            return
        self.events.append(Event(program[0], int(near[1]), xchg, value, old))

    def words(self, program, address, seen):
        """Words for program waiting for good on flags[q] (q not its own id) that reads 0, where this launch
        raised that flag and then put it back: by q itself after q read it raised (q collected its own
        partial), or by the waiting program itself (before it ever read it raised: a reset before the wait;
        after it read it raised: a loop that came back to a flag it had taken).  "" otherwise."""
        near = self.watch.nearest(address) if self.watch._named else None
        if near is None or not near[0].startswith("flags") or program[1:] != (0, 0):
            return ""
        if self._launch is not self.watch._named or not seen or any(v != 0 for v in seen):
            return ""
        pid, name, q = program[0], near[0], near[1]
        here = [e for e in self.events if e.index == q]
        raised = max((i for i, e in enumerate(here) if e.new != 0 and e.old == 0), default=None)
        # up before the launch touched it (a test that hands the owner its flags raised, hunt16): every event is after
        up_before = raised is None and bool(here) and here[0].old != 0
        if q == pid or (raised is None and not up_before):
            return ""
        after = here if up_before else here[raised + 1 :]
        raiser = (
            say(zh="这面旗在启动时就举着", en="it was up when the launch began")
            if up_before
            else say(zh=f"程序 {q} 举起过这面旗", en=f"program {q} raised it")
        )
        down = next((i for i, e in enumerate(after) if e.xchg and e.new == 0 and e.old != 0), None)
        if down is None:
            return ""
        by, read_up = after[down].program, {e.program for e in after[:down] if not e.xchg and e.val == 0 and e.old}
        if by == q and q in read_up and not up_before:
            return say(
                zh=f"。它等的是 {name}[{q}]：程序 {q} 举起了这面旗，随后自己等了它（读到 1）并把它放回了 0，"
                f"也就是程序 {q} 在做 owner 时收了自己的 partial：owner 只收程序 first_pid..pid - 1 的 partial，"
                "自己的那一份在 acc 里；这面旗是为后面那个 tile 的 owner 举的，它再也等不到了",
                en=f". The flag it waits on is {name}[{q}]: program {q} raised it, then waited on it itself (read 1) "
                f"and put it back to 0, so program {q}, as an owner, collected its own partial: an owner collects "
                "the partials of programs first_pid..pid - 1 alone, its own is in its acc; the flag was raised for "
                "the owner of the later tile, which now waits for it for good",
            )
        if by == q and not up_before and not read_up:
            return say(
                zh=f"。它等的是 {name}[{q}]：程序 {q} 举起了这面旗，随后没有等它、也没有程序读到它举着，"
                f"程序 {q} 自己就把它放回了 0：一个程序只放回它加过的 partial 的旗（加完程序 p 的 partial，"
                "放回 flags_ptr + p），不碰自己刚举起的那面",
                en=f". The flag it waits on is {name}[{q}]: program {q} raised it, and then, with no program having "
                f"read it raised, program {q} itself put it back to 0: a program puts back only the flags of the "
                "partials it added (after adding program p's, flags_ptr + p), never the one it has just raised",
            )
        if by == pid and pid not in read_up:
            return say(
                zh=f"。它等的是 {name}[{q}]：{raiser}，是程序 {pid} 自己在等它之前就把它放回了 0"
                "（那次交换读到的是 1）：旗要在等到它、加上 partial 之后才放回 0，不能在等之前",
                en=f". The flag it waits on is {name}[{q}]: {raiser}, and program {pid} itself put it "
                "back to 0 before waiting on it (that exchange found 1): a flag goes back to 0 after the wait "
                "ends and the partial is added, never before the wait",
            )
        if by == pid:
            return say(
                zh=f"。它等的是 {name}[{q}]：程序 {pid} 已经等到过这面旗（读到 1），加上了那份 partial 并把旗放回 0，"
                f"现在又回头等同一面旗：收 partial 的循环没有往下一个程序走（p 没有前进）",
                en=f". The flag it waits on is {name}[{q}]: program {pid} already waited on it (read 1), added that "
                "partial and put the flag back to 0, and now waits on the same flag again: the loop over the "
                "programs whose partials it collects did not move on (p did not advance)",
            )
        return ""

    def below_words(self, pid, name):
        """Words for an owner waiting for good on its own flag (pid), where an earlier program r of this launch
        waited on its own flag too (raised by itself: it read 1) while no wait read flags[r - 1] raised after
        program r - 1 raised it (put back unread, maybe): each wait reads the flag one above the partial it
        wants, or always its own (the two agree where a tile has one other program, as in T5.3's first case);
        "" otherwise."""
        if self._launch is not self.watch._named:
            return ""
        for r in range(1, pid):
            mine = [e for e in self.events if e.index == r]
            took = any(e.program == r and not e.xchg and e.val == 0 and e.old for e in mine)
            below = [e for e in self.events if e.index == r - 1]
            raised = max((i for i, e in enumerate(below) if e.new != 0 and e.old == 0), default=None)
            if not took or raised is None or below[raised].program != r - 1:
                continue
            if any(not e.xchg and e.val == 0 and e.old for e in below[raised + 1 :]):  # a wait read it raised
                continue
            return say(
                zh=f"；程序 {r} 也等过它自己的旗 {name}[{r}]（它自己举起的，读到 1），而程序 {r - 1} "
                f"举起的 {name}[{r - 1}] 之后没有任何程序读过：等待读的旗比它要的 partial 的程序号大 1"
                "（或者总是等自己的旗）",
                en=f"; program {r} too waited on its own flag {name}[{r}] (raised by itself: it read 1), while "
                f"{name}[{r - 1}], raised by program {r - 1}, has not been read by any program "
                "since: each wait reads the flag one above the program whose partial it wants (or always its own flag)",
            )
        return ""
