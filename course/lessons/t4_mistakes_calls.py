"""Lesson T4's mutants of our own from the hunt for calls a real model makes (2026-12-03): nn.Linear
weights are Parameters that require grad, which matmul, having no backward, must refuse with grad
enabled and take under torch.no_grad() or torch.inference_mode().  Only make check runs them
(table=False, not in §8); each must be caught by its test, whose message names no cause (cause "").
t4_mistakes.py gathers them after the hunter's.
"""

from course.lessons.t4_mistakes_own import mutant

GRAD_CHECK = (
    "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n"
    "    if needs_grad and torch.is_grad_enabled():"
)

CALLS = (
    # without the check, C comes back with no grad_fn: in training the layer's weights never change
    mutant(
        "calls-grad-check-left-out",
        "T4.4",
        "6.3",
        GRAD_CHECK,
        "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n    if False:",
        "test_input_validation[a requires grad]",
        zh="check_inputs 不管 requires_grad：开着梯度时返回的 C 没有 grad_fn，训练时这一层的梯度悄悄丢了",
        en="check_inputs ignores requires_grad: with grad enabled the C it returns has no grad_fn, and training "
        "silently loses the layer's gradient",
    ),
    # refused whatever the grad mode: inference with nn.Linear's Parameters under torch.no_grad() fails
    mutant(
        "calls-grad-refused-under-no-grad",
        "T4.4",
        "6.3",
        GRAD_CHECK,
        "    needs_grad = [name for name, t in tensors.items() if t.requires_grad]\n    if needs_grad:",
        "test_inputs_that_require_grad_are_taken_without_grad_mode",
        zh="check_inputs 不看 torch.is_grad_enabled()：在 torch.no_grad() 下做推理，nn.Linear 的权重也被拒绝",
        en="check_inputs does not look at torch.is_grad_enabled(): inference under torch.no_grad() with "
        "nn.Linear's weights is refused too",
    ),
)
