"""What a T6 call raised on valid input, said as a failure: the learner's line it came from, where one
did (under Triton's interpreter an InterpreterError wraps a kernel's own error), and that line's section."""

import os
import traceback

from course import seam
from course.errors import error_chain
from course.messages import fail, math_dtype_words, triton_said
from course.registry import lesson

T6 = lesson("T6")

# The functions of the graded file a learner writes, and the section each is in: stray.py's SECTION_OF (the
# kernels' parts), and the host's
BODY_SECTIONS = {
    "count_experts": "2.1",
    "scan_counts": "2.1",
    "scatter_slots": "2.1",
    "check_routing_inputs": "2.3",
    "expert_tile_counts": "3.3",
    "locate_tile": "3.3",
    "grouped_tiles": "3.4",
    "check_expert_inputs": "4",
    "gathered_rows": "4.1",
    "gathered_product": "4.2",
    "store_rows": "4.3",
    "combine_topk": "4.4",
    "gate_up_product": "5.1",
    "swiglu": "5.1",
    "moe_mlp": "5.2",
}


class Raised(str):
    """raised_by's words for an error; where a line the learner wrote raised it (under Triton's
    interpreter its InterpreterError wraps the kernel's own error), `place` is that line and `function`
    the function it is in (a key of BODY_SECTIONS); else both None."""

    place = function = None
    gloss = ""  # Triton's English said in the learner's language, where known (triton_said)


def _learners_line(e):
    """(the innermost error of e's chain that went through a body of the graded file, its deepest frame
    there), or None: an InterpreterError's wrappers peeled off down to the kernel's own error."""

    found = None
    for error in error_chain(e):
        frames = [f for f in traceback.extract_tb(error.__traceback__) if seam.graded_file(f.filename)]
        if frames and frames[-1].name in BODY_SECTIONS:
            found = error, frames[-1]
    return found


def raised_by(call):
    """(what call returned, None) or (None, its error in short, a Raised): a learner's error told outside
    the except, so that its traceback stays out of the failure; a body not written yet is left to the suite."""
    try:
        return call(), None
    except NotImplementedError as e:
        if seam.stub_message(e) is not None:
            raise
        return None, Raised(f"{type(e).__name__}: {str(e)[:200]}")  # torch's, say: not the stub's
    except Exception as e:  # noqa: BLE001 - any error on valid input is what this reports
        if seam.stub_message(e) is not None:
            raise  # a kernel's body not written yet, under the interpreter's wrapper: the suite says so
        return None, told(e)


def told(e):
    """raised_by's Raised for an error e already caught."""
    found = _learners_line(e)
    if found is None:
        error = Raised(f"{type(e).__name__}: {str(e)[:200]}")
        error.gloss = triton_said(str(e), e)
        return error
    inner, frame = found
    error = Raised(f"{type(inner).__name__}: {str(inner)[:200]}")
    error.gloss = triton_said(str(inner), inner)
    line = (frame.line or "").strip()
    error.place = f"{os.path.basename(frame.filename)} line {frame.lineno} ({frame.name}): {line}"
    error.function = frame.name
    return error


def fail_if_raised(case, name, error, section):
    """Fail where `name` (route, grouped_matmul) raised `error` (raised_by's) on valid input; where a line
    of the learner's raised it, that line, and its function's section."""
    if error:
        place, gloss = getattr(error, "place", None), getattr(error, "gloss", "")
        fail(
            T6,
            f"{case}：这是合法的输入，{name} 却抛出了 {error}"
            + (f"；出错的是你写的 {place}" if place else "")
            + (f"；{gloss}" if gloss else ""),
            f"{case}: valid input, yet {name} raised {error}"
            + (f"; it was raised at your {place}" if place else "")
            + (f"; {gloss}" if gloss else ""),
            section if place is None else BODY_SECTIONS[error.function],
        )


def _tile_products_gate(e):
    """The dtype (fp32, fp16, ...) of the gate that tile_product (given code) got back from gate_up_product and
    handed to swiglu, read off its frame along e's chain under Triton's interpreter (a jit function runs as Python
    there); None where no such frame is in it (a compile for a GPU keeps no frames of the kernel)."""
    for error in error_chain(e):
        tb = error.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code.co_name == "tile_product" and seam.graded_file(frame.f_code.co_filename):
                gate = frame.f_locals.get("gate")
                if getattr(gate, "dtype", None) is not None:
                    return str(gate.dtype)
            tb = tb.tb_next
    return None


def fail_if_math_dtype_refused(case, e):
    """Fail, naming its cause where known, where e is Triton's refusal of a math function's fp16 or bf16 block
    (tl.sigmoid goes through tl.exp, which takes fp32 and fp64 alone: messages.math_dtype_words) on the way to
    SwiGLU's result; return for any other error, which the caller raises on.  Under the interpreter the gate that
    tile_product handed swiglu tells whose line made the block that dtype: swiglu's own conversion of float32 gate
    and up, or gate_up_product's results already in it."""
    found = math_dtype_words(_whole(e))
    if not found:
        return
    error = told(e)
    given = _tile_products_gate(e)
    if given == "fp32" and error.function == "swiglu":
        cause = (
            "gate 和 up 交给 swiglu 时是 float32 的，是 swiglu 自己把它们转成了半精度：SwiGLU 在 float32 里算，"
            "转成 out 的 dtype 是 store_rows 的事",
            "gate and up reached swiglu in float32, and swiglu itself turned them to half precision: SwiGLU is "
            "computed in float32, and store_rows converts to out's dtype",
        )
    elif given not in (None, "fp32"):
        cause = (
            f"gate_up_product 交给 swiglu 的 gate 和 up 已经是 {given}：它们是 float32 的累加器，原样返回；"
            "转成 out 的 dtype 是 store_rows 的事",
            f"gate_up_product handed swiglu gate and up already in {given}: they are float32 accumulators, "
            "returned as they are; store_rows converts to out's dtype",
        )
    else:
        cause = ("", "")
    place = error.place
    fail(
        T6,
        f"{case}：算 SwiGLU 时 Triton 拒绝了：{error}"
        + (f"；出错的是你写的 {place}" if place else "")
        + f"；{found}"
        + (f"。{cause[0]}" if cause[0] else ""),
        f"{case}: Triton refused on the way to SwiGLU: {error}"
        + (f"; it was raised at your {place}" if place else "")
        + f"; {found}"
        + (f". {cause[1]}" if cause[1] else ""),
        "5.1",
    )


def _whole(e):
    """The words of e and of every error along its chain, one after another."""
    return "\n".join(str(error) for error in error_chain(e))
