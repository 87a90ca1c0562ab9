"""Lesson T6's mutants that the interpreter runs and no GPU compiler takes (session 26, after styles7
found the first): the numbers stay right on the CPU, and tests/t6/test_hopper_compile.py, which
compiles the kernels for sm_90 there, must stop them, naming the kernel that the compiler refused.
Only make check runs them (not in §8's table); t6_mistakes.py gathers them last, and their causes.
"""

from course.lessons.t6_mistakes_own import own

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
COMPILE_CAUSES = {
    "gpu-refuses": ("Hopper GPU（sm_90）编译 moe_kernel", "compile moe_kernel for a Hopper GPU"),
    "gpu-refuses-combine": ("Hopper GPU（sm_90）编译 combine_topk", "compile combine_topk for a Hopper GPU"),
    "gpu-refuses-routing": ("Hopper GPU（sm_90）编译 scan_counts", "compile scan_counts for a Hopper GPU"),
}

GATHERED_ACC = (
    "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
    "    cols = tl.arange(0, BLOCK_K)\n"
    "    for k0 in range(0, K, BLOCK_K):\n"
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
    "        b = w_desc.load([w_row, k0])  # past K: zeros; past the expert's N rows: the next expert's, never stored\n"
    "        acc = tl.dot(a, b.T, acc)\n"
)
COMBINE_ACC = "    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)\n    for j in tl.static_range(TOP_K):\n"
SCAN_STEP = "        running += tl.sum(here, axis=0)\n"
GATE_LOOP = (
    "    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
    "    up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
    "    cols = tl.arange(0, BLOCK_K)\n"
    "    for k0 in range(0, K, BLOCK_K):\n"
    "        a = tl.load(x_ptr + x_rows[:, None] * stride_xm + (k0 + cols)[None, :] * stride_xk,\n"
    "                    mask=live[:, None] & (k0 + cols < K)[None, :], other=0.0)\n"
    "        gate = tl.dot(a, w_desc.load([gate_row, k0]).T, gate)\n"
)

GATE_FP16 = "gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)"

COMPILE = (
    own(
        "compile-gathered-fp16-accumulator",
        "T6.3",
        "gathered_product's accumulator starts as fp16 and turns fp32 in the K loop (acc += tl.dot(...)): the "
        "interpreter runs it and every T6.3 check passed; a GPU compile refuses it (styles7)",
        "4.2",
        GATHERED_ACC,
        GATHERED_ACC.replace("tl.float32", "tl.float16").replace("acc = tl.dot(a, b.T, acc)", "acc += tl.dot(a, b.T)"),
        "test_the_grouped_kernel_and_the_combine_compile_for_a_hopper_gpu",
        "gpu-refuses",
    ),
    own(
        "compile-combine-fp16-running-sum",
        "T6.3",
        "combine_topk's sum starts as fp16 and turns fp32 in a range() loop over the top-k: right on the "
        "interpreter, refused by a GPU compile",
        "4.4",
        COMBINE_ACC,
        "    acc = tl.zeros((BLOCK_N,), dtype=tl.float16)\n    for j in range(TOP_K):\n",
        "test_the_grouped_kernel_and_the_combine_compile_for_a_hopper_gpu",
        "gpu-refuses-combine",
    ),
    own(
        "compile-scan-break",
        "T6.1",
        "scan_counts leaves its loop with a break after the last block: the same sums on the interpreter, and "
        "Triton compiles no break",
        "2.3",
        SCAN_STEP,
        SCAN_STEP + "        if b0 + SCAN_ROWS >= num_blocks:\n            break\n",
        "test_the_routing_kernels_compile_for_a_hopper_gpu",
        "gpu-refuses-routing",
    ),
    own(
        "compile-gate-fp16-accumulator",
        "T6.4",
        "gate_up_product's gate starts as fp16 and turns fp32 in the K loop: right on the interpreter, refused "
        "by a GPU compile",
        "5.1",
        GATE_LOOP,
        GATE_LOOP.replace("gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)", GATE_FP16).replace(
            "gate = tl.dot(a, w_desc.load([gate_row, k0]).T, gate)", "gate += tl.dot(a, w_desc.load([gate_row, k0]).T)"
        ),
        "test_the_swiglu_kernel_compiles_for_a_hopper_gpu",
        "gpu-refuses",
    ),
)
