"""Lesson T5's mutants of our own from the hunt for unplanted mistakes (2026-12-03): each was let
through, or its first message named another cause, until the check named with it was added.  Only
make check runs them (table=False, not in §8); each must be caught by its test, whose message names
its cause (a key of t5_mistakes.CAUSES, HUNTER_CAUSES here) or, for cause "", none.  t5_mistakes.py
gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNTER_CAUSES = {
    "operands-rounded": (
        "操作数在 tl.dot 之前被舍入成了 float16",
        "the operands were rounded to float16 before tl.dot",
    ),
    "caller-tensor-changed": ("tma_ready 改动了调用者的", "tma_ready changed the caller's"),
}

HUNTER = (
    own(
        "k-loop-operands-to-fp16",
        "T5.2",
        "k_block_loop hands tl.dot a.to(tl.float16) and b.to(tl.float16): float32 inputs lose 13 bits "
        "before the product; the message had said to add k-blocks kb_begin..kb_end-1 only, at offset "
        "kb * BLOCK_K, which the loop did (hunter)",
        "3.1",
        "        acc = tl.dot(a, b, acc)\n",
        "        acc = tl.dot(a.to(tl.float16), b.to(tl.float16), acc)\n",
        "test_k_block_loop[45-37-83-0-3-False-torch.float32]",
        "operands-rounded",
    ),
    own(
        "ready-copies-into-caller",
        "T5.2",
        "tma_ready puts the aligned copy into the caller's tensor, t.set_(aligned_copy(t)), and returns it: "
        "the caller's a or b gets other strides and storage; the message had said that fallback=False "
        "must raise, while the call before had made the caller's tensor one that keeps the rules (hunter)",
        "3.2",
        "            operands[name] = aligned_copy(t)\n",
        "            t.set_(aligned_copy(t))\n            operands[name] = t\n",
        "test_tma_ready_copies_or_refuses[fp16 with odd K = 33-<lambda>-<lambda>-a]",
        "caller-tensor-changed",
    ),
    own(
        "rule-two-on-fp16-only",
        "T5.2",
        "tma_problem checks the row stride rule for 2-byte elements alone (if size == 2 and ...): fp32 rows of "
        "24 bytes pass, which TMA refuses; every row-stride case of the suite was fp16, and it passed (hunter)",
        "3.2",
        "    if (t.stride(0) * size) % 16:\n",
        "    if size == 2 and (t.stride(0) * size) % 16:\n",
        "test_tma_problem_names_the_tensor_and_the_rule[fp32 (8, 6): rows of 24 bytes]",
    ),
    own(
        "sk-k-blocks-to-k-minus-one",
        "T5.3",
        "stream_k_tiles counts tl.cdiv(K - 1, BLOCK_K) k-blocks a tile: where K is one past a multiple of "
        "BLOCK_K each tile's last k-block is left out; no stream-K K of the suite was, and it passed (hunter)",
        "4.2",
        "    pid = tl.program_id(0)\n    k_blocks = tl.cdiv(K, BLOCK_K)\n",
        "    pid = tl.program_id(0)\n    k_blocks = tl.cdiv(K - 1, BLOCK_K)\n",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-64-64-129-3]",
        "k-block-left-out",
    ),
    own(
        "dp-k-blocks-to-k-minus-one",
        "T5.1",
        "data_parallel_tiles counts tl.cdiv(K - 1, BLOCK_K) k-blocks a tile: where K is one past a multiple of "
        "BLOCK_K each tile's last k-block is left out; T5.1 passed it (every K there ended 27 columns into its "
        "last k-block) and only T5.2's products showed it (hunter)",
        "2.2",
        "    k_blocks = tl.cdiv(K, BLOCK_K)\n    for tile_id in tl.range(first_tile",
        "    k_blocks = tl.cdiv(K - 1, BLOCK_K)\n    for tile_id in tl.range(first_tile",
        "test_every_tile_once_over_many_grids[plain]",
    ),
)
