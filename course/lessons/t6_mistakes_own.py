"""Lesson T6's mutants of our own from a hole hunt (t6holes): mistakes the suite once let through,
or caught with a message that pointed elsewhere.  Only make check runs them (table=False, not in
§8).  Each must be caught by its test, whose message names its cause (a key of CAUSES, here or in
t6_mistakes.py) or, for cause "", none.  t6_mistakes.py gathers them after its own: one file would
pass 400 lines.
"""

from course.lesson_data import Mistake


def own(key, step, en, section, old, new, test, cause=""):
    """A mutant of our own: make check runs it, §8 does not show it (the words are for make check's report)."""
    return Mistake(key, step, en, en, section, old, new, test, cause, table=False)


# The words a message says when, and only when, it has detected the cause: {key: (Chinese, English)}.
OWN_CAUSES = {
    "combine-past-n": ("越过了第 N - 1 列", "past column N - 1"),
}

COMBINE_LOAD = "mask=cols < N, other=0.0).to(tl.float32)\n"
COMBINE_STORE_MASK = "acc.to(out_ptr.dtype.element_ty), mask=cols < N)"
# The flat bound of out (rows x N) in place of N: a row's stray columns land in the next row.
FLAT = "t * N + cols < tl.num_programs(0) * N"

# check_routing_inputs's dtype check: integers pass, bool and floats do not (§2.3).
DTYPE_CHECK = "    if topk_ids.dtype == torch.bool or topk_ids.is_floating_point() or topk_ids.is_complex():\n"

OWN = (
    own(
        "bool-ids-routed",
        "T6.1",
        "check_routing_inputs refuses floats alone: bool topk_ids are routed, True and False as experts 1 and 0",
        "2.3",
        DTYPE_CHECK,
        "    if topk_ids.is_floating_point() or topk_ids.is_complex():\n",
        "test_route_refuses_bad_input[bool ids]",
    ),
    own(
        "narrow-ids-refused",
        "T6.1",
        "check_routing_inputs takes int32 and int64 alone: int8, uint8 and int16 ids, integer tensors, are refused",
        "2.3",
        DTYPE_CHECK,
        "    if topk_ids.dtype not in (torch.int32, torch.int64):\n",
        "test_route_takes_narrower_integer_ids[torch.int8]",
    ),
    own(
        "combine-mask-on-flat-bound",
        "T6.3",
        "combine_topk masks its load and store with the flat bound rows * N, not cols < N: each row's store "
        "spills into the next token's row, which that token's program writes over when programs run in id order",
        "4.4",
        COMBINE_LOAD + "    tl.store(out_ptr + t * N + cols, " + COMBINE_STORE_MASK,
        f"mask={FLAT}, other=0.0).to(tl.float32)\n    tl.store(out_ptr + t * N + cols, "
        f"acc.to(out_ptr.dtype.element_ty), mask={FLAT})",
        "test_combine_topk_sums_in_float32_in_slot_order[torch.float32]",
        "combine-past-n",
    ),
)
