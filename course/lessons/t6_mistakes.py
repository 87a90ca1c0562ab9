"""Lesson T6's classic mistakes, for its explainer §8 table (python -m tools.explainers.mistakes --lesson T6).

Each is a text substitution in solutions/t6_moe.py and the one test of tests/t6/ (by name) that must
catch it on the interpreter; tools/explainers/mistakes.py makes each one, with the references of T4
and T5 in mine/ beside it (T6 imports persistent_grid, tma_problem and tile_coords from them), and
runs that test.  A mistake that reads or writes outside a tensor is stopped before the access is
made: on the interpreter every launch of T6's kernels is under an address watch (tests/t6/stray.py,
tests/bounds.py), and a few tests watch their launches themselves for a message more precise
(test_route_ignores_ids_out_of_range, test_schedule_reads_only_counts_and_offsets for the tile
schedule's read of offsets[-1], test_each_tile_reads_its_own_expert_alone).
"""

from course.lesson_data import Mistake
from course.lessons.t6_mistakes_calls import CALLS
from course.lessons.t6_mistakes_causes import CAUSES_NAMED, DETECTED_CAUSES
from course.lessons.t6_mistakes_compile import COMPILE, COMPILE_CAUSES
from course.lessons.t6_mistakes_early37 import EARLY37, EARLY37_CAUSES
from course.lessons.t6_mistakes_en_learner import EN_LEARNER, EN_LEARNER_CAUSES
from course.lessons.t6_mistakes_enlearner13 import ENLEARNER13, ENLEARNER13_CAUSES
from course.lessons.t6_mistakes_fix9 import FIX9, FIX9_CAUSES
from course.lessons.t6_mistakes_hostcopy import HOSTCOPY, HOSTCOPY_CAUSES
from course.lessons.t6_mistakes_hunt3 import HUNT3, HUNT3_CAUSES
from course.lessons.t6_mistakes_hunt4 import HUNT4, HUNT4_CAUSES
from course.lessons.t6_mistakes_hunt5 import HUNT5, HUNT5_CAUSES
from course.lessons.t6_mistakes_hunt6 import HUNT6, HUNT6_CAUSES
from course.lessons.t6_mistakes_hunt7 import HUNT7, HUNT7_CAUSES
from course.lessons.t6_mistakes_hunt8 import HUNT8, HUNT8_CAUSES
from course.lessons.t6_mistakes_hunt10 import HUNT10, HUNT10_CAUSES
from course.lessons.t6_mistakes_hunt11 import HUNT11, HUNT11_CAUSES
from course.lessons.t6_mistakes_hunt12 import HUNT12, HUNT12_CAUSES
from course.lessons.t6_mistakes_hunt13 import HUNT13, HUNT13_CAUSES
from course.lessons.t6_mistakes_hunt14 import HUNT14, HUNT14_CAUSES
from course.lessons.t6_mistakes_hunt15 import HUNT15, HUNT15_CAUSES
from course.lessons.t6_mistakes_hunt16 import HUNT16, HUNT16_CAUSES
from course.lessons.t6_mistakes_hunter import HUNTER, HUNTER_CAUSES
from course.lessons.t6_mistakes_learner import LEARNER, LEARNER_CAUSES
from course.lessons.t6_mistakes_learner8 import LEARNER8, LEARNER8_CAUSES
from course.lessons.t6_mistakes_learner11b import LEARNER11B, LEARNER11B_CAUSES
from course.lessons.t6_mistakes_learner37 import LEARNER37, LEARNER37_CAUSES
from course.lessons.t6_mistakes_left11 import LEFT11, LEFT11_CAUSES
from course.lessons.t6_mistakes_left11b import LEFT11B, LEFT11B_CAUSES
from course.lessons.t6_mistakes_left12 import LEFT12, LEFT12_CAUSES
from course.lessons.t6_mistakes_left13 import LEFT13, LEFT13_CAUSES
from course.lessons.t6_mistakes_left14 import LEFT14, LEFT14_CAUSES
from course.lessons.t6_mistakes_left36 import LEFT36, LEFT36_CAUSES
from course.lessons.t6_mistakes_left37 import LEFT37, LEFT37_CAUSES
from course.lessons.t6_mistakes_mlp import MLP_TABLE
from course.lessons.t6_mistakes_own import OWN, OWN_CAUSES
from course.lessons.t6_mistakes_own_late import OWN_LATE
from course.lessons.t6_mistakes_schedule import SCHEDULE_TABLE
from course.lessons.t6_mistakes_shortcuts import BASE, SHORTCUTS, STORE_CAUSES
from course.lessons.t6_mistakes_spin11 import SPIN11, SPIN11_CAUSES
from course.lessons.t6_mistakes_styles8 import STYLES8, STYLES8_CAUSES
from course.lessons.t6_mistakes_styles15 import STYLES15, STYLES15_CAUSES
from course.lessons.t6_mistakes_zhlearner10 import ZHLEARNER10, ZHLEARNER10_CAUSES
from course.lessons.t6_mistakes_zhlearner15 import ZHLEARNER15, ZHLEARNER15_CAUSES

# The words a T6 message says when, and only when, it has detected the cause (make check:
# each_mistake_names_its_own_cause): {key: (Chinese, English)}.
CAUSES = {
    "unstable": ("散射不稳定", "the scatter is not stable"),
    "offsets-are-starts": ("这是每个专家的行首", "these are the row starts"),
    "past-total": ("循环要停在设备上读出的总数", "the loop must stop at the total read on the device"),
    "mixes-experts": ("混进了下一个专家的行", "into the next expert's"),
    "weights-missing": ("结果没有乘路由权重", "the routing weights were not applied"),
    "float-atomics": ("浮点 atomic_add", "float atomic add"),
    "outside-tensors": ("不属于它拿到的任何张量", "outside every tensor it was given"),
    "weights-in-gate-up": ("gate/up 那次启动收到了路由权重", "the gate/up launch got the routing weights"),
    "order-dependent": ("取决于程序运行的先后", "depends on the order the programs run"),
    "offsets-minus-one": ("offsets[-1]", "offsets[-1]"),
    "row-end-past-block": ("row_end 最多是 row_begin + BLOCK_M", "must be at most row_begin + BLOCK_M"),
    "other-experts-weights": ("只读它自己的专家", "of its own expert and pid_n alone"),
    "moe-mlp-called": ("moe_mlp 调用了", "moe_mlp called"),
    "a-read-twice": ("每个 A 的块只读一次", "load each A box once"),
}

RANK = "(lane[None, :] < lane[:, None])"
STORE_MASK = "acc.to(out_ptr.dtype.element_ty), mask=live[:, None] & (cols < N)[None, :])"
TILE_PRODUCT = (
    "        acc = tile_product(x_ptr, w_desc, sorted_slots_ptr, row_begin, row_end, expert, pid_n, N, K, stride_xm,\n"
    "                           stride_xk, TOP_K, BLOCK_M, BLOCK_N, BLOCK_K, X_SORTED, ACTIVATION, TRACE)"
)
# Every expert's product for each tile, all but its own masked away: the right numbers, E times the weights read.
DENSE = (
    "        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
    "        for other in range(0, num_experts):\n"
    "            part = tile_product(x_ptr, w_desc, sorted_slots_ptr, row_begin, row_end, other, pid_n, N, K,\n"
    "                                stride_xm, stride_xk, TOP_K, BLOCK_M, BLOCK_N, BLOCK_K, X_SORTED,\n"
    "                                ACTIVATION, TRACE)\n"
    "            acc += tl.where(other == expert, part, 0.0)"
)
SCATTER_POS = (
    "    pos = first_row + tl.load(block_base_ptr + tl.program_id(0) * E_BLOCK + ids, mask=valid, other=0) + rank"
)
# block_base's first row (block 0's bases, all 0) used as a cursor per expert: first come, first served.
CURSOR = "    pos = first_row + tl.atomic_add(block_base_ptr + ids, tl.full((BLOCK,), 1, tl.int32), mask=valid)"
COMBINE_STORE = "tl.store(out_ptr + t * N + cols, acc.to(out_ptr.dtype.element_ty), mask=cols < N)"

MISTAKES = (
    Mistake(
        "base-misses-batch",
        "T6.1",
        "block_base 只加了之前各批的和，漏了同一批里排在前面的块",
        "block_base holds the earlier batches only, not the earlier blocks of its own batch",
        "2.1",
        BASE,
        "before = running[None, :] + here * 0",
        "test_route_is_a_stable_counting_sort[skewed-150-2-9]",
        "base-no-batch-sum",
    ),
    Mistake(
        "rank-reversed",
        "T6.1",
        "块内名次数的是后面的同专家 slot：同一专家内的顺序反了（不稳定）",
        "the rank in the block counts the later slots of the expert: the order within an expert is reversed (unstable)",
        "2.2",
        RANK,
        "(lane[None, :] > lane[:, None])",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "unstable",
    ),
    Mistake(
        "scatter-far-outside",
        "T6.1",
        "散射的位置算得离谱，远远落在 sorted_slots 之外（不拦下会让整个运行崩溃）",
        "the scatter's places computed far off, well past sorted_slots (made, they crash the run)",
        "2.1",
        "    pos = first_row + tl.load(block_base_ptr",
        "    pos = (first_row + 1) * 10000019 + tl.load(block_base_ptr",
        "test_route_takes_int32_ids_and_repeats_its_bits",
        "outside-tensors",
        table=False,
    ),
    Mistake(
        "weights-of-any-dtype",
        "T6.3",
        "check_expert_inputs 不查 topk_weights 是不是浮点",
        "check_expert_inputs does not check that topk_weights is floating",
        "4",
        "        if not topk_weights.is_floating_point():\n            raise ValueError(",
        "        if False:  # the dtype left unchecked\n            raise ValueError(",
        "test_grouped_matmul_refuses_bad_input",
        table=False,
    ),
    Mistake(
        "weights-zeroed-in-place",
        "T6.3",
        "epilogue 用过路由权重后把调用者的 topk_weights 清零",
        "the epilogue zeroes the caller's topk_weights once it has used them",
        "4.3",
        "        acc = acc * tl.load(weights_ptr + slots, mask=live, other=0.0).to(tl.float32)[:, None]\n",
        "        acc = acc * tl.load(weights_ptr + slots, mask=live, other=0.0).to(tl.float32)[:, None]\n"
        "        tl.store(weights_ptr + slots, tl.zeros_like(slots).to(weights_ptr.dtype.element_ty), mask=live)\n",
        "test_each_tile_reads_its_own_expert_alone[weighted and combined]",
        "writes-an-input",  # named since left11b's address watch sees a store into an input
        table=False,
    ),
    Mistake(
        "scan-no-carry",
        "T6.1",
        "scan_counts 没有把前面各批块的和带到下一批（running 没有累加）",
        "scan_counts does not carry the sum of earlier blocks into the next batch (running never grows)",
        "2.1",
        "        running += tl.sum(here, axis=0)\n",
        "",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "running-never-grew",
    ),
    Mistake(
        "ids-unchecked",
        "T6.1",
        "check_routing_inputs 不查专家号的范围",
        "check_routing_inputs does not check the range of the expert ids",
        "2.3",
        "        if lo < 0 or hi >= num_experts:",
        "        if False:",
        "test_route_refuses_bad_input[an id >= num_experts]",
    ),
    Mistake(
        "scatter-ids-unmasked",
        "T6.1",
        "scatter_slots 的掩码只挡块尾，不挡越界的专家号：check_ids=False 时拿它当下标读写了数组之外",
        "scatter_slots masks the block's tail only, not ids out of range: with check_ids=False it indexes "
        "outside its arrays with them",
        "2.3",
        "    valid = (slots < num_slots) & (ids >= 0) & (ids < num_experts)\n    earlier_same",
        "    valid = slots < num_slots\n    earlier_same",
        "test_route_ignores_ids_out_of_range",
        "outside-tensors+id-as-index",
    ),
    Mistake(
        "atomic-cursor",
        "T6.1",
        "散射用 atomic 计数器先到先得地发放位置：程序按 id 顺序跑时是稳定的，换个顺序就不是了",
        "the scatter hands out places first come, first served through an atomic cursor: stable when the programs "
        "run in id order, not in another",
        "2.2",
        SCATTER_POS,
        CURSOR,
        "test_route_in_any_program_order",
        "order-dependent",
    ),
)
MISTAKES += SCHEDULE_TABLE  # T6.2's, the tile schedule (t6_mistakes_schedule.py), between T6.1's and T6.3's
MISTAKES += (
    Mistake(
        "dense-over-experts",
        "T6.3",
        "每个 tile 对所有专家都算一遍乘积，再把别的专家的掩掉：数字对，权重却读了 E 遍",
        "each tile computes every expert's product and masks the others away: the right numbers, the weights read "
        "E times",
        "4.2",
        TILE_PRODUCT,
        DENSE,
        "test_each_tile_reads_its_own_expert_alone[plain]",
        "other-experts-weights",
    ),
    Mistake(
        "gather-ignores-permutation",
        "T6.3",
        "A 的行按排好序的位置 // top_k 取，没有经过 sorted_slots",
        "A's rows taken as the sorted position // top_k, not through sorted_slots",
        "4.1",
        "x_rows = tl.load(sorted_slots_ptr + rows, mask=live, other=0) // TOP_K",
        "x_rows = tl.where(live, rows, 0) // TOP_K",
        "test_gathered_product_alone[gathered]",
        "rows-by-position",
    ),
    Mistake(
        "no-row-mask",
        "T6.3",
        "store 的掩码只挡列，不挡专家最后一行之后的行",
        "the store's mask stops the columns only, not the rows past the expert's last",
        "4.3",
        STORE_MASK,
        "acc.to(out_ptr.dtype.element_ty), mask=(cols < N)[None, :] & (rows >= 0)[:, None])",
        "test_store_rows_alone[plain]",
        "row-mask-missing",
    ),
    Mistake(
        "no-weights",
        "T6.3",
        "epilogue 没有乘路由权重",
        "the epilogue does not multiply by the routing weights",
        "4.3",
        "    if HAS_WEIGHTS:\n        acc = acc *",
        "    if HAS_WEIGHTS:\n        acc = acc + 0 *",
        "test_routing_weights_and_the_combine[sorted]",
        "weights-missing",
    ),
    Mistake(
        "atomic-combine",
        "T6.3",
        "combine 用浮点 atomic_add 把 top_k 行加进结果",
        "the combine adds the top_k rows into the result with a float atomic_add",
        "4.4",
        COMBINE_STORE,
        "tl.atomic_add(out_ptr + t * N + cols, acc.to(out_ptr.dtype.element_ty), mask=cols < N)",
        "test_combine_is_deterministic_without_float_atomics",
        "float-atomics",
    ),
    Mistake(
        "k-unchecked",
        "T6.3",
        "check_expert_inputs 不查 w 的 K 是否等于 x 的 K",
        "check_expert_inputs does not check that w's K equals x's",
        "4",
        "    if w.shape[2] != x.shape[1]:",
        "    if False:",
        "test_grouped_matmul_refuses_bad_input",
    ),
    Mistake(
        "weights-by-numel",
        "T6.3",
        "check_expert_inputs 只比 topk_weights 的元素个数：转置的 [top_k, T] 也过了",
        "check_expert_inputs compares topk_weights' element count alone: a transposed [top_k, T] passes",
        "4",
        "        if tuple(topk_weights.shape) != (routing.num_tokens, routing.top_k) or",
        "        if topk_weights.numel() != routing.num_tokens * routing.top_k or",
        "test_grouped_matmul_refuses_bad_input",
    ),
    Mistake(
        "rows-ignore-x-sorted",
        "T6.3",
        "check_expert_inputs 不看 x_sorted：x 按排好序的 slot 给出时也要 token 的行数",
        "check_expert_inputs ignores x_sorted: with x given per sorted slot it still wants one row per token",
        "4",
        "rows = routing.num_tokens * routing.top_k if x_sorted else routing.num_tokens",
        "rows = routing.num_tokens",
        "test_grouped_matmul_refuses_bad_input",
        table=False,
    ),
)
# the table's first (T6.4's last, in t6_mistakes_mlp.py), then those of t6_mistakes_<what>.py: the shortcuts
# (t6hunt's, t6learner2's), the hole hunt's (own), the unplanted-mistake hunt's (hunter), the calls hunt's, the
# symptom-alone hunt's (causes), hunt3's ... hunt4, hunt5, hunt6
MISTAKES = (
    MISTAKES + MLP_TABLE + SHORTCUTS + OWN + OWN_LATE + HUNTER + CALLS + CAUSES_NAMED + HUNT3 + LEARNER + EN_LEARNER
)
MISTAKES = MISTAKES + HUNT4 + HUNT5 + HUNT6
MISTAKES = MISTAKES + COMPILE  # the kernels a GPU compile refuses (t6_mistakes_compile.py)
CAUSES = {**CAUSES, **OWN_CAUSES, **STORE_CAUSES, **HUNTER_CAUSES, **DETECTED_CAUSES, **HUNT3_CAUSES, **LEARNER_CAUSES}
CAUSES |= EN_LEARNER_CAUSES | HUNT4_CAUSES | HUNT5_CAUSES | HUNT6_CAUSES
CAUSES |= COMPILE_CAUSES
MISTAKES = MISTAKES + HUNT7  # hunt7b's, last
CAUSES |= HUNT7_CAUSES
MISTAKES = MISTAKES + LEARNER8  # learner8's (t6_mistakes_learner8.py), last
CAUSES |= LEARNER8_CAUSES
MISTAKES = MISTAKES + HUNT8  # hunt8's, last
CAUSES |= HUNT8_CAUSES
MISTAKES = MISTAKES + STYLES8  # styles8's, last
CAUSES |= STYLES8_CAUSES
MISTAKES = MISTAKES + HOSTCOPY  # session 27's copy to the host, last
CAUSES |= HOSTCOPY_CAUSES
MISTAKES = MISTAKES + FIX9  # fix9's hunt (t6_mistakes_fix9.py), last
CAUSES |= FIX9_CAUSES
MISTAKES = MISTAKES + ZHLEARNER10  # zhlearner10's, last
CAUSES |= ZHLEARNER10_CAUSES
MISTAKES = MISTAKES + HUNT10  # hunt10's, last
CAUSES |= HUNT10_CAUSES
MISTAKES = MISTAKES + LEARNER11B  # learner11b's (t6_mistakes_learner11b.py), last
CAUSES |= LEARNER11B_CAUSES
MISTAKES = MISTAKES + LEFT11  # left11's, last
CAUSES |= LEFT11_CAUSES
MISTAKES = MISTAKES + HUNT11  # hunt11's, last
CAUSES |= HUNT11_CAUSES
MISTAKES = MISTAKES + LEFT11B  # left11b's, last
CAUSES |= LEFT11B_CAUSES
MISTAKES = MISTAKES + SPIN11  # spin11's, last
CAUSES |= SPIN11_CAUSES
MISTAKES = MISTAKES + HUNT12  # hunt12's, last
CAUSES |= HUNT12_CAUSES
MISTAKES = MISTAKES + LEFT12  # left12's, last
CAUSES |= LEFT12_CAUSES
MISTAKES = MISTAKES + LEFT13  # left13's, last
CAUSES |= LEFT13_CAUSES
MISTAKES = MISTAKES + ENLEARNER13  # enlearner13's (t6_mistakes_enlearner13.py), last
CAUSES |= ENLEARNER13_CAUSES
MISTAKES = MISTAKES + HUNT13  # hunt13's, last
CAUSES |= HUNT13_CAUSES
MISTAKES = MISTAKES + LEFT14  # left14's (t6_mistakes_left14.py), last
CAUSES |= LEFT14_CAUSES
MISTAKES = MISTAKES + HUNT14  # hunt14's (t6_mistakes_hunt14.py)
CAUSES |= HUNT14_CAUSES
MISTAKES = MISTAKES + HUNT15  # hunt15's (t6_mistakes_hunt15.py), last
CAUSES |= HUNT15_CAUSES
MISTAKES = MISTAKES + ZHLEARNER15  # zhlearner15's (t6_mistakes_zhlearner15.py), last
CAUSES |= ZHLEARNER15_CAUSES
MISTAKES = MISTAKES + STYLES15  # styles15's (t6_mistakes_styles15.py), last
CAUSES |= STYLES15_CAUSES
MISTAKES = MISTAKES + HUNT16  # hunt16's (t6_mistakes_hunt16.py), last
CAUSES |= HUNT16_CAUSES
MISTAKES = MISTAKES + LEFT36  # session 36's leftovers hunt (t6_mistakes_left36.py)
CAUSES |= LEFT36_CAUSES
MISTAKES = MISTAKES + LEARNER37  # learner37's new-learner plants of T6.3 and T6.4 (t6_mistakes_learner37.py)
CAUSES |= LEARNER37_CAUSES
MISTAKES = MISTAKES + LEFT37  # left37's: learner37's plants that named no cause (t6_mistakes_left37.py)
CAUSES |= LEFT37_CAUSES
MISTAKES = MISTAKES + EARLY37  # early37's new-learner plants of T6.1 and T6.2 (t6_mistakes_early37.py)
CAUSES |= EARLY37_CAUSES
