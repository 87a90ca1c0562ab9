"""A tile loop's flatten=FLATTEN, which the interpreter ignores: whether a lesson's kernel passes it on
is read from the kernel's Triton IR, made on the CPU in a process without the interpreter (Triton
writes a loop's flatten=True as the attribute tt.flatten; nothing is compiled for a GPU).
Lesson-neutral: each lesson's tests give the kernel, its signature and its other constexprs.

    flattened_loops(lesson_id, kernel, signature, constexprs)
        {False: answer, True: answer} for FLATTEN False and True, each ("flattened loops", how many
        loops of the IR carry tt.flatten), ("stub", its message) or ("error", the innermost complaint)
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import triton

from course import ROOT, seam

CACHE = Path(tempfile.gettempdir()) / "course-loop-ir"  # answers kept per graded files, as gpu_compile's

CHILD = r"""
import json, re, sys
from triton._C.libtriton import ir
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import CUDABackend
from triton.compiler import ASTSource
from course import seam
from course.registry import lesson
from course.errors import root_cause

spec = json.loads(sys.argv[1])
fn = getattr(seam.load(lesson(spec["lesson"])), spec["kernel"])
target = GPUTarget("cuda", 90, 32)
backend = CUDABackend(target)
options = backend.parse_options({})


def made(constexprs):  # ["ir", the IR with these constexprs], ["stub", its message] or ["error", the complaint]
    signature = {name: spec["signature"].get(name, "constexpr") for name in fn.arg_names}
    at = {(fn.arg_names.index(name),): value for name, value in constexprs.items()}
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    try:
        module = ASTSource(fn=fn, signature=signature, constexprs=at).make_ir(
            target, options, backend.get_codegen_implementation(options), backend.get_module_map(), context)
    except Exception as e:
        inner = root_cause(e)
        stub = re.search(r"raise NotImplementedError\((['\"])(.*?)\1\)", str(inner))
        return ["stub", stub[2]] if stub else ["error", str(inner).strip()[-800:]]
    return ["ir", str(module)]


answers = {}
for flatten in (False, True):
    kind, said = made(dict(spec["constexprs"], FLATTEN=flatten))
    answers[str(flatten)] = ["flattened loops", said.count("tt.flatten")] if kind == "ir" else [kind, said]
if spec.get("also"):  # one more IR, handed back whole
    answers["also"] = made(spec["also"])
print(json.dumps(answers))
"""


def flattened_loops(lesson_id, kernel, signature, constexprs, timeout=120, also=None):
    """{flatten: ("flattened loops", how many loops of the kernel's IR carry tt.flatten) or ("stub", its
    message) or ("error", the innermost complaint)} for FLATTEN False and True; with `also` (the constexprs of
    one more IR of the kernel, made in the same process), "also": ("ir", its text), ("stub", ...) or ("error", ...)."""
    spec = json.dumps(dict(lesson=lesson_id, kernel=kernel, signature=signature, constexprs=constexprs, also=also))
    key = hashlib.sha256(json.dumps([spec, triton.__version__, CHILD]).encode())
    for path in sorted(seam.graded_paths()):
        key.update(Path(path).read_bytes() if Path(path).exists() else b"")
    kept = CACHE / f"{key.hexdigest()}.json"
    if kept.exists():
        return answers_of(kept.read_text())
    env = dict(os.environ, TRITON_INTERPRET="0", TRITON_DEFAULT_FP_FUSION="1")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, spec], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        status = f"the process making the IR ended with status {done.returncode}: {done.stderr.strip()[-800:]}"
        return {flatten: ("error", status) for flatten in (False, True)}
    CACHE.mkdir(parents=True, exist_ok=True)
    kept.write_text(lines[-1])
    return answers_of(lines[-1])


def answers_of(text):
    """The child's answers, keyed by FLATTEN (False, True) and "also"."""
    return {{"True": True, "False": False}.get(key, key): tuple(answer) for key, answer in json.loads(text).items()}
