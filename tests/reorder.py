"""Element orders a GPU may pick and the interpreter never does: tl.reshape(..., can_reorder=True) and
tl.cat (which always may reorder, Triton says) let the compiler put the elements in any order, and on a GPU
it takes the one that suits the layout; the interpreter keeps numpy's row-major order, so code that counts
on the order passes there.  Inside `reorders_taken(monkeypatch)` such a reshape and every cat return their
elements in reverse order, an order the compiler is free to give: code whose result depends on it changes.
Lesson-neutral, like shortcuts.py."""

from support import INTERPRETING


def reorders_taken(monkeypatch):
    """From now on (the monkeypatch's context), on the interpreter: a reshape allowed to reorder, and a cat,
    give their elements last first.  Returns a list that fills with one entry per such op run ("reshape",
    "cat"); elsewhere (a GPU run) it changes nothing and the list stays empty."""
    taken = []
    if not INTERPRETING:
        return taken
    import numpy as np
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    reshape, cat = builder.create_reshape, builder.create_cat

    def reordered_reshape(arg, shape, allow_reorder):
        out = reshape(arg, shape, allow_reorder)
        if allow_reorder:
            taken.append("reshape")
            out = interpreter.TensorHandle(np.ascontiguousarray(out.data.reshape(-1)[::-1]).reshape(shape), out.dtype)
        return out

    def reordered_cat(lhs, rhs):
        out = cat(lhs, rhs)
        taken.append("cat")
        return interpreter.TensorHandle(np.ascontiguousarray(out.data[::-1]), out.dtype)

    monkeypatch.setattr(builder, "create_reshape", reordered_reshape, raising=False)
    monkeypatch.setattr(builder, "create_cat", reordered_cat, raising=False)
    return taken


def order_taken(monkeypatch, run, before):
    """run() once more with those reorders taken: None where it gives `before` again (what run() gave in the
    interpreter's own order) or no such op ran, else (zh, en) words that name the ops and say what to use.
    Costs one more run of the probe; the caller fails with its case and its section."""
    import torch

    with monkeypatch.context() as patch:
        taken = reorders_taken(patch)
        try:
            again, broke = run(), ""
        except BaseException as e:  # pytest's own failure too: a run that wrote outside its tensors, say
            if not taken:
                raise
            again, broke = None, str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
    if not taken or (not broke and torch.equal(again, before)):
        return None
    ops = " and ".join(sorted(set(taken)))
    return (
        f"代码里有可以重排元素的操作（{ops}：can_reorder=True 的 tl.reshape，或 tl.cat），"
        "把它们的元素换成编译器也可以给的另一种顺序（倒过来）以后，结果变了：这两种操作允许编译器任意安排元素的顺序，"
        "GPU 上它会按布局去排，解释器只是碰巧保持原来的顺序；要保持顺序就用不带 can_reorder=True 的 tl.reshape，"
        "拼接用 tl.join 加 permute，不用 tl.cat" + (f"（换了顺序的那次运行失败了：{broke}）" if broke else ""),
        f"an op free to reorder its elements ran ({ops}: tl.reshape with can_reorder=True, or tl.cat), and with "
        "its elements put in another order the compiler may give them (last first) the result changed: both let "
        "the compiler place the elements in any order, and on a GPU it does, to suit the layout, where the "
        "interpreter happens to keep them in order; keep the order with a plain tl.reshape (no can_reorder=True), "
        "and join with tl.join and a permute, not tl.cat"
        + (f" (the run in that order failed: {broke})" if broke else ""),
    )
