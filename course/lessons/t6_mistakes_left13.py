"""Lesson T6's mutants of our own from the thirteenth round of leftovers (left13, 2026-12-05): each was let through
by every check that runs on the CPU until the check named with it was added.  Only make check runs them (table=False,
not in §8); each must be caught by its test, whose message names its cause (a key of t6_mistakes.CAUSES,
LEFT13_CAUSES here).  t6_mistakes.py gathers them last, and their causes into its CAUSES.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEFT13_CAUSES = {
    # tests/t6/test_past_int32.py: the addresses are, one for one, those of the offsets wrapped to int32 (combine_topk,
    # store_rows, gathered_product alike)
    "combine-offsets-int32": ("地址就像偏移是 int32", "went to addresses as if the offsets were int32"),
}

COMBINE_START = "    t = tl.program_id(0)\n    cols = tl.program_id(1) * BLOCK_N"

LEFT13 = (
    own(
        "left13-combine-n-int32",
        "T6.3",
        "combine_topk casts its int64 N to tl.int32 first: (t * TOP_K + j) * N wraps past 2**31 elements (a long "
        "prefill's by-slot rows); only test_rows_past_2_31_elements, on a GPU of 40 GB or more, saw it, and every "
        "check on the CPU passed (left13)",
        "4.4",
        COMBINE_START,
        "    t = tl.program_id(0)\n    N = N.to(tl.int32)\n    cols = tl.program_id(1) * BLOCK_N",
        "test_combine_offsets_stay_int64",
        "combine-offsets-int32",
    ),
    own(
        "left13-combine-offsets-int32",
        "T6.3",
        "combine_topk's row offset cast to tl.int32 after it is computed: ((t * TOP_K + j) * N).to(tl.int32) wraps "
        "the same way (left13)",
        "4.4",
        "        acc += tl.load(by_slot_ptr + (t * TOP_K + j) * N + cols,",
        "        acc += tl.load(by_slot_ptr + ((t * TOP_K + j) * N).to(tl.int32) + cols,",
        "test_combine_offsets_stay_int64",
        "combine-offsets-int32",
    ),
    own(
        "left13-store-rows-offset-int32",
        "T6.3",
        "store_rows casts each row's offset, out_rows * stride_om, to tl.int32: past 2**31 elements of the output "
        "(where the host makes the strides int64) the rows land elsewhere; every check on the CPU passed (left13)",
        "4.3",
        "    tl.store(out_ptr + out_rows[:, None] * stride_om + cols[None, :] * stride_on,",
        "    tl.store(out_ptr + (out_rows[:, None] * stride_om).to(tl.int32) + cols[None, :] * stride_on,",
        "test_row_offsets_stay_int64",
        "combine-offsets-int32",
    ),
    own(
        "left13-gather-offset-int32",
        "T6.3",
        "gathered_product casts each row's offset, x_rows * stride_xm, to tl.int32: past 2**31 elements of x the "
        "rows read are others; every check on the CPU passed (left13)",
        "4.1",
        "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        b = w_desc.load([w_row, k0])",
        "        a = tl.load(x_ptr + (x_rows[:, None] * stride_xm).to(tl.int32) + (k0 + cols)[None, :] * stride_xk,\n"
        "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
        "        b = w_desc.load([w_row, k0])",
        "test_row_offsets_stay_int64",
        "combine-offsets-int32",
    ),
)
