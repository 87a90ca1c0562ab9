"""Reading the suite's code for its messages (tools/checks/messages.py proves what these find).

The message API is course.messages' functions and course.i18n.say, and nothing else is named here:
which functions of the suite speak in the learner's language, which hand a zh and an en text on,
and which sections a call sends the learner to are all read from the code and the API itself.
"""

import ast
import inspect
import re

from course import i18n, messages

# The API: {name: its parameter names}, read from the functions themselves.
API = {name: list(inspect.signature(getattr(messages, name)).parameters) for name in messages.__all__} | {
    "say": list(inspect.signature(i18n.say).parameters)
}


def _texts(node):
    """The literal text of a message expression: its string constants and f-string parts."""
    return "".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _called(node):
    """Names of the functions a node calls (f(...) and x.f(...))."""
    return {
        n.func.id if isinstance(n.func, ast.Name) else n.func.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))
    }


def _functions(tree):
    return [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]


def speakers(trees):
    """Names whose call gives text in the learner's language: the API's, and every function of the
    files (trees) whose returns are all such text or None, at least one of them text.  Found to a
    fixed point, so a helper built on a helper speaks too."""
    found = set(API)
    functions = [f for tree in trees for f in _functions(tree)]
    while True:
        more = set()
        for f in functions:
            returns = [
                r.value for r in ast.walk(f) if isinstance(r, ast.Return) and r.value is not None and _owner(f, r) is f
            ]
            spoken = [v for v in returns if not (isinstance(v, ast.Constant) and v.value is None)]
            if spoken and all(_called(v) & found for v in spoken) and f.name not in found:
                more.add(f.name)
        if not more:
            return found
        found |= more


def _owner(f, node):
    """The innermost function of f that holds node (f itself when no nested one does)."""
    for inner in _functions(f):
        if inner is not f and any(n is node for n in ast.walk(inner)):
            return _owner(inner, node)
    return f


def forwarders(tree):
    """{name: (position of zh, position of en)} of each call that hands a zh and an en text on to
    say(): the API's that do (fail) and the file's own functions taking zh and en."""
    found = {name: (params.index("zh"), params.index("en")) for name, params in API.items() if "zh" in params}
    for f in _functions(tree):
        params = [a.arg for a in f.args.args]
        if "zh" in params and "en" in params:
            found[f.name] = (params.index("zh"), params.index("en"))
    return found


def say_problems(tree, rel):
    """Each say() gives zh and en, Chinese text in zh and none in en (and so does each call of a
    function that hands its zh and en on, fail(at, zh, en, ...) among them)."""
    problems = []
    passing = forwarders(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in passing):
            continue
        at = passing[node.func.id]
        given = {k: node.args[i] for k, i in zip(("zh", "en"), at, strict=True) if i < len(node.args)}
        given |= {k.arg: k.value for k in node.keywords if k.arg in ("zh", "en")}
        if set(given) == {"zh", "en"} and all(isinstance(v, ast.Name) and v.id in ("zh", "en") for v in given.values()):
            continue  # say(zh=zh, en=en) inside a function that forwards: its callers are checked
        if set(given) != {"zh", "en"}:
            problems.append(f"{rel} line {node.lineno}: {node.func.id}() needs zh= and en=, got {sorted(given)}")
            continue
        if not i18n.has_cjk(_texts(given["zh"])):
            problems.append(f"{rel} line {node.lineno}: the zh text of say() has no Chinese: {_texts(given['zh'])!r}")
        if i18n.has_cjk(_texts(given["en"])):
            problems.append(f"{rel} line {node.lineno}: the en text of say() holds Chinese: {_texts(given['en'])!r}")
    return problems


def unspoken_messages(tree, rel, speaking=None):
    """Every pytest.fail, assert message and static_assert message that does not go through the
    message API.  speaking: speakers() of every file read (default: this file's)."""
    speaking = speakers([tree]) if speaking is None else speaking
    assigned = {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and _called(n.value) & speaking
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    problems = []
    for node in ast.walk(tree):
        message, what = None, None
        if isinstance(node, ast.Assert):
            message, what = node.msg, "assert"
            if message is None:
                problems.append(f"{rel} line {node.lineno}: an assert without a message (the learner sees only code)")
                continue
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr == "fail" and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest":
                message, what = node.args[0], "pytest.fail"
            elif node.func.attr == "static_assert" and len(node.args) > 1:
                message, what = node.args[1], "tl.static_assert"
        names = {n.id for n in ast.walk(message) if isinstance(n, ast.Name)} if message is not None else set()
        if message is not None and not (_called(message) & speaking or names & assigned):
            problems.append(f"{rel} line {node.lineno}: a {what} message not written with say(zh=..., en=...)")
    return problems


# ------------------------------------------------------------------------------------------------
# Which sections a call sends the learner to
# ------------------------------------------------------------------------------------------------
DEPTH = 6  # calls followed back from a parameter to the literal its callers give


class Source:
    """One file's tree, with what it takes to follow a parameter back to its callers' arguments.
    beside: the trees of the other files of its lesson's suite (a folder of files), where a helper's
    callers, and the names they pass, may be; a line "through" one of them is that file's."""

    def __init__(self, tree, beside=()):
        self.tree = tree
        trees = [tree, *beside]
        self.parent = {child: node for t in trees for node in ast.walk(t) for child in ast.iter_child_nodes(node)}
        self.own_calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        self.calls = [n for t in trees for n in ast.walk(t) if isinstance(n, ast.Call)]
        self.module = {
            t.id: node.value
            for tree in reversed(trees)  # the file's own names first
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        self.api = {  # names the file binds to the API: from course.messages import read, fail
            alias.asname or alias.name: alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "course.messages"
            for alias in node.names
        }

    def functions_around(self, node):
        """The functions that hold node, innermost first."""
        found = []
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append(node)
        return found

    def shadowed(self, call):
        """Whether a function around the call defines its own function or parameter of that name."""
        return any(
            call.func.id in [a.arg for a in f.args.args]
            or any(isinstance(n, ast.FunctionDef) and n.name == call.func.id for n in ast.walk(f) if n is not f)
            for f in self.functions_around(call)
        )

    def callers(self, f):
        return [
            c
            for c in self.calls
            if (isinstance(c.func, ast.Name) and c.func.id == f.name)
            or (isinstance(c.func, ast.Attribute) and c.func.attr == f.name)
        ]

    def values(self, node, depth=DEPTH):
        """[(text, line)] of the literals node can stand for, or None where one of them cannot be
        told: a literal, either branch of `x if c else y`, lesson("T5") or step("T4.4"), a name
        assigned once in the file, a parameter, followed to what its callers pass, or TABLE[key] of
        a module-level dict (any of its values)."""
        if depth == 0:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [(node.value, node.lineno)]
        if isinstance(node, ast.IfExp):
            return _both(self.values(node.body, depth), self.values(node.orelse, depth))
        if isinstance(node, (ast.Tuple, ast.List)):
            found = []
            for element in node.elts:
                found = _both(found, self.values(element, depth))
            return found
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):  # TABLE[key]: any of its values
            table = self.module.get(node.value.id)
            if not isinstance(table, ast.Dict):
                return None
            found = []
            for value in table.values:
                found = _both(found, self.values(value, depth - 1))
            return found
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("lesson", "step"):
            return self.values(node.args[0], depth) if len(node.args) == 1 else None
        if isinstance(node, ast.Name):
            return self._name(node, depth)
        return None

    def _name(self, node, depth):
        for f in self.functions_around(node):
            params = [a.arg for a in f.args.args]
            if node.id in params:
                return self._arguments(f, params.index(node.id), node.id, depth)
            local = [value for n in ast.walk(f) if isinstance(n, ast.Assign) for value in _assigned(n, node.id)]
            if local:
                found = []
                for value in local:
                    found = _both(found, self.values(value, depth - 1))
                return found
        return self.values(self.module[node.id], depth - 1) if node.id in self.module else None

    def _arguments(self, f, index, name, depth):
        """What the callers of f pass as its parameter `index` (`name`), else its default."""
        params = f.args.args
        named = [a.arg for a in params[len(params) - len(f.args.defaults) :]]
        defaults = dict(zip(named, f.args.defaults, strict=True))
        method = bool(params) and params[0].arg == "self"
        found, callers = [], self.callers(f)
        for call in callers:
            at = index - (1 if method and isinstance(call.func, ast.Attribute) else 0)
            given = next((k.value for k in call.keywords if k.arg == name), None)
            if (
                given is None
                and at < len(call.args)
                and not any(isinstance(a, ast.Starred) for a in call.args[: at + 1])
            ):
                given = call.args[at]
            found = _both(found, self.values(given if given is not None else defaults.get(name), depth - 1))
        if not callers:
            return self.values(defaults[name], depth - 1) if name in defaults else None
        return found

    def rest(self, call, start, depth=DEPTH):
        """[(text, line)] of the positional arguments of call from `start` on, a `*sections` of the
        function around it followed to what its callers pass there; None where one cannot be told."""
        found = []
        for arg in call.args[start:]:
            if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
                around = next(
                    (f for f in self.functions_around(call) if f.args.vararg and f.args.vararg.arg == arg.value.id),
                    None,
                )
                if around is None:  # a tuple of sections named in the function: sections = ("3", "3.1")
                    found = _both(found, self.values(arg.value, depth))
                    continue
                for caller in self.callers(around):
                    found = _both(found, self.rest(caller, len(around.args.args), depth - 1) if depth > 1 else None)
            else:
                found = _both(found, self.values(arg, depth))
        return found


def _assigned(node, name):
    """The values an assignment gives `name`: x = v, and x, y = v, w."""
    found = []
    for target in node.targets:
        if isinstance(target, ast.Name) and target.id == name:
            found.append(node.value)
        elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
            found += [v for t, v in zip(target.elts, node.value.elts, strict=False) if getattr(t, "id", None) == name]
    return found


def _both(a, b):
    return None if a is None or b is None else a + b


def section_references(source):
    """(line, [(lesson or step id, line)] or None, [(section, line)] or None) for every call of
    read(at, *sections), fail(at, zh, en, *sections) and stub_report(message, sections=...): what
    it names, followed back through parameters; None where that cannot be told."""
    found = []
    for call in source.own_calls:
        name = source.api.get(call.func.id) if isinstance(call.func, ast.Name) else None
        if name is not None and source.shadowed(call):
            continue
        if name is None or "at" not in API[name] and name != "stub_report":
            continue
        if name == "stub_report":
            given = next((k.value for k in call.keywords if k.arg == "sections"), None)
            if given is None or not call.args:
                continue  # the stub's own sections: its step's, or those its message names
            step = source.values(call.args[0])
            at = step and [(text.split()[0], line) for text, line in step]
            found.append((call.lineno, at, source.values(given)))
            continue
        at = source.values(call.args[0]) if call.args else None
        found.append((call.lineno, at, source.rest(call, API[name].index("sections"))))
    return found


EXPLAINER = re.compile(r"content/[\w./-]+\.md")


def explainers_named_by_hand(tree, rel):
    """Each text of the file (docstrings aside) that names an explainer itself, as a helper of its own
    that says where to read would: the check above could not see the sections it names."""
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    return [
        f"{rel} line {n.lineno}: names {EXPLAINER.search(n.value)[0]} itself; say where to read with "
        f"course.messages.read or fail, whose sections make check can follow"
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
        if EXPLAINER.search(n.value)
    ]
