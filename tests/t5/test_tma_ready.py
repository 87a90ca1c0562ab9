"""Lesson T5.2's tma_ready (§3.2): operands that keep TMA's rules go through as they are (W.t() read
K-major), the others are copied or, with fallback=False, refused with a message naming the operand and
the rule.  tma_problem's own checks are in test_tma_rules.py."""

import gc
import re
import weakref

import pytest
import torch

from course.messages import fail

from .common import T5, ready, three_values, tma_rule_broken
from .copies import BytesWritten, fail_if_copied_more_than_once
from .fallback import ready_with_fallback
from support import padded, random

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T5.2 TMA tensor descriptors: tma_ready
# ================================================================================================
def ready_k_major(t5, a, w, fallback):
    """tma_ready(a, w.t(), fallback) for a w whose rows keep TMA's rules: an error raised is named as the
    refusal of a b that TMA reads K-major as it is (a strict mode that refuses before trying b.t())."""
    try:
        got = t5.tma_ready(a, w.t(), fallback)
    except (ValueError, TypeError) as e:
        fail(
            T5,
            f"tma_ready(a, b = W.t(), fallback={fallback}) 抛出了 {type(e).__name__}：{e}；W 是 stride "
            f"{tuple(w.stride())} 的行主序 (N, K)，b.t() 就是 W，TMA 按 K-major 直接能读：先试 b.t()，再决定拒绝",
            f"tma_ready(a, b = W.t(), fallback={fallback}) raised {type(e).__name__}: {e}; W is row-major (N, K) "
            f"with strides {tuple(w.stride())}, so b.t() is W, which TMA reads K-major as it is: try b.t() "
            "before refusing",
            "3.2",
        )
    return three_values(got)


@pytest.mark.t5_2
def test_tma_ready_reads_b_t_k_major_without_a_copy(t5):
    """nn.Linear keeps W as (N, K): x @ W.t() must not copy W, in either mode."""
    a, w = random((40, 64), torch.float16), random((24, 64), torch.float16)
    for fallback in (True, False):
        a2, b2, kmajor = ready_k_major(t5, a, w, fallback)
        # marked K-major but b left as it came, (K, N): then it breaks rule 1 and is copied
        untransposed = kmajor and tuple(b2.shape) == (64, 24)
        if not kmajor or b2.data_ptr() != w.data_ptr() or tuple(b2.shape) != (24, 64):
            fail(
                T5,
                f"b = W.t()，W 是行主序的 (24, 64)：应当按 K-major 直接读 W（b_kmajor=True，返回的 b 就是 W，"
                f"不复制）；得到 b_kmajor={kmajor}，shape {tuple(b2.shape)}"
                + ("、另一块内存（复制了）" if b2.data_ptr() != w.data_ptr() else "")
                + (
                    "：标成了 K-major，返回的 b 却还是传进来的 b 的形状 (K, N)，不是 b.t() 的 (N, K)：b_kmajor=True "
                    "时把 b 换成 b.t()（就是 W 本身，合规，不用复制）"
                    if untransposed
                    else ""
                ),
                f"b = W.t() with W a row-major (24, 64): read W K-major as it is (b_kmajor=True, the b returned "
                f"is W itself, no copy); got b_kmajor={kmajor}, shape {tuple(b2.shape)}"
                + (", other memory (a copy)" if b2.data_ptr() != w.data_ptr() else "")
                + (
                    ": marked K-major, yet the b returned has the shape (K, N) of the b passed in, not the (N, K) of "
                    "b.t(): with b_kmajor=True, b becomes b.t() (W itself, which keeps the rules: no copy)"
                    if untransposed
                    else ""
                ),
                "3.2",
            )
        if a2.data_ptr() != a.data_ptr():
            fail(T5, "a 本来就合规，不该复制", "a keeps the rules already: it must not be copied", "3.2")


@pytest.mark.t5_2
def test_tma_ready_keeps_no_reference_to_its_tensors(t5):
    """Once tma_ready has returned and the caller lets go of a, b and what came back, nothing may hold them:
    a list or cache of the operands seen keeps every activation of a model alive.  Three calls: legal
    operands, b = W.t() read K-major, an a that has to be copied (fp16 with odd K)."""
    calls = {  # (zh, en) case: the operands
        ("a、b 都是行主序", "a, b row-major"): lambda: (
            random((40, 64), torch.float16),
            random((64, 48), torch.float16),
        ),
        ("b = W.t()", "b = W.t()"): lambda: (random((40, 64), torch.float16), random((48, 64), torch.float16).t()),
        ("fp16，K = 33 是奇数", "fp16 with odd K = 33"): lambda: (
            random((40, 33), torch.float16),
            random((33, 48), torch.float16),
        ),
    }
    for (case_zh, case), make in calls.items():
        a, b = make()
        out = ready_with_fallback(t5, a, b, case_zh, case)
        refs = weak_refs(a, b, out)
        del a, b, out
        gc.collect()
        held = [names for names, ref in refs.items() if ref() is not None]
        if held:
            zh, en = "、".join(zh for zh, _ in held), ", ".join(en for _, en in held)
            fail(
                T5,
                f"{case_zh}：tma_ready 返回、调用者也放手之后，{zh} 还被留着（列表、缓存或默认参数里）："
                "模型的每个输入都会一直占着内存；tma_ready 在调用结束后什么张量都不要留",
                f"{case}: after tma_ready returned and the caller let go, {en} still held (in a list, a cache or a "
                "default argument): every input of a model would stay in memory; tma_ready keeps no tensor past "
                "the call",
                "3.2",
            )


def weak_refs(a, b, out):
    """{(zh, en) name: a weak reference} to a, b and the tensors among the first two values tma_ready returned
    (a wrong count of values is another test's to name)."""
    refs = {("a", "a"): weakref.ref(a), ("b", "b"): weakref.ref(b)}
    for n, t in zip("ab", out[:2], strict=False):
        if torch.is_tensor(t):
            refs[(f"返回的 {n}", f"the {n} it returned")] = weakref.ref(t)
    return refs


@pytest.mark.t5_2
def test_tma_ready_leaves_legal_views_alone(t5):
    """Views whose rows are padded (a slice of wider rows) keep TMA's rules: read as they are, not copied."""
    a, b = padded(20, 24, torch.float16)[0], padded(24, 40, torch.float16)[0]
    w = padded(40, 24, torch.float16)[0]  # b = w.t(): a padded W, read K-major as it is
    for fallback in (True, False):
        _, b2, kmajor = ready_k_major(t5, a, w, fallback)
        if not kmajor or b2.data_ptr() != w.data_ptr() or b2.stride() != w.stride():
            fail(
                T5,
                f"b = W.t()，W 是 stride {tuple(w.stride())} 的视图（行有填充），"
                f"满足 TMA 的规矩（fallback={fallback}）："
                f"应当按 K-major 直接读 W，不复制；得到 b_kmajor={kmajor}、stride {tuple(b2.stride())}"
                + ("、另一块内存（复制了）" if b2.data_ptr() != w.data_ptr() else ""),
                f"b = W.t() with W a view with strides {tuple(w.stride())} (padded rows) that keeps TMA's rules "
                f"(fallback={fallback}): read W K-major as it is, no copy; got b_kmajor={kmajor}, strides "
                f"{tuple(b2.stride())}" + (", other memory (a copy)" if b2.data_ptr() != w.data_ptr() else ""),
                "3.2",
            )
        a2, b2, kmajor = ready(t5, a, b, fallback)
        if b2.data_ptr() == w.data_ptr():  # W is the call before's operand alone: no right answer for b is W
            fail(
                T5,
                f"tma_ready(a, b) 返回的 b 是上一次调用（b = W.t()，形状相同）的 W，b_kmajor={kmajor}："
                "第一次调用的结果被留下来，又交给了拿着别的张量的这一次；每次调用的结果要由它拿到的张量算出来",
                f"tma_ready(a, b) returned as b the W of the call before (b = W.t(), of the same shapes), "
                f"b_kmajor={kmajor}: an earlier call's result was kept and handed to this call, which was given "
                "other tensors; work each call's result out from the tensors it is given",
                "3.2",
            )
        for name, got, given in (("a", a2, a), ("b", b2, b)):
            if kmajor or got.data_ptr() != given.data_ptr() or got.stride() != given.stride():
                fail(
                    T5,
                    f"{name} 是 stride {tuple(given.stride())} 的视图，满足 TMA 的规矩（fallback={fallback}）："
                    f"应当原样返回，不复制；得到 stride {tuple(got.stride())}、b_kmajor={kmajor}"
                    + ("、另一块内存" if got.data_ptr() != given.data_ptr() else ""),
                    f"{name} is a view with strides {tuple(given.stride())} that keeps TMA's rules "
                    f"(fallback={fallback}): return it as it is, no copy; got strides {tuple(got.stride())}, "
                    f"b_kmajor={kmajor}" + (", other memory" if got.data_ptr() != given.data_ptr() else ""),
                    "3.2",
                )


# The rule's key words for tma_ready's error (§3.2 names them for tma_problem, whose text it may reuse):
CONTIGUOUS = ("contiguous", "stride", "column-major", "row-major", "row major", "innermost", "transpos", "连续", "步长")


ROWS_16 = ("16",)


RULE_OF_CASE = {  # test_tma_ready_copies_or_refuses's cases: the rule each breaks
    "fp16 with odd K = 33": ROWS_16,
    "fp16 with odd N = 21": ROWS_16,
    "column-major a": CONTIGUOUS,
    "b = W.t(), W fp16 (48, 45)": CONTIGUOUS + ROWS_16,  # b breaks rule 1, and W = b.t() rule 2
    "column-major a, b = W.t()": CONTIGUOUS,
}


def names_operand(message, x, t5=None, t=None):
    """Whether message names operand x as a token of its own ("b:", 'b', "rows of b", "张量 b"; not "bias"),
    in either case: the explainers write the operands A and B, and a learner's labels may too ("B: ...").
    "a" is also the English article, which a noun follows ("must be a multiple of 16"): an "a" followed
    by a space and a word counts only where a clause starts (the message's start, after "(" or ":"),
    after "tensor", "operand", "input", "matrix", "argument" or "of" ("the rows of a lie 66 bytes
    apart"), or before a word that never follows the article: a verb ("a breaks", "a should"), "to"
    ("TMA needs a to be contiguous"), a preposition or a conjunction ("copy a with ..."), or "operand",
    whose article is "an" ("the A operand has rows ..."); "a:", "(a)", "'a'", "张量 a" count anywhere.
    A capital "A" followed by a word starts a sentence as an article ("A view ..."): it counts only
    before such a word or after one of those nouns ("operand A is ...").  Given the lesson (t5) and x's
    tensor t, a message that holds tma_problem(t, x), the learner's own line for it, names x where that
    line puts x in the place tma_problem(t, "tensor_q") puts tensor_q, whatever the words around it
    ("TMA cannot read a as it is: ..."); test_tma_problem_names_the_tensor_and_the_rule tests that the
    line names its tensor."""
    if t5 is not None and t is not None:
        own, probe = t5.tma_problem(t, x), t5.tma_problem(t, "tensor_q")
        if own and probe and "tensor_q" in probe and probe.replace("tensor_q", x) == own and own in message:
            return True
    for m in re.finditer(rf"(?<![A-Za-z0-9_]){re.escape(x)}(?![A-Za-z0-9_])", message, re.IGNORECASE):
        word = re.match(r" ([A-Za-z]+)", message[m.end() :])
        if x.lower() != "a" or word is None or word[1].lower() in _VERBS | _NOT_AFTER_THE_ARTICLE:
            return True
        before = _AFTER_NOUN if m[0] == "A" else _CLAUSE_START
        if re.search(before, message[: m.start()], re.IGNORECASE):
            return True
    return False


# Words that follow the operand a and never the article a (a verb, a modal, "to", a preposition, a conjunction, a
# relative pronoun, "itself", "here"): "TMA needs a to be contiguous" and "TMA cannot load a whose row stride is 66
# bytes" name a; "must be a multiple of 16" does not.
_VERBS = {
    "is", "are", "was", "were", "has", "have", "had", "must", "should", "would", "could", "can", "cannot", "will",
    "may", "might", "breaks", "violates", "does", "needs", "starts", "lies", "lacks", "fails", "keeps", "holds",
    "to", "with", "without", "in", "into", "on", "at", "from", "for", "and", "or", "but", "if", "when", "because",
    "as", "since", "unless", "than",
    "whose", "which", "itself", "over", "by", "through", "via", "here", "after", "before",
}  # fmt: skip
# Nouns the article a never comes before (it would be "an"): "the A operand has rows 66 bytes apart" names a.
_NOT_AFTER_THE_ARTICLE = {"operand"}
_CLAUSE_START = r"(?:^|[(\"'`:;,]\s*|\b(?:tensor|operand|input|matrix|argument|of)\s+)$"
_AFTER_NOUN = r"\b(?:tensor|operand|input|matrix|argument|of)\s+$"


# The cases of test_tma_ready_copies_or_refuses in Chinese: their ids stay the English words (mutants name them)
ZH_CASES = {
    "fp16 with odd K = 33": "fp16，K = 33 是奇数",
    "fp16 with odd N = 21": "fp16，N = 21 是奇数",
    "column-major a": "列主序的 a",
    "b = W.t(), W fp16 (48, 45)": "b = W.t()，W 是 fp16 的 (48, 45)",
    "column-major a, b = W.t()": "列主序的 a，b = W.t()",
}


@pytest.mark.t5_2
@pytest.mark.parametrize(
    "what, make_a, make_b, bad",
    [
        (
            "fp16 with odd K = 33",
            lambda: random((20, 33), torch.float16),
            lambda: random((33, 16), torch.float16),
            "a",
        ),
        (
            "fp16 with odd N = 21",
            lambda: random((20, 32), torch.float16),
            lambda: random((32, 21), torch.float16),
            "b",
        ),
        (
            "column-major a",
            lambda: random((48, 20), torch.float16).t(),
            lambda: random((48, 16), torch.float16),
            "a",
        ),
        # b = W.t() with W an fp16 (48, 45): column-major, but W's rows are 90 bytes apart, so W itself
        # breaks rule 2 and cannot be read K-major either: b is copied (a, a padded view, keeps the rules)
        (
            "b = W.t(), W fp16 (48, 45)",
            lambda: padded(20, 45, torch.float16)[0],
            lambda: random((48, 45), torch.float16).t(),
            "b",
        ),
        # b read K-major as it is (W keeps the rules), and a still to be copied or refused
        (
            "column-major a, b = W.t()",
            lambda: random((48, 20), torch.float16).t(),
            lambda: random((16, 48), torch.float16).t(),
            "a",
        ),
    ],
)
def test_tma_ready_copies_or_refuses(t5, what, make_a, make_b, bad):
    """Both outcomes: by default an aligned copy (same values, rules kept); with fallback=False a
    ValueError naming the tensor that breaks a rule, and the rule."""
    a, b = make_a(), make_b()
    with BytesWritten() as written:
        a2, b2, kmajor = ready(t5, a, b, True)
    fail_if_copied_more_than_once(written.bytes, {"a": a, "b": b}, {"a": a2, "b": b2}, (ZH_CASES[what], what))
    # read K-major, the b returned is the (N, K) tensor the descriptor is built on: it keeps the rules too
    for name, got, want, read in (("a", a2, a, a2), ("b", b2.t() if kmajor else b2, b, b2)):
        broken = tma_rule_broken(read)  # the suite's check: a wrong tma_problem must not fail tma_ready here
        if broken is not None:
            fail(
                T5,
                f"{ZH_CASES[what]}：tma_ready 返回的 {name}"
                + ("（按 K-major 读的 (N, K) 张量，b_kmajor=True）" if name == "b" and kmajor else "")
                + f" 仍然违反规矩：{broken[0]}"
                + ("。只有 b.t() 本身合规时才能按 K-major 读" if name == "b" and kmajor else "")
                + ("。b 按 K-major 读了（b_kmajor=True），a 照样要检查" if name == "a" and kmajor else ""),
                f"{what}: the {name} tma_ready returns"
                + (" (the (N, K) tensor read K-major, b_kmajor=True)" if name == "b" and kmajor else "")
                + f" still breaks a rule: {broken[1]}"
                + (". Read b K-major only when b.t() itself keeps the rules" if name == "b" and kmajor else "")
                + (
                    ". b was read K-major (b_kmajor=True), and a still has to be checked"
                    if name == "a" and kmajor
                    else ""
                ),
                "3.2",
            )
        if not torch.equal(got, want):
            fail(
                T5,
                f"{ZH_CASES[what]}：tma_ready 返回的 {name} 数值变了",
                f"{what}: the {name} tma_ready returns holds other values",
                "3.2",
            )
    # the same tensors again, their values changed in place (a weight after an update): this call's values
    before = {"a": a.clone(), "b": b.clone()}
    a.add_(1)
    b.add_(1)
    a3, b3, kmajor = ready(t5, a, b, True)
    for name, got, now in (("a", a3, a), ("b", b3.t() if kmajor else b3, b)):
        if not torch.equal(got, now):
            kept = torch.equal(got, before[name])
            fail(
                T5,
                f"{ZH_CASES[what]}：同一个 {name} 原地改了数值（加 1）之后再调用一次，"
                f"tma_ready 返回的 {name} 不是它现在的数值"
                + (
                    "，而是上一次调用时的：tma_ready 留下了上一次的副本（比如按地址或形状缓存）。"
                    "每次调用都要从这次的张量复制"
                    if kept
                    else ""
                ),
                f"{what}: called again on the same {name}, its values changed in place (plus 1), tma_ready returns a "
                f"{name} that does not hold them"
                + (
                    " but the earlier call's: tma_ready kept the earlier call's copy (a cache keyed on the address or "
                    "the shape, say). Copy from this call's tensor at every call"
                    if kept
                    else ""
                ),
                "3.2",
            )
    try:
        t5.tma_ready(a, b, False)
    except TypeError as e:  # raised, but not the ValueError asked for (NotImplementedError goes on: not written yet)
        fail(
            T5,
            f"{ZH_CASES[what]}：fallback=False 时应当抛 ValueError（值不合 TMA 的规矩，不是类型错），"
            f"得到的是 {type(e).__name__}: {e}",
            f"{what}: with fallback=False it must raise ValueError (a value TMA's rules refuse, not a wrong type), "
            f"got {type(e).__name__}: {e}",
            "3.2",
        )
    except ValueError as e:
        if not names_operand(str(e), bad, t5, a if bad == "a" else b):
            fail(
                T5,
                f"{ZH_CASES[what]}：ValueError 要写出违规的张量 {bad}（比如 “{bad}: ...”），得到 {e}",
                f"{what}: the ValueError must name {bad} (as in \"{bad}: ...\"), got {e}",
                "3.2",
            )
        rule = RULE_OF_CASE[what]
        if not any(w in str(e).lower() for w in rule):
            fail(
                T5,
                f"{ZH_CASES[what]}：ValueError 要写出违反的规矩（含 {' / '.join(rule)} 之一），得到 {e}",
                f"{what}: the ValueError must name the rule broken (one of {' / '.join(rule)}), got {e}",
                "3.2",
            )
        return
    fail(
        T5,
        f"{ZH_CASES[what]}：fallback=False 时应当抛 ValueError",
        f"{what}: with fallback=False it must raise ValueError",
        "3.2",
    )
