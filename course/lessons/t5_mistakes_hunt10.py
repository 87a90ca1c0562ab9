"""Lesson T5's mutants of our own from the tenth mistake hunt (hunt10, 2026-12-04): stream-K shortcuts and races
that the whole of T5.3 let through, and a publish caught without its cause, each caught since by the check named
with it.  Only make check runs them (table=False, not in §8); each must be caught by its test, whose message
names its cause (a key of t5_mistakes.CAUSES).  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT10_CAUSES = {
    "reads-outside-run": ("它却还读了 A 的第", "yet it also read A's k-blocks"),
    "segment-stored-in-c": (
        "只持有它的一段，只能把那一段作为 partial 发布",
        "hold a segment of it only, which they publish",
    ),
    "one-slot-for-all": ("个程序都存进了第", "programs stored into slot"),
}

COLLECT = "            acc = sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid, BLOCK_M, BLOCK_N)\n"
PUBLISH = "            sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)\n"
RECORDED = "test_stream_k_in_any_program_order[32-32-320-5-reversed]"

HUNT10 = (
    own(
        "hunt10-owner-sums-whole-tile",
        "T5.3",
        "the owner collects the partials, then sums its whole tile itself with k_block_loop over every k-block (the "
        "sum it collected thrown away): C is right and the trace, counted in k_segment, is too, so the whole of "
        "T5.3 passed; each program's reads of A are now held to its own run (hunt10)",
        "4.2",
        COLLECT,
        COLLECT + "            if TRACE != 2:\n"
        "                acc = k_block_loop(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, 0, k_blocks, BLOCK_M, "
        "BLOCK_N, BLOCK_K, B_KMAJOR)\n",
        RECORDED,
        "reads-outside-run",
    ),
    own(
        "hunt10-publisher-stores-its-segment",
        "T5.3",
        "a program that publishes a segment also stores that segment's sum into C's tile: the owner, a higher "
        "program, stores the whole tile after it in every order the interpreter ran, so the whole of T5.3 passed; on "
        "a GPU either store may land last.  C's tiles are now held to their owners' stores (hunt10)",
        "4.2",
        PUBLISH,
        PUBLISH + "            if TRACE == 0:\n"
        "                store_tile(c_desc, acc, bias_ptr, N, stride_bias, pid_m, pid_n, BLOCK_M, BLOCK_N, "
        "EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION)\n",
        RECORDED,
        "segment-stored-in-c",
    ),
    own(
        "hunt10-publish-all-into-slot-zero",
        "T5.3",
        "sk_publish_partial stores every program's partial at partials_ptr + offs, slot 0 (pid left out): caught by "
        "the publish's own check, whose message said only how many cells of program 0's slot differ (hunt10)",
        "4.2",
        "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n",
        "    tl.store(partials_ptr + offs, acc)\n",
        "test_sk_publish_partial_alone",
        "one-slot-for-all",
    ),
)
