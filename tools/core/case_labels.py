"""A test's parametrize cases in words, for make test STEP='s "which cases pass" and its failure
blocks: the ids one per parametrize mark (case_ids), and a label per id (case_labels: "M=45 N=37
K=83 BLOCK 16x32x16" for 45-37-83-16-32-16).  Apart from the plugin because it reads pytest's
items only, and is most of the plugin's length; the plugin stores both in its report."""

import re

from course.i18n import lang


def case_ids(item):
    """One id per parametrize mark: pytest joins them with "-" in the node id, and an id may hold a
    "-" itself (row-major), so they are read from the call spec, not split out of the node id."""
    spec = getattr(item, "callspec", None)
    ids = list(getattr(spec, "_idlist", ()) or ())
    if not ids and "[" in item.nodeid:  # a pytest without _idlist: the whole id as one part
        ids = [item.nodeid.split("[", 1)[1].rstrip("]")]
    return ids


def _groups(item):
    """The argument names of each parametrize mark of item, with the mark, in the order of its ids
    (pytest adds a mark's arguments to the call spec, and its id to the id list, mark by mark)."""
    spec = getattr(item, "callspec", None)
    if spec is None:
        return []
    order = list(spec.params)
    groups = []
    for mark in item.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", ())
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        names = [n for n in names if n in spec.params]
        if names:
            groups.append((names, mark))
    return sorted(groups, key=lambda g: order.index(g[0][0]))


# How an argument's value reads in a case's label, by its type; a test may say more for an argument
# with the case_words mark: @pytest.mark.case_words(layout=say(zh="A 为 {}", en="A {}")), a number
# put in as it is (tokens=say(zh="{} 个 token", en="{} tokens")), or a function of the value.  Ids the
# test gave itself (ids=[...]) are English, kept so in node ids; case_words(id_zh={id: words}) says them
# in Chinese to a learner who reads Chinese, an id missing from the dict as it is.
BLOCK = ("bm", "bn", "bk")  # the suite's names of BLOCK_M, BLOCK_N, BLOCK_K


def _value_words(name, value, words):
    """One argument of a case in words, or None for a value with no words (a function)."""
    if name in words:
        if callable(words[name]):
            return words[name](value)
        plain = isinstance(value, (str, int, float)) and not isinstance(value, bool)
        return words[name].format(value if plain else _value_words(name, value, {}))
    if callable(value) and not isinstance(value, type):
        return None
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return str(value).removeprefix("torch.")
    if isinstance(value, str) and re.search(r"[^\w]", value):
        return value  # words already: "row-major", "b = W.t()", "fp16 with odd K = 33"
    return f"{name}={value}"


def _mark_words(names, values, given, words):
    """A label for one parametrize mark's values: the test's own ids when it gave some (ids=[...] or
    a function other than str, or pytest.param(id=...)), else its arguments in words, the block
    sizes as BLOCK 16x32x16: "M=45 N=37 K=83 BLOCK 16x32x16" for 45-37-83-16-32-16."""
    if given is not None:
        return words.get(f"id_{lang()}", {}).get(given, given.removeprefix("torch."))
    parts, block = [], [n for n in BLOCK if n in names]
    for name, value in zip(names, values, strict=True):
        if name in block and name not in words:
            if name == block[0]:
                sizes = "x".join(str(values[names.index(n)]) for n in block)
                parts.append(f"BLOCK {sizes}" if len(block) > 1 else f"BLOCK_{name[1].upper()}={sizes}")
            continue
        said = _value_words(name, value, words)
        if said is not None:
            parts.append(said)
    return " ".join(parts)


def case_labels(item):
    """A test's parametrize ids in words, one label per id: for test_k_block_loop's id
    17-50-70-0-3-True-torch.float16, ["M=17 N=50 K=70 kb_begin=0 kb_end=3 kmajor=True", "float16"].
    The node ids stay as they are (seeds, and tools that name a case, are made from them)."""
    spec = getattr(item, "callspec", None)
    ids = case_ids(item)
    groups = _groups(item)
    if spec is None or len(groups) != len(ids):
        return list(ids)
    words = {}
    for mark in item.iter_markers("case_words"):
        words = {**mark.kwargs, **words}  # the closest mark first
    try:
        return [
            _mark_words(names, values, given if _given_by_the_test(mark, values, given) else None, words)
            for (names, mark), given in zip(groups, ids, strict=True)
            for values in [[spec.params[n] for n in names]]
        ]
    except Exception:  # noqa: BLE001 - a label is for reading only: pytest's ids rather than no run
        return list(ids)


def _given_by_the_test(mark, values, id_):
    """Whether the test chose this id itself: ids=[...] or a function (not str, which only spells
    each value), or pytest.param(id=...) for values whose own id would read otherwise."""
    chosen = mark.kwargs.get("ids")
    if chosen is not None and chosen is not str:
        return True
    plain = all(isinstance(v, (str, int, float, bool, type(None))) for v in values)
    return plain and id_ != "-".join(map(str, values))
