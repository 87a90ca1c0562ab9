"""A launch hook set while a block runs, as a profiler sets one (Triton's knobs.runtime), counting
the launches it sees: the lessons' plans must still launch right, and through the hook, then."""

from contextlib import contextmanager


@contextmanager
def counting_launch_hook(record=lambda metadata: metadata):
    """Yields a list that gets one entry per launch Triton reports to its launch-enter hook, what
    record(metadata) returns (it may raise, to stop the launch); None where this Triton has no hook
    chain to add to (the caller then skips)."""
    try:
        from triton import knobs

        chain = knobs.runtime.launch_enter_hook
        add, remove = chain.add, chain.remove
    except (ImportError, AttributeError):
        yield None
        return
    seen = []

    def hook(metadata):
        seen.append(record(metadata))

    add(hook)
    try:
        yield seen
    finally:
        remove(hook)


class LaunchOnWrongDevice(RuntimeError):
    """Raised by launches_checked_on's hook, before the launch: the current device is not the inputs'."""


def launches_checked_on(index):
    """counting_launch_hook's list of the current CUDA device at each launch; a launch while any device
    but `index` is current raises LaunchOnWrongDevice from the hook, before the kernel runs (a kernel
    launched on one GPU with another's addresses could fault and end the process)."""
    import torch

    def current_device(_metadata):
        device = torch.cuda.current_device()
        if device != index:
            raise LaunchOnWrongDevice(f"a launch while cuda:{device} was current, inputs on cuda:{index}")
        return device

    return counting_launch_hook(current_device)


def call_with_another_gpu_current(name, call, watched=True):
    """(call()'s result, None) with cuda:0 current and (the caller's) inputs on cuda:1, as a model split
    over two GPUs calls a layer; (None, (zh, en)) saying what went wrong.  watched: every launch must
    find cuda:1 current (a hook checks before each runs) and at least one must happen; unwatched, the
    call takes the lean launch a plan makes only when no hook is set.  Either way cuda:0 must be
    current again afterwards."""
    import contextlib

    import torch

    torch.cuda.set_device(0)
    with launches_checked_on(1) if watched else contextlib.nullcontext() as devices:
        if watched and devices is None:
            import pytest

            pytest.skip("this Triton has no launch-enter hook chain to watch the launches with")
        try:
            result = call()
        except LaunchOnWrongDevice as e:
            return None, (
                f"{name} 的输入在 cuda:1，当前设备是 cuda:0：{e}。Triton 在当前设备上启动 kernel，不看张量在哪",
                f"{name} with its inputs on cuda:1 and cuda:0 current: {e}. Triton launches on the current "
                "device, not the tensors'",
            )
    if watched and not devices:
        return None, (f"{name} 一次 kernel 都没有启动", f"{name} launched no kernel")
    if torch.cuda.current_device() != 0:
        now = torch.cuda.current_device()
        return None, (
            f"{name} 返回后当前设备成了 cuda:{now}：调用者的 cuda:0 应当恢复",
            f"after {name}, cuda:{now} is current: the caller's cuda:0 must be again",
        )
    return result, None
