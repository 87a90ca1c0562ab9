"""Lesson T4's section of the suite: one file per part of the lesson, each test marked with its step
(`make test STEP=T4.2` runs that step alone) and with the lesson (t4).

Every check compares against an oracle computed independently here (a float64 product, an
enumeration of the grouped order), draws fresh random inputs, and poisons whatever the kernel
must not read or must write, so that a skipped mask or an unwritten tile shows up.  The fixtures
all of them use (the graded module, its probes, the defences of the wrapper's checks) are in
conftest.py; the helpers more than one file uses, in common.py.
"""

# The files in the lesson's order (tests/conftest.py runs them so): a step's first failure follows it.
ORDER = (
    "test_tile_order.py",
    "test_mainloop.py",
    "test_mainloop_steps.py",
    "test_epilogue.py",
    "test_bias_and_gelu.py",
    "test_autotune_configs.py",
    "test_wrapper.py",
    "test_wrapper_launch.py",
    "test_default_launch_path.py",
    "test_input_validation.py",
    "test_input_modes.py",
    "test_large_shapes.py",
    "test_hopper_compile.py",
    "test_graph_capture.py",
    "test_past_int32.py",  # last: a kernel that faults there loses the GPU context for what follows
)
