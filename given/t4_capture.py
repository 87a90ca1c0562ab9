"""Autotuning outside a CUDA graph capture (given: read it, nothing to write here).

`triton.autotune` times every config on the first call of each key (§6.1): it launches each one
several times and waits for the GPU between them.  Waiting on the GPU is illegal while a stream is
being captured into a CUDA graph, so a model that captures its layers (torch.compile's
"reduce-overhead" mode, a serving engine capturing one graph per batch size) and meets a shape for
the first time inside the capture breaks the capture.  On the H200 (torch 2.11, triton 3.6,
2026-12-03) that left the process unable to draw random numbers on the GPU afterwards ("Offset
increment outside graph capture encountered unexpectedly"; content/bench/h200-2026-12-03-session23-probes.log).
So a first call of a key inside a capture is refused here, before any kernel is launched or timed,
with what to do: call matmul once with those shapes before capturing; the capture then holds the
tuned config, and replays it.  Calls whose key is tuned already, and calls with a config, are untouched.
"""

import functools
import inspect

import torch
from triton.runtime.autotuner import Autotuner

TUNER = "matmul_kernel_autotuned"  # the name the scaffold gives the autotuned kernel (T4.4)


def tuned_outside_capture(fn):
    """fn (matmul), with its module's autotuned kernel made to refuse tuning inside a graph capture."""

    # fn may be another given decorator's wrapper (@config_checked sits below this one), whose globals are its own
    # file's, where no tuner is: the globals wanted are those of the function written in the lesson's file
    module = inspect.unwrap(fn).__globals__

    @functools.wraps(fn)
    def call(*args, **kwargs):
        refuse_tuning_in_capture(module.get(TUNER))
        return fn(*args, **kwargs)

    return call


def refuse_tuning_in_capture(tuner):
    """Wrap, once, the Autotuner's timing of one config (`_bench`, which Triton calls only for a key it
    has not tuned) so that it raises while the current stream is capturing.  Anything else (None
    before T4.4 is written, a test's watcher, a Triton without `_bench`) is left as it is."""
    if not isinstance(tuner, Autotuner) or getattr(tuner, "_refuses_capture", False):
        return
    bench = getattr(tuner, "_bench", None)
    if bench is None:
        return

    def bench_outside_capture(*args, **kwargs):
        if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
            nargs = tuner.nargs or {}
            key = ", ".join(f"{k}={nargs[k]}" for k in tuner.keys if k in nargs)
            raise RuntimeError(
                f"matmul: the first call with {key} autotunes (it times each config and waits for the GPU), "
                "which a CUDA graph capture cannot hold; call matmul once with these shapes before capturing, "
                "and the capture takes the tuned config (content/t4.md §6.1)"
            )
        return bench(*args, **kwargs)

    tuner._bench = bench_outside_capture
    tuner._refuses_capture = True
