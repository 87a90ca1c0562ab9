"""Lesson T5's mutants of our own from the eleventh learner's walk (learner11, 2026-12-04): wrong versions a
learner wrote from the explainer; each was caught, most with a message that named no cause until the check named
with it learnt to tell it.  Only make check runs them (table=False, not in §8); each must be caught by its test,
whose message names its cause (a key of t5_mistakes.CAUSES, LEARNER11_CAUSES here) or, for cause "", none.
t5_mistakes.py gathers them last, and their causes into its CAUSES.  The same checks now name the causes of
older mutants of the same code too (dp-k-blocks-floor, dp-kb-minus-one, c-box-whole, split-half-strict,
sk-half-full-strict, sk-half-full-floor, hunt9-collect-volatile-wait, sk-first-segment-owns), whose entries
say so.
"""

from course.lessons.t5_mistakes_own import LOOP, own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEARNER11_CAUSES = {
    "one-k-block-short": ("少算了一个 k-block，只算了", "one k-block fewer than tl.cdiv(K, BLOCK_K)"),
    "group-m-other": ("不是配置的 GROUP_M", "not the config's GROUP_M"),
    "half-strict": ("最后一波正好半满", "the last wave is exactly half full"),
    "half-floored": ("一半被向下取整成了", "the half was floored to"),
    "runs-cut-cdiv": ("每段都切成 cdiv(total, NUM_PROGS)", "every run was cut cdiv(total, NUM_PROGS)"),
    "owners-by-cdiv": ("这是 it // cdiv(total, NUM_PROGS)", ": it // cdiv(total, NUM_PROGS) ("),
    "c-box-whole-tile": ("EPILOGUE_SUBTILE=2 时一次只写半个 tile", "a store writes half a tile"),
    "a-box-rows-cols": ("横竖反了：A 的 box", "turned round: A's box"),
    "flag-plain-load": ("普通的 tl.load（volatile 也一样）", "with a plain tl.load (volatile or not)"),
    "first-holder-owns": ("都由持有它第一个 k-block 的程序收尾", "the program holding its first k-block;"),
    "k-acc-not-fp32": ("k_block_loop 返回的累加器不是 float32", "returned an accumulator that is not float32"),
}

DP_COORDS = (
    "        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)\n"
    "        acc = k_segment(a_desc, b_desc, trace_ptr, tile_id, pid_m, pid_n, 0, k_blocks,\n"
)
RUN = "    begin = pid * base + tl.minimum(pid, extra)\n    end = begin + base + (pid < extra).to(tl.int32)\n"
OWNER = "    owner = tl.where(it < big, it // (base + 1), extra + (it - big) // tl.maximum(base, 1))\n"
A_BOX = "    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])\n"
WAIT = '        while tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1:  # an integer read that waits\n'
K_ACC = "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n    for kb in range(kb_begin, kb_end):\n"

LEARNER11 = (
    own(
        "learner11-loop-through-num-tiles",
        "T5.1",
        "the tile loop runs to num_tiles + 1 ('up to num_tiles' read as inclusive): tile num_tiles is done too; "
        "caught, the message says which tile ids past the tiles were done (learner11)",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS,", "num_tiles + 1, NUM_PROGS,"),
        "test_every_tile_once_over_many_grids[plain]",
    ),
    own(
        "learner11-dp-group-m-eight",
        "T5.1",
        "tile_coords given GROUP_M = 8, a number of T4's configs, not the config's GROUP_M: the check said only "
        "where one tile was put; it now names the GROUP_M whose order the places are (learner11)",
        "2.2",
        DP_COORDS,
        DP_COORDS.replace("num_pid_n, GROUP_M)", "num_pid_n, 8)"),
        "test_every_tile_once_over_many_grids[plain]",
        "group-m-other",
    ),
    own(
        "learner11-sk-run-cdiv-chunks",
        "T5.3",
        "sk_run cuts runs of cdiv(total, NUM_PROGS) each, clipped at total: right for §4.1's 20 over 3, wrong for "
        "13 over 3; the check gave the runs expected and got alone (learner11)",
        "4.1",
        RUN,
        "    per = tl.cdiv(total, NUM_PROGS)\n"
        "    begin = tl.minimum(pid * per, total)\n"
        "    end = tl.minimum(begin + per, total)\n",
        "test_sk_runs_cover_every_k_block_once[13-3]",
        "runs-cut-cdiv",
    ),
    own(
        "learner11-program-of-cdiv",
        "T5.3",
        "sk_program_of returns it // cdiv(total, NUM_PROGS), the inverse of runs all that long: the check gave the "
        "owners expected and got alone (learner11)",
        "4.1",
        OWNER,
        "    owner = it // tl.cdiv(total, NUM_PROGS)\n",
        "test_sk_runs_cover_every_k_block_once[13-3]",
        "owners-by-cdiv",
    ),
    own(
        "learner11-a-box-turned-in-boxes",
        "T5.2",
        "A's box [BLOCK_K, BLOCK_M]: the boxes' check said the box expected and got alone (a-box-turned is the same "
        "code, caught by the decode test) (learner11)",
        "3.1",
        A_BOX,
        A_BOX.replace("[BLOCK_M, BLOCK_K]", "[BLOCK_K, BLOCK_M]"),
        "test_make_descriptors_boxes",
        "a-box-rows-cols",
    ),
    own(
        "learner11-split-rest-times-two-strict",
        "T5.3",
        "stream_k_split written with 'last * 2 > num_sms' (a strict half): a single wave of exactly half the SMs "
        "went to stream-K; the check gave the answer expected and got alone (learner11)",
        "4.3",
        "    elif rest == 0 or 2 * rest >= num_sms:\n",
        "    elif rest == 0 or rest * 2 > num_sms:\n",
        "test_stream_k_split[66-8-132-auto-want8]",
        "half-strict",
    ),
    own(
        "learner11-k-loop-acc-fp16",
        "T5.2",
        "k_block_loop's accumulator started as tl.zeros(..., dtype=tl.float16): the probe's static assert said "
        "'must return a float32 accumulator; see §3.1', naming no explainer file and no fix (learner11)",
        "3.1",
        K_ACC,
        K_ACC.replace("tl.float32", "tl.float16"),
        "test_k_block_loop[45-37-83-0-3-False-torch.float16]",
        "k-acc-not-fp32",
    ),
    own(
        "learner11-collect-waits-with-plain-load",
        "T5.3",
        "sk_collect_partials spins on a plain tl.load of the flag (not even volatile): the memory-order check said "
        "'without first waiting for its flag with an atomic', though the owner does wait, with a load (learner11)",
        "4.2",
        WAIT,
        WAIT.replace('tl.atomic_add(flags_ptr + p, 0, sem="acquire") != 1', "tl.load(flags_ptr + p) == 0"),
        "test_publish_and_collect_memory_order",
        "flag-plain-load",
    ),
)
