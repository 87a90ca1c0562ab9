"""make loads, verdicts: what each call did to each tensor, and whether a program loaded (or
wrote) each element its tile needs exactly once, nothing else and nothing outside."""

from collections import Counter
from dataclasses import dataclass

from course.i18n import say

SHOWN = 8  # addresses or elements listed before "..."


def element(name, rc):
    return f"{name}[{rc[0]},{rc[1]}]"


def listing(items):
    items = list(items)
    return ", ".join(items[:SHOWN]) + (", ..." if len(items) > SHOWN else "")


# What one call did to one tensor
# ------------------------------------------------------------------------------------------------
@dataclass
class Step:
    """One tl.load (or tl.store) seen through one tensor."""

    line: int
    hits: Counter  # (row, col) inside the tensor -> unmasked lanes there
    masked: set  # (row, col), inside or in the padding, of lanes the mask switched off
    outside: list  # (row, col) in the padding of unmasked lanes
    stray: list  # descriptions of unmasked lanes in no buffer or in another tensor's


def owner(call, tensors):
    """The tensor most of the call's lanes point into (masked lanes too), else None."""
    counts = Counter(t.name for addr in call.addrs for t in tensors if t.holds(addr))
    return max(tensors, key=lambda t: counts[t.name]) if counts else None


def describe(addr, tensors):
    for t in tensors:
        rc = t.where.get(addr)
        if rc is not None:
            return element(t.name, rc) + ("" if t.inside(rc) else say(zh="（填充区）", en=" (padding)"))
    return f"0x{addr:x}"


def see(call, t, tensors):
    step = Step(call.line, Counter(), set(), [], [])
    for addr, on in zip(call.addrs, call.mask, strict=True):
        rc = t.where.get(addr)
        if not on:
            if rc is not None:
                step.masked.add(rc)
        elif t.inside(rc):
            step.hits[rc] += 1
        elif rc is not None:
            step.outside.append(rc)
        else:
            step.stray.append(describe(addr, tensors))
    return step


@dataclass
class Program:
    """What one program (pid_m, pid_n) did: the K steps of A and of B, the stores into C."""

    pid: tuple
    a: list
    b: list
    c: list
    other: list  # calls whose lanes point into no tensor at all


def programs(calls, tensors, grid):
    a, b, c = tensors[:3]
    found = {pid: Program(pid, [], [], [], []) for pid in grid}
    for call in calls:
        t = owner(call, tensors)
        p = found[call.pid]
        if t is None:
            p.other.append(call)
        else:
            to = {"A": p.a, "B": p.b, "C": p.c}.get(t.name, p.other)
            to.append(see(call, t, tensors))
    return found


# ------------------------------------------------------------------------------------------------
# Verdicts
# ------------------------------------------------------------------------------------------------
def needed(t, rows, cols):
    """The elements of t a tile needs: rows x cols, clipped to the tensor."""
    return {(r, c) for r in rows for c in cols if t.inside((r, c))}


def verdict(t, steps, need, verb):
    """(ok, sentence) about the elements of t the steps touched, against the set it needs."""
    hits = sum((s.hits for s in steps), Counter())
    outside = sum(len(s.outside) + len(s.stray) for s in steps)
    missing = sorted(need - set(hits))
    twice = sorted(rc for rc, n in hits.items() if n > 1 and rc in need)
    extra = sorted(set(hits) - need)
    problems = []
    if missing:
        problems.append(
            say(
                zh=f"需要的 {len(need)} 个元素里有 {len(missing)} 个没有被{verb}"
                f"（{listing(element(t.name, rc) for rc in missing)}）",
                en=f"{len(missing)} of the {len(need)} elements needed never {verb} "
                f"({listing(element(t.name, rc) for rc in missing)})",
            )
        )
    if twice:
        problems.append(
            say(
                zh=f"{len(twice)} 个元素被{verb}了不止一次（{listing(element(t.name, rc) for rc in twice)}）",
                en=f"{len(twice)} {verb} more than once ({listing(element(t.name, rc) for rc in twice)})",
            )
        )
    if extra:
        problems.append(
            say(
                zh=f"{len(extra)} 个元素不属于这个 tile（{listing(element(t.name, rc) for rc in extra)}）",
                en=f"{len(extra)} elements of other tiles {verb} ({listing(element(t.name, rc) for rc in extra)})",
            )
        )
    if outside:
        problems.append(
            say(
                zh=f"{outside} 次{verb}落在 {t.name} 之外",
                en=f"{outside} {'loads' if verb == 'loaded' else 'writes'} fall outside {t.name}",
            )
        )
    if not steps:
        return False, say(zh=f"{t.name}：一次也没有{verb}", en=f"{t.name}: nothing {verb}")
    if problems:
        return False, t.name + say(zh="：", en=": ") + say(zh="；", en="; ").join(problems)
    return True, say(
        zh=f"{t.name}：这个 tile 需要的 {len(need)} 个元素每个恰好{verb}一次，没有多余，没有越界",
        en=f"{t.name}: the {len(need)} elements this tile needs, each {verb} exactly once; "
        f"nothing else, nothing outside {t.name}",
    )


def tile_needs(args, pid, tensors):
    bm, bn, bk = args.block
    t_a, t_b, t_c = tensors
    rows = range(pid[0] * bm, pid[0] * bm + bm)
    cols = range(pid[1] * bn, pid[1] * bn + bn)
    return needed(t_a, rows, range(args.k)), needed(t_b, range(args.k), cols), needed(t_c, rows, cols)


def merge(steps):
    """All the stores of one program as one step: C's grid shows them together."""
    line = steps[0].line if steps else 0
    return Step(
        line,
        sum((s.hits for s in steps), Counter()),
        set().union(*(s.masked for s in steps)),
        [rc for s in steps for rc in s.outside],
        [d for s in steps for d in s.stray],
    )


def store_steps(seen, pid):
    return [] if seen.stores is None else seen.stores[pid].c


def summary(seen, args, pid):
    """[(ok, sentence)] for one program: its loads of A and B, its stores into C."""
    t_a, t_b, t_c = seen.tensors
    need_a, need_b, need_c = tile_needs(args, pid, seen.tensors)
    prog = seen.loads[pid]
    results = []
    if not seen.mainloop_stub:
        results.append(verdict(t_a, prog.a, need_a, say(zh="加载", en="loaded")))
        results.append(verdict(t_b, prog.b, need_b, say(zh="加载", en="loaded")))
    if seen.stores is not None:
        steps = store_steps(seen, pid)
        ok, text = verdict(t_c, steps, need_c, say(zh="写入", en="written"))
        wrong = sorted(rc for s in steps for rc in s.hits if rc in seen.wrong)
        if wrong:
            ok = False
            text += say(
                zh=f"；{len(wrong)} 个格子写入的值不对（{listing(element('C', rc) for rc in wrong)}）",
                en=f"; {len(wrong)} cells written with a wrong value ({listing(element('C', rc) for rc in wrong)})",
            )
        results.append((ok, text))
    stray = prog.other + ([] if seen.stores is None else seen.stores[pid].other)
    if stray:
        results.append(
            (
                False,
                say(
                    zh=f"{len(stray)} 次调用（第 {', '.join(str(c.line) for c in stray)} 行）完全指向 A、B、C 之外",
                    en=f"{len(stray)} calls (line {', '.join(str(c.line) for c in stray)}) point outside A, B and C "
                    "altogether",
                ),
            )
        )
    return results
