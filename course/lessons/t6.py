"""Lesson T6: its sections, steps, hints and note; course/registry.py finds it here.

The lesson's other files: content/t6*.md, mine/ and solutions/t6_moe.py, given/t6_host.py (the host
side both bind) and given/t6_layer.py (moe_mlp's input checks), tests/t6/, course/lessons/t6_probes.py.
"""

from course.registry import Lesson, Step

LESSON = Lesson(
    id="T6",
    title="grouped GEMM for mixture-of-experts",
    title_zh="混合专家（MoE）的分组 GEMM",
    module="t6_moe",
    explainers={"zh": "content/t6.md", "en": "content/t6.en.md"},
    suite="tests/t6",
    probes="course/lessons/t6_probes.py",
    given=("given/t6_host.py", "given/t6_layer.py"),
    sections={
        "1": ("全景：一个 MoE 层，一次启动", "The whole picture: an MoE layer in one launch"),
        "1.1": ("一个 MoE 层做什么", "What an MoE layer does"),
        "1.2": ("为什么只启动一次", "Why one launch"),
        "2": ("路由：一次计数排序", "Routing as a counting sort"),
        "2.1": ("直方图、前缀和、稳定散射", "Histogram, exclusive scan, stable scatter"),
        "2.2": ("每次都是同样的顺序", "The same order every run"),
        "2.3": ("在 Triton 里写路由", "Routing in Triton"),
        "3": ("不规则分组上的 tile 调度", "The tile schedule over ragged groups"),
        "3.1": ("补齐到 BLOCK_M 的代价", "What padding to BLOCK_M costs"),
        "3.2": ("一个 tile 只属于一个专家", "No tile mixes two experts"),
        "3.3": ("一个全局的 tile 号", "One global tile index"),
        "3.4": ("不和主机同步的上界循环", "An upper-bound loop without a host sync"),
        "4": ("分组 kernel", "The grouped kernel"),
        "4.1": ("按置换收集 A 的行", "Gathering A's rows through the permutation"),
        "4.2": ("用 TMA 读专家的权重", "Reading the expert weights with TMA"),
        "4.3": ("掩码与 epilogue：路由权重", "Masks and the epilogue: routing weights"),
        "4.4": ("不用浮点原子的确定性合并", "A deterministic combine without float atomics"),
        "5": ("进阶：两次启动的专家 MLP", "Advanced: the expert MLP in two launches"),
        "5.1": ("gate 与 up：SwiGLU 融进 epilogue", "Gate and up, with SwiGLU in the epilogue"),
        "5.2": ("down：路由权重与合并", "Down, with the routing weights and the combine"),
        "6": ("H200 上的测量", "Measurements on the H200"),
        "6.1": ("限制速度的是什么：权重字节还是乘法", "What bounds it: weight bytes or multiplies"),
        "6.2": (
            "对照：torch._grouped_mm、matmul 循环、逐专家的 T5",
            "The baselines: torch._grouped_mm, a loop of matmul, T5 per expert",
        ),
        "6.3": ("测得的数字", "The figures"),
        "6.4": ("每次调用主机上的开销：plan", "The host's cost per call: plans"),
        "7": ("大家常问的问题", "Questions learners ask"),
        "8": ("常见错误与自测", "Pitfalls and self-check"),
        "8.1": ("自测", "Self-check"),
    },
    steps=(
        Step(
            "T6.1",
            "routing as a counting sort",
            ("2", "2.1", "2.2", "2.3"),
            ("count_experts", "scan_counts", "scatter_slots", "check_routing_inputs"),
            (
                (
                    "先在纸上排一遍：8 个 slot 选了专家 [2, 0, 2, 1, 0, 2, 1, 2]。数一数每个专家几个（直方图），"
                    "从左往右累加得到每个专家的行尾 offsets，行首就是 offsets - counts；再把每个 slot 按原顺序"
                    "放进它专家的那一段。全程只有整数，所以每次结果都一样。",
                    "Sort one by hand first: 8 slots chose experts [2, 0, 2, 1, 0, 2, 1, 2]. Count each expert's "
                    "slots (the histogram), add them up from the left for each expert's row end (offsets), whose "
                    "start is offsets - counts; then put each slot, in its original order, into its expert's "
                    "stretch. Only integers, so every run gives the same answer.",
                ),
                (
                    "count_experts：tl.histogram(ids.to(tl.int32), E_BLOCK, mask=...)（先用读进来的值查范围）"
                    "得到一个块的直方图，存进 block_counts 的第 b 行。scan_counts 只有一个程序：沿着块往下做前缀和，"
                    "block_base[b] 是 b 之前各块的和（不含 b 自己，tl.cumsum(here, axis=0) - here），counts 是"
                    "全部之和，offsets = tl.cumsum(counts)。",
                    "count_experts: tl.histogram(ids.to(tl.int32), E_BLOCK, mask=...), the range checked on the "
                    "ids as loaded, is one block's histogram; store it as row b of block_counts. scan_counts is one "
                    "program: a running sum down the blocks, block_base[b] the sum of the blocks before b (not b "
                    "itself: tl.cumsum(here, axis=0) - here), counts the "
                    "sum of all, offsets = tl.cumsum(counts).",
                ),
                (
                    "scatter_slots：块内的名次 = 同一块里排在前面、专家相同的 slot 个数："
                    "(ids[:, None] == ids[None, :]) & (lane[None, :] < lane[:, None]) 按 axis=1 求和。"
                    "位置 pos = offsets[id] - counts[id] + block_base[b, id] + 名次；sorted_slots[pos] = slot，"
                    "slot_pos[slot] = pos。专家号不在 [0, num_experts) 里的槽不算、不放：凡是拿专家号当下标的加载和存储"
                    "都要用掩码把它挡掉（§2.3）。",
                    "scatter_slots: a slot's rank in its block is the number of earlier slots of the block with "
                    "the same expert: sum (ids[:, None] == ids[None, :]) & (lane[None, :] < lane[:, None]) over "
                    "axis=1. Its position pos = offsets[id] - counts[id] + block_base[b, id] + rank; "
                    "sorted_slots[pos] = slot, slot_pos[slot] = pos. A slot whose id is outside [0, num_experts) is "
                    "neither counted nor placed: mask it out of every load and store that uses its id as an index "
                    "(§2.3).",
                ),
            ),
            title_zh="路由：一次计数排序",
        ),
        Step(
            "T6.2",
            "the tile schedule over ragged groups",
            ("3", "3.2", "3.3", "3.4"),
            ("expert_tile_counts", "locate_tile", "grouped_tiles"),
            (
                (
                    "画出来：BLOCK_M = 4，三个专家各有 5、0、9 行，N 方向 2 块。专家 0 有 2 个 m-block、4 个 tile，"
                    "专家 1 没有，专家 2 有 3 个 m-block、6 个 tile：全局 tile 0-3 属于专家 0，4-9 属于专家 2。"
                    "一个 tile 的行只来自一个专家，最后一块在专家的最后一行停下。",
                    "Draw it: BLOCK_M = 4, three experts with 5, 0 and 9 rows, 2 blocks along N. Expert 0 has 2 "
                    "m-blocks, 4 tiles; expert 1 none; expert 2 3 m-blocks, 6 tiles: global tiles 0-3 are expert "
                    "0's, 4-9 expert 2's. A tile's rows come from one expert; its last block stops at the "
                    "expert's last row.",
                ),
                (
                    "expert_tile_counts：m_blocks = tl.cdiv(counts, BLOCK_M)，tile_ends = tl.cumsum(m_blocks * "
                    "num_pid_n, axis=0)。locate_tile：专家号 = tile_ends 中 <= tile_id 的个数；用 tl.where 和 "
                    "tl.sum 取出这个专家的 m_blocks 和 tile_ends，专家内的编号交给你 T4 的 tile_coords。",
                    "expert_tile_counts: m_blocks = tl.cdiv(counts, BLOCK_M), tile_ends = tl.cumsum(m_blocks * "
                    "num_pid_n, axis=0). locate_tile: the expert is how many tile_ends are <= tile_id; take its "
                    "m_blocks and tile_ends out with tl.where and tl.sum, and hand the tile's number within the "
                    "expert to your T4 tile_coords.",
                ),
                (
                    "grouped_tiles：total = tl.max(tile_ends, axis=0) 在设备上读出来；for tile_id in "
                    "tl.range(tl.program_id(0), total, NUM_PROGS)。行：expert_end = offsets[expert]，"
                    "row_begin = expert_end - counts[expert] + pid_m * BLOCK_M，row_end = min(row_begin + BLOCK_M, "
                    "expert_end)；再调 tile_product 和 finish_tile，TRACE 原样传下去。",
                    "grouped_tiles: total = tl.max(tile_ends, axis=0), read on the device; for tile_id in "
                    "tl.range(tl.program_id(0), total, NUM_PROGS). Rows: expert_end = offsets[expert], "
                    "row_begin = expert_end - counts[expert] + pid_m * BLOCK_M, row_end = min(row_begin + BLOCK_M, "
                    "expert_end); then tile_product and finish_tile, TRACE passed on as it is.",
                ),
            ),
            title_zh="不规则分组上的 tile 调度",
            needs=("T6.1",),
        ),
        Step(
            "T6.3",
            "the grouped kernel",
            ("4", "4.1", "4.2", "4.3", "4.4"),
            ("gathered_rows", "gathered_product", "store_rows", "combine_topk", "check_expert_inputs"),
            (
                (
                    "排好序的第 pos 行是 slot s = sorted_slots[pos]，它读 x 的第 s // top_k 行：不用把 x 拷成排好"
                    "的顺序，按行号直接 gather。w 的 [E, N, K] 看成 (E*N, K)，专家 e 的第 n 行是第 e*N + n 行，"
                    "TMA 的 box 是 [BLOCK_N, BLOCK_K]，load 之后 .T。",
                    "Sorted row pos is slot s = sorted_slots[pos], which reads row s // top_k of x: no copy of x in "
                    "sorted order, gather the rows by number. See w [E, N, K] as (E*N, K): expert e's row n is row "
                    "e*N + n; the TMA box is [BLOCK_N, BLOCK_K], used .T after the load.",
                ),
                (
                    "A 的 load 要掩码：行 live = rows < row_end，列 k0 + cols < K，other=0。w 的 box 越过这个专家的 "
                    "N 行时读到的是下一个专家的行：它们只进到 >= N 的列，store 时用 cols < N 挡掉。store 的掩码是 "
                    "live 行和 cols < N；有权重时先乘 weights[slot]（float32）。",
                    "Mask A's load: live rows = rows < row_end, columns k0 + cols < K, other=0. A w box past this "
                    "expert's N rows reads the next expert's rows: they only reach columns >= N, which the store "
                    "masks with cols < N. The store's mask is live rows and cols < N; with weights, first multiply "
                    "by weights[slot] (in float32).",
                ),
                (
                    "合并不能用浮点 atomic_add（顺序不定，位就不定）：combine 时 store_rows 把行写到 slot 号上"
                    "（BY_SLOT），得到 [T*top_k, N]；combine_topk 每个程序一个 token 一块列，j = 0..TOP_K-1 按顺序"
                    "在 float32 里加起来再存。check_expert_inputs：手工造的 Routing（routing.checked 为假）"
                    "再交给给定的 check_offsets；route 造的不用（那是一次主机同步）。",
                    "No float atomic_add in the combine (its order varies, so do the bits): with combine, store_rows "
                    "writes each row at its slot (BY_SLOT), a [T*top_k, N] tensor; combine_topk gives a program a "
                    "token and a block of columns and adds j = 0..TOP_K-1 in order, in float32, then stores. "
                    "check_expert_inputs: a hand-made Routing (routing.checked false) goes on to the given "
                    "check_offsets too; one from route does not (that is a host sync).",
                ),
            ),
            title_zh="分组 kernel",
            needs=("T6.1", "T6.2"),
        ),
        Step(
            "T6.4",
            "the expert MLP in two launches",
            ("5", "5.1", "5.2"),
            ("gate_up_product", "swiglu", "moe_mlp"),
            (
                (
                    "w_gate_up 的每个专家有 2F 行：前 F 行是 gate，后 F 行是 up。输出的第 n 列要 gate 的第 n 行和 "
                    "up 的第 n 行，所以一个 tile 读两个 box：第 e*2F + pid_n*BLOCK_N 行和第 e*2F + F + "
                    "pid_n*BLOCK_N 行（tile_product 已经把这两个行号算好传进来了）。",
                    "Each expert of w_gate_up has 2F rows: F of gate, then F of up. Output column n needs row n of "
                    "gate and row n of up, so a tile reads two boxes: rows e*2F + pid_n*BLOCK_N and e*2F + F + "
                    "pid_n*BLOCK_N (tile_product already hands you both).",
                ),
                (
                    "gate_up_product 和 gathered_product 一样循环 K，但每个 A box 只 load 一次，乘两个 w box，"
                    "两个累加器。swiglu = gate * tl.sigmoid(gate) * up。moe_mlp：route，"
                    "一次 activation=\"swiglu\" 的 grouped_matmul 得到排好序的 [T*top_k, F]，"
                    "再一次 x_sorted=True、带 topk_weights、combine=True；两次都传 config=config。",
                    "gate_up_product loops over K as gathered_product does, but loads each A box once for two w "
                    "boxes and two accumulators. swiglu = gate * tl.sigmoid(gate) * up. moe_mlp: route, one "
                    "grouped_matmul with activation=\"swiglu\" for the sorted [T*top_k, F], then one with "
                    "x_sorted=True, topk_weights and combine=True; both with config=config.",
                ),
            ),
            advanced=True,
            title_zh="两次启动的专家 MLP",
            needs=("T6.1", "T6.2", "T6.3"),
        ),
    ),
)
