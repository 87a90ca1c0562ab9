"""Lesson T5's mutants of our own from the endless-loop watch (spin11, 2026-12-04): stream-K loops that never end
on the interpreter.  Each was caught by pytest-timeout's words alone after 60 s (a step of them took about four
minutes on a busy 2-core machine), or at once by the spin watch and kept so, until course/interpreter_spin.py
counted an access made again with no progress.  Only make check runs them (table=False, not in §8); each must be
caught by its test, whose message names its cause (a key of t5_mistakes.CAUSES, SPIN11_CAUSES here).
t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.  The two
# used here are course/interpreter_spin.py's, already in t5_mistakes.CAUSES (hunt6's and the fix-up's).
SPIN11_CAUSES = {}

SPIN11 = (
    own(
        "spin11-walk-moves-run-end",
        "T5.3",
        "stream_k_tiles ends each pass with run_end = it_begin, not it_end = it_begin: it_end never moves, and each "
        "pass sums and publishes the same segment and adds its k-blocks to the trace again; the count-only test timed "
        "out after 60 s with pytest-timeout's words alone (the trace's add changed memory each pass) (spin11)",
        "4.2",
        "        it_end = it_begin\n",
        "        run_end = it_begin\n",
        "test_stream_k_every_tile_once",
        "loop-stopped-advancing",
    ),
    own(
        "spin11-wait-while-flag-up",
        "T5.3",
        "sk_collect_partials waits while the flag is 1 (== 1, not != 1): the owner spins on a raised flag that "
        "nothing puts down before it reads on; named at once by the spin watch, kept so (spin11)",
        "4.2",
        '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:',
        '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") == 1:',
        "test_stream_k_every_tile_once",
        "waits-forever+flag-read-raised",  # the raised flag named since enlearner14
    ),
)
