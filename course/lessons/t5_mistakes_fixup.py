"""Lesson T5's fix-up ordering mistakes (T5.3): caught on the CPU by running the programs in
other orders (course/interpreter_order.py).  Five are shown in §8 like the classic ones (row), the
others are mutants of our own that only make check runs (own: table=False).  Kept beside
t5_mistakes.py, which gathers them after the classic mistakes: one file would be 460 lines.
"""

from course.lesson_data import Mistake
from course.lessons.t5_mistakes_own import own

# The stream-K kernel's lines, as in the reference, that the fix-up's mistakes change.
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
# stream_k_tiles's walk over its run, from "it_end = run_end" to the loop's last line.
SK_LOOP = (
    "    it_end = run_end\n"
    "    while it_end > run_begin:\n"
    "        tile_id = (it_end - 1) // k_blocks\n"
    "        tile_begin = tile_id * k_blocks\n"
    "        it_begin = tl.maximum(tile_begin, run_begin)\n"
    "        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)\n"
    "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, it_begin - tile_begin,\n"
    "                        it_end - tile_begin, BLOCK_M, BLOCK_N, BLOCK_K, B_KMAJOR, TRACE)\n"
    "        if it_end == tile_begin + k_blocks:  # this run holds the tile's last k-block: the owner\n"
    "            first_pid = sk_program_of(tile_begin, total, NUM_PROGS)\n"
    "            acc = sk_collect_partials(acc, partials_ptr, flags_ptr, first_pid, pid, BLOCK_M, BLOCK_N)\n"
    "            finish_tile(c_desc, acc, bias_ptr, trace_ptr, N, stride_bias, tile_id, pid_m, pid_n,\n"
    "                        BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, HAS_BIAS, ACTIVATION, TRACE)\n"
    "        else:  # only the run's highest segment can stop short of its tile's end: published first\n"
    "            sk_publish_partial(acc, partials_ptr, flags_ptr, pid, BLOCK_M, BLOCK_N)\n"
    "        it_end = it_begin\n"
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
K_LOOP = (  # k_block_loop's body in the reference
    "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
    "    for kb in range(kb_begin, kb_end):\n"
    "        off_k = kb * BLOCK_K\n"
    "        a = a_desc.load([off_m, off_k])  # no mask: TMA fills the part of the box outside A with zeros\n"
    "        if B_KMAJOR:\n"
    "            b = b_desc.load([off_n, off_k]).T  # a [BLOCK_N, BLOCK_K] box of B^T, used transposed\n"
    "        else:\n"
    "            b = b_desc.load([off_k, off_n])\n"
    "        acc = tl.dot(a, b, acc)\n"
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


FIXUP = (
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
        "half-strict",
    ),
    own(
        "sk-half-full-floor",
        "T5.3",
        "the half-full rule with the half rounded down (an odd SM count keeps a thin last wave)",
        "4.3",
        "elif rest == 0 or 2 * rest >= num_sms:",
        "elif rest == 0 or rest >= num_sms // 2:",
        "test_stream_k_split[7-8-3-auto-want10]",
        "half-floored",
    ),
    own(
        "sk-wait-once",
        "T5.3",
        "the owner reads each flag once and goes on, up or not (no spin)",
        "4.2",
        WAIT,
        WAIT.replace("while tl.atomic_add", "if tl.atomic_add"),
        "test_fix_up_waits_and_adds_in_program_order[reversed]",
        "read-early",
    ),
    own(
        "sk-publish-cta",
        "T5.3",
        "the flag raised with a release that reaches only its own program (scope cta)",
        "4.2",
        PUBLISH,
        PUBLISH.replace('sem="release")', 'sem="release", scope="cta")'),
        "test_publish_and_collect_memory_order",
        "scope-cta",
    ),
    own(
        "sk-wait-cta",
        "T5.3",
        "the owner waits with an acquire of its own program only (scope cta)",
        "4.2",
        WAIT,
        WAIT.replace('sem="acquire")', 'sem="acquire", scope="cta")'),
        "test_publish_and_collect_memory_order",
        "scope-cta",
    ),
    own(
        "sk-walk-forwards",
        "T5.3",
        "the stream-K run walked from its start: each owner waits before its program publishes, a chain on a GPU",
        "4.2",
        SK_LOOP,
        SK_LOOP.replace(
            "    it_end = run_end\n    while it_end > run_begin:",
            "    it_begin = run_begin\n    while it_begin < run_end:",
        )
        .replace("tile_id = (it_end - 1) // k_blocks", "tile_id = it_begin // k_blocks")
        .replace("it_begin = tl.maximum(tile_begin, run_begin)", "it_end = tl.minimum(tile_begin + k_blocks, run_end)")
        .replace("        it_end = it_begin\n", "        it_begin = it_end\n"),
        "test_each_stream_k_program_publishes_before_it_waits",
        "publish-after-wait",
    ),
    own(
        "sk-owner-waits-on-nobody",
        "T5.3",
        "each owner collects from itself on (first_pid = pid): it waits on nobody, and the flags stay up",
        "4.2",
        SEGMENT,
        SEGMENT.replace("first_pid = sk_program_of(tile_begin, total, NUM_PROGS)", "first_pid = pid"),
        "test_stream_k_every_tile_once",
        "flags-never-read",
    ),
    own(
        "sk-wait-own-flag",
        "T5.3",
        "the owner waits on its own flag (pid for p), which nobody raises: on the interpreter it spins for good",
        "4.2",
        WAIT,
        WAIT.replace("flags_ptr + p,", "flags_ptr + pid,"),
        "test_stream_k_every_tile_once",
        "waits-forever+waits-own-flag+flag-below-unread",  # acts as a wait one too high there (waits15)
    ),
    own(
        "k-loop-one-past-end",
        "T5.2",
        "k_block_loop sums one k-block past kb_end (invisible where kb_end is K's last block)",
        "3.1",
        "    for kb in range(kb_begin, kb_end):",
        "    for kb in range(kb_begin, kb_end + 1):",
        "test_k_block_loop[40-48-160-1-3-False-torch.float16]",
        "kb-range+kb-ends-late",  # which end, named since hunt16
    ),
    own(
        "k-loop-fp16-accumulator",
        "T5.2",
        "the accumulator starts as fp16 and turns fp32 in the loop: the interpreter runs it, a GPU compile refuses it",
        "3.1",
        K_LOOP,
        K_LOOP.replace("tl.float32", "tl.float16").replace("acc = tl.dot(a, b, acc)", "acc += tl.dot(a, b)"),
        "test_the_kernel_compiles_for_a_hopper_gpu",
        "gpu-refuses+loop-carried-type",  # the compiler's words said in the learner's too (zhlearner12)
    ),
)
