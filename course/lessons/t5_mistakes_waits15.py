"""Lesson T5's mutants of our own from the endless-wait hunt (waits15, 2026-12-05): fix-up mistakes whose first
failure in make test STEP=T5.3 (test_stream_k_every_tile_once) ended in the spin watch's general words alone ('a
flag nobody has raised yet, or one set back to 0 before its reader saw it').  tests/t5/flag_log.py now records
who raised and who put back each flag during the launch, and the words say which happened.  Only make check runs
them (table=False, not in §8); each must be caught by its test, whose message names its cause (a key of
t5_mistakes.CAUSES, WAITS15_CAUSES here).  t5_mistakes.py gathers them last.  The owner collecting its own
partial (range(first_pid, pid + 1)) is holes' sk-collect-own-flag, which now carries cause collected-own-partial.
"""

from course.lessons.t5_mistakes_own import own

WAIT = '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:  # an integer read that waits\n'
LOAD = '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n'
RESET = '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n'

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
WAITS15_CAUSES = {
    "collected-own-partial": ("在做 owner 时收了自己的 partial", "as an owner, collected its own partial"),
    "reset-before-wait": ("在等它之前就把它放回了 0", "put it back to 0 before waiting on it"),
    "wait-loop-stays": ("现在又回头等同一面旗", "now waits on the same flag again"),
    "flag-below-unread": ("之后没有任何程序读过：等待读的旗", "has not been read by any program since"),
    "begin-by-maximum": ("用了 tl.maximum，应当是 tl.minimum", "tl.maximum where tl.minimum belongs"),
    "owners-by-minimum": (
        "用了 tl.minimum，应当是 tl.maximum(total // NUM_PROGS, 1)",
        "tl.minimum where tl.maximum(total // NUM_PROGS, 1) belongs",
    ),
}

WAITS15 = (
    own(
        "waits15-reset-before-wait",
        "T5.3",
        "sk_collect_partials puts each flag back to 0 before it waits on it, not after the partial is added: the "
        "owner takes down the raised flag and then waits on it for good; only the spin watch's general words "
        "(waits15)",
        "4.2",
        WAIT + "            pass\n" + LOAD + RESET,
        RESET + WAIT + "            pass\n" + LOAD,
        "test_stream_k_every_tile_once",
        "waits-forever+reset-before-wait",
    ),
    own(
        "waits15-wait-loop-stays",
        "T5.3",
        "sk_collect_partials walks the programs with p = first_pid; while p < pid: and never adds 1 to p: after "
        "the first partial it waits again on the flag it has just put back to 0; only the spin watch's general "
        "words (waits15)",
        "4.2",
        "    for p in range(first_pid, pid):\n" + WAIT,
        "    p = first_pid\n    while p < pid:\n" + WAIT,
        "test_stream_k_every_tile_once",
        "waits-forever+wait-loop-stays",
    ),
    own(
        "waits15-run-begin-by-maximum",
        "T5.3",
        "sk_run begins each run at pid * base + tl.maximum(pid, extra), not tl.minimum: with total % NUM_PROGS == 0 "
        "every run starts pid k-blocks late, and the owners then wait on flags no program raises; T5.3's first "
        "failure gave only the expected and the got runs (waits15)",
        "4.1",
        "    begin = pid * base + tl.minimum(pid, extra)\n",
        "    begin = pid * base + tl.maximum(pid, extra)\n",
        "test_sk_runs_cover_every_k_block_once[12-3]",
        "begins-as-if-longer+begin-by-maximum",
    ),
    own(
        "waits15-owners-by-minimum",
        "T5.3",
        "sk_program_of divides by tl.minimum(base, 1), not tl.maximum: past the longer runs every k-block gets "
        "its own program, so an owner waits on programs that hold none of its tile; T5.3's first failure gave only "
        "the expected and the got owners (waits15)",
        "4.1",
        "extra + (it - big) // tl.maximum(base, 1))",
        "extra + (it - big) // tl.minimum(base, 1))",
        "test_sk_runs_cover_every_k_block_once[12-3]",
        "owners-by-minimum",
    ),
    own(
        "waits15-wait-flag-one-too-high",
        "T5.3",
        "sk_collect_partials waits on flags_ptr + p + 1, one above program p's flag: the last wait is on the "
        "owner's own flag, which nobody raises, while program pid - 1's raised flag is never read; the words "
        "named only the owner's own flag (waits15)",
        "4.2",
        WAIT,
        WAIT.replace("flags_ptr + p,", "flags_ptr + p + 1,"),
        "test_stream_k_every_tile_once",
        "waits-forever+waits-own-flag+flag-below-unread",
    ),
)
