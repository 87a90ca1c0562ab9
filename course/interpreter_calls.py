"""Two changes to Triton's interpreter: one jit function calling another without patching the language
again (the suite's speed), and a loop's variable made a tensor, as a GPU has it (what a learner may write).

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

`loop_variables_as_tensors()`: the interpreter runs a kernel's `for x in range(...)` and `tl.range(...)` as
Python loops, so x is a Python int there, where a compiled kernel has a tensor.  Code right on a GPU then
failed on the CPU alone: `(k * BLOCK_K).to(tl.int64)` in T4's K loop, or `p.to(tl.int64)` for T5's partial
slots ('int' object has no attribute 'to').  The interpreter already rewrites each jit function's source
(its ASTTransformer makes every assigned value a tensor, with interpreter_semantic.to_tensor); this adds the
same for a loop's variable, as the loop body's first statement.  `tl.static_range` loops keep their int, a
constexpr on a GPU too.  A loop whose bounds hold an int64 tensor gets an int64 variable, as compiled code has
it (the bounds' promoted type), where to_tensor would make it int32 (course_loop_range, which the loop's range
call goes through): `for i in tl.range(start64, ...)` then computes `i * 2**20` past 2**31 as a GPU does.  The
same toolchain choice installs both.
"""

import ast
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


def _dynamic_range(call):
    """Whether a for loop's iterable is range(...) or tl.range(...) (not tl.static_range): a loop whose
    variable a compiled kernel holds in a register, as a tensor."""
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    return (isinstance(func, ast.Name) and func.id == "range") or (
        isinstance(func, ast.Attribute) and func.attr == "range"
    )


def loop_variables_as_tensors():
    """Install the rewrite of a loop's variable on the interpreter; whether it is installed.  Call it before
    any kernel runs: the interpreter keeps each function as it first rewrote it."""
    try:
        import triton
        import triton.language as tl
        from triton.runtime import interpreter
    except ImportError:
        return False
    transformer = getattr(interpreter, "ASTTransformer", None)
    version = ".".join(triton.__version__.split(".")[:2])
    if version not in CHECKED_WITH or transformer is None or not hasattr(interpreter, "interpreter_semantic"):
        return False
    if getattr(transformer, "loop_variables_as_tensors", False):
        return True
    before = getattr(transformer, "visit_For", transformer.generic_visit)

    semantic = interpreter.interpreter_semantic

    def loop_range(make, *args, **kwargs):
        """make(*args, **kwargs)'s values (range or tl.range, a Python range here), as int64 scalars where a
        bound is an int64 tensor: a compiled loop's variable has its bounds' promoted type, where the
        interpreter's to_tensor makes every int that fits an int32."""
        wide = any(getattr(getattr(a, "dtype", None), "primitive_bitwidth", 0) == 64 for a in args)
        for value in make(*args, **kwargs):
            yield semantic.scalar_constant(value, dtype=tl.int64) if wide else value

    semantic.course_loop_range = loop_range

    def visit_For(self, node):
        node = before(self, node)
        if _dynamic_range(node.iter) and isinstance(node.target, ast.Name):
            node.iter = ast.copy_location(
                ast.Call(
                    func=ast.Attribute(
                        value=ast.Name(id="interpreter_semantic", ctx=ast.Load()),
                        attr="course_loop_range",
                        ctx=ast.Load(),
                    ),
                    args=[node.iter.func, *node.iter.args],
                    keywords=node.iter.keywords,
                ),
                node.iter,
            )
            name = node.target.id
            to_tensor = ast.Attribute(
                value=ast.Name(id="interpreter_semantic", ctx=ast.Load()), attr="to_tensor", ctx=ast.Load()
            )
            value = ast.Call(
                func=to_tensor, args=[ast.Name(id=name, ctx=ast.Load()), ast.Constant(value=False)], keywords=[]
            )
            first = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value)
            node.body.insert(0, ast.copy_location(first, node))
        return node

    transformer.visit_For = visit_For
    transformer.loop_variables_as_tensors = True
    return True
