"""The config a caller hands T4's matmul (given: read it, nothing to write here).

`matmul(a, b, config=...)` launches the plain kernel with `config.all_kwargs()` (§6.2), which a
triton.Config has and a dict of block sizes or a tuple of them has not: such a config went on into
your T4.4 body and failed there with an AttributeError that named no argument.  So anything but None
or a triton.Config is refused here, before any of matmul's code runs (your check_inputs included),
with a TypeError that says what was given and what to give, in Chinese and then in English (given/
imports none of the course's machinery, so both are in the one message).  A triton.Config whose numbers are
numpy integers (np.int64(32), from a sweep over a numpy grid) goes on as a copy holding plain ints, as T5's
matmul takes them: Triton's launch takes no np.int64 ("cannot convert 32 of type numpy.int64 to tensor").
"""

import copy
import functools
import numbers

import triton


def config_checked(fn):
    """fn (matmul), refusing with a TypeError a config that is neither None nor a triton.Config."""

    @functools.wraps(fn)
    def call(*args, config=None, **kwargs):
        if config is not None and not isinstance(config, triton.Config):
            kind = type(config).__name__
            raise TypeError(
                f"matmul: config 要么是 None，要么是一个 triton.Config，这里给的是 {kind}：matmul 用 "
                "config.all_kwargs() 启动 kernel；块大小写成 triton.Config(dict(BLOCK_M=..., BLOCK_N=..., "
                "BLOCK_K=..., GROUP_M=...), num_warps=..., num_stages=...)（content/t4.md §6.2）。"
                f" / matmul: config must be None or a triton.Config, got {kind}: matmul launches the kernel with "
                "config.all_kwargs(); give block sizes as triton.Config(dict(BLOCK_M=..., BLOCK_N=..., "
                "BLOCK_K=..., GROUP_M=...), num_warps=..., num_stages=...) (content/t4.en.md §6.2)"
            )
        return fn(*args, config=plain_ints(config), **kwargs)

    return call


def plain(v):
    """v as a plain int where it is another integer (np.int64), else v itself (a bool stays one)."""
    return int(v) if isinstance(v, numbers.Integral) and not isinstance(v, (bool, int)) else v


def plain_ints(config):
    """config, or a copy of it whose kwargs, num_warps, num_stages and num_ctas are plain ints where they were
    other integers; the caller's config is left as it is."""
    if config is None:
        return None
    kwargs = {k: plain(v) for k, v in config.kwargs.items()}
    counts = {f: plain(getattr(config, f)) for f in ("num_warps", "num_stages", "num_ctas") if hasattr(config, f)}
    if all(kwargs[k] is v for k, v in config.kwargs.items()) and all(counts[f] is getattr(config, f) for f in counts):
        return config  # nothing to make plain: the caller's own config, as every call but such a one gets
    made = copy.copy(config)
    made.kwargs = kwargs
    for f, v in counts.items():
        setattr(made, f, v)
    return made
