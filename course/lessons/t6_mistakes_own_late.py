"""More of lesson T6's mutants of our own from the hole hunts t6holes and t6grade: the last of
t6_mistakes_own.py's, moved here so that neither file passes 400 lines.  Only make check runs them;
t6_mistakes.py gathers them right after OWN.
"""

from course.lessons.t6_mistakes_own import COMBINE_STORE_MASK, GATE_UP_CALL, LOOP, W_BOX, own

OWN_LATE = (
    own(
        "weights-device-unchecked",
        "T6.3",
        "check_expert_inputs checks topk_weights' shape, not its device: a meta tensor reaches the launch, whose "
        "copy raises torch's NotImplementedError (it was shown as a bare traceback, re-raised as if the stub's)",
        "4",
        "or topk_weights.device != x.device:\n",
        ":\n",
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "combine-program-ids-swapped",
        "T6.3",
        "combine_topk takes its token from tl.program_id(1) and its column block from tl.program_id(0): on the "
        "grid (T, column blocks) it writes row 0 alone (the first test of the combine said 'off from float64', §4)",
        "4.4",
        "    t = tl.program_id(0)\n    cols = tl.program_id(1) * BLOCK_N",
        "    t = tl.program_id(1)\n    cols = tl.program_id(0) * BLOCK_N",
        "test_each_tile_reads_its_own_expert_alone[weighted and combined]",
    ),
    own(
        "mlp-gate-up-x-sorted",
        "T6.4",
        "moe_mlp's gate/up call passes x_sorted=True with x's T rows: check_expert_inputs refuses it, and the "
        "message names the call refused, not a missing x_sorted (which the down call's check looks for)",
        "5.2",
        GATE_UP_CALL,
        GATE_UP_CALL.replace("config=config", "x_sorted=True, config=config"),
        "test_moe_mlp_in_two_launches",
    ),
    own(
        "histogram-of-ids-as-loaded",
        "T6.1",
        "count_experts hands tl.histogram the ids as loaded, not as int32: int8 ids fail in the kernel, and the "
        "message said route refused int8 ids, which check_routing_inputs had not",
        "2.3",
        "hist = tl.histogram(ids.to(tl.int32), E_BLOCK, mask=valid)",
        "hist = tl.histogram(ids, E_BLOCK, mask=valid)",
        "test_route_takes_narrower_integer_ids[torch.int8]",
    ),
    own(
        "combine-store-unmasked",
        "T6.3",
        "combine_topk stores without a mask: the last token's row runs past the result (the run crashed, with no "
        "word of the combine, before the combine's own test)",
        "4.4",
        "    tl.store(out_ptr + t * N + cols, " + COMBINE_STORE_MASK,
        "    tl.store(out_ptr + t * N + cols, acc.to(out_ptr.dtype.element_ty))",
        "test_each_tile_reads_its_own_expert_alone[weighted and combined]",
        "outside-tensors",
    ),
    own(
        "expert-rows-read-by-bad-ids",
        "T6.1",
        "scatter_slots reads offsets and counts at every slot of the block, in range or not: an id out of range "
        "reads past them (the message blamed the ids without having checked that they were the cause)",
        "2.3",
        "first_row = tl.load(offsets_ptr + ids, mask=valid, other=0) - tl.load(counts_ptr + ids, mask=valid, other=0)",
        "first_row = tl.load(offsets_ptr + ids, mask=slots < num_slots, other=0) - tl.load(counts_ptr + ids, "
        "mask=slots < num_slots, other=0)",
        "test_route_ignores_ids_out_of_range",
        "outside-tensors+id-as-index",
    ),
    own(
        "loop-chunk-start",
        "T6.2",
        "the tile loop starts at pid * NUM_PROGS (a chunk's start) with the step NUM_PROGS: tiles 1 .. NUM_PROGS - 1 "
        "are never done, though later ones are (the message had said the tile count or the loop's bound stops short)",
        "3.4",
        LOOP,
        LOOP.replace("tl.program_id(0),", "tl.program_id(0) * NUM_PROGS,"),
        "test_every_tile_of_every_expert_once",
        "start-or-step",
    ),
    own(
        "id-load-unmasked",
        "T6.1",
        "count_experts loads the ids without a mask: the last block's lanes past the last slot read past topk_ids, "
        "with or without ids out of range (the message had blamed the ids out of range)",
        "2.1",
        "ids = tl.load(ids_ptr + slots, mask=slots < num_slots, other=0)  # int64 stays int64 until checked",
        "ids = tl.load(ids_ptr + slots)  # int64 stays int64 until checked",
        "test_route_ignores_ids_out_of_range",
        "outside-tensors+not-the-bad-ids",
    ),
    own(
        "w-box-coords-turned",
        "T6.3",
        "gathered_product loads w's box at [k0, w_row]: the message said 'relative error' alone",
        "4.2",
        W_BOX,
        W_BOX.replace("[w_row, k0]", "[k0, w_row]"),
        "test_gathered_product_alone[gathered]",
        "w-box-turned",
    ),
    own(
        "w-box-not-transposed",
        "T6.3",
        "gathered_product multiplies by w's box without .T (square boxes in the test, so no shape error)",
        "4.2",
        W_BOX + "        acc = tl.dot(a, b.T, acc)",
        W_BOX + "        acc = tl.dot(a, b, acc)",
        "test_gathered_product_alone[gathered]",
        "w-box-untransposed",
    ),
)
