"""Lesson T5's mutants of our own from the tenth leftovers helper (left10, 2026-12-04): each was caught with a
relative error alone, a message shared with another mistake, a box's shape alone or only by the Hopper compile,
until the check named with it was added or mended.  Only make check runs them (table=False, not in §8); each
must be caught by its test, whose message names its cause (a key of t5_mistakes.CAUSES, LEFT10_CAUSES here).
t5_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import WHOLE_TILE_EPILOGUE, own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT10_CAUSES = {
    "no-bias-or-activation": ("bias 和 activation 都没有用上", "neither the bias added nor the activation applied"),
    "c-box-rows-halved": ("行数被减半了", "its rows halved"),
}

PUBLISH = (
    "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n"
    "    tl.debug_barrier()  # every thread's part of the tile is written before the flag goes up\n"
    '    tl.atomic_xchg(flags_ptr + pid, 1, sem="release")\n'
)

LEFT10 = (
    own(
        "left10-kmajor-swapped-every-box-outside",
        "T5.2",
        "a K-major B box loaded at [off_k, off_n], where every such box falls outside B^T (k-blocks 2..4 of a B^T "
        "of 40 rows): the sum is all zeros, and the message said a relative error alone (left10)",
        "3.1",
        "b = b_desc.load([off_n, off_k]).T",
        "b = b_desc.load([off_k, off_n]).T",
        "test_k_block_loop[24-40-200-2-5-True-torch.float16]",
        "load-coords-swapped",
    ),
    own(
        "left10-store-tile-without-bias-and-activation",
        "T5.2",
        "store_tile does not call bias_and_activation: the GELU case said a relative error alone (left10)",
        "3.3",
        "        " + WHOLE_TILE_EPILOGUE + "\n",
        "",
        "test_store_tile_bias_and_activation[gelu]",
        "no-bias-or-activation",
    ),
    own(
        "left10-flag-first-seen-first",
        "T5.3",
        "the flag raised before the partial is stored: the first failure, a NaN of the pair run in turns, said "
        "what an owner that does not wait gives too; the memory-order check came later (left10)",
        "4.2",
        PUBLISH,
        PUBLISH.split("\n", 2)[2] + PUBLISH.split("\n", 1)[0] + "\n",
        "test_fix_up_waits_and_adds_in_program_order[reversed]",
        "read-early+flag-first",
    ),
    own(
        "left10-c-box-rows-halved",
        "T5.2",
        "make_descriptors gives C's box BLOCK_M // 2 rows: the message gave the box's shape alone (left10)",
        "3.1",
        "c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])",
        "c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M // 2, BLOCK_N // EPILOGUE_SUBTILE])",
        "test_make_descriptors_boxes",
        "c-box-rows-halved",
    ),
    own(
        "left10-bias-given-block-m",
        "T5.2",
        "store_tile hands bias_and_activation BLOCK_M where BLOCK_N belongs: only the Hopper compile saw it; now "
        "a store_tile of 16 x 32 tiles with a bias fails on the CPU, and says that square tiles do not (left10; the "
        "message observes, it names no cause)",
        "3.3",
        WHOLE_TILE_EPILOGUE,
        WHOLE_TILE_EPILOGUE.replace("pid_n, BLOCK_N,", "pid_n, BLOCK_M,"),
        "test_store_tile_bias_of_a_tile_that_is_not_square",
    ),
)
