"""Lesson T6's mutants of our own from the fourth hunt (hunt4b, 2026-12-03): mistakes planted in a copy of
the reference that the suite let through, or caught with a message that named another cause (or none
where one could be seen).  Each here was let through, or so named, until the check named with it was
added or mended.  Only make check runs them (table=False, not in §8); each must be caught by its test,
whose message names its cause (a key of HUNT4_CAUSES here, or of t6_mistakes.CAUSES) or, for cause "",
none.  t6_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT4_CAUSES = {
    "histogram-out-of-range": ("却没被 mask 挡掉", "that its mask did not leave out"),
    "base-left-out": ("算位置时漏了 block_base[b, e]", "left block_base[b, e] out of each place"),
    "batch-loop-never-ran": ("按批的循环一次也没有跑", "its loop over the batches never ran"),
    "pid-m-n-swapped": ("pid_m 和 pid_n 反了", "pid_m and pid_n come out the other way round"),
    "n-blocks-long": ("num_pid_n 多算了", "num_pid_n came out too large"),
    "partial-k-box-left-out": ("这正是只算整块 k 的和", "it is the sum of the whole k-boxes alone"),
    "first-batch-only": ("正是只有前 SCAN_ROWS", "the sum of the first SCAN_ROWS"),
}

COORDS = "    pid_m, pid_n = tile_coords(tile_id - first_tile, expert_m_blocks, num_pid_n, GROUP_M)\n"
K_LOOP = (
    "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
    "    cols = tl.arange(0, BLOCK_K)\n"
    "    for k0 in range(0, K, BLOCK_K):\n"
)
ROUTE = "    routing = route(topk_ids, w_gate_up.shape[0])\n"
TENSORS = '    for name, t in (("x", x), ("w", w)):\n'
GATE_SUM = "        gate = tl.dot(a, w_desc.load([gate_row, k0]).T, gate)\n"
# gate_up_product's load of A (its next line tells it from gathered_product's)
A_LOAD = (
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
    "        gate = "
)

HUNT4 = (
    own(
        "ids-3d-taken",
        "T6.1",
        "check_routing_inputs refuses fewer than 2 dimensions alone (dim() < 2): 3-D topk_ids pass it and "
        "reach route's unpacking of the shape, whose ValueError names no argument; the suite's bad ids had "
        "1-D ones alone (hunt4)",
        "2.3",
        "    if topk_ids.dim() != 2:\n",
        "    if topk_ids.dim() < 2:\n",
        "test_route_refuses_bad_input[3-D ids]",
        "names-no-argument",  # named since styles15 (t6_mistakes_styles15.py)
    ),
    own(
        "ids-type-unchecked",
        "T6.1",
        "check_routing_inputs does not check that topk_ids is a tensor: a list of lists gets AttributeError "
        "from topk_ids.dim(); no bad input of route's test was a list (and the given route read t.is_cuda "
        "before the check, so the reference failed it too: fixed there) (hunt4)",
        "2.3",
        '    if not isinstance(topk_ids, torch.Tensor):\n        raise TypeError(f"route: topk_ids must be a tensor',
        '    if False:\n        raise TypeError(f"route: topk_ids must be a tensor',
        "test_route_refuses_bad_input[ids a list, not a tensor]",
    ),
    own(
        "histogram-counts-negative-ids",
        "T6.1",
        "count_experts' mask leaves out ids >= num_experts and the tail, not ids below 0: the interpreter's "
        "tl.histogram drops a negative value, a GPU's bins it by its low bits (-32 as 0, and with 32 bins -1 "
        "as 31), so the test passed on the CPU; tests/t6/stray.py now records each value tl.histogram counts "
        "outside its bins (hunt4)",
        "2.3",
        "    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts)\n    hist",
        "    valid = (slots < num_slots) & (ids < num_experts)\n    hist",
        "test_route_ignores_ids_out_of_range",
        "histogram-out-of-range",
    ),
    own(
        "scatter-without-block-base",
        "T6.1",
        "scatter_slots places a slot at first_row + rank, block_base left out: right for one block; the message "
        "said block_base lacked the blocks before b in b's own batch, a fault of scan_counts, whose block_base "
        "was right.  The test now reads block_base as scan_counts left it (hunt4)",
        "2.1",
        "pos = first_row + tl.load(block_base_ptr + tl.program_id(0) * E_BLOCK + ids, mask=valid, other=0) + rank",
        "pos = first_row + rank",
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "base-left-out",
    ),
    own(
        "scan-loop-stops-one-short",
        "T6.1",
        "scan_counts loops b0 over range(0, num_blocks - 1, SCAN_ROWS): with one block it never runs, counts "
        "stay 0 and block_base unwritten; the message said the running sum never grew and to add each batch's "
        "sums to it, which the code did (hunt4)",
        "2.1",
        "for b0 in range(0, num_blocks, SCAN_ROWS):",
        "for b0 in range(0, num_blocks - 1, SCAN_ROWS):",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "batch-loop-never-ran",
    ),
    own(
        "coords-blocks-swapped",
        "T6.2",
        "locate_tile calls tile_coords(tile, num_pid_n, expert_m_blocks, GROUP_M), the block counts the other "
        "way round: every place comes out with pid_m and pid_n swapped; the message gave one tile's place "
        "alone (hunt4)",
        "3.3",
        COORDS,
        COORDS.replace("expert_m_blocks, num_pid_n,", "num_pid_n, expert_m_blocks,"),
        "test_tile_counts_and_places_alone",
        "pid-m-n-swapped",
    ),
    own(
        "coords-returned-swapped",
        "T6.2",
        "locate_tile takes tile_coords' result as (pid_n, pid_m): every place with pid_m and pid_n swapped; the "
        "message gave one tile's place alone (hunt4)",
        "3.3",
        COORDS,
        COORDS.replace("pid_m, pid_n = ", "pid_n, pid_m = "),
        "test_tile_counts_and_places_alone",
        "pid-m-n-swapped",
    ),
    own(
        "n-blocks-plus-one",
        "T6.2",
        "grouped_tiles takes N // BLOCK_N + 1 column blocks: one too many where BLOCK_N divides N, so the total "
        "grows past the host's bound; the message said the loop must stop at the total read on the device, "
        "which it did (hunt4)",
        "3.3",
        "num_pid_n = tl.cdiv(N, BLOCK_N)",
        "num_pid_n = N // BLOCK_N + 1",
        "test_every_tile_of_every_expert_once",
        "n-blocks-long",
    ),
    own(
        "x-rows-at-least",
        "T6.3",
        "check_expert_inputs refuses an x with fewer rows than the routing's tokens alone: one with more (x and "
        "a routing of two batches) is taken, its extra rows never read; the suite had fewer rows alone (hunt4)",
        "4",
        "    if x.shape[0] != rows:\n",
        "    if x.shape[0] < rows:\n",
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "k-loop-whole-boxes-only",
        "T6.3",
        "gathered_product loops k0 over range(0, K - BLOCK_K + 1, BLOCK_K): the last, partial k-box is left out "
        "(all of K when K < BLOCK_K); the message gave the error alone (hunt4)",
        "4.2",
        K_LOOP,
        K_LOOP.replace("range(0, K, BLOCK_K)", "range(0, K - BLOCK_K + 1, BLOCK_K)"),
        "test_gathered_product_alone[gathered]",
        "partial-k-box-left-out",
    ),
    own(
        "mlp-routes-over-top-k",
        "T6.4",
        "moe_mlp routes over topk_ids.shape[1] experts (top_k), not w_gate_up.shape[0]: route refuses the "
        "layer's valid ids, and the learner saw route's ValueError bare, with no word of moe_mlp (hunt4)",
        "5.2",
        ROUTE,
        ROUTE.replace("w_gate_up.shape[0]", "topk_ids.shape[1]"),
        "test_moe_mlp_in_two_launches",
        "route-other-experts",
    ),
    own(
        "bad-slots-in-sorted-slots",
        "T6.1",
        "scatter_slots masks its store into sorted_slots at slots < num_slots alone: a slot whose id is out of "
        "range is stored at row first_row 0 + rank 0, over a slot in range; the message gave the first wrong "
        "row alone (hunt4)",
        "2.3",
        "    tl.store(sorted_slots_ptr + pos, slots, mask=valid)\n",
        "    tl.store(sorted_slots_ptr + pos, slots, mask=slots < num_slots)\n",
        "test_route_ignores_ids_out_of_range",
        "bad-slot-placed",
    ),
    own(
        "x-type-unchecked",
        "T6.3",
        "check_expert_inputs checks that w is a tensor, not x: a list x gets AttributeError from x.dim(); no bad "
        "input of the suite was a list x (hunt4)",
        "4",
        TENSORS,
        TENSORS.replace('("x", x), ("w", w)', '("w", w),'),
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "w-type-unchecked",
        "T6.3",
        "check_expert_inputs checks that x is a tensor, not w: a list w gets AttributeError from w.dim() (hunt4)",
        "4",
        TENSORS,
        TENSORS.replace('("x", x), ("w", w)', '("x", x),'),
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "w-must-be-contiguous",
        "T6.3",
        "check_expert_inputs refuses a w that is not contiguous, valid input (an [E, K, N] store read transposed, "
        "every other expert of a stack) that the given host hands TMA as a copy; no test passed such a w (hunt4)",
        "4",
        "    if w.device != x.device:\n",
        '    if not w.is_contiguous():\n        raise ValueError("grouped_matmul: w must be contiguous")\n'
        "    if w.device != x.device:\n",
        "test_grouped_matmul_takes_weights_that_are_views",
    ),
    own(
        "gate-up-x-strides-swapped",
        "T6.4",
        "gate_up_product reads A with stride_xm and stride_xk swapped; the message gave the error alone, where "
        "gathered_product's test names the sum (hunt4)",
        "5.1",
        A_LOAD,
        A_LOAD.replace(
            "x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk",
            "x_rows[:, None] * stride_xk + (k0 + cols)[None, :] * stride_xm",
        ),
        "test_gate_up_product_alone",
        "x-strides-swapped",
    ),
    own(
        "gate-acc-overwritten",
        "T6.4",
        "gate_up_product writes gate = tl.dot(a, box.T) in each step: the last k-box's product alone is left; "
        "the message gave the error alone (hunt4)",
        "5.1",
        GATE_SUM,
        GATE_SUM.replace(".T, gate)", ".T)"),
        "test_gate_up_product_alone",
        "acc-overwritten",
    ),
    own(
        "scan-first-batch-only",
        "T6.1",
        "scan_counts loops b0 over range(0, SCAN_ROWS, SCAN_ROWS): one batch, the first 16 blocks alone; right "
        "up to 2048 slots, and the message gave the counts alone (hunt4)",
        "2.1",
        "for b0 in range(0, num_blocks, SCAN_ROWS):",
        "for b0 in range(0, SCAN_ROWS, SCAN_ROWS):",
        "test_route_is_a_stable_counting_sort[skewed-1100-2-9]",
        "first-batch-only",
    ),
)
