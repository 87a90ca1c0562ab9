"""Lesson T5's readings of a crash, which its test files share: run_matmul turns a crash inside
TensorDescriptor or the kernel into a failure that says what broke, offsets_in_elements names a
descriptor access at a column offset the interpreter refuses, and tma_rule_broken is the suite's
own check of TMA's rules.  common.py imports them, so the test files take them from there too."""

import os
import re
from contextlib import contextmanager

import pytest
import triton

from course.errors import error_chain
from course.i18n import say
from course.interpreter_spin import ProgramWaitsForever
from course.messages import fail, read, triton_said
from course.registry import lesson

from bounds import place

T5 = lesson("T5")
# T5's code: the graded file, and the host side it is given (given/t5_host.py: matmul, first_call, the plans)
T5_FILES = ("t5_persistent.py", "t5_host.py")


def crash_site(exc):
    """(frame, innermost exception) of a crash: the deepest frame in TensorDescriptor or in the
    lessons' files (mine/ or solutions/) along the exception's chain, else the deepest of all."""
    import traceback

    ours = ("tensor_descriptor.py", *T5_FILES, "t4_matmul.py")
    site, inner = None, exc
    for error in error_chain(exc, suppressed=True):
        frames = traceback.extract_tb(error.__traceback__)
        chosen = [f for f in frames if f.filename.endswith(ours)] or frames
        if chosen:
            site, inner = chosen[-1], error
    return site, inner


def tma_rule_broken(t):
    """The first of TMA's three rules (§3.2) that the 2-D tensor t breaks, as (zh, en), or None: the
    suite's own check, so that a wrong tma_problem is not taken for a wrong tma_ready."""
    if t.stride(1) != 1:
        return "最后一维不连续（stride(1) 不是 1）", "its last dimension is not contiguous (stride(1) is not 1)"
    pitch = t.stride(0) * t.element_size()
    if pitch % 16:
        return f"行距 {pitch} 字节，不是 16 的倍数", f"its rows are {pitch} bytes apart, not a multiple of 16"
    if t.data_ptr() % 16:
        return "基地址没有 16 字节对齐", "its base address is not 16-byte aligned"
    return None


# The interpreter's words for a descriptor load or store whose column offset is not a multiple of
# 16 bytes; a column offset that is a whole number of k-blocks, kb * BLOCK_K elements, never trips it.
OFFSET_NOT_16 = "block offset start must be 16-byte aligned"
# Triton's words for a descriptor load or store given an int64 coordinate (its coordinates are 32-bit).
INT64_COORDINATE = "Expected a 32-bit integer"


@contextmanager
def offsets_in_elements(case, store_subtile=None):
    """Fail, naming it, where the interpreter refuses a descriptor access at a column offset that is
    not a multiple of 16 bytes (the k-block's number, say, in place of its first element).
    store_subtile: the code run is store_tile's, whose only descriptor access is c_desc.store (§3.3;
    §5 with EPILOGUE_SUBTILE 2)."""
    from triton.runtime.errors import InterpreterError

    try:
        yield
    except (AssertionError, InterpreterError) as e:
        items = r"\[((?:[^\[\]]|\[[^\]]*\])*)\]"  # a list whose items may hold brackets: 'constexpr[32]'
        shapes = re.search(rf"expected value shape {items}, got {items}", repr(e) + repr(e.__cause__))
        if store_subtile is not None and shapes:  # a block stored that is not c_desc's box
            box, got = ([int(n) for n in re.findall(r"\d+", part)] for part in shapes.groups())
            fail(
                T5,
                f"{case}：store_tile 经 c_desc 存了一块 {got}，可 c_desc 的 box 是 {box}："
                "一次 c_desc.store 正好存一个 box"
                + ("；EPILOGUE_SUBTILE=2 时分两半存，每半 [BLOCK_M, BLOCK_N // 2]" if store_subtile == 2 else ""),
                f"{case}: store_tile stored a block of {got} through c_desc, whose box is {box}: one c_desc.store "
                "stores exactly one box"
                + (
                    "; with EPILOGUE_SUBTILE=2 store the two halves, each [BLOCK_M, BLOCK_N // 2]"
                    if store_subtile == 2
                    else ""
                ),
                "5" if store_subtile == 2 else "3.3",
            )
        if INT64_COORDINATE in repr(e) + repr(e.__cause__):
            fail(
                T5,
                f"{case}：解释器拒绝了一次描述符读写：它的坐标是 int64（{INT64_COORDINATE}）。描述符的坐标是 32 位的："
                "坐标里别有 int64 的值（.to(tl.int64)，或从 int64 的值算出来的偏移）",
                f"{case}: the interpreter refused a descriptor access whose coordinate is an int64 "
                f"({INT64_COORDINATE}). A descriptor's coordinates are 32-bit: keep int64 values (a .to(tl.int64), or "
                "an offset computed from an int64 value) out of them",
                "3.1" if store_subtile is None else "5" if store_subtile == 2 else "3.3",  # the store's own section
            )
        if OFFSET_NOT_16 not in repr(e) + repr(e.__cause__):
            raise
        if store_subtile is not None:
            fail(
                T5,
                f"{case}：解释器拒绝了 c_desc.store：列偏移不是 16 字节的倍数（{OFFSET_NOT_16}）。"
                "c_desc.store 的坐标以元素计：tile (pid_m, pid_n) 从 (pid_m * BLOCK_M, pid_n * BLOCK_N) 开始"
                + ("，右半块从 pid_n * BLOCK_N + BLOCK_N // 2 列开始" if store_subtile == 2 else ""),
                f"{case}: the interpreter refused a c_desc.store whose column offset is not a multiple of 16 "
                f"bytes ({OFFSET_NOT_16}). c_desc.store takes element coordinates: tile (pid_m, pid_n) starts at "
                "(pid_m * BLOCK_M, pid_n * BLOCK_N)"
                + (", its right half at column pid_n * BLOCK_N + BLOCK_N // 2" if store_subtile == 2 else ""),
                "5" if store_subtile == 2 else "3.3",
            )
        fail(
            T5,
            f"{case}：解释器拒绝了一次描述符读写：列偏移不是 16 字节的倍数（{OFFSET_NOT_16}）。desc.load 的坐标"
            "以元素计：第 kb 个 k-block 从第 kb * BLOCK_K 列开始",
            f"{case}: the interpreter refused a descriptor access whose column offset is not a multiple of 16 bytes "
            f"({OFFSET_NOT_16}). desc.load takes element coordinates: k-block kb starts at column kb * BLOCK_K",
            "3.1",
        )


@contextmanager
def waits_told(case):
    """A launch inside that waits for good (course/interpreter_spin.py names the wait) fails as the fix-up's
    wait, with the case and the line it waits at, not as the interpreter's exception wrapped twice."""
    from triton.runtime.errors import InterpreterError

    from .first_pid import program_of_calls, tile_id_words

    try:
        with program_of_calls() as calls:  # sk_program_of's calls, for an owner that gave it a tile's number
            yield
    except InterpreterError as e:
        site, inner = crash_site(e)
        if not isinstance(inner, ProgramWaitsForever) or site is None:
            raise
        where, said = place(site, code=False), str(inner).strip().splitlines()[0]
        zh, en = tile_id_words(e, calls) or ("", "")
        zh, en = (f"；{zh}", f"; {en}") if zh else ("", "")
        fail(T5, f"{case}：在 {where}，{said}{zh}", f"{case}: at {where}, {said}{en}", "4.2")


def run_matmul(t5, case, section, *args, **kwargs):
    """t5.matmul; a crash inside TensorDescriptor or inside the kernel becomes a failure that says
    what broke, where, and what to read.  A body not written yet still fails as one."""
    from triton.runtime.errors import InterpreterError

    from .no_torch import matmul_in_kernel

    try:
        return matmul_in_kernel(t5, case, section, *args, **kwargs)
    except (AssertionError, InterpreterError, triton.CompilationError) as e:
        site, inner = crash_site(e)
        said = str(inner).strip().splitlines()[0] if str(inner).strip() else type(inner).__name__
        if "NotImplementedError" in repr(e) or site is None:
            raise
        fail_if_subtile_lost(case, e, kwargs.get("config"))
        fail_if_int64_handed_in(case, e)
        where = place(site, code=False)
        from .stray import t5_caller

        caller = t5_caller(e) if site.filename.endswith("t4_matmul.py") else None
        if caller is not None:  # a T4 line that T5's code called: the arguments may be the cause
            where += say(zh=f"（由 {place(caller, code=False)} 调用）", en=f", called from {place(caller, code=False)}")
        if isinstance(inner, ProgramWaitsForever):  # a wait nothing can end, named by course/interpreter_spin.py
            fail(T5, f"{case}：在 {where}，{said}", f"{case}: at {where}, {said}", "4.2")
        if site.filename.endswith(os.path.join("tools", "tensor_descriptor.py")):
            fail_descriptor_refused(t5, case, said, args, kwargs)
        gloss = triton_said(said, inner)  # Triton's English said in the learner's language, where known
        if gloss:  # what is wrong first, in the learner's language; Triton's own words quoted after
            off = boxes_off(t5, kwargs.get("config"))
            boxes = (
                (
                    "。这里用的是你的描述符（box 见 make_descriptors）和你的函数",
                    ". The kernel there runs on your "
                    "descriptors (their boxes come from make_descriptors) and calls your functions",
                )
                if off is None
                else off
            )
            pytest.fail(
                say(
                    zh=f"{case}：matmul 在 {where} 崩溃了：{gloss}{boxes[0]}；{read(T5, section)}\n  Triton 的原话："
                    f"{said}",
                    en=f"{case}: matmul crashed at {where}: {gloss}{boxes[1]}; {read(T5, section)}\n  Triton said: "
                    f"{said}",
                ),
                pytrace=False,
            )
        fail(
            T5,
            f"{case}：matmul 在 {where} 崩溃了：{said}"
            + (f"（{gloss}）" if gloss else "")
            + "。这里用的是你的描述符（box 见 make_descriptors）和你的函数",
            f"{case}: matmul crashed at {where}: {said}"
            + (f" ({gloss})" if gloss else "")
            + ". The kernel there runs on your descriptors (their boxes come from make_descriptors) and calls your "
            "functions",
            section,
        )


def fail_if_subtile_lost(case, exc, config):
    """Fail, naming who lost it, where a launch whose config has EPILOGUE_SUBTILE 2 crashed with store_tile in its
    whole-tile branch (its T5.2 body): t5_kernel and finish_tile (given code) hand the value on as they get it,
    so the function of the learner's that called finish_tile handed it another EPILOGUE_SUBTILE."""
    if config is None or getattr(config, "EPILOGUE_SUBTILE", 1) != 2:
        return
    import traceback

    from .stray import body_step

    frames = [
        f
        for error in error_chain(exc, suppressed=True)
        for f in traceback.extract_tb(error.__traceback__)
        if f.filename.endswith(T5_FILES)
    ]
    stores = [f for f in frames if f.name == "store_tile"]
    passer = next((f.name for f in frames if f.name in ("data_parallel_tiles", "stream_k_tiles")), None)
    if not stores or passer is None or body_step(stores[-1]) != "T5.2":
        return
    fail(
        T5,
        f"{case}：store_tile 走的是整块的分支（它的 T5.2 部分，EPILOGUE_SUBTILE 不是 2），可这次启动的 config 的 "
        "EPILOGUE_SUBTILE 是 2，c_desc 的 box 是 [BLOCK_M, BLOCK_N // 2]。t5_kernel 和 finish_tile（给定的代码）"
        f"拿到什么就原样往下传，所以是 {passer} 交给 finish_tile 的 EPILOGUE_SUBTILE 不是 kernel 拿到的那个："
        "把 EPILOGUE_SUBTILE 原样传下去",
        f"{case}: store_tile ran its whole-tile branch (its T5.2 body: EPILOGUE_SUBTILE was not 2), though this "
        "launch's config has EPILOGUE_SUBTILE=2, so c_desc's box is [BLOCK_M, BLOCK_N // 2]. t5_kernel and "
        f"finish_tile (given code) hand the value on as they get it, so {passer} handed finish_tile another "
        "EPILOGUE_SUBTILE than the kernel's: pass EPILOGUE_SUBTILE on as it is",
        "2.2" if passer == "data_parallel_tiles" else "4.2",
    )


# The learner's kernel functions whose coordinates come from their callers, by parameter, and those callers.
PLACES = {"k_block_loop": ("off_m", "off_n", "kb_begin", "kb_end"), "store_tile": ("pid_m", "pid_n")}
TILE_LOOPS = ("data_parallel_tiles", "stream_k_tiles")


def fail_if_int64_handed_in(case, exc):
    """Fail, naming where it came from, where a descriptor access refused an int64 coordinate in k_block_loop or
    store_tile whose coordinates arrived int64 (parameters, as the crashed frame holds them): the tile loop that
    called it (data_parallel_tiles, stream_k_tiles) holds int64 values, named."""
    import traceback

    import triton.language as tl

    if INT64_COORDINATE not in repr(exc) + repr(exc.__cause__):
        return
    frames = [
        f
        for error in error_chain(exc, suppressed=True)
        for f, _ in traceback.walk_tb(error.__traceback__)
        if f.f_code.co_filename.endswith(T5_FILES)
    ]

    def int64(frame, names):
        return [n for n in names if getattr(getattr(frame.f_locals.get(n), "dtype", None), "name", "") == "int64"]

    inner = next((f for f in reversed(frames) if f.f_code.co_name in PLACES), None)
    loop = next((f for f in frames if f.f_code.co_name in TILE_LOOPS), None)
    came = int64(inner, PLACES[inner.f_code.co_name]) if inner is not None else []
    held = int64(loop, [n for n, v in loop.f_locals.items() if isinstance(v, tl.tensor)]) if loop is not None else []
    if not came or not held:
        return
    fn, where = inner.f_code.co_name, loop.f_code.co_name
    fail(
        T5,
        f"{case}：描述符的坐标是 32 位的，可 {fn} 的 {', '.join(came)} 传进来时就是 int64：它们由调用者算出，"
        f"而 {where} 里的 {', '.join(held)} 是 int64（那里的 .to(tl.int64)，或由 int64 的值算出来的）："
        "tile 号和 tile 的位置一直到读写描述符都保持 int32",
        f"{case}: a descriptor's coordinates are 32-bit, yet {fn}'s {', '.join(came)} came in as int64: its callers "
        f"compute them, and in {where} {', '.join(held)} {'is' if len(held) == 1 else 'are'} int64 (a .to(tl.int64) "
        "there, or a value computed from one): keep tile numbers and places int32 up to the descriptor's load or store",
        "2.2" if where == "data_parallel_tiles" else "4.2",
    )


def boxes_off(t5, config):
    """(zh, en) words for the boxes make_descriptors gives, asked again with this config's block sizes (16, 64, 32
    and EPILOGUE_SUBTILE 1 without one) on fresh TMA-legal tensors, where a box is not the one the kernel moves;
    None where every box is right, or where that call itself fails."""
    import torch

    from support import DEVICE

    bm, bn, bk, sub = (
        (16, 64, 32, 1)
        if config is None
        else (config.BLOCK_M, config.BLOCK_N, config.BLOCK_K, getattr(config, "EPILOGUE_SUBTILE", 1))
    )
    a, b, c = (torch.zeros(256, 256, dtype=torch.float16, device=DEVICE) for _ in range(3))
    try:
        descs = t5.make_descriptors(a, b, c, False, bm, bn, bk, sub)
        got = [list(d.block_shape) for d in descs]
    except Exception:  # noqa: BLE001 - a make_descriptors that fails here is told by its own check
        return None
    want = [[bm, bk], [bk, bn], [bm, bn // sub]]
    off = [(name, g, w) for name, g, w in zip(("a_desc", "b_desc", "c_desc"), got, want, strict=True) if g != w]
    if not off:
        return None
    zh = "；".join(f"{name} 的 box 是 {g}，应当是 {w}" for name, g, w in off)
    en = "; ".join(f"{name}'s box is {g}, {w} expected" for name, g, w in off)
    blocks = f"BLOCK_M={bm} BLOCK_N={bn} BLOCK_K={bk} EPILOGUE_SUBTILE={sub}"
    return (
        f"。你的 make_descriptors 按 {blocks}（B 行主序）再建一次描述符：{zh}",
        f". Your make_descriptors, asked again with {blocks} (B row-major): {en}",
    )


# What TensorDescriptor says when the tensor itself breaks one of TMA's rules (§3.2); it says other
# things of its other arguments (an illegal padding, a box of another rank, a shape not positive).
TENSOR_RULES_SAID = ("16-byte aligned", "must be contiguous")


def fail_descriptor_refused(t5, case, said, args, kwargs):
    """Fail for a descriptor that TensorDescriptor refused, naming why only as far as it is seen: an
    argument other than the tensor (TensorDescriptor's words are no TMA rule's), an operand that
    tma_ready returns breaking a rule, a C that the learner's tma_problem let through, or else (every
    tensor keeps the rules) a descriptor built on some other tensor in make_descriptors."""
    if not any(words in said for words in TENSOR_RULES_SAID):  # the padding, the box's rank, a shape given by hand
        fail(
            T5,
            f"{case}：TensorDescriptor 拒绝了传给它的参数（{said}）：这不是 TMA 对张量本身的规矩"
            "（对齐、最后一维连续），而是这次调用的别的参数：看 make_descriptors 里那一行的 box、padding，"
            "以及手写的 shape 和 stride",
            f"{case}: TensorDescriptor refused what it was given ({said}): none of TMA's rules for the tensor "
            "itself (its alignment, its last dimension contiguous), but another argument of that call: look at "
            "make_descriptors's box, padding, and any shape or strides given by hand",
            "3.1",
        )
    head = (
        f"{case}：TensorDescriptor 不接受传给它的张量（{said}）",
        f"{case}: TensorDescriptor refused a tensor ({said})",
    )
    try:
        a, b = args[:2]
        a2, b2, kmajor = t5.tma_ready(a, b, kwargs.get("tma_fallback", True))
        out = kwargs.get("out")
        c_passed = out is not None and t5.tma_problem(out, "c") is None
    except Exception:  # noqa: BLE001 - what cannot be asked again keeps the general sentence
        fail(
            T5,
            f"{head[0]}：make_descriptors 用的 a、b 和 C 都要满足 TMA 的规矩，"
            "tma_ready 要把违规的操作数换成 aligned_copy()",
            f"{head[1]}: every tensor make_descriptors builds a descriptor on must keep TMA's rules, so tma_ready "
            "must replace an operand that breaks one with aligned_copy()",
            "3.2",
        )
    for name, t in (("a", a2), ("b", b2)):
        broken = tma_rule_broken(t)
        if broken is None:
            continue
        kmajor_b = name == "b" and kmajor
        read = ("（按 K-major 读的 (N, K) 张量）", " (the (N, K) tensor read K-major)") if kmajor_b else ("", "")
        fix = ("违规的操作数要换成 aligned_copy()", "an operand that breaks one must be replaced with aligned_copy()")
        if name == "b" and not kmajor and tma_rule_broken(t.t()) is None:
            fix = (
                "而 b.t() 满足规矩：按 K-major 读它（b_kmajor=True），不用复制",
                "b.t() keeps them: read it K-major (b_kmajor=True), no copy",
            )
        fail(
            T5,
            f"{head[0]}：tma_ready 返回的 {name}{read[0]} 违反了 TMA 的规矩，{broken[0]}；{fix[0]}",
            f"{head[1]}: tma_ready returned {name}{read[1]}, which breaks a TMA rule: {broken[1]}; {fix[1]}",
            "3.2",
        )
    broken = tma_rule_broken(out) if c_passed else None
    if broken is not None:
        fail(
            T5,
            f"{head[0]}：C {broken[0]}，tma_problem(c) 却返回 None，于是 C 没有换成对齐的副本",
            f"{head[1]}: C breaks a rule ({broken[1]}), yet tma_problem(c) returned None, so C was not replaced "
            "by an aligned copy",
            "3.2",
        )
    fail(
        T5,
        f"{head[0]}：tma_ready 返回的 a 和 b 都满足 TMA 的规矩，所以是 make_descriptors 在别的张量上建了描述符："
        "每个描述符都要建在传进来的那个张量本身上（K-major 时 b 已经是 (N, K) 张量）",
        f"{head[1]}: the a and b tma_ready returns keep TMA's rules, so make_descriptors built a descriptor on "
        "some other tensor: build each on the tensor it is given (read K-major, b is the (N, K) tensor already)",
        "3.1",
    )
