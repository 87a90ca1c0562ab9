"""Why the stream-K fix-up's flags were left up at the end of a count-only run (test_stream_k_every_tile_once): each
publisher's flag read by another program or by none, found in a second run with every program's memory operations
recorded on the interpreter, and the words for what was found."""

from .stream_k_cases import recorded_count_run
from support import INTERPRETING

# Why every publisher's flag is still up, by what flags_read_by_others saw: True, each was read by
# another program (the owners waited, and put none back); False, none was (no owner waited on them);
# None, not known (a GPU, or some read and some not).
FLAGS_LEFT_UP = {
    True: (
        "：发布过 partial 的程序的 flag 都还是 1，别的程序都读过它们，却没有一个被 owner 放回 0："
        "owner 加完一个 partial，要把那个程序的 flag 放回 0（sk_collect_partials）",
        ": every publisher's flag is still 1: other programs read each of them, yet none was put back to 0 by an "
        "owner: after adding a partial, the owner puts that program's flag back to 0 (sk_collect_partials)",
    ),
    False: (
        "：发布过 partial 的程序的 flag 都还是 1，而且没有别的程序读过它们：没有 owner 等这些 partial"
        "（owner 要等从 sk_program_of(tile 的第一个 k-block) 到 pid - 1 的程序）",
        ": every publisher's flag is still 1, and no other program read any of them: no owner waited for these "
        "partials (an owner waits on the programs from sk_program_of(its tile's first k-block) to pid - 1)",
    ),
    None: (
        "：发布过 partial 的程序的 flag 都还是 1，没有一个被 owner 放回 0：owner 要等从 "
        "sk_program_of(tile 的第一个 k-block) 到 pid - 1 的程序，每加完一个 partial 把它的 flag 放回 0",
        ": every publisher's flag is still 1, none was put back to 0 by an owner: an owner waits on the programs "
        "from sk_program_of(its tile's first k-block) to pid - 1, and puts each flag back to 0 once it has "
        "added that partial",
    ),
}


def flags_read_by_others(probes, case, published):
    """{program: whether another program read its flag} for the programs `published` marks, in a second
    count-only run with each program's memory operations recorded (course/interpreter_order.py, id order);
    None on a GPU (no record there)."""
    if not INTERPRETING:
        return None
    recorded, base = recorded_count_run(probes, case)
    return {
        p: any(base + 4 * p <= e.lo < base + 4 * (p + 1) for q, events in recorded.items() if q != p for e in events)
        for p, was_published in enumerate(published)
        if was_published
    }


def some_flags_up_words(read, unread):
    """(zh, en) words for some publishers' flags still at 1 (and no other flag up) at the end: those another
    program read (read), and those none read (unread)."""
    zh, en = "", ""
    if read:
        zh += (
            f"：程序 {read} 的 flag 还是 1，别的程序读过它们，却没有一个被 owner 放回 0：owner 加完一个 partial，"
            "要把那个程序的 flag 放回 0（sk_collect_partials）"
        )
        en += (
            f": the flags of programs {read} are still 1: other programs read each of them, yet none was put back "
            "to 0 by an owner: after adding a partial, the owner puts that program's flag back to 0 "
            "(sk_collect_partials)"
        )
    if unread:
        zh += (
            f"{'；' if read else '：'}程序 {unread} 发布过 partial，它们的 flag 还是 1，而且没有别的程序读过它们："
            "没有 owner 等这些 partial（owner 要等从 sk_program_of(tile 的第一个 k-block) 到 pid - 1 的程序）"
        )
        en += (
            f"{'; ' if read else ': '}programs {unread} published partials whose flags are still 1, and no other "
            "program read any of them: no owner waited for these partials (an owner waits on the programs from "
            "sk_program_of(its tile's first k-block) to pid - 1)"
        )
    return zh, en
