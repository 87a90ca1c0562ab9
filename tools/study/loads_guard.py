"""The one place that reaches into Triton's private interpreter for make loads.

make loads sees every tl.load and tl.store by wrapping two methods of the interpreter's
InterpreterBuilder: create_masked_load(self, ptrs, mask, other, ...) and
create_masked_store(self, ptrs, value, mask, ...) (tl.load and tl.store without a mask reach them
too), and reads which program is running from the builder's grid_idx.  None of that is Triton's
public API.  It was tried on the versions in TRIED; on another, make loads checks that the two
methods still take those arguments and says so, and refuses, in the learner's language, when they
do not."""

import inspect
import sys

from course.i18n import say

TRIED = ("3.9",)  # requirements.txt pins triton 3.9.0
LOAD_ARGS = ("self", "ptrs", "mask", "other")
STORE_ARGS = ("self", "ptrs", "value", "mask")
_warned = []


def version():
    import triton

    return getattr(triton, "__version__", "?")


def mismatch(builder):
    """What differs from what make loads expects of the builder class, or "" if nothing."""
    problems = []
    for name, expected in (("create_masked_load", LOAD_ARGS), ("create_masked_store", STORE_ARGS)):
        method = getattr(builder, name, None)
        if method is None:
            problems.append(f"{name}: missing")
            continue
        try:
            got = tuple(inspect.signature(method).parameters)
        except (TypeError, ValueError):
            got = ()
        if got[: len(expected)] != expected:
            problems.append(f"{name}{tuple(got)}, expected {name}({', '.join(expected)}, ...)")
    if not hasattr(builder, "set_grid_idx"):
        problems.append("set_grid_idx: missing")
    return "; ".join(problems)


def builder_class():
    """Triton's InterpreterBuilder, once it is known to take what make loads wraps.  Stops with
    status 2 and a message naming both versions when it does not; on an untried version whose
    methods look the same, says so once on stderr and goes on."""
    from triton.runtime import interpreter

    builder = getattr(interpreter, "InterpreterBuilder", None)
    found, tried = version(), " / ".join(TRIED)
    differs = mismatch(builder) if builder is not None else "InterpreterBuilder: missing"
    if differs:
        sys.exit(
            say(
                zh=f"make loads 没法在 Triton {found} 上运行：它靠包装 Triton 解释器的两个私有方法"
                f"（InterpreterBuilder.create_masked_load / create_masked_store）看到每次 tl.load 和 tl.store，"
                f"只在 Triton {tried} 上试过，而这个版本的不一样（{differs}）。"
                f"用 make setup 装上 requirements.txt 里固定的版本，再跑 make loads。",
                en=f"make loads cannot run on Triton {found}: it sees each tl.load and tl.store by wrapping "
                f"two private methods of Triton's interpreter (InterpreterBuilder.create_masked_load / "
                f"create_masked_store), tried on Triton {tried} only, and this version's differ ({differs}). "
                f"make setup installs the version pinned in requirements.txt; run make loads with it.",
            )
        )
    if not found.startswith(tuple(t + "." for t in TRIED)) and not _warned:
        _warned.append(found)
        print(
            say(
                zh=f"注意：make loads 只在 Triton {tried} 上试过，这里是 Triton {found}。它包装的两个解释器私有方法"
                "参数看起来没变，所以照常运行；如果网格里一次加载也没有，原因多半在这里。",
                en=f"note: make loads was tried on Triton {tried} only, and this is Triton {found}. The two "
                "private interpreter methods it wraps take the same arguments, so it goes on; if the grids "
                "show no load at all, this is the likely reason.",
            ),
            file=sys.stderr,
        )
    return builder


def wrap_loads_and_stores(watch):
    """Route every masked load and store of the interpreter through watch(kind, builder, ptrs, mask),
    which returns the mask to use.  Returns a function that puts the originals back."""
    builder = builder_class()
    load, store = builder.create_masked_load, builder.create_masked_store

    def create_masked_load(self, ptrs, mask, other, *rest):
        return load(self, ptrs, watch("load", self, ptrs, mask), other, *rest)

    def create_masked_store(self, ptrs, value, mask, *rest):
        return store(self, ptrs, value, watch("store", self, ptrs, mask), *rest)

    builder.create_masked_load, builder.create_masked_store = create_masked_load, create_masked_store

    def restore():
        builder.create_masked_load, builder.create_masked_store = load, store

    return restore
