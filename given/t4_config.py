"""The config a caller hands T4's matmul (given: read it, nothing to write here).

`matmul(a, b, config=...)` launches the plain kernel with `config.all_kwargs()` (§6.2), which a
triton.Config has and a dict of block sizes or a tuple of them has not: such a config went on into
your T4.4 body and failed there with an AttributeError that named no argument.  So anything but None
or a triton.Config is refused here, before any of matmul's code runs (your check_inputs included),
with a TypeError that says what was given and what to give, in Chinese and then in English (given/
imports none of the course's machinery, so both are in the one message).
"""

import functools

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
        return fn(*args, config=config, **kwargs)

    return call
