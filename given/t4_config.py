"""The config a caller hands T4's matmul (given: read it, nothing to write here).

`matmul(a, b, config=...)` launches the plain kernel with `config.all_kwargs()` (§6.2), which a
triton.Config has and a dict of block sizes or a tuple of them has not: such a config went on into
your T4.4 body and failed there with an AttributeError that named no argument.  So anything but None
or a triton.Config is refused here, before any of matmul's code runs (your check_inputs included),
with a TypeError that says what was given and what to give, in Chinese and then in English (given/
imports none of the course's machinery, so both are in the one message).  A triton.Config whose numbers are
numpy integers (np.int64(32), from a sweep over a numpy grid) goes on as a copy holding plain ints, as T5's
matmul takes them: Triton's launch takes no np.int64 ("cannot convert 32 of type numpy.int64 to tensor").  A
triton.Config without one of the four block parameters, or with a block size that is not a power of 2 or a GROUP_M
below 1, is refused too, naming the parameter, as T5's and T6's configs are: GROUP_M=0 gave a C of garbage with only
numpy's "divide by zero" warning, GROUP_M=-1 programs that read and wrote outside A, B and C (a bus error on the CPU).
"""

import copy
import functools
import numbers

import triton


def config_checked(fn):
    """fn (matmul), refusing with a TypeError a config that is neither None nor a triton.Config, and one whose
    block parameters are missing or wrong as refuse_wrong_sizes says."""

    @functools.wraps(fn)
    def call(*args, config=None, **kwargs):
        if config is not None and not isinstance(config, triton.Config):
            kind = type(config).__name__  # T5's and T6's Config too: their module says which
            kind = f"{type(config).__module__}.{kind}" if kind == "Config" else kind
            raise TypeError(
                f"matmul: config 要么是 None，要么是一个 triton.Config，这里给的是 {kind}：matmul 用 "
                "config.all_kwargs() 启动 kernel；块大小写成 triton.Config(dict(BLOCK_M=..., BLOCK_N=..., "
                "BLOCK_K=..., GROUP_M=...), num_warps=..., num_stages=...)（content/t4.md §6.2）。"
                f" / matmul: config must be None or a triton.Config, got {kind}: matmul launches the kernel with "
                "config.all_kwargs(); give block sizes as triton.Config(dict(BLOCK_M=..., BLOCK_N=..., "
                "BLOCK_K=..., GROUP_M=...), num_warps=..., num_stages=...) (content/t4.en.md §6.2)"
            )
        config = plain_ints(config)
        if config is not None:
            refuse_wrong_sizes(config.kwargs)
        return fn(*args, config=config, **kwargs)

    return call


def refuse_wrong_sizes(sizes):
    """Raise, naming the parameter, unless `sizes` (a config's kwargs, plain ints) holds BLOCK_M, BLOCK_N and
    BLOCK_K as powers of 2 (tl.arange's length must be one) and GROUP_M as an int of at least 1 (the grouped order
    divides by it); a TypeError where one is missing, else a ValueError."""
    missing = ", ".join(k for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M") if k not in sizes)
    if missing:
        raise TypeError(
            f"matmul: config 缺少 {missing}：kernel 要 BLOCK_M、BLOCK_N、BLOCK_K、GROUP_M 四个块参数"
            f"（content/t4.md §6.2）。 / matmul: config lacks {missing}: the kernel takes four block "
            "parameters, BLOCK_M, BLOCK_N, BLOCK_K and GROUP_M (content/t4.en.md §6.2)"
        )
    for name, v in ((k, sizes[k]) for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")):
        whole = isinstance(v, int) and not isinstance(v, bool) and v >= 1
        if name != "GROUP_M" and not (whole and v & (v - 1) == 0):
            raise ValueError(
                f"matmul: config 的 {name} 必须是 2 的幂，这里是 {v!r}：tl.arange 的长度只能是 2 的幂。"
                f" / matmul: config's {name} must be a power of 2, got {v!r}: tl.arange's length must be one"
            )
        if name == "BLOCK_K" and v < 16:  # an H100 compile (triton 3.6) refused tl.dot with a k side of 8
            raise ValueError(
                f"matmul: config 的 BLOCK_K 至少要 16，这里是 {v!r}：GPU 上 tl.dot 的 k 边至少是 16。"
                f" / matmul: config's BLOCK_K must be at least 16, got {v!r}: a GPU's tl.dot needs a k side of 16"
            )
        if name == "GROUP_M" and not whole:
            raise ValueError(
                f"matmul: config 的 GROUP_M 必须是至少为 1 的整数，这里是 {v!r}：分组顺序要除以它（§2），"
                "0 或负数时 C 没被写全，或者写到了 C 以外。 / matmul: config's GROUP_M must be an int of at least 1, "
                f"got {v!r}: the grouped order divides by it (§2); 0 or less leaves C unwritten or writes outside it"
            )


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
