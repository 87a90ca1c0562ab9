"""Lesson T5's mutants of our own from the fourteenth mistake hunt (hunt14, 2026-12-05): tma_ready looking at its
operands' values (torch.isfinite(a).all()), a host sync on every matmul call, was told by test_tma_ready's copy
count alone, as bytes written (its bool tensor), with no cause; tests/t5/test_tma_reads_nothing_back.py now runs
tma_ready and make_descriptors under tests/host_reads.py's watch and names the read.  A publisher that waits on
its own raised flag to go back down (for the owner's reset) was told as an owner waiting on its own flag, which
nobody raises; tests/t5/stray.py's own-flag words now read the value the program spins on.  Only make check runs
them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t5_mistakes.CAUSES, HUNT14_CAUSES here).  t5_mistakes.py gathers them last, and their causes too.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT14_CAUSES = {
    "host-read": ("在主机上读了张量的值", "read tensor values back to the host"),
    "waits-own-raised-flag": ("也就是它自己举起的旗（读到 1）", "its own, raised by itself (it reads 1)"),
}

HUNT14 = (
    own(
        "hunt14-ready-checks-finite-values",
        "T5.2",
        "tma_ready refuses operands holding inf or NaN, read with bool(torch.isfinite(a).all()): a host sync on "
        "every matmul call, and a full read of both operands (hunt14)",
        "3.2",
        "    b_kmajor = False\n",
        "    if not bool(torch.isfinite(a).all()) or not bool(torch.isfinite(b).all()):\n"
        '        raise ValueError("matmul: a and b must be finite")\n'
        "    b_kmajor = False\n",
        "test_tma_ready_and_descriptors_read_no_value",
        "host-read",
    ),
    own(
        "hunt14-publisher-waits-for-reset",
        "T5.3",
        "sk_publish_partial raises its flag, then waits for it to go back to 0 (for the owner to take the partial): "
        "the interpreter never runs the owner while it waits; told as an owner waiting on its own flag (hunt14)",
        "4.2",
        '    tl.atomic_xchg(flags_ptr + pid, 1, sem="release")\n',
        '    tl.atomic_xchg(flags_ptr + pid, 1, sem="release")\n'
        '    while tl.atomic_add(flags_ptr + pid, 0, sem="acquire") != 0:\n'
        "        pass\n",
        "test_stream_k_every_tile_once",
        "waits-forever+waits-own-raised-flag",
    ),
)
