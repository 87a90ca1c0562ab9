"""One jit function calling another, under Triton's interpreter, without patching the language again.

Triton 3.9's interpreter runs a kernel as Python: as a launch starts it swaps every builtin of
triton.language (tl, tl.tensor, tl.math, ...) for a numpy version, and swaps them back when the
launch ends (GridExecutor.__call__, through `_patch_lang` and the scope it returns).  It also calls
`_patch_lang` each time one jit function calls another (InterpretedFunction.__call__), in every
program of the grid, and drops the scope it gets: by then the launch has patched the same modules,
so that call walks every member of the language with inspect.getmembers and sets only what is
already set.  The lessons' kernels are made of such calls (tile_coords, mainloop, k_block_loop and
the rest, once per program and tile), and on the 2-core machine these walks were about a quarter of
the suite's time (cProfile, 2026-12-04: 17,600 calls of `_patch_lang` for 632 launches).

`toolchain.choose_backend()` installs it wherever it chooses the interpreter (the suite, make test,
the study tools).  `skip_repatching_nested_calls()` makes `_patch_lang` return an empty scope when every
triton.language module the function sees is patched already, which is then always by the launch
that is running; a launch's own call, which patches and later restores, goes on as before.  It is
the suite's speed alone: the same numpy code runs either way.  It changes nothing on a Triton
release it was not checked against (CHECKED_WITH), or where these private names have gone.
"""

import inspect

CHECKED_WITH = ("3.9",)  # the Triton releases whose interpreter this was written against


def skip_repatching_nested_calls():
    """Install the shortcut on the interpreter; whether it is installed."""
    try:  # a toolchain that does not import is require_working_toolchain()'s to report
        import triton
        import triton.language as tl
        from triton.runtime import interpreter
    except ImportError:
        return False
    patch_lang = getattr(interpreter, "_patch_lang", None)
    scope_class = getattr(interpreter, "_LangPatchScope", None)
    is_builtin = getattr(tl.core, "is_builtin", None)
    version = ".".join(triton.__version__.split(".")[:2])
    if version not in CHECKED_WITH or None in (patch_lang, scope_class, is_builtin):
        return False
    if getattr(patch_lang, "skips_nested_calls", False):
        return True

    def patched_already(lang):
        # a launch's patch swaps tl.load (a builtin) for a plain function, and restores it at the end
        return not is_builtin(getattr(lang, "load", None))

    def patch_unless_patched(fn):
        langs = [v for v in fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)]
        if langs and all(patched_already(lang) for lang in langs):
            return scope_class()  # nothing to set, nothing to restore
        return patch_lang(fn)

    patch_unless_patched.skips_nested_calls = True
    interpreter._patch_lang = patch_unless_patched
    return True
