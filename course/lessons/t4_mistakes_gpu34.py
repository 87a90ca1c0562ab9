"""Lesson T4's mutants of our own found by the suite on a GPU in session 34 (2026-12-05): the given
@tuned_outside_capture looked for matmul_kernel_autotuned in the globals of the function right below it,
which since @config_checked was given is that decorator's wrapper in given/t4_config.py, so the refusal
never took hold and a shape's first call inside a CUDA graph capture broke the capture (and the process's
random numbers after it).  Only make check runs them (table=False); t4_mistakes.py gathers them last.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
GPU34_CAUSES = {
    # tests/t4/test_graph_capture.py: no wrapper of matmul is given/t4_capture.py's, and the tuner refuses nothing
    "capture-check-gone": (
        "matmul 上面已经没有给定的 @tuned_outside_capture 了",
        "matmul no longer carries the given @tuned_outside_capture",
    ),
}

GPU34 = (
    mutant(
        "gpu34-capture-check-removed",
        "T4.4",
        "6.1",
        "@tuned_outside_capture  # given: a shape's first call, which autotunes, refused inside a graph capture\n",
        "",
        "test_a_call_of_matmul_makes_the_autotuned_kernel_refuse_a_capture",
        "capture-check-gone",
        zh="matmul 上面给定的 @tuned_outside_capture 被删掉了：在 GPU 上，一个形状第一次在 CUDA graph 捕获中被调用时"
        "会调优，捕获就坏了",
        en="the given @tuned_outside_capture above matmul deleted: on a GPU a shape's first call inside a CUDA graph "
        "capture autotunes there and breaks the capture",
    ),
)
