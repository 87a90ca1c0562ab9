"""Lesson T6's mutants of our own from the third hunt (styles6, 2026-12-03): correct code in other
styles was run through the suite, and mistakes no test named yet were planted; each here was let
through until the check named with it was added.  Only make check runs them (table=False, not in
§8); each must be caught by its test, whose message names its cause (a key of HUNT3_CAUSES here, or
of t6_mistakes.CAUSES) or, for cause "", none.  t6_mistakes.py gathers them last, and their causes
into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT3_CAUSES = {
    "mlp-config-dropped": ("没有传到", "did not reach the"),
    "mlp-output-dtype": ("返回的 y 却是", "and the y it returned is"),
    "undefined-lanes-used": ("又没有给 other 的那些位置", "lanes it masked off without an `other`"),
    "undefined-counts": (
        "在没有 other= 的掩码加载处读到的值",
        "what the T6 tests read where a masked load has no other=",
    ),
}

GATE_UP_CALL = '    hidden = grouped_matmul(x, w_gate_up, routing, activation="swiglu", config=config)\n'
DOWN_CALL = (
    "    return grouped_matmul(hidden, w_down, routing, topk_weights, combine=True, x_sorted=True, config=config)\n"
)
# gathered_product's and gate_up_product's load of A: the same two lines, then each its own next line
A_LOAD = (
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
)
ROUTING_CHECK = "        if t.dtype != torch.int32 or t.device != x.device or t.dim() != 1:\n"

HUNT3 = (
    own(
        "mlp-config-dropped",
        "T6.4",
        "moe_mlp calls grouped_matmul without config=config: the caller's block sizes are dropped and "
        "pick_config's are used; on the CPU pick_config always gives the interpreter's, and every test called "
        "moe_mlp without a config, so it passed (hunt3)",
        "5.2",
        GATE_UP_CALL + DOWN_CALL,
        GATE_UP_CALL.replace(", config=config", "") + DOWN_CALL.replace(", config=config", ""),
        "test_moe_mlp_in_two_launches",
        "mlp-config-dropped",
    ),
    own(
        "mlp-returns-float32",
        "T6.4",
        "moe_mlp returns the layer's output as float32 (.float() on the combined result): the numbers are "
        "right, the dtype is not x's; the test compared numbers alone (hunt3)",
        "5.2",
        DOWN_CALL,
        DOWN_CALL.replace("config=config)\n", "config=config).float()\n"),
        "test_moe_mlp_in_two_launches",
        "mlp-output-dtype",
    ),
    own(
        "routing-device-unchecked",
        "T6.3",
        "check_expert_inputs checks the routing's tensors' dtype and shape, not their device: a routing on "
        "another device than x reaches the launch (the suite's bad inputs had none such) (hunt3)",
        "4",
        ROUTING_CHECK,
        ROUTING_CHECK.replace(" or t.device != x.device", ""),
        "test_grouped_matmul_refuses_bad_input",
    ),
    own(
        "num-experts-zero-taken",
        "T6.1",
        "check_routing_inputs refuses num_experts below 0 alone: num_experts = 0 passes, and with ids its "
        "range check refused them in words that said num_experts too; with no tokens route returned a routing "
        "of 0 experts (hunt3)",
        "2.3",
        "or num_experts < 1:",
        "or num_experts < 0:",
        "test_route_refuses_bad_input[num_experts = 0 for no tokens]",
    ),
    own(
        "a-load-without-other",
        "T6.3",
        "gathered_product loads A with the right mask and no other=: on a GPU the masked-off lanes are "
        "undefined, and past K they meet TMA's zeros (NaN * 0 is NaN); the interpreter reads them as 0, and it "
        "passed until the T6 tests read them as NaN (tests/t6/stray.py, undefined_lanes_as_nan) (hunt3)",
        "4.1",
        A_LOAD + "        b = w_desc",
        A_LOAD.replace(", other=0.0)", ")") + "        b = w_desc",
        "test_gathered_product_alone[gathered]",
        "undefined-lanes-used",
    ),
    own(
        "gate-up-a-without-other",
        "T6.4",
        "gate_up_product loads A with the right mask and no other=: undefined lanes on a GPU, 0 on the "
        "interpreter, so it passed until the T6 tests read them as NaN (hunt3)",
        "5.1",
        A_LOAD + "        gate = ",
        A_LOAD.replace(", other=0.0)", ")") + "        gate = ",
        "test_gate_up_product_alone",
        "undefined-lanes-used",
    ),
    own(
        "tile-counts-without-other",
        "T6.2",
        "expert_tile_counts loads counts with the mask experts < num_experts and no other=0: the lanes past the "
        "experts are undefined on a GPU, and their m-blocks push tl.max(tile_ends) past the real total; the "
        "interpreter read them as 0, and it passed until the T6 tests read such lanes as 3 (hunt3)",
        "3.3",
        "counts = tl.load(counts_ptr + experts, mask=experts < num_experts, other=0)",
        "counts = tl.load(counts_ptr + experts, mask=experts < num_experts)",
        "test_tile_counts_and_places_alone",
        "undefined-counts",
    ),
    own(
        "scan-without-other",
        "T6.1",
        "scan_counts loads a batch of block_counts rows with the mask blocks < num_blocks and no other=0: the "
        "rows past the last block are undefined on a GPU and add into every count; the interpreter read them "
        "as 0, and it passed until the T6 tests read such lanes as 3; its message said the counts alone until "
        "hunt10 named the rows past num_blocks (hunt3)",
        "2.1",
        "here = tl.load(block_counts_ptr + where, mask=blocks[:, None] < num_blocks, other=0)",
        "here = tl.load(block_counts_ptr + where, mask=blocks[:, None] < num_blocks)",
        "test_route_is_a_stable_counting_sort[balanced-37-2-5]",
        "scan-rows-undefined",
    ),
)
