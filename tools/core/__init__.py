"""What several folders of tools/ share, and nothing else: each folder serves one audience (learner/:
the learner's commands; checks/: make check; explainers/ and study/: the explainers' numbers and
pictures; gpu/: runs on an H200), and imports only from here and from course/.  tools/checks/
layering.py holds that line.

    repo.py           a lesson's two files, its stub as committed, scratch copies of the repo
    cache.py          runs kept under a hash of all that they read (make check's checks, the mistakes table)
    plugin.py         the pytest plugin that writes what a run did: its hooks and the report they keep
    pytest_run.py     run_pytest(): pytest with that plugin in a process of its own, and its report read
    failure_words.py  what a failed check says: your line, code you did not write, a timeout
    case_labels.py    a test's parametrize cases in words
    cpu_clock.py      the per-check CPU-time limit of learner runs
    mistakes.py       each mistake of a lesson run by its one test, as a learner would see it
    bodies.py         the marked bodies of a graded file, and a learner midway (fill_in, plant)
    tables.py         text and markdown tables measured in terminal columns
    tiles.py          the tile arithmetic the explainers and the study tools both print
    docs.py           the explainers kept true to the code: citations and generated blocks (checked, mended)
"""
