"""Lesson T5: its sections, steps, hints and note; course/registry.py finds it here.

The lesson's other files: content/t5*.md, mine/ and solutions/t5_persistent.py, tests/t5/,
course/lessons/t5_probes.py, and the host side both sides are given, given/t5_host.py, given/t5_out.py and
given/t5_config.py.
"""

from course.registry import Lesson, Step

LESSON = Lesson(
    id="T5",
    title="a persistent GEMM with TMA and stream-K",
    title_zh="常驻的 GEMM：TMA 与 stream-K",
    module="t5_persistent",
    explainers={"zh": "content/t5.md", "en": "content/t5.en.md"},
    suite="tests/t5",
    probes="course/lessons/t5_probes.py",
    given=("given/t5_config.py", "given/t5_host.py", "given/t5_out.py"),
    sections={
        "1": (
            "全景：从一个 tile 一个程序到常驻程序",
            "The whole picture: from one program per tile to persistent programs",
        ),
        "2": ("常驻（persistent）的 tile 循环", "The persistent tile loop"),
        "2.1": ("常驻换来了什么", "What persistence buys"),
        "2.2": ("网格与步长", "The grid and the stride"),
        "2.3": ("一个 tile 的活与 trace", "One tile's work, and the trace"),
        "3": ("TMA 张量描述符", "TMA tensor descriptors"),
        "3.1": ("描述符与不带掩码的块加载", "Descriptors and unmasked block loads"),
        "3.2": ("TMA 的规矩：连续、16 字节对齐", "TMA's rules: contiguous, 16-byte aligned"),
        "3.3": ("写回：被裁剪的存储", "The store, clipped"),
        "4": ("Stream-K 与确定性的归约", "Stream-K with a deterministic fix-up"),
        "4.1": ("k-block 怎么分给各个程序", "How the k-blocks are shared out"),
        "4.2": ("确定性的 fix-up", "The deterministic fix-up"),
        "4.3": ("混合规则：什么时候用 stream-K", "The hybrid rule: when to use stream-K"),
        "5": ("进阶：epilogue 分块", "Advanced: epilogue subtiling"),
        "6": ("H200 上的测量", "Measurements on the H200"),
        "6.1": ("扫描配置时看到的", "What the sweeps showed"),
        "6.2": ("Nsight Compute：T4 对 T5", "Nsight Compute: T4 against T5"),
        "6.3": ("把 decode 的一步反过来算", "A decode step, turned around"),
        "6.4": ("早一点启动：programmatic dependent launch", "Launching early: programmatic dependent launch"),
        "7": ("大家常问的问题", "Questions learners ask"),
        "8": ("常见错误与自测", "Pitfalls and self-check"),
    },
    steps=(
        Step(
            "T5.1",
            "the persistent tile loop",
            ("2", "2.2", "2.3"),
            ("persistent_grid", "data_parallel_tiles"),
            (
                (
                    "先画出来：6 个 tile、3 个程序，程序 p 依次做 tile p、p + 3。T4 里一个 tile 一个程序，"
                    "这里一个程序做好几个 tile，所以 tile 的编号不再是 program_id，而是循环变量。",
                    "Draw it first: 6 tiles, 3 programs, program p does tiles p and p + 3. In T4 a program was a "
                    "tile; here a program does several, so the tile's number is the loop variable, not program_id.",
                ),
                (
                    "persistent_grid 返回 min(num_sms, num_tiles)。循环写成 for tile_id in tl.range(first_tile + "
                    "tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN)。",
                    "persistent_grid returns min(num_sms, num_tiles). The loop is for tile_id in tl.range(first_tile "
                    "+ tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN).",
                ),
                (
                    "循环体三行：pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)（你的 T4.1）；"
                    "acc = k_segment(..., 0, tl.cdiv(K, BLOCK_K), ...)；finish_tile(c_desc, acc, ...)。"
                    "TRACE 原样往下传。",
                    "The loop body is three lines: pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M) "
                    "(your T4.1); acc = k_segment(..., 0, tl.cdiv(K, BLOCK_K), ...); finish_tile(c_desc, acc, ...). "
                    "Pass TRACE on as it is.",
                ),
            ),
            title_zh="常驻的 tile 循环",
        ),
        Step(
            "T5.2",
            "TMA tensor descriptors",
            ("3", "3.1", "3.2", "3.3"),
            ("k_block_loop", "store_tile", "tma_problem", "tma_ready", "make_descriptors"),
            (
                (
                    "描述符 = 张量 + 一次搬运的方块（box）。TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])；"
                    "加载写成 a_desc.load([off_m, off_k])，不要掩码：box 越出张量的部分硬件补 0。",
                    "A descriptor is a tensor plus the box one transfer moves: TensorDescriptor.from_tensor(a, "
                    "[BLOCK_M, BLOCK_K]); load with a_desc.load([off_m, off_k]) and no mask: the hardware fills the "
                    "part of the box outside the tensor with zeros.",
                ),
                (
                    "三条规矩按顺序查：t.stride(1) == 1；t.stride(0) * t.element_size() 是 16 的倍数；"
                    "t.data_ptr() % 16 == 0。返回的那一行要写出张量名和违反的规矩。",
                    "Check the three rules in order: t.stride(1) == 1; t.stride(0) * t.element_size() a multiple of "
                    "16; t.data_ptr() % 16 == 0. The line you return names the tensor and the rule it breaks.",
                ),
                (
                    "传进来的 b 是 W.t() 时 stride 是 (1, K)：b 本身不合规；要是 b.t()（也就是 (N, K) 的 W 本身）"
                    "三条规矩都合，就按 K-major 读：box 取 [BLOCK_N, BLOCK_K]，load 之后 .T。三条都要在 b.t() 上"
                    "查：fp16、形状 (48, 45) 的 W 每行 90 字节，照样要复制（§3.2）。其余不合规的用 aligned_copy()，"
                    "fallback=False 时抛 ValueError。",
                    "A b passed as W.t() has strides (1, K): b itself breaks the rules; where b.t(), the (N, K) W "
                    "itself, keeps all three, read it K-major: box [BLOCK_N, BLOCK_K], and .T after the load. Check "
                    "all three on b.t(): an fp16 W of shape (48, 45) has rows of 90 bytes and is copied all the same "
                    "(§3.2). Copy any other offender with aligned_copy(), or raise ValueError when fallback=False.",
                ),
            ),
            title_zh="TMA 张量描述符",
            needs=("T5.1",),
        ),
        Step(
            "T5.3",
            "stream-K with a deterministic fix-up",
            ("4", "4.1", "4.2", "4.3"),
            (
                "sk_run",
                "sk_program_of",
                "sk_publish_partial",
                "sk_collect_partials",
                "stream_k_tiles",
                "stream_k_split",
            ),
            (
                (
                    "把 sk_tiles 个 tile 的 k-block 首尾相接排成一行（tile 0 的全部，再 tile 1 的……），切成 "
                    "NUM_PROGS 段，前 total % NUM_PROGS 段多一个。先在纸上画 §4.1 的表。stream_k_split 是 §4.3 的"
                    "规则：mode 为 \"dp\" 或只有一个 k-block 时（不管 mode）返回 (0, persistent_grid(...))；"
                    "否则先数整波和最后一波。",
                    "Lay the k-blocks of the sk_tiles tiles end to end (all of tile 0, then tile 1, ...) and cut the "
                    "row into NUM_PROGS runs, the first total % NUM_PROGS one block longer. Draw §4.1's table first. "
                    "stream_k_split is §4.3's rule: mode \"dp\", or a single k-block whatever the mode, gives (0, "
                    "persistent_grid(...)); else count the whole waves and the last one.",
                ),
                (
                    "从段尾往回走：tile_id = (it_end - 1) // k_blocks，it_begin = max(tile_id * k_blocks, run_begin)。"
                    "这一段含 tile 的最后一个 k-block 就是 owner：收齐前面程序的 partial 再做 epilogue；"
                    "否则发布 partial。",
                    "Walk the run from its end: tile_id = (it_end - 1) // k_blocks, it_begin = max(tile_id * "
                    "k_blocks, run_begin). A segment holding the tile's last k-block makes its program the owner: "
                    "collect the earlier programs' partials, then the epilogue; any other segment publishes a partial.",
                ),
                (
                    "不许用浮点 atomic_add：partial 写进自己的槽，tl.debug_barrier()，再 atomic_xchg(flag, 1, "
                    "sem=\"release\")；owner 按程序号从小到大等 flag（atomic_add(flag, 0, sem=\"acquire\")，"
                    "用一个以它为条件的 while 循环反复读，直到读到 1）、加上 partial、把 flag 置回 0。",
                    "No float atomic_add: store the partial in your own slot, tl.debug_barrier(), then "
                    "atomic_xchg(flag, 1, sem=\"release\"); the owner waits for each flag in program order "
                    "(atomic_add(flag, 0, sem=\"acquire\") as the condition of a while loop, read again until it "
                    "gives 1), adds the partial and puts the flag back to 0.",
                ),
            ),
            title_zh="带确定性归约的 stream-K",
            needs=("T5.1", "T5.2"),
        ),
        Step(
            "T5.4",
            "epilogue subtiling",
            ("5",),
            ("store_tile",),
            (
                (
                    "把 [BLOCK_M, BLOCK_N] 的 acc 拆成左右两半，各做 bias+GELU、各存一次；c_desc 的 box 已经是 "
                    "[BLOCK_M, BLOCK_N // 2]。",
                    "Split the [BLOCK_M, BLOCK_N] acc into a left and a right half, bias + GELU and store each; "
                    "c_desc's box is already [BLOCK_M, BLOCK_N // 2].",
                ),
                (
                    "tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2))，tl.permute 成 (BLOCK_M, BLOCK_N // 2, 2)，"
                    "再 tl.split。右半的 bias 从第 pid_n * BLOCK_N + BLOCK_N // 2 列开始：T4 的 "
                    "bias_and_activation 用 pid_n 乘 BLOCK_N 算列号，所以传 2 * pid_n + 1 和 BLOCK_N // 2。",
                    "tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), tl.permute to (BLOCK_M, BLOCK_N // 2, 2), then "
                    "tl.split. The right half's bias starts at column pid_n * BLOCK_N + BLOCK_N // 2: T4's "
                    "bias_and_activation counts columns as pid_n times BLOCK_N, so pass 2 * pid_n + 1 and "
                    "BLOCK_N // 2.",
                ),
            ),
            advanced=True,
            title_zh="epilogue 分块写回",
            needs=("T5.1", "T5.2"),
        ),
    ),
)
