"""Tensors that say they are on a GPU, for the checks of the wrapper off the interpreter on a CPU: meta tensors
(no data: a value read of one fails, and tests/t4/conftest.py names it) whose device, is_cuda and get_device say
cuda:0 or cuda:1, however check_inputs asks."""

import torch


class OnGpu(torch.Tensor):
    """A meta tensor that says it is on cuda:0, however check_inputs asks (it holds no data)."""

    device = property(lambda self: torch.device("cuda", 0))
    is_cuda = property(lambda self: True)

    def get_device(self):
        return 0


class OnSecondGpu(OnGpu):
    """The same, on cuda:1: a layer's weight on the second GPU of a model split over two."""

    device = property(lambda self: torch.device("cuda", 1))

    def get_device(self):
        return 1


def on_gpu(shape, dtype=torch.bfloat16, kind=OnGpu):
    """A `kind` tensor of that shape and dtype (no values)."""
    return kind._make_subclass(kind, torch.empty(shape, dtype=dtype, device="meta"))
