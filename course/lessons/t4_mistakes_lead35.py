"""Lesson T4's mutants of our own from session 35 (2026-12-05): nn.Linear's weight, a torch.nn.Parameter, handed
to matmul as it is.  Only make check runs them (table=False); t4_mistakes.py gathers them last.
"""

from course.lessons.t4_mistakes_own import mutant

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
LEAD35_CAUSES = {
    # tests/t4/test_input_modes.py: a Parameter refused where the same values as a plain tensor are taken
    "parameter-refused": ("Parameter 是 torch.Tensor 的子类", "a Parameter is a subclass of torch.Tensor"),
}

LEAD35 = (
    mutant(
        "lead35-exact-tensor-type",
        "T4.4",
        "6.3",
        "        if not isinstance(t, torch.Tensor):\n",
        "        if type(t) is not torch.Tensor:\n",
        "test_nn_linear_s_weight_is_taken_transposed_and_as_it_is",
        "parameter-refused",
        zh="check_inputs 用 type(t) is not torch.Tensor 检查类型：nn.Linear 的权重（torch.nn.Parameter）被拒绝",
        en="check_inputs asks type(t) is not torch.Tensor: nn.Linear's weight (a torch.nn.Parameter) is refused",
    ),
)
