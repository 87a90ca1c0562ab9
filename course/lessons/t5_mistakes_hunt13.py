"""Lesson T5's mutants of our own from the thirteenth mistake hunt (hunt13, 2026-12-05).  A tl.reshape with
can_reorder=True where the order matters (the subtiled store's halves, a partial flattened into its slot or read
back out of it): the interpreter keeps numpy's order, so every check passed, where on a GPU the compiler may lay the
elements out any way; tests/reorder.py now gives such reshapes (and tl.cat) their elements last first in one more
run, and names them where the result changes.  Two k-loop sums test_k_block_loop told as a wrong k-block range
(each block's product rounded too; acc += tl.dot(a, b, acc)), now named.  Only make check runs them (table=False,
not in §8); each must be caught by its test, whose message names its cause (a key of t5_mistakes.CAUSES,
HUNT13_CAUSES here).  t5_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t5_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT13_CAUSES = {
    "reorder-taken": ("代码里有可以重排元素的操作", "an op free to reorder its elements ran"),
    "acc-added-twice": ("都把之前的和加了两遍", "before each k-block added twice"),
}

HUNT13 = (
    own(
        "hunt13-subtile-reshape-can-reorder",
        "T5.4",
        "the tile reshaped to (BLOCK_M, 2, BLOCK_N // 2) with can_reorder=True before the split: right on the "
        "interpreter, halves of scrambled cells on a GPU; the whole suite passed (hunt13)",
        "5",
        "        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))\n",
        "        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2), can_reorder=True), (0, 2, 1))\n",
        "test_store_tile_subtiled[37-56-torch.float16]",
        "reorder-taken",
    ),
    own(
        "hunt13-publish-flat-can-reorder",
        "T5.3",
        "sk_publish_partial stores tl.reshape(acc, (BLOCK_M * BLOCK_N,), can_reorder=True) at the slot's flat "
        "offsets: the slot is row-major on the interpreter alone; the whole suite passed (hunt13)",
        "4.2",
        "    offs = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]\n"
        "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n",
        "    flat = tl.arange(0, BLOCK_M * BLOCK_N)\n"
        "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + flat, tl.reshape(acc, (BLOCK_M * BLOCK_N,), "
        "can_reorder=True))\n",
        "test_sk_publish_and_collect_keep_the_order_of_the_tile",
        "reorder-taken",
    ),
    own(
        "hunt13-collect-flat-can-reorder",
        "T5.3",
        "sk_collect_partials reads a slot flat and reshapes it to the tile with can_reorder=True: each cell added "
        "to its own on the interpreter alone; the whole suite passed (hunt13)",
        "4.2",
        '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n',
        "        acc += tl.reshape(tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + tl.arange(0, BLOCK_M * BLOCK_N), "
        'cache_modifier=".cg"), (BLOCK_M, BLOCK_N), can_reorder=True)\n',
        "test_sk_publish_and_collect_keep_the_order_of_the_tile",
        "reorder-taken",
    ),
    own(
        "hunt13-k-loop-product-and-sum-rounded",
        "T5.2",
        "k_block_loop adds each k-block's tl.dot rounded to the inputs' dtype to the running sum rounded so too: "
        "the message said to add k-blocks kb_begin..kb_end-1 only, at offset kb * BLOCK_K, which it did; the check "
        "of a sum rounded after each k-block now models the product rounded too (hunt13)",
        "3.1",
        "        acc = tl.dot(a, b, acc)\n    # ---- T5.2 end ----",
        "        acc = (acc.to(a.dtype) + tl.dot(a, b).to(a.dtype)).to(tl.float32)\n    # ---- T5.2 end ----",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "sum-rounded-each-block",
    ),
    own(
        "hunt13-k-loop-acc-added-twice",
        "T5.2",
        "k_block_loop writes acc += tl.dot(a, b, acc): the sum before each k-block is added twice; the message "
        "said to add k-blocks kb_begin..kb_end-1 only, at offset kb * BLOCK_K, which it did; the check now tells "
        "that sum, and its last words say what is wanted, not a cause it did not find (hunt13)",
        "3.1",
        "        acc = tl.dot(a, b, acc)\n    # ---- T5.2 end ----",
        "        acc += tl.dot(a, b, acc)\n    # ---- T5.2 end ----",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "acc-added-twice",
    ),
)
