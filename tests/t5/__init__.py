"""Lesson T5's section of the suite: one file per part of the lesson, each test marked with its step
(`make test STEP=T5.2` runs that step alone) and with the lesson (t5).

The tile loop (T5.1) and the stream-K split (T5.3) are counted through a trace: the kernel adds,
per tile, its epilogues and its k-blocks, and writes which program finished it and where T4's
grouped order put it.  Products are checked against float64 with A, B and C inside NaN (or
sentinel) padding, so a read or a write outside them shows.  T5 imports the learner's own T4
(tile_coords, bias_and_activation): a T4 body not written yet fails these checks as "not written yet".
The fixtures (the graded module, its probes) are in conftest.py; the helpers more than one file
uses (the trace, the product checks), in common.py; the readings of a crash (run_matmul) in
crashes.py; the stream-K cases and the fix-up's partial tiles in stream_k_cases.py; the known
mix-ups of T5.4's two halves in halves.py; a box's coordinates the other way round (T5.2's loads
and store) in swaps.py; the tile loop's flatten, read from the kernel's Triton IR, in loop_ir.py;
the places a known mistake gives every tile in places.py.  Every launch runs under a watch for
accesses outside its tensors (stray.py, conftest.py), and matmul with torch's own products refused
(no_torch.py).
"""

# The files in the lesson's order (tests/conftest.py runs them so): a step's first failure follows it.
ORDER = (
    "test_tile_loop.py",
    "test_tma_rules.py",
    "test_tma_rules_read.py",
    "test_tma_reads_nothing_back.py",
    "test_tma_ready.py",
    "test_k_blocks_and_descriptors.py",
    "test_store_tile.py",
    "test_data_parallel.py",
    "test_model_calls.py",
    "test_stream_k_split.py",
    "test_fix_up_halves.py",
    "test_stream_k_products.py",
    "test_fix_up.py",
    "test_fix_up_memory_order.py",
    "test_fix_up_reorders.py",
    "test_epilogue_subtiling.py",
    "test_streams_graphs_and_plans.py",
    "test_hopper_compile.py",
)
