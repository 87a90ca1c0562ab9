"""Whether a lesson's kernel compiles for a Hopper GPU (sm_90) as written, asked on the CPU.
Lesson-neutral.

    hopper_compile_problem(lesson_id, kernel, signature, groups, options, group)
        for groups[group]: None, ("stub", its message) or ("error", the compiler's innermost complaint)
    check_compiles_for_hopper(step, kernel, signature, groups, where)
        fails the running test with that answer: "not written yet", or the complaint and `where`
        (the caller's read(step, section), so that make check sees the section it names)

Triton's interpreter runs a kernel as Python, so code that no GPU compiler takes can pass there: an
accumulator that starts as fp16 and turns fp32 in the loop, say, or a print of a numpy value.
Triton compiles for a target it is given without a GPU, so a fresh process without the interpreter
compiles the graded side's kernel for compute capability 9.0, once per variant, and reports the
innermost error: the line the learner wrote.  A fork of the test process would not do: it keeps the
interpreter's patches of triton.language.  One process answers every group of variants of a lesson
(each step's checks ask for one), and the answers are kept on disk under a hash of the graded files
and the request, so the same code is compiled once (make test again, make check's runs).
"""

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import triton

from course import ROOT, registry, seam
from course.i18n import say
from course.messages import stub_report, triton_said, written_elsewhere

CACHE = Path(tempfile.gettempdir()) / "course-hopper-compile"

CHILD = r"""
import json, os, re, sys
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, compile
from course import seam
from course.registry import lesson
from course.errors import root_cause

spec = json.loads(sys.argv[1])
module = seam.load(lesson(spec["lesson"]))


def at_line(e):  # the innermost compile error with a source, then the call one level out, if any
    sites = []
    while e is not None:
        if getattr(e, "src", None) and hasattr(getattr(e, "node", None), "lineno"):
            sites.append(e)
        e = e.__cause__
    if not sites:
        return ""
    return site_line(sites[-1]) + (f"\n  called from {site_line(sites[-2])}" if len(sites) > 1 else "")


def site_line(site):  # "path line n (function): the line"
    name = re.search(r"def\s+(\w+)", site.src)
    line = site.src.split("\n")[site.node.lineno - 1].strip()
    func = getattr(getattr(module, name[1], None), "fn", None) if name else None
    if func is None:
        return f"{name[1] if name else '?'}: {line}"
    path = func.__code__.co_filename
    lines = open(path).read().splitlines()
    first = next((i for i in range(func.__code__.co_firstlineno - 1, len(lines))
                  if lines[i].lstrip().startswith(f"def {name[1]}(")), None)
    shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else os.path.basename(path)
    return f"{shown} line {first + site.node.lineno} ({name[1]}): {line}" if first is not None else line


def first_problem(variants):
    for variant in variants:
        types = {**spec["signature"], **variant.get("signature", {})}
        fn = getattr(module, variant.get("kernel", spec["kernel"]))  # a variant may name another kernel
        signature = {name: types.get(name, "constexpr") for name in fn.arg_names}
        at = {(fn.arg_names.index(name),): value for name, value in variant["constexprs"].items()
              if name in fn.arg_names}  # a file begun before the kernel took a constexpr (T6's WIDE)
        try:
            compile(ASTSource(fn=fn, signature=signature, constexprs=at), target=GPUTarget("cuda", 90, 32),
                    options=spec["options"])
        except Exception as e:
            inner = root_cause(e)
            text = str(inner)
            stub = re.search(r"raise NotImplementedError\((['\"])(.*?)\1\)", text)
            where = "" if stub else at_line(e)
            return ["stub", stub[2]] if stub else ["error", text.strip()[-1500:] + (f"\n  at {where}" if where else ""),
                                                  variant.get("kernel", spec["kernel"])]
    return None


print(json.dumps({name: first_problem(variants) for name, variants in spec["groups"].items()}))
"""


COMPILE_TIMEOUT_S = 240  # one compile of a lesson's variants on a busy 2-core machine: the child's limit


def hopper_compile_problem(lesson_id, kernel, signature, groups, options, group, timeout=COMPILE_TIMEOUT_S):
    """Compile `kernel` of the graded side of lesson_id for sm_90 once per variant of groups[group]
    (each variant a dict of "constexprs" and, optionally, "signature" entries that replace those of
    `signature`: the types of the other parameters, as Triton spells them: "*fp16", "i32",
    "tensordesc<fp16[64, 64]>"; and "kernel", another kernel of the lesson's file to compile in
    place of `kernel`); the first problem, or None.  The other groups are answered and
    kept in the same run."""
    spec = dict(lesson=lesson_id, kernel=kernel, signature=signature, groups=groups, options=options)
    key = hashlib.sha256(json.dumps([spec, triton.__version__, CHILD]).encode())
    for path in sorted(seam.graded_paths()):
        key.update(Path(path).read_bytes() if Path(path).exists() else b"")
    kept = CACHE / f"{key.hexdigest()}.json"
    if kept.exists():
        return _answer(json.loads(kept.read_text())[group])
    env = dict(os.environ, TRITON_INTERPRET="0", TRITON_DEFAULT_FP_FUSION="1")
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(spec)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return ("error", f"compiling took more than {timeout} s")
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return ("error", f"the compiling process ended with status {done.returncode}: {done.stderr.strip()[-1500:]}")
    CACHE.mkdir(parents=True, exist_ok=True)
    kept.write_text(lines[-1])
    return _answer(json.loads(lines[-1])[group])


def _answer(found):
    return None if found is None else tuple(found)


def _where_the_line_is(step, complaint, where):
    """(the complaint, where to read): `where`, unless the compiler's complaint is at a line of a
    function that another step writes ("\n  at mine/t4_matmul.py line 65 (mainloop): ..."): then
    that step and its sections, since its own checks, run on the interpreter, passed code that a GPU
    refuses (an accumulator that starts as a Python float, say), and this step's sections say nothing
    about it.  When this step's own code made that call ("\n  called from ... (store_tile): ..."),
    the arguments it passes may be the cause as well (a bias_and_activation given BLOCK_N for a half
    tile): then the call is shown and both steps' sections named.  Otherwise the call is left out."""
    inner = re.search(r"\n  at [^\n]*? line \d+ \((\w+)\):", complaint)
    call = re.search(r"\n  called from [^\n]*? line \d+ \((\w+)\):[^\n]*\Z", complaint)
    said = complaint[: call.start()] if call else complaint
    other = inner and written_elsewhere(step, inner[1])
    if not other:
        return said, where
    if call and call[1] in registry.BY_ID[step].writes:
        return complaint, say(
            zh=f"这一行在 {inner[1]} 里，是 {other[0].id} 的代码，由你这一步的 {call[1]} 调用：原因可能是"
            f"你那一行传给它的参数，也可能是 {other[0].id} 的代码（它的检查只在解释器上跑）。"
            f"{where}；{other[0].id}：{other[1]}",
            en=f"that line is in {inner[1]}, step {other[0].id}'s code, called by this step's {call[1]}: the cause "
            f"may be what your line there passes to it, or {other[0].id}'s code (its checks run only on the "
            f"interpreter). {where}; {other[0].id}: {other[1]}",
        )
    return said, say(
        zh=f"这一行在 {inner[1]} 里，是 {other[0].id} 的代码（它在解释器上的检查放过了它）：{other[1]}",
        en=f"that line is in {inner[1]}, step {other[0].id}'s code (its checks, on the interpreter, let it "
        f"through): {other[1]}",
    )


LOOP_CARRIED = re.compile(
    r"Loop-carried variable (\w+) has initial type <[^>]*?(\w+)> but is re-assigned to <[^>]*?(\w+)> in loop", re.S
)


def loop_carried_words(complaint):
    """For the compiler's "Loop-carried variable acc has initial type <..., fp16> but is re-assigned to
    <..., fp32> in loop!", one sentence in the learner's language of what it says and what to do; "" else."""
    found = LOOP_CARRIED.search(complaint)
    if not found:
        return ""
    name, before, after = found.groups()
    acc = after == "fp32"  # a sum that tl.dot turned float32: the accumulator's own type from the start
    return say(
        zh=f"循环带着的变量 {name} 进循环时是 {before}，在循环里被赋成了 {after}；编译出来的循环里"
        f"一个变量的类型不能变（解释器不管这个）。让它在循环前就是 {after}"
        + ("：累加器从 tl.zeros(..., dtype=tl.float32) 开始" if acc else ""),
        en=f"the loop-carried variable {name} enters the loop as {before} and is "
        f"assigned {after} inside it; in compiled code a variable keeps its type through a loop (the interpreter "
        f"does not mind). Make it {after} before the loop"
        + (": an accumulator starts as tl.zeros(..., dtype=tl.float32)" if acc else ""),
    )


def check_compiles_for_hopper(step, kernel, signature, groups, where):
    """Fail the running test unless `kernel`, with step's code and the steps' before it (groups[step]
    of its lesson's groups), compiles for sm_90: the interpreter runs a kernel as Python, and a GPU
    refuses some of what it runs (a `break` out of a loop, an fp16 accumulator that turns fp32).
    `where`: read(step, its section), said after the compiler's complaint."""
    found = hopper_compile_problem(step.split(".")[0], kernel, signature, groups, dict(num_warps=4, num_stages=3), step)
    if found is not None and found[0] == "stub":
        pytest.fail(stub_report(found[1]), pytrace=False)
    if found is not None:
        kernel = found[2] if len(found) > 2 else kernel  # the variant's own kernel, where it names one
        said, where = _where_the_line_is(step, found[1], where)
        # The compiler's first words and the line it names lead: a scorecard row shows the first line alone.
        complaint, _, at = said.rpartition("\n  at ")
        first, _, rest = (complaint or said).strip().partition("\n")
        place = (say(zh=f"（在 {at}）", en=f", at {at}")) if complaint else ""
        # the compiler's complaint said in the learner's words, where known
        carried = loop_carried_words(said) or triton_said(said)
        pytest.fail(
            say(
                zh=f"为 Hopper GPU（sm_90）编译 {kernel} 时 Triton 不接受"
                + (
                    f"{place}：{carried}\nTriton 的英文原话：{first}"
                    if carried
                    else f"，Triton 的英文原话：{first}{place}"
                )
                + (f"\n{rest}" if rest else "")
                + f"\n（解释器把 kernel 当 Python 运行，不编译它）；{where}",
                en=f"Triton refuses to compile {kernel} for a Hopper GPU (sm_90)"
                + (f"{place}: {carried}\nthe compiler's words: {first}" if carried else f": {first}{place}")
                + (f"\n{rest}" if rest else "")
                + f"\n(the interpreter runs a kernel as Python and compiles nothing); {where}",
            ),
            pytrace=False,
        )
