"""T5's launches on the interpreter under an AddressWatch (tests/bounds.py): a load, store or atomic
outside every tensor a launch was given is never made, and the test fails at once, naming the line
of the lesson's files that made it.  Made, such an access reads or overwrites whatever memory lies
there (a stream-K partial stored one slot too far, say), and the crash, if one comes, comes later at
an innocent line (a T4 one, say) that changes with the random seed."""

import linecache
import re
import traceback

from course.errors import error_chain
from course.i18n import cells, say
from course.messages import fail, written_elsewhere

import bounds
from .common import T5
from .crashes import T5_FILES
from .flag_log import FlagLog
from .sk_counts import SkStrays, tile_begin_in_elements_words, total_in_elements_words
from bounds import caller_of, place

OURS = ("t5_persistent.py", "t4_matmul.py", "t5_probes.py")
# The tensors t5_kernel only reads, as §2.3 says: its operands and the bias (it writes c, partials, flags, trace).
READ_ONLY = {"t5_kernel": ("a_desc", "b_desc", "bias_ptr")}
SECTION_OF = {  # the functions a learner writes in T5's kernels, and the section each is in
    "data_parallel_tiles": "2.2",
    "k_block_loop": "3.1",
    "store_tile": "3.3",
    "sk_run": "4.1",
    "sk_program_of": "4.1",
    "sk_publish_partial": "4.2",
    "sk_collect_partials": "4.2",
    "stream_k_tiles": "4.2",
}
# A function with bodies of two steps: a line in the later step's body is that step's section
# (store_tile's subtiled epilogue, T5.4, is §5; its whole-tile one, T5.2, §3.3 as above).
SECTION_OF_BODY = {("store_tile", "T5.4"): "5"}
MARK = re.compile(r"^\s*# ---- (T\d+\.\d+) (begin|end)\b")


def body_step(frame):
    """The step whose marked body (# ---- T5.4 begin ... end) holds the frame's line, or None."""
    lines = linecache.getlines(frame.filename)
    for line in reversed(lines[: frame.lineno - 1]):
        found = MARK.match(line)
        if found:
            return found[1] if found[2] == "begin" else None
    return None


def t5_caller(exc):
    """The deepest frame of T5's code (T5_FILES) along the exception's chain (each call the interpreter
    makes inside a kernel adds a link), or None."""
    found = None
    for error in error_chain(exc, suppressed=True):
        ours = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.endswith(T5_FILES)]
        found = ours[-1] if ours else found
    return found


def fail_stray(name, strays):
    """Fail for the launch of `name` whose accesses outside its tensors `strays` counted."""
    what, n, frames = strays.worst()
    written = strays.input_by_learner()  # a write into a tensor it only reads: told first
    if written:
        tensor, n, frames = written
    where_zh = where_en = ""
    caller = None
    if frames:
        where_zh, where_en = f"，第一个在 {place(frames[-1])}", f", first at {place(frames[-1])}"
        # the line that called it, in a function of its own (sk_publish_partial given tile_id for pid, say)
        caller = caller_of(frames)
        if caller is not None:
            where_zh += f"（由 {place(caller)} 调用）"
            where_en += f" (called from {place(caller)})"
    section = "2.3"  # no learner's function on the way: where the kernel's launch is explained
    for f in reversed(frames):
        if (f.name, body_step(f)) in SECTION_OF_BODY:
            section = SECTION_OF_BODY[(f.name, body_step(f))]
            break
        if f.name in SECTION_OF:
            section = SECTION_OF[f.name]
            break
    verb = ("写", "wrote") if what == "write" else ("读", "read")
    elsewhere = ("", "")
    # the first line in another step's code (T4.5's bias_and_activation, say): that step's code, or what ours passed
    other = frames and caller is not None and written_elsewhere(body_step(caller) or "", frames[-1].name)
    if other:
        elsewhere = (
            f"。这一行在 {frames[-1].name} 里，是 {other[0].id} 的代码（{other[0].id}：{other[1]}），由 "
            f"{caller.name} 调用：原因可能是那里传给它的参数，也可能是 {other[0].id} 的代码",
            f". That line is in {frames[-1].name}, step {other[0].id}'s code ({other[0].id}: {other[1]}), called "
            f"by {caller.name}: the cause may be what the line there passes to it, or {other[0].id}'s code",
        )
    held = getattr(strays, "sk_locals", {})  # a stream-K total, or a tile's first k-block, in K's elements
    counted = total_in_elements_words(held)
    counted = counted if counted[0] else tile_begin_in_elements_words(held)
    if written:
        fail(
            T5,
            f"{name} 往 {tensor} 里写了 {n} 个格子：{tensor} 是它的输入，它只该读，不该写{where_zh}。这里拦下了，"
            f"没有真的做；在 GPU 上这会改掉调用者的输入，之后读它的代码都会看到错的值{elsewhere[0]}",
            f"{name} wrote {cells(n)} into {tensor}, an input it should only read{where_en}. They were stopped here, "
            f"not made; on a GPU the caller's input is overwritten, and whatever reads it later sees wrong values"
            f"{elsewhere[1]}",
            section,
        )
    fail(
        T5,
        f"{name} {verb[0]}了 {n} 个格子，都在这次启动拿到的所有张量之外{where_zh}。这里拦下了这些访问，没有真的做；"
        f"在 GPU 上它们会读写别处的内存，崩溃（如果有）会出现在后面某一行，随随机种子而变{elsewhere[0]}"
        + (f"。原因：{counted[0]}" if counted[0] else ""),
        f"{name} {verb[1]} {cells(n)} outside every tensor that launch was given{where_en}. They were stopped "
        "here, not made; on a GPU they read or overwrite other memory, and the crash, if any, comes later, at "
        f"another line that changes with the random seed{elsewhere[1]}"
        + (f". The cause: {counted[1]}" if counted[1] else ""),
        "4.2" if counted[0] else section,
    )


def own_flag_words(watch, program, address, seen, log=None):
    """Words for a program that spins on its own flag (flags_ptr + pid: the element of the launch's tensor named
    flags... whose index is the program's id), in the reader's language, by what it read there (seen): 0, a flag
    nobody raises (an owner waiting on itself); 1, its own raised flag, waited on to go back down (hunt14: a
    publisher waiting for the owner's reset had been told as an owner waiting on itself); "" otherwise.  Where
    log (a FlagLog) finds flags[pid - 1] raised and unread, the words say so (a wait index one too high, waits15)."""
    near = watch.nearest(address) if watch._named else None
    if near is None or not near[0].startswith("flags") or near[1] != program[0] or program[1:] != (0, 0):
        return ""
    pid, name = program[0], near[0]
    if seen and all(v == 1 for v in seen):
        return say(
            zh=f"。它等的是 {name}[{pid}]，也就是它自己举起的旗（读到 1），等它落回 0：只有 owner（一个后面的程序）"
            "在加上这份 partial 之后才把旗放回 0，解释器里它等着的时候 owner 不会运行；发布的程序举起旗就往下走，不等",
            en=f". The flag it waits on is {name}[{pid}], its own, raised by itself (it reads 1), for it to go back "
            "to 0: only the owner, a later program, puts it back, after adding that partial, and on the interpreter "
            "the owner never runs while it waits; a publishing program raises its flag and goes on, without waiting",
        )
    if not seen or any(v != 0 for v in seen):
        return ""
    below = log.below_words(pid, name) if log is not None else ""
    return (
        say(
            zh=f"。它等的是 {name}[{pid}]，也就是它自己的旗：owner 只等程序 first_pid..pid - 1 的旗，"
            "它自己的 partial 就在 acc 里，不发布，也就没有谁为它举旗",
            en=f". The flag it waits on is {name}[{pid}], its own: the owner waits on the flags of programs "
            "first_pid..pid - 1 alone; its own partial is in its acc, never published, so nobody raises its flag",
        )
        + below
    )


def flag_value_words(watch, program, address, seen):
    """Words for a program that waits for good on another program's flag (flags...[q], q not its own id) while that
    flag holds a value other than 0, in the reader's language; "" otherwise.  The wait read that value a thousand
    times and went on: 1 (raised) did not end it, or the flag holds a value no raised flag holds (§4.2: 1)."""
    near = watch.nearest(address) if watch._named else None
    if near is None or not near[0].startswith("flags") or near[1] == program[0] or program[1:] != (0, 0):
        return ""
    if not seen:
        return ""
    seen, name, q = int(seen[0]), near[0], near[1]
    if seen == 1:
        return say(
            zh=f"。它读的是 {name}[{q}]，读到的是 1：程序 {q} 的旗已经举起来了，它却还在等：等 partial 的循环要在"
            "读到 1 时结束（旗不是 1 时才接着等）",
            en=f". The flag it reads, {name}[{q}], holds 1: program {q}'s flag is raised, yet the wait went on: "
            "a wait for a partial ends as soon as its flag reads 1 (it loops while the flag is not 1)",
        )
    if seen == 0:
        return ""
    return say(
        zh=f"。它读的是 {name}[{q}]，里面是 {seen}，不是举起的旗该有的 1（§4.2），而等待没有在这个值上结束："
        "发布时把旗举成 1，等待读到 1 就结束",
        en=f". The flag it reads, {name}[{q}], holds {seen}, not the 1 a raised flag holds (§4.2), and the wait did "
        "not end on it: a publish raises its flag to 1, and the wait ends when it reads 1",
    )


# The probes that run the tile loops count-only (TRACE = 2): k_segment and finish_tile then call neither k_block_loop
# nor store_tile, whose descriptors are stand-ins there.
COUNT_ONLY = ("tile_loop_probe", "stream_k_probe")


class _CountOnly:
    """A count-only probe whose launch, crashed in k_block_loop or store_tile, fails naming how it got there."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            try:
                return self.kernel[grid](*args, **kwargs)
            except Exception as e:
                fail_if_count_only_stored(e)
                raise

        return launch

    def __getattr__(self, name):
        return getattr(self.kernel, name)


def fail_if_count_only_stored(exc):
    """Fail where a count-only launch crashed inside k_block_loop or store_tile: called by k_segment or finish_tile
    (given code, which skip them when TRACE is 2), the loop handed them another TRACE; called by the loop itself,
    it went round them."""
    frames = [  # each call inside a kernel adds a link to the chain, the outer call first
        f
        for error in error_chain(exc, suppressed=True)
        for f in traceback.extract_tb(error.__traceback__)
        if f.filename.endswith(T5_FILES)
    ]
    at = next((i for i, f in enumerate(frames) if f.name in ("k_block_loop", "store_tile")), None)
    if not at:
        return
    fn, caller = frames[at].name, frames[at - 1].name
    if caller in ("k_segment", "finish_tile") and at >= 2:
        fail(
            T5,
            f"只计数的启动（TRACE = 2：k_segment 和 finish_tile 不读也不写）里跑到了 {fn}，是 {caller} 调用的："
            f"{frames[at - 2].name} 交给 {caller} 的 TRACE 不是 kernel 拿到的 2：把 TRACE 原样传下去",
            f"a count-only launch (TRACE = 2: k_segment and finish_tile load and store nothing) ran {fn}, called by "
            f"{caller}: the TRACE that {frames[at - 2].name} handed {caller} is not the kernel's 2: pass TRACE on "
            "as it is",
            "2.3",
        )
    fail(
        T5,
        f"只计数的启动（TRACE = 2）里跑到了 {fn}，是 {caller} 自己调用的：一个 tile 的和交给 k_segment、收尾交给 "
        "finish_tile（给定的代码），它们会计数，TRACE 为 2 时也不去读写",
        f"a count-only launch (TRACE = 2) ran {fn}, called by {caller} itself: hand a tile's sum to k_segment and its "
        "epilogue to finish_tile (given code), which count it and, with TRACE 2, load and store nothing",
        "2.3",
    )


def watch_launches(module, names, monkeypatch):
    """Every launch of module's kernels `names` watched (AddressWatch), failing on a stray access; a program
    that waits for good on its own flag, or on one put back to 0, is told so (interpreter_spin.DESCRIBERS)."""
    from course import interpreter_spin

    strays = SkStrays(OURS, "t5_probes.py")
    bounds.watch_launches(module, names, monkeypatch, strays, lambda name: fail_stray(name, strays), READ_ONLY)
    for name in set(COUNT_ONLY) & set(names):
        monkeypatch.setattr(module, name, _CountOnly(getattr(module, name)))
    if strays.watch is not None and strays.watch.active:
        # who raised and who put back the flag a program waits on for good, reading 0 (tests/t5/flag_log.py)
        log = FlagLog(strays.watch, monkeypatch)
        put_back = log.words
        own = lambda program, address, seen: own_flag_words(strays.watch, program, address, seen, log)  # noqa: E731
        other = lambda program, address, seen: flag_value_words(strays.watch, program, address, seen)  # noqa: E731
        monkeypatch.setattr(interpreter_spin, "DESCRIBERS", [*interpreter_spin.DESCRIBERS, own, other, put_back])
