"""The course's shared core: what both the suite (tests/) and the tools (tools/) import.

    registry.py     the lessons' types, and the search for them (one data module each in lessons/)
    lesson_data.py  where a lesson's data beyond its LESSON lives: its mistakes, its other-style solution
    i18n.py         the learner's language: say(zh=, en=), widths and wrapping on a terminal
    messages.py     the one way a message says "read §x.y": read(), fail(), stub_report()
    seam.py         which file is graded (mine/ or, with SOLUTION=1, solutions/) and loading it
    skips.py        which skips are the suite's own (its conftest and the grader's plugin ask)
    toolchain.py    refuses a torch / triton / numpy mix known to break the lessons
    hardware.py     the GPU facts the lessons compute with (shared memory, the H200's L2 and SMs)
    tile_order.py   a CPU model of the grouped tile order, the oracle of T4.1
    lessons/        one data module per lesson (<id>.py defines LESSON) and the lesson's probes
                    (<id>_probes.py): tiny kernels that call one device function, so a step is tested alone
    interpreter_order.py  the interpreter's programs run in a chosen order, each one's memory ops recorded
    warm.py         `python -m`/`-c` forked from a process that imported torch and triton once, where safe

Neither tests/ nor tools/ imports the other; both import this package.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repo; every path the course names is relative to it
