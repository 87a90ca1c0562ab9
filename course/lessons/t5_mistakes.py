"""Lesson T5's classic mistakes, for its explainer §8 table (python -m tools.explainers.mistakes --lesson T5).

Each is a text substitution in solutions/t5_persistent.py and the one test of tests/test_t5.py that
must catch it on the interpreter; tools/explainers/mistakes.py makes each one, with the reference
of T4 in mine/ beside it (T5 imports tile_coords and bias_and_activation from it), and runs that
test.  After the classic mistakes come the fix-up's ordering mistakes, caught on the CPU by running
the programs in other orders (course/interpreter_order.py): five shown in §8 (row), the rest, with the
holes the suite once let through, mutants of our own (own: table=False) that only make check runs.
"""

from course.lesson_data import Mistake

# The words a T5 message says when, and only when, it has detected the cause (make check:
# each_mistake_names_its_own_cause): {key: (Chinese, English)}.
CAUSES = {
    "owner-alone": (
        "每个 tile 都由 owner 自己把全部 k-block 算完了",
        "every tile's owner summed all its k-blocks itself",
    ),
    "read-early": ("owner 读到了还没写进来的 partial", "the owner read a partial before that partial was written"),
    "flag-first": ("先举 flag 后存 partial", "flag was raised before the partial is stored"),
    "no-barrier": ("之间没有 tl.debug_barrier()", "no tl.debug_barrier() between"),
    "not-release": ("不是 release 语义", "without release semantics"),
    "not-acquire": ("不是 acquire 语义", "without acquire semantics"),
    "flags-left-up": ("owner 加完 partial 没有把它放回 0", "the owner did not put it back to 0 after adding"),
    "no-bias": ("bias 没有加上", "the bias was not added"),
    "no-activation": ("没有做 activation", "the activation was not applied"),
    "bias-by-pid-m": ("bias 是按 pid_m 取的列", "the bias columns were taken at pid_m * BLOCK_N"),
    "kmajor-unchecked": (
        "只有 b.t() 本身合规时才能按 K-major 读",
        "Read b K-major only when b.t() itself keeps the rules",
    ),
    "descriptor-refused": ("TensorDescriptor 不接受传给它的张量", "TensorDescriptor refused a tensor"),
    "right-half-bias": (
        "右半块的 bias 从第 pid_n * BLOCK_N + BLOCK_N // 2 列开始",
        "the right half's bias starts at column",
    ),
    "left-half-bias": ("左半块的 bias 从第 pid_n * BLOCK_N 列开始", "the left half's bias starts at column"),
    "coords-swapped": ("pid_m 和 pid_n 拿反了", "pid_m and pid_n are the other way round"),
    "row-major-split": ("每个 tile 都按行优先拆开了", "every tile was split row-major"),
}

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
        "row-major-split",
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
        "flags-left-up",
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
        "right-half-bias",
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


def row(key, step, zh, en, section, old, new, test, cause=""):
    """One of the fix-up's mistakes the CPU now catches, shown in §8 like the classic ones."""
    return Mistake(key, step, zh, en, section, old, new, test, cause)


def own(key, step, en, section, old, new, test, cause=""):
    """A mutant of our own: make check runs it, §8 does not show it (the words are for make check's report)."""
    return Mistake(key, step, en, en, section, old, new, test, cause, table=False)


OWN = (
    row(
        "sk-owner-sums-alone",
        "T5.3",
        "每个 tile 的 owner 自己把全部 k-block 算完，不发布也不收集 partial",
        "each tile's owner sums all its k-blocks alone; no partials published or collected",
        "4.1",
        SEGMENT + FINISH + ELSE,
        "        if it_end == tile_begin + k_blocks:  # this run holds the tile's last k-block: the owner\n"
        "            acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, 0, k_blocks,\n"
        "                            BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)\n" + FINISH,
        "test_each_stream_k_program_sums_its_own_run",
        "owner-alone",
    ),
    row(
        "sk-no-wait",
        "T5.3",
        "owner 不等旗就读 partial",
        "the owner reads each partial without waiting for its flag",
        "4.2",
        WAIT,
        "",
        "test_fix_up_waits_and_adds_in_program_order[reversed]",
        "read-early",
    ),
    row(
        "sk-arrival-order",
        "T5.3",
        "owner 按旗举起来的先后把 partial 加起来",
        "the owner adds the partials in the order their flags come up",
        "4.2",
        COLLECT,
        ARRIVAL,
        "test_fix_up_waits_and_adds_in_program_order[reversed]",
    ),
    row(
        "sk-flag-before-store",
        "T5.3",
        "先举旗，后存 partial",
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
    row(
        "sk-wait-relaxed",
        "T5.3",
        "owner 等旗用 relaxed 语义，而不是 acquire",
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


TMA_READY = (
    '    if tma_problem(b, "b") and b.shape[1] > 1 and tma_problem(b.t(), "b.t()") is None:\n'
    "        b, b_kmajor = b.t(), True\n"
    '    operands = {"a": a, "b": b}\n'
    "    for name, t in operands.items():\n"
    "        problem = tma_problem(t, name)\n"
    "        if problem and not fallback:\n"
    '            raise ValueError(f"matmul: TMA cannot read {problem}")\n'
    "        if problem:\n"
    "            operands[name] = aligned_copy(t)\n"
    '    return operands["a"], operands["b"], b_kmajor\n'
)
WHOLE_TILE_EPILOGUE = "acc = bias_and_activation(acc, bias_ptr, N, stride_bias, pid_n, BLOCK_N, HAS_BIAS, ACTIVATION)"
RIGHT_HALF = (
    "        right = bias_and_activation(right, bias_ptr, N, stride_bias, 2 * pid_n + 1, BLOCK_N // 2, HAS_BIAS,\n"
    "                                    ACTIVATION)\n"
)
OWN += (
    own(
        "epilogue-no-bias",
        "T5.2",
        "the whole-tile epilogue leaves the bias out",
        "3.3",
        WHOLE_TILE_EPILOGUE,
        WHOLE_TILE_EPILOGUE.replace("HAS_BIAS", "False"),
        "test_store_tile_bias_and_activation[gelu]",
        "no-bias",
    ),
    own(
        "epilogue-no-activation",
        "T5.2",
        "the whole-tile epilogue leaves the activation out",
        "3.3",
        WHOLE_TILE_EPILOGUE,
        WHOLE_TILE_EPILOGUE.replace("ACTIVATION)", '"none")'),
        "test_store_tile_bias_and_activation[gelu]",
        "no-activation",
    ),
    own(
        "epilogue-bias-by-pid-m",
        "T5.2",
        "the whole-tile epilogue indexes the bias by pid_m",
        "3.3",
        WHOLE_TILE_EPILOGUE,
        WHOLE_TILE_EPILOGUE.replace("pid_n", "pid_m"),
        "test_store_tile_bias_and_activation[none]",
        "bias-by-pid-m",
    ),
    own(
        "align-to-8-bytes",
        "T5.2",
        "tma_problem checks the base address against 8 bytes, not 16",
        "3.2",
        "if t.data_ptr() % 16:",
        "if t.data_ptr() % 8:",
        "test_tma_problem_names_the_tensor_and_the_rule[fp16 base 8 bytes past 16]",
    ),
    own(
        "kmajor-unchecked",
        "T5.2",
        "tma_ready reads any column-major b K-major without checking b.t() against the rules",
        "3.2",
        TMA_READY,
        TMA_READY.replace(
            'if tma_problem(b, "b") and b.shape[1] > 1 and tma_problem(b.t(), "b.t()") is None:',
            "if b.stride(0) == 1 and b.shape[1] > 1:  # column-major: W itself, read K-major as it is",
        )
        .replace('operands = {"a": a, "b": b}', 'operands = {"a": a} if b_kmajor else {"a": a, "b": b}')
        .replace('operands["b"]', 'operands.get("b", b)'),
        "test_tma_ready_copies_or_refuses[b = W.t(), W fp16 (48, 45)-<lambda>-<lambda>-b]",
        "kmajor-unchecked",
    ),
    own(
        "never-copies",
        "T5.2",
        "tma_ready never copies an operand that breaks a rule",
        "3.2",
        "            operands[name] = aligned_copy(t)\n",
        "            pass\n",
        "test_empty_k_gives_zeros[6-5-0]",
        "descriptor-refused",
    ),
    own(
        "left-half-bias",
        "T5.4",
        "the left half's bias indexed by pid_n, not 2 * pid_n",
        "5",
        "left = bias_and_activation(left, bias_ptr, N, stride_bias, 2 * pid_n,",
        "left = bias_and_activation(left, bias_ptr, N, stride_bias, pid_n,",
        "test_store_tile_subtiled_bias_per_half[none]",
        "left-half-bias",
    ),
    own(
        "right-half-no-activation",
        "T5.4",
        "the right half without the activation",
        "5",
        RIGHT_HALF,
        RIGHT_HALF.replace("ACTIVATION)", '"none")'),
        "test_store_tile_subtiled_bias_per_half[gelu]",
    ),
    own(
        "right-half-at-left",
        "T5.4",
        "the right half stored where the left one goes",
        "5",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right",
        "c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], right",
        "test_store_tile_subtiled[37-48-torch.float16]",
    ),
)


OWN += (
    own(
        "a-box-turned",
        "T5.2",
        "A's box given as [BLOCK_K, BLOCK_M]: the kernel given for a decode step crashes on it",
        "3.1",
        "a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])",
        "a_desc = TensorDescriptor.from_tensor(a, [BLOCK_K, BLOCK_M])",
        "test_decode_turned_around[1-70-45-3-row-major-torch.float16]",
    ),
)

OWN += (
    own(
        "dp-k-blocks-floor",
        "T5.1",
        "the tile loop sums K // BLOCK_K k-blocks, dropping K's ragged tail",
        "2.2",
        "    k_blocks = tl.cdiv(K, BLOCK_K)\n    for tile_id in tl.range(first_tile",
        "    k_blocks = K // BLOCK_K\n    for tile_id in tl.range(first_tile",
        "test_every_tile_once_over_many_grids[plain]",
    ),
    own(
        "dp-stride-one-more",
        "T5.1",
        "the tile loop steps by NUM_PROGS + 1",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS,", "num_tiles, NUM_PROGS + 1,"),
        "test_a_program_does_several_tiles",
    ),
    own(
        "dp-coords-swapped",
        "T5.1",
        "tile_coords's answer unpacked as (pid_n, pid_m)",
        "2.2",
        LOOP + COORDS,
        LOOP + COORDS.replace("pid_m, pid_n =", "pid_n, pid_m ="),
        "test_every_tile_once_over_many_grids[plain]",
        "coords-swapped",
    ),
)

MISTAKES = MISTAKES + OWN  # the table's first, then our own
