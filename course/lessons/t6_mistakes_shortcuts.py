"""Lesson T6's shortcuts, t6hunt's mistakes and the t6learner2 walk's: mutants of our own that make
check runs (most not in §8's table): text substitutions in solutions/t6_moe.py, each with the one
test of tests/t6/ that must catch it, as course/lessons/t6_mistakes.py describes.  Shortcuts:
numbers cannot tell them from the kernel, the watch on the launch can.  BASE is scan_counts' line
that the table's mistakes change too.  The shortcuts in grouped_matmul, route and combined are made
where that code is, in the given host (HOST): the suite's watches must see through it as they see
through the side's file.  Their causes are in t6_mistakes.py's CAUSES and t6_mistakes_own.py's, and for the
last two (session 17's own) in STORE_CAUSES below."""

from course.lesson_data import Mistake

# The words a message says when, and only when, it has detected the cause: {key: (Chinese, English)}.
STORE_CAUSES = {
    "counts-are-ends": (
        "这是每个专家的行尾（累加和，offsets 的值）",
        "these are the row ends (the running sum, offsets'",
    ),
    "store-in-counts": ("的存储落进了 counts", "fell in counts, which scan_counts alone writes"),
}
HOST = "given/t6_host.py"  # the lesson's given host side, which both sides bind
LOOP = "for tile_id in tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN):"
TILE_ENDS = "    tile_ends = tl.cumsum(m_blocks * num_pid_n, axis=0)"
SCATTER_STORES = (
    "tl.store(sorted_slots_ptr + pos, slots, mask=valid)\n    tl.store(slot_pos_ptr + slots, pos, mask=valid)"
)
OFFSETS_STORE = "    tl.store(offsets_ptr + experts, tl.cumsum(running, axis=0), mask=experts < num_experts)\n"
# The block_base line of scan_counts: the running sum of the blocks before this one.
BASE = "before = running[None, :] + tl.cumsum(here, axis=0) - here"
LAUNCH = "    kernel = side.moe_kernel[(programs,)]("
DOWN_CALL = (
    "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, config=config)"
)
DOWN_IN_TORCH = (
    "    by_slot = torch.empty((x.shape[0] * routing.top_k, w_down.shape[1]), dtype=torch.float32, device=x.device)\n"
    "    e = topk_ids.reshape(-1)[routing.sorted_slots.long()]\n"
    "    rows = [hidden[i].float() @ w_down[e[i]].float().T for i in range(hidden.shape[0])]\n"
    "    weights = topk_weights.reshape(-1)[routing.sorted_slots.long()]\n"
    "    by_slot[routing.sorted_slots.long()] = torch.stack(rows) * weights[:, None]\n"
    "    return by_slot.view(x.shape[0], -1, by_slot.shape[1]).sum(1).to(x.dtype)"
)
# A loop over the experts in place of the launch (whose call is kept, on a function that does nothing).
LOOP_OF = (
    "    start = 0\n"
    "    for e, end in enumerate(routing.offsets.tolist()):\n"
    "        rows = routing.sorted_slots[start:end].long() // routing.top_k\n"
    "        out[start:end] = {product}\n"
    "        start = end\n"
    "    kernel = (lambda *args, **kwargs: None)("
)
# gathered_product's A pointers along K (gate_up_product has the same, followed by gate's dot, not b).
A_ALONG_K = "(k0 + cols)[None, :] * stride_xk,"
A_MASK_THEN_B = "\n                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n        b = "
# route's three launches, and a stable sort by torch in their place (t6hunt).
ROUTE_LAUNCHES = "        launch_in_order(side, route_key(side, topk_ids, num_experts), launches, dev)\n"
ROUTE_IN_TORCH = (
    "        keyed = torch.where((ids >= 0) & (ids < num_experts), ids, num_experts)\n"
    "        order = torch.sort(keyed, stable=True).indices\n"
    "        counts.copy_((keyed[None, :] == torch.arange(num_experts, device=dev)[:, None]).sum(1))\n"
    "        offsets.copy_(counts.cumsum(0))\n"
    "        sorted_slots.copy_(order)\n"
    "        slot_pos[order] = torch.arange(slots, device=dev, dtype=torch.int32)\n"
)
COMBINE_LAUNCH = (
    "    y = torch.empty((rows, N), device=by_slot.device, dtype=dtype)\n"
    "    block_n = min(1024, triton.next_power_of_2(N))\n"
    "    side.combine_topk[(rows, triton.cdiv(N, block_n))](by_slot, y, N, top_k, block_n)\n"
    "    return y\n"
)
COMBINE_BODY = (
    "    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)\n"
    "    for j in tl.static_range(TOP_K):\n"
    "        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols, mask=cols < N, other=0.0).to(tl.float32)\n"
)
COMBINE_BY_TL_SUM = (
    "    j = tl.arange(0, 8)\n"
    "    rows = tl.load(by_slot_ptr + (t * TOP_K + j)[:, None] * N + cols[None, :],\n"
    "                   mask=(j < TOP_K)[:, None] & (cols < N)[None, :], other=0.0)\n"
    "    acc = tl.sum(rows.to(tl.float32), axis=0)\n"
)

SHORTCUTS = (
    # Shortcuts, mutants of our own (not in §8): numbers cannot tell them from the kernel, the watch on
    # the launch can.
    Mistake(
        "shortcut-grouped-mm",
        "T6.3",
        "结果换成 torch._grouped_mm 算的",
        "the result replaced by torch._grouped_mm's",
        "1.2",
        "    return combined(side, out, out_rows, N, routing.top_k, x.dtype) if combine else out\n",
        "    if not combine:\n        xs = x[routing.sorted_slots.long() // routing.top_k]\n"
        "        return torch._grouped_mm(xs, w.transpose(-2, -1), offs=routing.offsets)\n"
        "    return combined(side, out, out_rows, N, routing.top_k, x.dtype)\n",
        "test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float16]",
        table=False,
        file=HOST,
    ),
    Mistake(
        "shortcut-matmul-loop",
        "T6.3",
        "每个专家一次 torch 的矩阵乘，代替一次启动",
        "one torch product per expert instead of the launch",
        "1.2",
        LAUNCH,
        LOOP_OF.format(product="x[rows] @ w[e].t()"),
        "test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float16]",
        table=False,
        file=HOST,
    ),
    Mistake(
        "shortcut-t5-per-expert",
        "T6.3",
        "每个专家调用一次 T5 的 matmul，代替一次启动",
        "T5's matmul called per expert instead of the launch",
        "1.2",
        LAUNCH,
        LOOP_OF.format(product="__import__('mine.t5_persistent').t5_persistent.matmul(x[rows].contiguous(), w[e].t())"),
        "test_grouped_matmul_in_sorted_order[balanced-37-2-5-40-24-torch.float16]",
        table=False,
        file=HOST,
    ),
    Mistake(
        "shortcut-down-in-torch",
        "T6.4",
        "down 那一步在 moe_mlp 里用 torch 逐行相乘，代替第二次启动",
        "the down step done row by row with torch in moe_mlp instead of the second launch",
        "1.2",
        DOWN_CALL,
        DOWN_IN_TORCH,
        "test_moe_mlp_in_two_launches",
        "moe-mlp-called",
        table=False,
    ),
    # t6hunt's: shortcuts and mistakes the suite let through until it checked for them.
    Mistake(
        "shortcut-route-in-torch",
        "T6.1",
        "路由换成 torch 的稳定排序，不启动三个路由内核",
        "the routing replaced by torch's stable sort, none of the three routing kernels launched",
        "2.3",
        ROUTE_LAUNCHES,
        ROUTE_IN_TORCH,
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        table=False,
        file=HOST,
    ),
    Mistake(
        "base-without-carry",
        "T6.1",
        "block_base 不加前面各批的 running：只在不超过 SCAN_ROWS 个块时对",
        "block_base leaves out the earlier batches' running sum: right up to SCAN_ROWS blocks only",
        "2.1",
        BASE,
        "before = tl.cumsum(here, axis=0) - here",
        "test_route_is_a_stable_counting_sort[skewed-1100-2-9]",
        "base-no-carry",
        table=False,
    ),
    Mistake(
        "no-tokens-refused",
        "T6.1",
        "0 个 token 时 torch.aminmax 对空张量报错",
        "with 0 tokens torch.aminmax raises on the empty ids",
        "2.3",
        "    if check_ids and topk_ids.numel():",
        "    if check_ids:",
        "test_route_of_no_tokens",
        table=False,
    ),
    Mistake(
        "offsets-checked-always",
        "T6.3",
        "route 给的 Routing 也做 check_offsets：每次调用都在主机上读 offsets",
        "check_offsets run on route's own routings too: the offsets read on the host every call",
        "3.4",
        "    if not routing.checked:  # made by hand: its offsets must be the row ends of its counts\n",
        "    if True:\n",
        "test_grouped_matmul_reads_nothing_back",
        table=False,
    ),
    Mistake(
        "x-stride-k-ignored",
        "T6.3",
        "A 的指针沿 K 没乘 stride_xk：只对 K 方向连续的 x 对",
        "A's pointers along K not multiplied by stride_xk: right only for an x contiguous along K",
        "4.1",
        A_ALONG_K + A_MASK_THEN_B,
        "(k0 + cols)[None, :]," + A_MASK_THEN_B,
        "test_routing_weights_and_the_combine[sorted]",
        "read-as-contiguous",
        table=False,
    ),
    Mistake(
        "shortcut-combine-in-torch",
        "T6.3",
        "combine 用 torch 在主机上求和，不启动 combine_topk",
        "the combine summed by torch on the host, combine_topk not launched",
        "4.4",
        COMBINE_LAUNCH,
        "    return by_slot.view(rows, top_k, N).sum(1).to(dtype)\n",
        "test_routing_weights_and_the_combine[combined]",
        table=False,
        file=HOST,
    ),
    Mistake(
        "combine-by-tl-sum",
        "T6.3",
        "combine 把 top_k 行读成一块再 tl.sum：tl.sum 不保证按 j 的顺序加",
        "the combine loads the top_k rows as one block and calls tl.sum, whose order is not j's",
        "4.4",
        COMBINE_BODY,
        COMBINE_BY_TL_SUM,
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "combine-reversed",
        table=False,
    ),
    Mistake(
        "slot-pos-into-ids",
        "T6.1",
        "scatter_slots 把 slot_pos 存进了 ids_ptr：调用者的 topk_ids 在检查之前就被改了",
        "scatter_slots stores slot_pos through ids_ptr: the caller's topk_ids change under the checks (the "
        "message had named counts, against the ids as changed)",
        "2.3",
        "tl.store(slot_pos_ptr + slots, pos, mask=valid)",
        "tl.store(ids_ptr + slots, pos, mask=valid)",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "ids-written",
        table=False,
    ),
    Mistake(
        "tile-loop-from-zero",
        "T6.2",
        "tile 循环从 0 开始、步长 NUM_PROGS：每个程序都做 tile 0、NUM_PROGS……",
        "the tile loop starts at 0 with the step NUM_PROGS: every program does tiles 0, NUM_PROGS, ... (the "
        "message had said 'tile 0 had 3 epilogues' alone)",
        "3.4",
        LOOP,
        LOOP.replace("tl.program_id(0),", "0,"),
        "test_every_tile_of_every_expert_once",
        "loop-words",
        table=False,
    ),
    Mistake(
        "tile-ends-exclusive",
        "T6.2",
        "expert_tile_counts 的 tile_ends 是不含自身的前缀和：每个专家的第一个 tile",
        "expert_tile_counts' tile_ends an exclusive sum: each expert's first tile, not its end",
        "3.3",
        TILE_ENDS,
        TILE_ENDS.replace("axis=0)", "axis=0) - m_blocks * num_pid_n"),
        "test_tile_counts_and_places_alone",
        "tile-ends-are-starts",
        table=False,
    ),
    Mistake(
        "scatter-stores-swapped",
        "T6.1",
        "scatter_slots 的两个存储互换：sorted_slots[slot] = pos，slot_pos[pos] = slot",
        "scatter_slots' two stores swapped: sorted_slots[slot] = pos, slot_pos[pos] = slot (the message had said "
        "'sorted_slots is wrong from position 0 on' alone)",
        "2.1",
        SCATTER_STORES,
        "tl.store(slot_pos_ptr + pos, slots, mask=valid)\n    tl.store(sorted_slots_ptr + slots, pos, mask=valid)",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "scatter-stores-swapped",
        table=False,
    ),
    Mistake(
        "row-end-live",
        "T6.3",
        "gathered_rows 的 live 是 rows <= row_end：多了一行，row_end 本身",
        "gathered_rows' live is rows <= row_end: one row too many, row_end's own (the message had listed the "
        "rows alone)",
        "4.1",
        "    live = rows < row_end\n    if X_SORTED:",
        "    live = rows <= row_end\n    if X_SORTED:",
        "test_gathered_product_alone[gathered]",
        "row-end-live",
        table=False,
    ),
    Mistake(
        "x-strides-swapped",
        "T6.3",
        "A 的指针把 stride_xm 和 stride_xk 用反了",
        "A's pointers with stride_xm and stride_xk swapped: row r, column k read at r * stride_xk + k * stride_xm "
        "(the message had said 'relative error' alone)",
        "4.1",
        "x_rows[:, None] * stride_xm + " + A_ALONG_K + A_MASK_THEN_B,
        "x_rows[:, None] * stride_xk + " + A_ALONG_K.replace("stride_xk", "stride_xm") + A_MASK_THEN_B,
        "test_gathered_product_alone[gathered]",
        "x-strides-swapped",
        table=False,
    ),
    Mistake(
        "counts-stored-as-ends",
        "T6.1",
        "scan_counts 把累加和也存进了 counts",
        "scan_counts stores the running sum into counts too (the message had said 'counts should be' alone)",
        "2.1",
        OFFSETS_STORE,
        OFFSETS_STORE + OFFSETS_STORE.replace("offsets_ptr", "counts_ptr"),
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "counts-are-ends",
        table=False,
    ),
    Mistake(
        "scatter-stores-into-counts",
        "T6.1",
        "scatter_slots 还往 counts 里存了位置",
        "scatter_slots also stores each slot's place into counts[id] (the message had said 'counts should be' alone)",
        "2.3",
        "    tl.store(sorted_slots_ptr + pos, slots, mask=valid)\n",
        "    tl.store(sorted_slots_ptr + pos, slots, mask=valid)\n    tl.store(counts_ptr + ids, pos, mask=valid)\n",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "store-in-counts",
        table=False,
    ),
)
