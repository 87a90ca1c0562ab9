"""Imports run one way.  course/ is the core everyone uses and imports nothing of tools/ or tests/;
the suite (tests/) imports no tools; given/ (the code a lesson hands both sides to read) imports
none of the machinery and neither side, each side passing itself in; each folder of tools/ serves
one audience and imports only from itself, from tools/core/ (what several folders share) and from
course/; and no import circle runs through course/ (a circle there means a module half-loaded when
the other reads it).

Every import counts, the ones inside a function too: a lazy import still ties the two modules
together.  tools/tests/ tests every folder, so it may import any of them.  Running another
folder's tool as a command (`python -m tools.learner.grade`) is how checks prove it; that is no
import and is not counted."""

import ast
from pathlib import Path

from course import ROOT

SHARED_TOOLS = "core"  # the one folder of tools/ that the others may import
ANY_TOOLS = ("tests",)  # the tools' own tests import what they test


def module_name(path, root=ROOT):
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path, root=ROOT):
    """[(line, imported module)] of one file: every `import x` and `from x import y` in it, at any
    depth; `from package import name` counts as package.name when that is a module under root."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, level - 1 steps up
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                is_module = (root / Path(*sub.split("."))).with_suffix(".py").exists() or (
                    root / Path(*sub.split(".")) / "__init__.py"
                ).exists()
                found.append((node.lineno, sub if is_module else base))
    return found


def python_files(root, *folders):
    skip = ("__pycache__", "backups")
    return sorted(
        f for d in folders for f in (root / d).rglob("*.py") if (root / d).is_dir() and not set(f.parts) & set(skip)
    )


def arrow_problems(root=ROOT):
    """Each import that runs against the folders' audiences, as 'file:line imports module: why'."""
    problems = []
    for path in python_files(root, "course", "tests", "tools", "given"):
        rel = path.relative_to(root)
        top = rel.parts[0]
        folder = rel.parts[1] if top == "tools" and len(rel.parts) > 2 else None
        for line, target in imports_of(path, root):
            parts = target.split(".")
            why = None
            if top == "course" and parts[0] in ("tools", "tests"):
                why = "course/ is the core: it imports nothing of tools/ or tests/"
            elif top == "given" and parts[0] in ("course", "tools", "tests", "mine", "solutions"):
                why = "given/ is lesson code both sides read: it imports no machinery and no side"
            elif top == "tests" and parts[0] == "tools":
                why = "the suite imports no tools (course/ holds what both need)"
            elif top == "tools" and parts[0] == "tools" and len(parts) > 1 and folder not in ANY_TOOLS:
                if folder is None and parts[1] != SHARED_TOOLS:
                    why = f"tools/ itself may import only tools/{SHARED_TOOLS}/"
                elif folder == SHARED_TOOLS and parts[1] != SHARED_TOOLS:
                    why = f"tools/{SHARED_TOOLS}/ is shared by every folder and imports none of them"
                elif parts[1] not in (folder, SHARED_TOOLS):
                    why = f"tools/{folder}/ may import only itself, tools/{SHARED_TOOLS}/ and course/"
            if why:
                problems.append(f"{rel}:{line} imports {target}: {why}")
    return list(dict.fromkeys(problems))  # `from x import a, b` is one arrow


def circles(root=ROOT, folder="course"):
    """Each import circle among the modules under folder, as a list of modules (the first again at
    the end); one per set of modules that reach one another."""
    files = python_files(root, folder)
    modules = {module_name(f, root) for f in files}
    graph = {module_name(f, root): sorted({t for _, t in imports_of(f, root) if t in modules}) for f in files}
    found, seen_sets = [], []
    for start in sorted(graph):
        path = _path_back(graph, start)
        if path and set(path) not in seen_sets:
            seen_sets.append(set(path))
            found.append(path + [start])
    return found


def _path_back(graph, start):
    """A shortest path of imports from start back to start (without the last start), or None."""
    frontier, came = [start], {}
    while frontier:
        nxt = []
        for node in frontier:
            for to in graph.get(node, ()):
                if to == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return path[::-1]
                if to not in came:
                    came[to] = node
                    nxt.append(to)
        frontier = nxt
    return None


def check_imports_run_from_each_audience_to_the_core_only():
    return arrow_problems()


def check_course_has_no_import_circle():
    return [f"course/ imports in a circle: {' -> '.join(c)}" for c in circles()]
