"""Lesson T6's mutants of our own from the fifteenth mistake hunt (hunt15, 2026-12-05): moe_mlp clearing
requires_grad on the caller's weights (nn.Linear's Parameters, which an inference hands over under
torch.no_grad() and which train on afterwards), caught by test_moe_mlp_takes_parameters_under_no_grad; and
store_rows storing with tl.atomic_xchg, which Triton refuses for fp16 (on a GPU too) and the interpreter has
none of for fp32: told as Triton's bare "atomic_xchg does not support fp16" and "Unsupported data type" until
course/messages.py's atomic_dtype_words said why; and check_routing_inputs taking a 0-dim tensor for num_experts.
Only make check runs them (table=False, not in §8); each must be caught by its test, whose message names its
cause (a key of t6_mistakes.CAUSES, HUNT15_CAUSES here).  t6_mistakes.py gathers them last, and their causes too.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
HUNT15_CAUSES = {
    "requires-grad-cleared": ("不再 requires_grad 了", "no longer require grad"),
    "half-atomic": ("fp16 和 bf16 的元素只有 atomic_add 收", "take fp16 and bf16 elements in atomic_add alone"),
    "count-a-tensor": ("张量不是 int：交给 kernel 的张量参数是一个指针", "a tensor is no int: handed to a kernel"),
    "interpreter-lacks-atomic": (
        "Triton 的解释器没有这种元素类型的 atomic_xchg",
        "Triton's interpreter has no atomic_xchg",
    ),
}

ROUTE_LINE = "    routing = route(topk_ids, w_gate_up.shape[0])\n"
EXPERTS_CHECK = "    if isinstance(num_experts, bool) or not isinstance(num_experts, int) or num_experts < 1:\n"
STORE = (
    "    tl.store(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on,\n"
    "             acc.to(out_ptr.dtype.element_ty), mask=live[:, None] & (cols < N)[None, :])\n"
)
XCHG = (
    "    tl.atomic_xchg(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on,\n"
    "                   acc.to(out_ptr.dtype.element_ty), mask=live[:, None] & (cols < N)[None, :])\n"
)

HUNT15 = (
    own(
        "hunt15-mlp-clears-weights-requires-grad",
        "T6.4",
        "moe_mlp calls requires_grad_(False) on the caller's w_gate_up and w_down (to get past grouped_matmul's "
        "refusal of inputs that require grad): the model's Parameters no longer train (hunt15)",
        "5.2",
        ROUTE_LINE,
        "    w_gate_up.requires_grad_(False)\n    w_down.requires_grad_(False)\n" + ROUTE_LINE,
        "test_moe_mlp_takes_parameters_under_no_grad",
        "requires-grad-cleared",
    ),
    own(
        "hunt15-store-rows-atomic-xchg-fp16",
        "T6.3",
        "store_rows writes its tile with tl.atomic_xchg: Triton refuses atomic_xchg for fp16 (on a GPU too), and "
        "the learner saw its bare 'atomic_xchg does not support fp16' (hunt15)",
        "4.3",
        STORE,
        XCHG,
        "test_grouped_matmul_takes_weights_that_are_views",  # a check that catches the error: its own words lead
        "half-atomic",
    ),
    own(
        "hunt15-store-rows-atomic-xchg-fp32",
        "T6.3",
        "store_rows writes its tile with tl.atomic_xchg: the combine's float32 rows stop the interpreter with a bare "
        "'Unsupported data type' (it has no float atomic_xchg) (hunt15)",
        "4.3",
        STORE,
        XCHG,
        "test_grouped_matmul_reads_views_of_weights_and_of_a_hand_made_routing",
        "interpreter-lacks-atomic",
    ),
    own(
        "hunt15-num-experts-duck-typed",
        "T6.1",
        "check_routing_inputs takes any num_experts equal to its int() (num_experts != int(num_experts)): a 0-dim "
        "tensor passes, and the kernels get it as a pointer (hunt15)",
        "2.3",
        EXPERTS_CHECK,
        "    if isinstance(num_experts, bool) or num_experts != int(num_experts) or num_experts < 1:\n",
        "test_route_refuses_bad_input[num_experts a 0-dim tensor]",
        "count-a-tensor",
    ),
)
