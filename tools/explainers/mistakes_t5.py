"""Lesson T5's classic mistakes, for its explainer §8 table (python -m tools.explainers.mistakes --lesson T5).

Each is a text substitution in solutions/t5_persistent.py and the one test of tests/test_t5.py that
must catch it on the interpreter; tools/explainers/mistakes.py makes each one, with the reference
of T4 in mine/ beside it (T5 imports tile_coords and bias_and_activation from it), and runs that
test.  Not here, because no CPU test can see it: partials added in no fixed order (the interpreter
runs the programs one after another, in order); content/t5*.md §8 names the GPU test instead.
"""

from tools.explainers.mistakes import Mistake

# The head of data_parallel_tiles's loop: tile_coords is called twice in the reference, once here.
LOOP = "for tile_id in tl.range(first_tile + tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN):\n"
COORDS = "        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)\n"

MISTAKES = (
    Mistake(
        "grid-not-capped",
        "T5.1",
        "persistent_grid 直接返回 SM 数，没有和 tile 数取最小值",
        "persistent_grid returns the SM count, not capped at the number of tiles",
        "2.2",
        "return min(num_sms, num_tiles)",
        "return num_sms",
        "test_persistent_grid[1-132-1]",
    ),
    Mistake(
        "loop-start",
        "T5.1",
        "循环从 pid 开始，而不是 first_tile + pid",
        "the loop starts at pid, not at first_tile + pid",
        "2.2",
        LOOP,
        LOOP.replace("first_tile + tl.program_id(0)", "tl.program_id(0)"),
        "test_every_tile_once_over_many_grids[plain]",
    ),
    Mistake(
        "loop-stride",
        "T5.1",
        "循环步长是 1，而不是 NUM_PROGS",
        "the loop steps by 1, not by NUM_PROGS",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS,", "num_tiles, 1,"),
        "test_a_program_does_several_tiles",
    ),
    Mistake(
        "no-tile-coords",
        "T5.1",
        "tile 号直接按行优先拆成 (pid_m, pid_n)，没有经过 tile_coords",
        "the tile number split row-major into (pid_m, pid_n), not passed through tile_coords",
        "2.2",
        LOOP + COORDS,
        LOOP + "        pid_m, pid_n = tile_id // num_pid_n, tile_id % num_pid_n\n",
        "test_every_tile_once_over_many_grids[plain]",
    ),
    Mistake(
        "stride-in-elements",
        "T5.2",
        "tma_problem 按元素而不是按字节检查行 stride 是否为 16 的倍数",
        "tma_problem checks the row stride in elements, not in bytes, for a multiple of 16",
        "3.2",
        "if (t.stride(0) * size) % 16:",
        "if t.stride(0) % 16:",
        "test_tma_problem_accepts_legal_tensors",
    ),
    Mistake(
        "kmajor-box",
        "T5.2",
        "K-major 的 B 也用 [BLOCK_K, BLOCK_N] 的 box",
        "a [BLOCK_K, BLOCK_N] box for a K-major B too",
        "3.1",
        "[BLOCK_N, BLOCK_K] if b_kmajor else [BLOCK_K, BLOCK_N]",
        "[BLOCK_K, BLOCK_N]",
        "test_make_descriptors_boxes",
    ),
    Mistake(
        "kmajor-no-transpose",
        "T5.2",
        "K-major 的 B 读进来之后没有转置",
        "a K-major B box not transposed after the load",
        "3.1",
        "b = b_desc.load([off_n, off_k]).T",
        "b = b_desc.load([off_n, off_k])",
        "test_k_block_loop[17-50-70-0-3-True-torch.float16]",
    ),
    Mistake(
        "sk-extra-last",
        "T5.3",
        "多出来的 k-block 分给了最后几个程序，而不是前几个",
        "the extra k-blocks given to the last programs, not the first",
        "4.1",
        "    begin = pid * base + tl.minimum(pid, extra)\n    end = begin + base + (pid < extra).to(tl.int32)\n",
        (
            "    begin = pid * base + tl.maximum(pid - (NUM_PROGS - extra), 0)\n"
            "    end = begin + base + (pid >= NUM_PROGS - extra).to(tl.int32)\n"
        ),
        "test_sk_runs_cover_every_k_block_once[13-3]",
    ),
    Mistake(
        "flags-not-reset",
        "T5.3",
        "owner 加完 partial 没有把旗放回 0",
        "the owner does not put a flag back to 0 after adding its partial",
        "4.2",
        '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n',
        "",
        "test_stream_k_every_tile_once",
    ),
    Mistake(
        "thin-wave-alone",
        "T5.3",
        "薄的最后一波单独走 stream-K，没有和一整波合起来",
        "the thin last wave alone given to stream-K, not merged with one full wave",
        "4.3",
        "sk_tiles = num_tiles if full_waves == 0 else rest + num_sms",
        "sk_tiles = rest",
        "test_stream_k_split[300-8-132-auto-want3]",
    ),
    Mistake(
        "right-half-bias",
        "T5.4",
        "分块后右半传了 pid_n，而不是 2 * pid_n + 1",
        "pid_n passed for the right half after subtiling, not 2 * pid_n + 1",
        "5",
        "2 * pid_n + 1",
        "pid_n",
        "test_store_tile_subtiled_bias_per_half[none]",
    ),
)

# ---- mutants of our own (table=False): holes the suite once let through, and the fix-up's ordering ----
SEGMENT = (
    "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, it_begin - tile_begin,\n"
    "                        it_end - tile_begin, BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)\n"
    "        if it_end == tile_begin + k_blocks:  # this run holds the tile's last k-block: the owner\n"
    "            first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n"
    "            acc = sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid, BLOCK_M, BLOCK_N)\n"
)
FINISH = (
    "            finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,\n"
    "                        BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)\n"
)
ELSE = (
    "        else:  # only the run's highest segment can stop short of its tile's end: published first\n"
    "            sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)\n"
)
PUBLISH = (
    "    tl.store(partials_ptr + pid * (BLOCK_M * BLOCK_N) + offs, acc)\n"
    "    tl.debug_barrier()  # every thread's part of the tile is written before the flag goes up\n"
    '    tl.atomic_xchg(flags_ptr + pid, 1, sem="release")\n'
)
WAIT = (
    '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:  # an integer read that waits\n'
    "            pass\n"
)
COLLECT = (
    "    for p in range(first_pid, pid):\n"
    + WAIT
    + '        acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n'
    '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n'
)
ARRIVAL = (
    "    left = pid - first_pid\n"
    "    while left > 0:  # whichever partial is up, added as it arrives\n"
    "        for p in range(first_pid, pid):\n"
    '            if tl.atomic_xchg(flags_ptr + p, 0, sem="acquire") == 1:\n'
    '                acc += tl.load(partials_ptr + p * (BLOCK_M * BLOCK_N) + offs, cache_modifier=".cg")\n'
    "                left -= 1\n"
)


def own(key, step, en, section, old, new, test, cause=""):
    """A mutant of our own: make check runs it, §8 does not show it (the words are for make check's report)."""
    return Mistake(key, step, en, en, section, old, new, test, cause, table=False)


OWN = (
    own(
        "sk-owner-sums-alone",
        "T5.3",
        "each tile's owner sums all its k-blocks alone; no partials published or collected",
        "4.1",
        SEGMENT + FINISH + ELSE,
        "        if it_end == tile_begin + k_blocks:  # this run holds the tile's last k-block: the owner\n"
        "            acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, 0, k_blocks,\n"
        "                            BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)\n" + FINISH,
        "test_each_stream_k_program_sums_its_own_run",
        "owner-alone",
    ),
    own(
        "sk-no-wait",
        "T5.3",
        "the owner reads each partial without waiting for its flag",
        "4.2",
        WAIT,
        "",
        "test_fix_up_waits_and_adds_in_program_order[reversed]",
        "read-early",
    ),
    own(
        "sk-arrival-order",
        "T5.3",
        "the owner adds the partials in the order their flags come up",
        "4.2",
        COLLECT,
        ARRIVAL,
        "test_fix_up_waits_and_adds_in_program_order[reversed]",
    ),
    own(
        "sk-flag-before-store",
        "T5.3",
        "the flag is raised before the partial is stored",
        "4.2",
        PUBLISH,
        PUBLISH.split("\n", 2)[2] + PUBLISH.split("\n", 2)[0] + "\n" + PUBLISH.split("\n", 2)[1] + "\n",
        "test_publish_and_collect_memory_order",
        "flag-first",
    ),
    own(
        "sk-no-barrier",
        "T5.3",
        "no barrier between the partial's store and its flag",
        "4.2",
        PUBLISH,
        PUBLISH.replace(PUBLISH.split("\n")[1] + "\n", ""),
        "test_publish_and_collect_memory_order",
        "no-barrier",
    ),
    own(
        "sk-publish-relaxed",
        "T5.3",
        "the flag is raised with relaxed semantics, not release",
        "4.2",
        PUBLISH,
        PUBLISH.replace('sem="release"', 'sem="relaxed"'),
        "test_publish_and_collect_memory_order",
        "not-release",
    ),
    own(
        "sk-wait-relaxed",
        "T5.3",
        "the owner waits with relaxed semantics, not acquire",
        "4.2",
        WAIT,
        WAIT.replace('sem="acquire"', 'sem="relaxed"'),
        "test_publish_and_collect_memory_order",
        "not-acquire",
    ),
    own(
        "sk-half-full-strict",
        "T5.3",
        "the half-full rule written with > instead of >=",
        "4.3",
        "elif rest == 0 or 2 * rest >= num_sms:",
        "elif rest == 0 or 2 * rest > num_sms:",
        "test_stream_k_split[66-8-132-auto-want8]",
    ),
)

MISTAKES = MISTAKES + OWN
