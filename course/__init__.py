"""The course's shared core: what both the suite (tests/) and the tools (tools/) import.

    registry.py     the lessons, their steps, explainer sections and hints: the one list
    seam.py         which file is graded (mine/ or, with SOLUTION=1, solutions/) and loading it
    toolchain.py    refuses a torch / triton / numpy mix known to break the lessons
    hardware.py     the GPU facts the lessons compute with (shared memory, the H200's L2 and SMs)
    tile_order.py   a CPU model of the grouped tile order, the oracle of T4.1
    t4_probes.py    tiny kernels that call one of lesson T4's device functions, so a step is tested alone

Neither tests/ nor tools/ imports the other; both import this package.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repo; every path the course names is relative to it
