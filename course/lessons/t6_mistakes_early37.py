"""Lesson T6's mutants of our own from early37 (2026-12-05): slips a new learner of T6.1 and T6.2, reading the
Chinese explainer, makes, planted one at a time in the reference and run through `make test STEP=...` with
COURSE_LANG=zh.  Two passed every test: complex topk_ids let through (left so: torch.aminmax refuses them itself, and
a check of floats and bools alone is a correct style the suite must pass), and num_experts compared with 1 before
its type is checked (test_routing_refuses.py has a case for it now).  The others were told a wrong cause
(finish_tile's pid_m and pid_n swapped, N handed for num_pid_n) or the numbers alone (count_experts' slots from
program_id, its rows all stored at row 0, scan_counts' batches without b0, row_begin stepped by BLOCK_N), and
are named now.  tl.min for tl.minimum (row_end) still shows Triton's English first, so it is no mutant here
(the messages check wants Chinese in that line): failure_words.reduction_pair_note says its cause in the lines
under it.  Only make check runs these (table=False, not in §8); each must be caught by its test, whose message
names its cause (EARLY37_CAUSES here) or, for cause "", none.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
EARLY37_CAUSES = {
    "finish-pids-swapped": (
        "是交给 finish_tile 的 pid_m 和 pid_n 互换了位置",
        "grouped_tiles handed finish_tile pid_m and pid_n the other way round",
    ),
    "count-blocks-from-b": ("程序 b 从 slot b 读起", "program b read from slot b"),
    "row-begin-by-block-n": ("算 row_begin 时用了 BLOCK_N", "row_begin stepped by BLOCK_N"),
    "scan-batches-from-zero": ("每一批读的都是前", "batch read the first"),
    "counts-all-at-row-0": ("每个程序都存到了第 0 行", "every program stored at row 0"),
    "n-for-column-blocks": ("num_pid_n 的位置上", "N passed where num_pid_n goes"),
}

# grouped_tiles' call of finish_tile, up to its pid_m and pid_n
FINISH_CALL = "        finish_tile(out_ptr, acc, weights_ptr, sorted_slots_ptr, trace_ptr, tile_id, expert, "

EARLY37 = (
    own(
        "early37-finish-pids-swapped",
        "T6.2",
        "grouped_tiles hands finish_tile pid_n where pid_m goes and pid_m where pid_n goes, its rows right: told "
        "'row_begin was worked out from pid_n' and 'the pid_n tile_product got is the tile's pid_m' before (early37)",
        "3.2",
        FINISH_CALL + "pid_m, pid_n,",
        FINISH_CALL + "pid_n, pid_m,",
        "test_every_tile_of_every_expert_once",
        "finish-pids-swapped",
    ),
    own(
        "early37-finish-pids-swapped-handoff",
        "T6.2",
        "the same swap, in the test that pairs tile_product's arguments with finish_tile's (early37)",
        "3.3",
        FINISH_CALL + "pid_m, pid_n,",
        FINISH_CALL + "pid_n, pid_m,",
        "test_tile_product_gets_the_tile_finish_tile_gets",
        "finish-pids-swapped",
    ),
    own(
        "early37-tile-counts-given-n",
        "T6.2",
        "grouped_tiles hands expert_tile_counts N, not num_pid_n: tile_ends count N tiles per m-block and the loop "
        "runs to that total; told 'the loop must stop at the total read on the device', which it did (early37)",
        "3.4",
        "expert_tile_counts(counts_ptr, num_experts, num_pid_n, BLOCK_M, E_BLOCK)",
        "expert_tile_counts(counts_ptr, num_experts, N, BLOCK_M, E_BLOCK)",
        "test_every_tile_of_every_expert_once",
        "n-for-column-blocks",
    ),
    own(
        "early37-count-slots-from-program-id",
        "T6.1",
        "count_experts reads slots tl.program_id(0) + tl.arange(0, BLOCK), not program_id * BLOCK + ...: the "
        "blocks overlap and a slot is counted many times; told the counts alone before (early37)",
        "2.1",
        "    slots = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n",
        "    slots = tl.program_id(0) + tl.arange(0, BLOCK)\n",
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "count-blocks-from-b",
    ),
    own(
        "early37-row-begin-by-block-n",
        "T6.2",
        "grouped_tiles steps row_begin by pid_m * BLOCK_N, not pid_m * BLOCK_M: told 'covers sorted rows 16..4, rows "
        "4..4 expected' alone before (early37)",
        "3.2",
        "row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_M",
        "row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_N",
        "test_every_tile_of_every_expert_once",
        "row-begin-by-block-n",
    ),
    own(
        "early37-scan-batches-from-zero",
        "T6.1",
        "scan_counts' batches read blocks tl.arange(0, SCAN_ROWS), without b0: each batch reads the first "
        "SCAN_ROWS blocks again; told the counts alone before (early37)",
        "2.1",
        "        blocks = b0 + tl.arange(0, SCAN_ROWS)\n",
        "        blocks = tl.arange(0, SCAN_ROWS)\n",
        "test_route_is_a_stable_counting_sort[skewed-1100-2-9]",
        "scan-batches-from-zero",
    ),
    own(
        "early37-num-experts-compared-first",
        "T6.1",
        "check_routing_inputs compares num_experts with 1 before checking its type: a string raises Python's own "
        "TypeError, naming no argument; passed every test before (early37)",
        "2.3",
        "    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:\n",
        "    if num_experts < 1 or isinstance(num_experts, bool) or not isinstance(num_experts, int):\n",
        "test_route_refuses_bad_input[num_experts a string]",
        "names-no-argument",
    ),
    own(
        "early37-counts-all-at-row-0",
        "T6.1",
        "count_experts stores each block's histogram at block_counts + tl.arange(0, E_BLOCK), row 0, for every "
        "program: told the counts alone before (early37)",
        "2.1",
        "    tl.store(block_counts_ptr + tl.program_id(0) * E_BLOCK + tl.arange(0, E_BLOCK), hist)\n",
        "    tl.store(block_counts_ptr + tl.arange(0, E_BLOCK), hist)\n",
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "counts-all-at-row-0",
    ),
)
