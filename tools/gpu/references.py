"""Which lesson's reference a GPU tool times, found from the registry instead of named in the tool:
the lesson --lesson names, else the first lesson whose reference defines what the tool calls."""

import importlib

from course import registry


def reference(lesson):
    """solutions/<module>.py of the lesson, imported (torch and triton with it)."""
    return importlib.import_module(f"solutions.{lesson.module}")


def first_with(names, lesson_id=None):
    """(lesson, its reference module): lesson_id's, else the first lesson whose reference defines
    every one of names; exits saying so when none does."""
    if lesson_id:
        chosen = registry.lesson(lesson_id)
        return chosen, reference(chosen)
    for each in registry.LESSONS:
        module = reference(each)
        if all(hasattr(module, name) for name in names):
            return each, module
    raise SystemExit(f"no lesson's reference defines {', '.join(names)}")


def kernel_of(module):
    """(name, kernel): the module's one @triton.jit function named *_kernel, what its matmul launches."""
    from triton.runtime.jit import KernelInterface

    found = [(k, v) for k, v in vars(module).items() if k.endswith("_kernel") and isinstance(v, KernelInterface)]
    if len(found) != 1:
        raise SystemExit(f"{module.__name__}: expected one @triton.jit function named *_kernel, found {len(found)}")
    return found[0]


# What the held-out set and the tuner need of a reference: a config chosen per shape bucket, tuned
# into a cache (solutions/<module>.py, tuned_config).
TUNES_PER_SHAPE = ("shape_bucket", "tune_candidates", "TUNE_CACHE", "TUNED")
