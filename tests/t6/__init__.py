"""Lesson T6's section of the suite: one file per part of the lesson, each test marked with its step
(`make test STEP=T6.2` runs that step alone) and with the lesson (t6).

Routing (T6.1) is checked against a stable sort, over many distributions of the experts.  The tile
schedule (T6.2) is recorded through a trace in record-only mode: per global tile, its epilogues,
expert, place and rows, and the program that did it.  The grouped kernel (T6.3, T6.4) is checked
against torch._grouped_mm (on the CPU) and a float64 loop, under a watch on its launch that fills
the output with a sentinel first and makes torch's own products fail.  T6 imports the learner's own
T5 and T4 (persistent_grid, tma_problem, tile_coords): one of their bodies not written yet fails
these checks as "not written yet".  On the interpreter every launch of T6's kernels is watched for
an access outside its tensors, which is stopped and named (stray.py).  The fixtures (the graded
module, its probes, integer tensors that start UNSET, that watch) are in conftest.py; the helpers
more than one file uses, in common.py (the routing checks in routings.py, scan_counts' sums in
block_counts.py, the watch on what the kernels read and write in accesses.py, an error raised on
valid input told in raised.py); the schedule worked out on the host in schedules.py (a trace checked
against it in schedule_checks.py), the wrong sums and weightings the kernel parts' probes may show in
products.py.
"""

# The files in the lesson's order (tests/conftest.py runs them so): a step's first failure follows it.
ORDER = (
    "test_routing.py",
    "test_routing_refuses.py",
    "test_routing_ignores.py",
    "test_route_reorders.py",
    "test_tile_schedule.py",
    "test_kernel_parts.py",
    "test_store_rows.py",
    "test_tile_handoff.py",
    "test_grouped_matmul.py",
    "test_combine.py",
    "test_combine_runs.py",
    "test_host_syncs_and_graphs.py",
    "test_grouped_matmul_refuses.py",
    "test_model_calls.py",
    "test_expert_mlp.py",
    "test_moe_mlp.py",
    "test_moe_mlp_calls.py",
    "test_int_like_arguments.py",  # numpy integers for counts: what the host takes, after the steps' own checks
    "test_hopper_compile.py",
    "test_past_int32.py",  # last: a kernel that faults there loses the GPU context for what follows
)
