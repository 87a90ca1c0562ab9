"""A launch hook set while a block runs, as a profiler sets one (Triton's knobs.runtime), counting
the launches it sees: the lessons' plans must still launch right, and through the hook, then."""

from contextlib import contextmanager


@contextmanager
def counting_launch_hook():
    """Yields a list that gets one entry per launch Triton reports to its launch-enter hook; None
    where this Triton has no hook chain to add to (the caller then skips)."""
    try:
        from triton import knobs

        chain = knobs.runtime.launch_enter_hook
        add, remove = chain.add, chain.remove
    except (ImportError, AttributeError):
        yield None
        return
    seen = []

    def hook(metadata):
        seen.append(metadata)

    add(hook)
    try:
        yield seen
    finally:
        remove(hook)
