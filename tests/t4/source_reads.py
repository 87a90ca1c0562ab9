"""What only the learner's source tells, read with ast (hunt36): a helper of test_epilogue.py, no test here."""

import ast
import inspect
import textwrap

from course import seam
from course.i18n import say
from course.registry import lesson


def bool_op_line(function):
    """The first line of the graded T4 file's `function` that joins values with Python's `and` or `or`, else None.
    Read from the source: a mask `(rows) and (cols)` is cols alone under the interpreter (Python's `and` returns
    its second operand), while a GPU compile takes it as & with a deprecation warning, so only the source tells."""
    fn = getattr(seam.load(lesson("T4")), function, None)
    try:
        src = textwrap.dedent(inspect.getsource(getattr(fn, "fn", fn)))
    except (OSError, TypeError):
        return None
    lines = src.splitlines()
    joins = (
        n
        for n in ast.walk(ast.parse(src))
        if isinstance(n, ast.BoolOp) and any(isinstance(v, ast.Compare) for v in n.values)  # a mask's conditions
    )
    return next((lines[n.lineno - 1].strip() for n in joins), None)


def bool_op_words(function, sentence=True):
    """Words for a mask whose one condition is missing, where `function` joins comparisons with `and` or `or`;
    else ''.  A sentence of its own, or (sentence False) a clause after a semicolon."""
    line = bool_op_line(function)
    if line is None:
        return ""
    zh = (
        f"你的 {function} 用 Python 的 and/or 连接（{line}）：解释器里 x and y 只剩 y（GPU 编译时 Triton 把它当 &，"
        "并警告这种写法已弃用）；掩码用 & 连接"
    )
    en = (
        f"our {function} joins with Python's and/or ({line}): under the interpreter x and y is y alone (a GPU "
        "compile takes it as &, warning that this is deprecated); join masks with &"
    )
    return say(zh=f"{zh}。", en=f" Y{en}.") if sentence else say(zh=f"；{zh}", en=f"; y{en}")
