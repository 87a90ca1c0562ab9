"""T5.2: tma_ready refusing an operand where fallback=True asks for a copy (hunt16: `if problem and fallback:
raise`, the test turned round, was told as the learner's own ValueError alone, from the first test that called it)."""

from course.messages import fail

from .common import T5


def ready_with_fallback(t5, a, b, case_zh, case):
    """t5.tma_ready(a, b) with fallback left at its default (True); a ValueError it raises fails, saying so, and
    whether fallback=False then lets the same operands through (the test turned round).  case_zh, case: the case's
    words in each language."""
    try:
        return t5.tma_ready(a, b)
    except ValueError as e:
        try:
            t5.tma_ready(a, b, False)
            turned = True
        except Exception:  # noqa: BLE001 - refusing there is right: the words say only what fallback=True did
            turned = False
        fail(
            T5,
            f"{case_zh}：tma_ready(a, b) 在 fallback=True（默认）时抛出了 ValueError：{e}；"
            "fallback=True 时不合规的操作数用 aligned_copy() 复制，只有 fallback=False 才拒绝"
            + ("：而 fallback=False 时它反倒把同样的操作数放行了，判断 fallback 的条件反了" if turned else ""),
            f"{case}: tma_ready(a, b) raised a ValueError with fallback=True (the default): {e}; with fallback=True an "
            "offender is copied with aligned_copy(), and only fallback=False refuses"
            + (
                ": with fallback=False it let the same operands through, so the test of fallback is turned round"
                if turned
                else ""
            ),
            "3.2",
        )
