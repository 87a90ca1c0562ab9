"""Lesson T5's mutants of our own from the eleventh mistake hunt (hunt11, 2026-12-04): TMA's rules judged for the
shapes at hand only (one row, one column, 2-byte elements, 128-byte bases), fallback=False half kept, and the
stream-K split and walk with the k-blocks counted otherwise.  All were caught; one said only what tma_problem
answered, and now names its cause too.  Only make check runs them (table=False, not in §8); each must be caught
by its test, whose message names its cause (a key of t5_mistakes.CAUSES, HUNT11_CAUSES here) or, for cause "",
says what it saw.  t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT11_CAUSES = {
    "int64-coordinate": ("坐标是 int64", "coordinate is an int64"),
    "two-bytes-each": ("每个元素都按 2 个字节算", "it counts 2 bytes per element whatever the dtype"),
}

HUNT11 = (
    own(
        "hunt11-row-stride-unchecked-for-one-row",
        "T5.2",
        "tma_problem checks the row stride only for tensors of more than one row: a single fp16 row of 7 elements "
        "(14 bytes) passes (hunt11)",
        "3.2",
        "    if (t.stride(0) * size) % 16:\n",
        "    if t.shape[0] > 1 and (t.stride(0) * size) % 16:\n",
        "test_tma_problem_names_the_tensor_and_the_rule[fp16 (1, 7): one row of 14 bytes]",
    ),
    own(
        "hunt11-contiguity-skipped-for-one-column",
        "T5.2",
        "tma_problem checks stride(1) only for tensors of more than one column: one column of every other element "
        "passes (hunt11)",
        "3.2",
        "    if t.stride(1) != 1:\n",
        "    if t.shape[1] > 1 and t.stride(1) != 1:\n",
        "test_tma_problem_names_the_tensor_and_the_rule[one column of every other]",
    ),
    own(
        "hunt11-tma-bytes-as-fp16",
        "T5.2",
        "tma_problem takes every element as 2 bytes (size = 2): right for fp16 and bf16, fp32's rows of 4 refused; "
        "the message said only what tma_problem answered (hunt11)",
        "3.2",
        "    size = t.element_size()\n",
        "    size = 2\n",
        "test_tma_problem_accepts_legal_tensors",
        "two-bytes-each",
    ),
    own(
        "hunt11-base-aligned-to-128",
        "T5.2",
        "tma_problem asks for a base aligned to 128 bytes, TMA's fastest, where the rule is 16 (hunt11)",
        "3.2",
        "    if t.data_ptr() % 16:\n",
        "    if t.data_ptr() % 128:\n",
        "test_tma_problem_accepts_legal_tensors",
        "base-stricter-than-16",
    ),
    own(
        "hunt11-no-fallback-refuses-b-only",
        "T5.2",
        "tma_ready with fallback=False refuses a b that breaks a rule, and copies an a that does (hunt11)",
        "3.2",
        "        if problem and not fallback:\n",
        '        if problem and not fallback and name == "b":\n',
        "test_tma_ready_copies_or_refuses[fp16 with odd K = 33-<lambda>-<lambda>-a]",
    ),
    own(
        "hunt11-sk-programs-by-tiles",
        "T5.3",
        "stream_k_split gives stream-K min(num_sms, sk_tiles) programs, not min(num_sms, sk_tiles * k_blocks): "
        "a few tiles of many k-blocks get a program each, and nothing is split (hunt11)",
        "4.3",
        "    return sk_tiles, min(num_sms, sk_tiles * k_blocks)\n",
        "    return sk_tiles, min(num_sms, sk_tiles)\n",
        "test_stream_k_split[64-8-132-auto-want0]",
        "programs-per-tile",  # named since enlearner14 (t5_mistakes_enlearner14.py)
    ),
    own(
        "hunt11-sk-total-from-k-elements",
        "T5.3",
        "stream_k_tiles counts the k-blocks as cdiv(sk_tiles * K, BLOCK_K), not sk_tiles * cdiv(K, BLOCK_K): the "
        "same where BLOCK_K divides K, fewer where each tile has a partial last k-block (hunt11)",
        "4.2",
        "    total = sk_tiles * k_blocks\n",
        "    total = tl.cdiv(sk_tiles * K, BLOCK_K)\n",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-64-64-130-3]",
    ),
    own(
        "hunt11-sk-one-segment-per-run",
        "T5.3",
        "stream_k_tiles walks one segment of its run (if, not while): a run over two tiles or more leaves the "
        "earlier ones undone (hunt11)",
        "4.2",
        "    while it_end > run_begin:\n",
        "    if it_end > run_begin:\n",
        "test_stream_k_every_tile_once",
    ),
    own(
        "hunt11-k-offset-int64",
        "T5.2",
        "k_block_loop computes a box's k offset in int64 (kb.to(tl.int64) * BLOCK_K): descriptor coordinates are "
        "32-bit; the interpreter's own assertion said so at the load, raw, in English alone (hunt11)",
        "3.1",
        "        off_k = kb * BLOCK_K\n",
        "        off_k = kb.to(tl.int64) * BLOCK_K\n",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "int64-coordinate",
    ),
)
