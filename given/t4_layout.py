"""Which layout of B T4's kernel was compiled for (given: read it, nothing to write here).

Triton compiles an integer argument equal to 1 as the constant 1 and passes any other as a run-time
value; a `@triton.constexpr_function` called from a kernel sees that constant as a plain `int` and a
run-time value as a `tl.tensor`.  So `b_is_k_major(stride_bk, stride_bn)` is decided when the kernel is
compiled: True for a K-major B, as `x @ W.t()` with nn.Linear's W hands it (stride_bk == 1), False for
a row-major B.  The reference's mainloop uses it for speed alone (content/t4.md §4.6, t5.perf.md §5): for a
`W.t()` B it wraps A's rows and B's columns (`% M`, `% N`) and runs the whole BLOCK_K steps with no mask at all,
leaving its plain loop the tail of K; a row-major B gets the plain loop alone, since `% N` would cost far more
there.  Your mainloop need not use it.

Under TRITON_INTERPRET=1 every argument arrives as a tensor holding its value; there the value is read,
so that the CPU takes the same branch as a GPU's compiled kernel and the tests run both forms.
"""

import triton


@triton.constexpr_function
def b_is_k_major(stride_bk, stride_bn):
    def compiled_as_one(stride):
        if isinstance(stride, int):  # compiled: Triton made a 1 the constant 1
            return stride == 1
        value = getattr(getattr(stride, "handle", None), "data", None)  # the interpreter's tensor holds a value
        return value is not None and value.size == 1 and int(value.item()) == 1  # a GPU's run-time value: None

    return compiled_as_one(stride_bk) and not compiled_as_one(stride_bn)
