"""T5.2: the TMA rules on the host: tma_problem names what a descriptor cannot take (tma_ready, which
copies or refuses, is in test_tma_ready.py)."""

import re

import pytest
import torch

from course.messages import fail

from .common import T5, tma_rule_broken
from .rule_two import rule_2_on_stride_1
from .unaligned import unaligned
from support import DEVICE, padded

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T5.2 TMA tensor descriptors
# ================================================================================================
# rule 1's key words: the stride of the last dimension is written stride(1) or stride(-1) (t.stride(-1)), or the
# rule said in other words: a unit stride along the last dimension, row-major (these words also tell a refusal's rule)
RULE_1_WORDS = (
    "contiguous", "stride 1", "stride(1)", "stride(-1)", "stride[1]", "stride[-1]", "stride()[1]", "stride()[-1]",
    "unit stride", "last stride", "innermost", "row-major", "row major", "连续",
)  # fmt: skip
# rule 3's: the base address, as §3.2 writes the rule in code too (data_ptr() % 16 == 0), or where the first
# element sits: past a 16-byte boundary, the pointer
RULE_3_WORDS = ("align", "base", "address", "data_ptr", "boundary", "pointer", "对齐", "地址")
RULE_CASES = [  # (what, tensor maker, words one of which the message must hold)
    (
        "b.t() of a row-major (64, 48)",
        lambda: torch.zeros(64, 48, dtype=torch.float16, device=DEVICE).t(),
        RULE_1_WORDS,
    ),
    ("fp16 (8, 7): rows of 14 bytes", lambda: torch.zeros(8, 7, dtype=torch.float16, device=DEVICE), ("16",)),
    (
        "every other column",
        lambda: torch.zeros(8, 64, dtype=torch.float32, device=DEVICE)[:, ::2],
        RULE_1_WORDS,
    ),
    ("base 4 bytes past 16", lambda: unaligned(8, 32, torch.float16), RULE_3_WORDS),
    # 8 bytes off: a check against 8 bytes, not 16, passes the 4-byte case and lets this one through
    (
        "fp16 base 8 bytes past 16",
        lambda: unaligned(8, 32, torch.float16, 8),
        RULE_3_WORDS,
    ),
    (
        "fp32 base 8 bytes past 16",
        lambda: unaligned(4, 8, torch.float32, 8),
        RULE_3_WORDS,
    ),
    # rows of 72 bytes: a multiple of 8, and of 16 only if the size of an element is taken as 4, not 2
    ("fp16 (1, 7): one row of 14 bytes", lambda: torch.zeros(1, 7, dtype=torch.float16, device=DEVICE), ("16",)),
    ("fp16 (8, 36): rows of 72 bytes", lambda: torch.zeros(8, 36, dtype=torch.float16, device=DEVICE), ("16",)),
    # fp32 rows of 24 bytes: a rule checked on 2-byte elements alone (the fp16 cases above) lets them through
    ("fp32 (8, 6): rows of 24 bytes", lambda: torch.zeros(8, 6, dtype=torch.float32, device=DEVICE), ("16",)),
    # one column, but 2 elements from one to the next: the descriptor still wants stride(1) = 1
    (
        "one column of every other",
        lambda: torch.zeros(8, 16, dtype=torch.float16, device=DEVICE)[:, ::2][:, :1],
        RULE_1_WORDS,
    ),
]  # the rule's key word, as §3.2 lists them, in English (any case) or Chinese


def takes(t5, t):
    """Whether tma_problem finds nothing wrong with t (an error it raises: not taken)."""
    try:
        return t5.tma_problem(t, "t") is None
    except Exception:  # noqa: BLE001 - a probe's own failure is told by the case that meets it
        return False


def keeps_rule_1(t5, t):
    """Whether tma_problem says nothing of rule 1 about t (nothing at all, or another rule's words)."""
    try:
        problem = t5.tma_problem(t, "t")
    except Exception:  # noqa: BLE001 - a probe's own failure is told by the case that meets it
        return False
    return problem is None or not any(w in problem.lower() for w in RULE_1_WORDS)


def column_major():
    """fp16 (16, 64) in column-major order: strides (1, 16), an aligned base: rule 1 broken (and rule 2, read on
    stride(0))."""
    return torch.zeros(64, 16, dtype=torch.float16, device=DEVICE).t()


def counts_elements(t5):
    """Whether tma_problem judges rule 2 by the row stride in elements, not bytes: it refuses fp32 rows of 4
    and 8 elements (16 and 32 bytes, both legal) and takes fp16 rows of 16 (32 bytes), as `stride(0) % 16`
    does and a rule of 32 bytes, say, does not."""
    rows = [torch.zeros(2, n, dtype=dt, device=DEVICE) for n, dt in ((4, torch.float32), (8, torch.float32))]
    try:
        return (
            all(t5.tma_problem(t, "x") for t in rows) and t5.tma_problem(rows[0].new_zeros(2, 16).half(), "x") is None
        )
    except Exception:  # noqa: BLE001 - a tma_problem that raises here is judged by the checks themselves
        return False


def counts_two_bytes(t5):
    """Whether tma_problem counts 2 bytes per element whatever the dtype (stride(0) * 2): it refuses fp32 rows of 4
    elements (16 bytes, legal) and takes fp32 rows of 8 and fp16 rows of 8 (32 and 16 bytes), as neither a rule in
    elements nor one of more bytes does."""
    rows = [torch.zeros(2, 8, dtype=dt, device=DEVICE) for dt in (torch.float32, torch.float16)]
    try:
        return bool(t5.tma_problem(rows[0][:, :4].contiguous(), "x")) and not any(t5.tma_problem(t, "x") for t in rows)
    except Exception:  # noqa: BLE001 - a tma_problem that raises here is judged by the checks themselves
        return False


@pytest.mark.t5_2
def test_tma_problem_accepts_legal_tensors(t5):
    for what, t in [
        (("fp16 (64, 48)", "fp16 (64, 48)"), torch.zeros(64, 48, dtype=torch.float16, device=DEVICE)),
        (("fp32 (5, 4)", "fp32 (5, 4)"), torch.zeros(5, 4, dtype=torch.float32, device=DEVICE)),
        (("行距补齐过的视图 fp16 (9, 24)", "a padded view fp16 (9, 24)"), padded(9, 24, torch.float16)[0]),
        # 16 bytes past a 64-byte boundary: 16-byte aligned, and not 32 (16 fp16 elements) or 64 (16 fp32 ones)
        (
            ("基址越过 64 字节边界 16 字节的 fp16 (8, 32)", "fp16 (8, 32) based 16 bytes past 64"),
            unaligned(8, 32, torch.float16, 16),
        ),
        (
            ("基址越过 64 字节边界 16 字节的 fp32 (4, 8)", "fp32 (4, 8) based 16 bytes past 64"),
            unaligned(4, 8, torch.float32, 16),
        ),
    ]:
        problem = t5.tma_problem(t, "x")
        if problem is not None:
            # an empty line is no verdict: the host code asks `is None`, and "" is not
            said = (
                (
                    "却返回了空字符串 ''，不是 None：合规的张量要返回 None",
                    "returned an empty string '', not None: a tensor that keeps the rules gets None",
                )
                if problem == ""
                else (
                    f"却返回了 {problem!r}，不是 None：合规的张量要返回 None，不合规的返回一行字"
                    "（host 问的是 is None）",
                    f"returned {problem!r}, not None: a tensor that keeps the rules gets None, one that breaks one a "
                    "line of words (the host asks `is None`)",
                )
                if not isinstance(problem, str)  # hunt16: False for a legal tensor crashed this check
                else (f"却说：{problem}", f"says: {problem}")
            )
            words = problem.lower() if isinstance(problem, str) else ""
            rule_3, rule_1, rule_2 = (any(w in words for w in ws) for ws in (RULE_3_WORDS, RULE_1_WORDS, ("16",)))
            # a row of 18 bytes, contiguous and aligned: rule 2 alone broken
            odd_rows = torch.zeros(4, 9, dtype=torch.float16, device=DEVICE)
            if (
                t.stride(0) * t.element_size() % 16 == 0
                and rule_2
                and not rule_1
                and not rule_3
                and takes(t5, odd_rows)
            ):
                said = (  # hunt16: its own words alone were shown
                    f"{said[0]}：它的行距是 {t.stride(0) * t.element_size()} 字节，是 16 的倍数，却被判违反规矩 2，"
                    "而每行 18 字节的张量它反倒接受：行距的判断反了（% 16 == 0 当成了违规）；违规的是 "
                    "(stride(0) * element_size()) % 16 != 0",
                    f"{said[1]}: its rows are {t.stride(0) * t.element_size()} bytes apart, a multiple of 16, yet it "
                    "breaks rule 2 there, while a tensor with 18-byte rows is taken: the row-stride test is turned "
                    "round (% 16 == 0 taken as the offence); the offence is (stride(0) * element_size()) % 16 != 0",
                )
            elif (
                t.stride(0) * t.element_size() % 16 == 0
                and rule_2
                and not (rule_1 or rule_3)
                and (
                    on_stride_1 := rule_2_on_stride_1(t5)  # left37: its own words alone were shown
                )
            ):
                said = (f"{said[0]}：{on_stride_1[0]}", f"{said[1]}: {on_stride_1[1]}")
            elif t.data_ptr() % 16 == 0 and rule_3 and takes(t5, unaligned(8, 32, torch.float16, 8)):
                said = (  # hunt16: told as 16 elements or more bytes
                    f"{said[0]}：它的基址是 16 的倍数，却被判违反规矩 3，"
                    "而基址越过 16 字节边界 8 字节的张量它反倒接受：对齐的判断反了（data_ptr() % 16 == 0 当成了违规）；"
                    "违规的是 data_ptr() % 16 != 0",
                    f"{said[1]}: its base is a multiple of 16, yet it breaks rule 3 there, while a tensor based 8 "
                    "bytes past a 16-byte boundary is taken: the alignment test is turned round (data_ptr() % 16 == 0 "
                    "taken as the offence); the offence is data_ptr() % 16 != 0",
                )
            elif t.data_ptr() % 16 == 0 and rule_3:
                said = (
                    f"{said[0]}：它的基址 {t.data_ptr()} 是 16 的倍数（mod 16 = 0），规矩 3 要的是 16 字节对齐，"
                    "不是 16 个元素，也不是更多字节",
                    f"{said[1]}: its base {t.data_ptr()} is a multiple of 16 (mod 16 = 0); rule 3 asks for 16 bytes, "
                    "not 16 elements or more bytes",
                )
            elif t.stride(0) % 16 and counts_elements(t5):
                said = (
                    f"{said[0]}：它拿元素个数来量行距：规矩 2 数的是字节，stride(0) * element_size() = "
                    f"{t.stride(0) * t.element_size()}；它拒绝每行 4 个和 8 个元素的 fp32（16 和 32 字节），"
                    "却接受每行 16 个元素的 fp16（32 字节）",
                    f"{said[1]}: it measures the row stride in elements: rule 2 counts bytes, stride(0) * "
                    f"element_size() = {t.stride(0) * t.element_size()}; it refuses fp32 rows of 4 and 8 elements "
                    "(16 and 32 bytes), yet takes fp16 rows of 16 (32 bytes)",
                )
            elif t.stride(1) == 1 and rule_1 and t.stride(0) != 1 and keeps_rule_1(t5, column_major()):
                said = (  # hunt16: its own words alone were shown
                    f"{said[0]}：它的 stride(1) 是 1，却被判违反规矩 1，而 stride 为 (1, 16) 的列主序张量它倒不说违反"
                    "规矩 1：规矩 1 查的是 stride(0)；要查最后一维，stride(1) == 1",
                    f"{said[1]}: its stride(1) is 1, yet it breaks rule 1 there, while a column-major tensor of "
                    "strides (1, 16) is not said to break rule 1: rule 1 was checked on stride(0); it is about the "
                    "last dimension, stride(1) == 1",
                )
            elif t.stride(1) == 1 and rule_1 and not t.is_contiguous():
                said = (
                    f"{said[0]}：它的 stride(1) 是 1，tma_problem 却用规矩 1 的话拒绝了它：规矩 1 只要最后一维连续，"
                    "stride(1) == 1；一个从更宽的行里切出来的视图满足它（torch 的 is_contiguous() 要的更多：整个张量"
                    "中间没有空隙，这个视图的行与行之间有）",
                    f"{said[1]}: its stride(1) is 1, yet tma_problem refuses it in rule 1's words: rule 1 asks only "
                    "that the last dimension be contiguous, stride(1) == 1, which a view cut from wider rows keeps "
                    "(torch's is_contiguous() asks more, a whole tensor without gaps, and this view has gaps between "
                    "its rows)",
                )
            elif t.element_size() != 2 and counts_two_bytes(t5):
                said = (
                    f"{said[0]}：它不管 dtype，每个元素都按 2 个字节算：它拒绝每行 4 个元素的 fp32（16 字节），却接受"
                    f"每行 8 个元素的 fp32 和 fp16（32 和 16 字节）；规矩 2 的字节数是 stride(0) * element_size() = "
                    f"{t.stride(0) * t.element_size()}",
                    f"{said[1]}: it counts 2 bytes per element whatever the dtype: it refuses fp32 rows of 4 elements "
                    "(16 bytes), yet takes fp32 and fp16 rows of 8 (32 and 16 bytes); rule 2's bytes are stride(0) * "
                    f"element_size() = {t.stride(0) * t.element_size()}",
                )
            fail(
                T5,
                f"{what[0]}（stride {tuple(t.stride())}）满足 TMA 的三条规矩，tma_problem {said[0]}",
                f"{what[1]} (strides {tuple(t.stride())}) keeps TMA's three rules, yet tma_problem {said[1]}",
                "3.2",
            )


def offset(rows, cols, dtype, off_bytes, t=False):
    """A row-major (rows, cols) tensor whose base is off_bytes past a 16-byte boundary; t: its transpose."""
    x = unaligned(rows, cols, dtype, off_bytes) if off_bytes else torch.zeros(rows, cols, dtype=dtype, device=DEVICE)
    return x.t() if t else x


# §3.2's three rules, in the order tma_problem checks them: (Chinese, English)
RULES = (("最后一维连续", "contiguous"), ("行距是 16 字节的倍数", "row stride"), ("基地址 16 字节对齐", "base address"))
# fp16 tensors that break two or three rules, each with one that breaks each of those rules alone (as
# like it as the rule lets it be): (what, the tensor, {rule: a tensor breaking that rule alone})
SEVERAL_RULES = [
    (
        "fp16 (48, 64).t(): strides (1, 64), rows 2 bytes apart",
        lambda: offset(48, 64, torch.float16, 0, t=True),
        {
            0: lambda: torch.zeros(48, 128, dtype=torch.float16, device=DEVICE)[:, ::2],
            1: lambda: offset(64, 47, torch.float16, 0),
        },
    ),
    (
        "every other column of an fp16 (48, 128), base 4 bytes past 16",
        lambda: unaligned(48, 128, torch.float16)[:, ::2],
        {
            0: lambda: torch.zeros(48, 128, dtype=torch.float16, device=DEVICE)[:, ::2],
            2: lambda: offset(48, 64, torch.float16, 4),
        },
    ),
    (
        "fp16 (48, 47), base 4 bytes past 16",
        lambda: offset(48, 47, torch.float16, 4),
        {1: lambda: offset(48, 47, torch.float16, 0), 2: lambda: offset(48, 64, torch.float16, 4)},
    ),
    (
        "fp16 (47, 48).t(), base 4 bytes past 16",
        lambda: offset(47, 48, torch.float16, 4, t=True),
        {
            0: lambda: torch.zeros(48, 128, dtype=torch.float16, device=DEVICE)[:, ::2],
            1: lambda: offset(48, 47, torch.float16, 0),
            2: lambda: offset(48, 64, torch.float16, 4),
        },
    ),
]


def shape_of(message):
    """A message with its numbers taken out, hexadecimal ones too (an address printed as 0x7f3a...): what
    one check of tma_problem says, whatever the tensor."""
    return re.sub(r"0[xX][0-9a-fA-F]+|\d+", "#", message)


# The cases of RULE_CASES and SEVERAL_RULES in Chinese: their ids stay the English words (mutants name them)
ZH_CASES = {
    "b.t() of a row-major (64, 48)": "行主序 (64, 48) 的 b.t()",
    "fp16 (8, 7): rows of 14 bytes": "fp16 (8, 7)：每行 14 字节",
    "every other column": "隔一列取一列的视图",
    "base 4 bytes past 16": "基地址在 16 字节边界后 4 字节",
    "fp16 base 8 bytes past 16": "fp16，基地址在 16 字节边界后 8 字节",
    "fp32 base 8 bytes past 16": "fp32，基地址在 16 字节边界后 8 字节",
    "fp16 (1, 7): one row of 14 bytes": "fp16 (1, 7)：只有一行，14 字节",
    "fp16 (8, 36): rows of 72 bytes": "fp16 (8, 36)：每行 72 字节",
    "fp32 (8, 6): rows of 24 bytes": "fp32 (8, 6)：每行 24 字节",
    "one column of every other": "隔一列取一列的视图里的一列",
    "fp16 (48, 64).t(): strides (1, 64), rows 2 bytes apart": "fp16 (48, 64).t()：stride (1, 64)，行距 2 字节",
    "every other column of an fp16 (48, 128), base 4 bytes past 16": (
        "fp16 (48, 128) 隔一列取一列，基地址在 16 字节边界后 4 字节"
    ),
    "fp16 (48, 47), base 4 bytes past 16": "fp16 (48, 47)，基地址在 16 字节边界后 4 字节",
    "fp16 (47, 48).t(), base 4 bytes past 16": "fp16 (47, 48).t()，基地址在 16 字节边界后 4 字节",
}


@pytest.mark.t5_2
@pytest.mark.parametrize("case", SEVERAL_RULES, ids=lambda c: c[0])
def test_tma_problem_reports_the_first_rule_broken(t5, case):
    """§3.2: the three rules are checked in order and the first one broken is reported.  Which check a
    message comes from is told by what tma_problem says of a tensor breaking that rule alone: the same
    words, numbers aside."""
    what, make, alone = case
    t = make()
    first = min(alone)
    problem = t5.tma_problem(t, "tensor_q")
    said = {rule: t5.tma_problem(other(), "tensor_q") for rule, other in alone.items()}
    if said[first] is None:
        fail(
            T5,
            f"{ZH_CASES[what]}：tma_problem 对只违反“{RULES[first][0]}”这条规矩的张量返回 None，这条它没有查；"
            "三条都要查，按顺序报第一条违反的",
            f"{what}: tma_problem returns None for a tensor that breaks the {RULES[first][1]} rule alone, so it "
            "does not check that rule; check all three, in order, and report the first one broken",
            "3.2",
        )
    if problem is None:
        fail(
            T5,
            f"{ZH_CASES[what]}（stride {tuple(t.stride())}）违反 TMA 的规矩，tma_problem 却返回 None",
            f"{what} (strides {tuple(t.stride())}) breaks TMA's rules, yet tma_problem returned None",
            "3.2",
        )
    shapes = {rule: shape_of(m) for rule, m in said.items() if m is not None}
    if shapes.get(first) == shape_of(problem) or list(shapes.values()).count(shape_of(problem)) != 1:
        return  # the first rule's words, or words that no single check alone says (both rules, say)
    later = next(rule for rule, s in shapes.items() if s == shape_of(problem))
    broken = ["、".join(RULES[r][0] for r in sorted(alone)), ", ".join(RULES[r][1] for r in sorted(alone))]
    fail(
        T5,
        f"{ZH_CASES[what]} 违反了 {len(alone)} 条规矩（{broken[0]}），tma_problem 报的是“{RULES[later][0]}”那条"
        f"（和只违反它的张量得到的说法一样：{problem}）；三条要按顺序查，报第一条违反的：先连续，再行距，"
        f"最后基地址，这里是“{RULES[first][0]}”",
        f"{what} breaks {len(alone)} rules ({broken[1]}), and tma_problem reports the {RULES[later][1]} rule "
        f"(the words it says of a tensor breaking that rule alone: {problem}); check the three in order and "
        "report the first one broken: contiguous, then the row stride, then the base address, here the "
        f"{RULES[first][1]} rule",
        "3.2",
    )


# fp16 tensors that break each rule alone: what tma_problem says of each is that rule's words, as the learner wrote them
ALONE = (
    lambda: torch.zeros(48, 128, dtype=torch.float16, device=DEVICE)[:, ::2],
    lambda: offset(48, 47, torch.float16, 0),
    lambda: offset(48, 64, torch.float16, 4),
)


def in_own_words(t5, rule, problem):
    """Whether problem is what tma_problem says of a tensor breaking rule alone (numbers aside), and the three rules
    are said three ways: the rule named in the learner's own words ("has strides (1, 64): for TMA the last one must
    be 1", "begins at 0x7f..., 4 bytes off a multiple of 16"), where RULE_1_WORDS and RULE_3_WORDS miss them."""
    said = [t5.tma_problem(make(), "tensor_q") for make in ALONE]
    if None in said:
        return False
    shapes = [shape_of(m) for m in said]
    return len(set(shapes)) == 3 and shape_of(problem) == shapes[rule]


@pytest.mark.t5_2
@pytest.mark.parametrize("case", RULE_CASES, ids=lambda c: c[0])
def test_tma_problem_names_the_tensor_and_the_rule(t5, case):
    what, make, words = case
    t = make()
    problem = t5.tma_problem(t, "tensor_q")
    if problem is None:
        broken = tma_rule_broken(t)
        fail(
            T5,
            f"{ZH_CASES[what]}（stride {tuple(t.stride())}）违反 TMA 的规矩：{broken[0]}；tma_problem 却返回 None，"
            "这条规矩它没有查出来",
            f"{what} (strides {tuple(t.stride())}) breaks a TMA rule: {broken[1]}; yet tma_problem returned None, "
            "so it lets that rule's offenders through",
            "3.2",
        )
    rule = {RULE_1_WORDS: 0, ("16",): 1, RULE_3_WORDS: 2}[words]
    named = any(w in problem.lower() for w in words) or in_own_words(t5, rule, problem)
    if "tensor_q" not in problem or not named:
        cause = rule_2_on_stride_1(t5) if rule != 1 else None  # left37: rule 2's words for every tensor
        cause = (f"；{cause[0]}", f"; {cause[1]}") if cause else ("", "")
        fail(
            T5,
            f"{ZH_CASES[what]}：说明里要有张量名 tensor_q 和违反的规矩（含 {' / '.join(words)} 之一，"
            f"或者三条规矩各有各的说法），得到 {problem!r}{cause[0]}",
            f"{what}: the message must name the tensor (tensor_q) and the rule (one of {' / '.join(words)}, or "
            f"each rule said its own way), got {problem!r}{cause[1]}",
            "3.2",
        )
