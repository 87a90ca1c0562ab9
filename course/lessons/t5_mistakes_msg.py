"""Lesson T5's mutants of our own from a hunt for failures whose messages named another step, another
section or no cause at all (t5msg, 2026-12-02): each is caught by its test, whose message now names
its own cause and reads the section of the body it is in.  Only make check runs them (table=False).
Kept apart from t5_mistakes_own.py and t5_mistakes_holes.py, which would pass 400 lines with them;
t5_mistakes.py gathers them last.
"""

from course.lessons.t5_mistakes_own import COORDS, LOOP, own

HALVES_STORED = (  # T5.4's two stores, the right half's epilogue between them
    "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))\n"
    "        right = bias_and_activation(right, bias_ptr, N, stride_bias, 2 * pid_n + 1, BLOCK_N // 2, HAS_BIAS,\n"
    "                                    ACTIVATION)\n"
    "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))\n"
)
WAIT_THEN_ADD = (  # sk_collect_partials: the wait for program p's flag, then its partial added
    '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:  # an integer read that waits\n'
    "            pass\n"
    '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n'
)
DP_SUM = (  # data_parallel_tiles's whole-tile sum, the line before its finish_tile
    "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, 0, k_blocks,\n"
    "                        BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)\n"
)
SK_COORDS = (  # stream_k_tiles's call of tile_coords, and the line after it
    "        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)\n"
    "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, it_begin - tile_begin,"
)

MSG = (
    own(
        "a-load-coords-swapped",
        "T5.2",
        "k_block_loop loads A's box at [off_k, off_m], its coordinates the other way round",
        "3.1",
        "        a = a_desc.load([off_m, off_k])",
        "        a = a_desc.load([off_k, off_m])",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "load-coords-swapped",
    ),
    own(
        "b-load-coords-swapped",
        "T5.2",
        "k_block_loop loads a row-major B's box at [off_n, off_k], its coordinates the other way round",
        "3.1",
        "            b = b_desc.load([off_k, off_n])",
        "            b = b_desc.load([off_n, off_k])",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "load-coords-swapped",
    ),
    own(
        "subtile-right-bias-pointer",
        "T5.4",
        "the right half's bias read through bias_ptr + BLOCK_N // 2 with the left half's number: the "
        "mask at N then lets it read past the bias",
        "5",
        "right = bias_and_activation(right, bias_ptr, N, stride_bias, 2 * pid_n + 1, BLOCK_N // 2,",
        "right = bias_and_activation(right, bias_ptr + BLOCK_N // 2 * stride_bias, N, stride_bias, 2 * pid_n, "
        "BLOCK_N // 2,",
        "test_store_tile_subtiled_bias_per_half[none]",
        "stray-access",
    ),
    own(
        "dp-coords-mn-swapped",
        "T5.1",
        "the tile loop calls tile_coords(tile_id, num_pid_n, num_pid_m, GROUP_M): the grid's sizes swapped",
        "2.2",
        LOOP + COORDS,
        LOOP + COORDS.replace("num_pid_m, num_pid_n, GROUP_M", "num_pid_n, num_pid_m, GROUP_M"),
        "test_every_tile_once_over_many_grids[plain]",
        "coords-mn-swapped",
    ),
    own(
        "sk-coords-mn-swapped",
        "T5.3",
        "stream_k_tiles calls tile_coords(tile_id, num_pid_n, num_pid_m, GROUP_M): the grid's sizes swapped",
        "4.2",
        SK_COORDS,
        SK_COORDS.replace("num_pid_m, num_pid_n, GROUP_M", "num_pid_n, num_pid_m, GROUP_M"),
        "test_stream_k_every_tile_once",
        "coords-mn-swapped",
    ),
    own(
        "k-offset-next-block",
        "T5.2",
        "k_block_loop loads k-block kb at (kb + 1) * BLOCK_K: at K's end the same sum as a loop that starts one late",
        "3.1",
        "        off_k = kb * BLOCK_K\n",
        "        off_k = (kb + 1) * BLOCK_K\n",
        "test_k_block_loop[40-48-160-1-3-False-torch.float16]",
        "k-offset-moved",
    ),
    own(
        "subtile-coords-swapped",
        "T5.4",
        "both halves stored at [pid_n * BLOCK_N (+ BLOCK_N // 2), pid_m * BLOCK_M], their coordinates swapped",
        "5",
        HALVES_STORED,
        HALVES_STORED.replace("[pid_m * BLOCK_M, pid_n * BLOCK_N]", "[pid_n * BLOCK_N, pid_m * BLOCK_M]").replace(
            "[pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2]", "[pid_n * BLOCK_N + BLOCK_N // 2, pid_m * BLOCK_M]"
        ),
        "test_store_tile_rounds_once_after_the_bias[2]",
        "store-coords-swapped",
    ),
    own(
        "subtile-right-half-coords-swapped",
        "T5.4",
        "the right half alone stored at [pid_n * BLOCK_N + BLOCK_N // 2, pid_m * BLOCK_M] (it was 'cells never "
        "written', with no cause)",
        "5",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))",
        "c_desc.store([pid_n * BLOCK_N + BLOCK_N // 2, pid_m * BLOCK_M], right.to(c_desc.dtype))",
        "test_store_tile_subtiled[37-48-torch.float16]",
        "store-coords-swapped",
    ),
    own(
        "c-box-always-half",
        "T5.2",
        "c_desc's box [BLOCK_M, BLOCK_N // 2] whatever EPILOGUE_SUBTILE: the whole-tile store then fails in the "
        "kernel with the interpreter's words about shapes",
        "3.1",
        "c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])",
        "c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N // 2])",
        "test_make_descriptors_boxes",
    ),
    own(
        "k-dot-no-accumulate",
        "T5.2",
        "k_block_loop writes acc = tl.dot(a, b): each k-block's product replaces the sum so far",
        "3.1",
        "        acc = tl.dot(a, b, acc)\n    # ---- T5.2 end",
        "        acc = tl.dot(a, b)\n    # ---- T5.2 end",
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "dot-overwrites",
    ),
    own(
        "dp-segment-pid-swapped",
        "T5.1",
        "the tile loop passes k_segment pid_n, pid_m: T5.1's count-only tests pass, T5.2's first product read §3.3",
        "2.2",
        "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, 0, k_blocks,",
        "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_n, pid_m, 0, k_blocks,",
        "test_matmul_whole_tile_with_bias_and_gelu[dp]",
        "sums-turned",
    ),
    own(
        "sk-first-pid-plus-one",
        "T5.3",
        "the owner waits from sk_program_of(tile_begin + 1): a program whose run ends at the tile's first "
        "k-block is never waited for, and its flag stays up",
        "4.2",
        "            first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n",
        "            first_pid = sk_program_of(tile_begin + 1, total, NUM_PROGS)\n",
        "test_stream_k_every_tile_once",
        "flags-never-read",
    ),
    own(
        "sk-segment-absolute",
        "T5.3",
        "stream_k_tiles hands k_segment it_begin, it_end, not counted from the tile's first k-block: the count-only "
        "tests see the right number of k-blocks, the products only 'relative error'",
        "4.2",
        "pid_m, pid_n, it_begin - tile_begin,\n                        it_end - tile_begin,",
        "pid_m, pid_n, it_begin,\n                        it_end,",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-45-37-160-3]",
        "segment-global",
    ),
    own(
        "sk-load-before-wait",
        "T5.3",
        "the owner loads program p's partial, then waits for p's flag, then adds what it loaded",
        "4.2",
        WAIT_THEN_ADD,
        '        part = tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n'
        '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:  # an integer read that waits\n'
        "            pass\n"
        "        acc += part\n",
        "test_fix_up_waits_and_adds_in_program_order[reversed]",
        "read-early",
    ),
    own(
        # a race the reversed order cannot show (the owner's turn comes back after every publisher's, each
        # storing and raising its flag in one turn) and a shuffled one only now and then (pid - 1 before
        # the owner, the owner before another publisher); the record of the owner's loads shows it always
        "sk-wait-last-only",
        "T5.3",
        "the owner waits on program pid - 1's flag alone, then adds every partial",
        "4.2",
        WAIT_THEN_ADD,
        WAIT_THEN_ADD.replace("flags_ptr + p, 0,", "flags_ptr + pid - 1, 0,"),
        "test_publish_and_collect_memory_order",
    ),
    own(
        "sk-owner-at-run-end",
        "T5.3",
        "a segment made the owner where it ends its run (it_end == run_end), not where it ends its tile: the "
        "count-only test said '0: no program took it; more: a wrong start or stride', the tile loop's words",
        "4.2",
        "        if it_end == tile_begin + k_blocks:  # this run holds the tile's last k-block: the owner\n",
        "        if it_end == run_end:  # this run holds the tile's last k-block: the owner\n",
        "test_stream_k_every_tile_once",
    ),
    own(
        "sk-collect-slot-plus-one",
        "T5.3",
        "sk_collect_partials reads program p's partial from slot p + 1",
        "4.2",
        "        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs",
        "        acc += tl.load(partials_ptr + (p + 1) * (BLOCK_M * BLOCK_N) + offs",
        "test_sk_collect_partials_alone",
        "collect-slot-along",
    ),
    own(
        "sk-collected-dropped",
        "T5.3",
        "the owner keeps sk_collect_partials's sum aside and finishes its own acc: the count-only tests pass",
        "4.2",
        "            acc = sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid, BLOCK_M, BLOCK_N)\n",
        "            summed = sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid, BLOCK_M, BLOCK_N)\n",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-45-37-160-3]",
        "partials-lost",
    ),
    own(
        "sk-publish-zeros",
        "T5.3",
        "stream_k_tiles publishes acc * 0.0: every flag goes up, every partial is zeros",
        "4.2",
        "            sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)\n",
        "            sk_publish_partial(acc * 0.0, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)\n",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-45-37-160-3]",
        "partials-lost",
    ),
    own(
        "right-bias-pid-n-plus-one",
        "T5.4",
        "the right half's bias read as half number pid_n + 1, 'the next half'",
        "5",
        "2 * pid_n + 1, BLOCK_N // 2, HAS_BIAS,",
        "pid_n + 1, BLOCK_N // 2, HAS_BIAS,",
        "test_store_tile_subtiled_bias_per_half[none]",
        "right-half-off",
    ),
    own(
        "tma-ready-copies-all",
        "T5.2",
        "tma_ready copies every operand, W read K-major too: the message gave b_kmajor and a shape that both "
        "looked right, and not that b was a copy",
        "3.2",
        "        if problem:\n            operands[name] = aligned_copy(t)\n",
        "        operands[name] = aligned_copy(t)\n",
        "test_tma_ready_reads_b_t_k_major_without_a_copy",
    ),
    own(
        "dp-finish-program-id",
        "T5.1",
        "finish_tile given the program id, not the tile: the message had said the loop stops before "
        "num_tiles (t5learner)",
        "2.2",
        DP_SUM + "        finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,\n",
        DP_SUM
        + "        finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tl.program_id(0), pid_m, pid_n,\n",
        "test_a_program_does_several_tiles",
        "finish-other-tile",
    ),
    own(
        "flags-not-reset-reordered",
        "T5.3",
        "the owner does not put a flag back to 0, seen in a launch run in another order after one in id order: "
        "the message had said only that the owner read a partial before it was written (t5learner)",
        "4.2",
        '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n',
        "",
        "test_stream_k_in_any_program_order[32-32-320-5-reversed]",
        "flags-raised-at-start",
    ),
    own(
        "tma-ready-two-values",
        "T5.2",
        "tma_ready returns (a, b) without b_kmajor: the message had been Python's 'not enough values to "
        "unpack', with no function or section named (t5learner)",
        "3.2",
        '    return operands["a"], operands["b"], b_kmajor\n',
        '    return operands["a"], operands["b"]\n',
        "test_tma_ready_leaves_legal_views_alone",
        "ready-not-three",
    ),
    own(
        "split-answer-swapped",
        "T5.3",
        "stream_k_split returns (programs, sk_tiles): the product's message had named the loops' ends, which "
        "were right (t5learner)",
        "4.3",
        "    return sk_tiles, min(num_sms, sk_tiles * k_blocks)\n",
        "    return min(num_sms, sk_tiles * k_blocks), sk_tiles\n",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-split-64-40-256-9]",
        "sk-tiles-past",
    ),
    own(
        "store-at-tile-index",
        "T5.2",
        "store_tile stores at [pid_m, pid_n], the tile's numbers, not its first element: the message had been "
        "the interpreter's bare 'block offset start must be 16-byte aligned' (t5learner)",
        "3.3",
        "        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))",
        "        c_desc.store([pid_m, pid_n], acc.to(c_desc.dtype))",
        "test_store_tile[37-48-torch.float16]",
        "offset-in-blocks",
    ),
    own(
        "sk-first-pid-after-owner-of-first",
        "T5.3",
        "the owner waits from sk_program_of(tile_begin) + 1, seen in a product: the message had said to publish "
        "the segment's acc and finish with sk_collect_partials's, both right (t5learner)",
        "4.2",
        "            first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n",
        "            first_pid = sk_program_of(tile_begin, total, NUM_PROGS) + 1\n",
        "test_stream_k_products_are_right_and_bitwise_repeatable[torch.float16-sk-45-37-160-3]",
        "partials-lost+flags-still-up",
    ),
)
