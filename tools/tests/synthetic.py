"""Two made-up lessons for the machinery's own tests: X1 has one step (a Triton vector add), X5 has
five (the last advanced, needing the fourth).  Each is what README calls a lesson: an entry in
course/lessons/, an explainer pair and its answers in content/, a stub in mine/ and a reference in
solutions/ (line-aligned), a solution in another style, and its section of the suite in tests/.

synthetic_repo(path) writes a repo holding the course's machinery and these two lessons alone (the
real lessons' files, as make check lists them, left out), to run the grader, hint and the checks
in.  registered(monkeypatch) makes the registry of this process list them, for in-process tests of
the scorecard and of make watch."""

import shutil
import textwrap
from pathlib import Path

from course import ROOT
from course.registry import LESSONS
from tools.checks.lesson_files import files_of
from tools.core.bodies import split_bodies

ENTRIES = {
    "x1": '''
        """Lesson X1, made up for the machinery's own tests: one step."""

        from course.registry import Lesson, Step

        LESSON = Lesson(
            id="X1",
            title="add two vectors",
            title_zh="两个向量相加",
            module="x1_add",
            explainers={"zh": "content/x1.md", "en": "content/x1.en.md"},
            suite="tests/test_x1.py",
            sections={"1": ("逐块相加", "Adding block by block")},
            steps=(
                Step(
                    "X1.1",
                    "the sum, one block per program",
                    ("1",),
                    ("add_kernel",),
                    (
                        ("先算这个程序的偏移。", "Work out this program's offsets first."),
                        ("再加上掩码。", "Then mask them."),
                    ),
                    title_zh="和：每个程序一块",
                ),
            ),
        )
    ''',
    "x5": '''
        """Lesson X5, made up for the machinery's own tests: five steps, the last advanced."""

        from course.registry import Lesson, Step

        LESSON = Lesson(
            id="X5",
            title="five small steps",
            title_zh="五小步",
            module="x5_steps",
            explainers={"zh": "content/x5.md", "en": "content/x5.en.md"},
            suite="tests/x5",
            sections={str(n): (f"第 {n} 步", f"Step {n}") for n in range(1, 6)},
            steps=tuple(
                Step(
                    f"X5.{n}",
                    f"step {n}, {name}",
                    (str(n),),
                    (name,),
                    ((f"{name}：看 §{n}。", f"{name}: see §{n}."), (f"{name}：一行就够。", f"{name}: one line.")),
                    advanced=n == 5,
                    title_zh=f"第 {n} 步：{name}",
                    needs=("X5.4",) if n == 5 else (),
                )
                for n, name in enumerate(("scale", "shift", "clip", "total", "mean"), 1)
            ),
        )
    ''',
}

SOLUTIONS = {
    "x1_add": '''
        """Lesson X1 (made up): add two vectors, one block per program."""

        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            # ---- X1.1 begin (§1) ----
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
            # ---- X1.1 end ----


        def add(x, y, BLOCK=16):
            out = torch.empty_like(x)
            add_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, out, x.numel(), BLOCK=BLOCK)
            return out
    ''',
    "x5_steps": '''
        """Lesson X5 (made up): five small steps on a vector."""

        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def scale_kernel(x_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
            # ---- X5.1 begin (§1) ----
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * a, mask=offs < n)
            # ---- X5.1 end ----


        def scale(x, a, BLOCK=16):
            out = torch.empty_like(x)
            scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, out, a, x.numel(), BLOCK=BLOCK)
            return out


        def shift(x, b):
            # ---- X5.2 begin (§2) ----
            return x + b
            # ---- X5.2 end ----


        def clip(x, lo, hi):
            # ---- X5.3 begin (§3) ----
            return x.clamp(lo, hi)
            # ---- X5.3 end ----


        def total(x):
            # ---- X5.4 begin (§4) ----
            return x.float().sum()
            # ---- X5.4 end ----


        def mean(x):
            # ---- X5.5 begin (§5) ----
            return total(x) / max(x.numel(), 1)
            # ---- X5.5 end ----
    ''',
}

# Other styles: the same results written otherwise (make check's other_styles runs them).
VARIANTS = {
    "x1_add": (
        "tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)",
        "tl.load(y_ptr + offs, mask=mask) + tl.load(x_ptr + offs, mask=mask)",
    ),
    "x5_steps": ("return x + b", "return b + x"),
}

SUITES = {
    "x1": '''
        import pytest
        import torch

        from course.registry import lesson

        X1 = lesson("X1")
        pytestmark = pytest.mark.x1


        @pytest.mark.x1_1
        @pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
        @pytest.mark.parametrize("n", [1, 16, 33])
        def test_add(graded_module, n, dtype):
            x, y = torch.randn(n).to(dtype), torch.randn(n).to(dtype)
            torch.testing.assert_close(graded_module(X1).add(x, y), x + y)
    ''',
    # X5's section is a folder, as the real lessons' are (X1's one file): {file in it: its text}
    "x5": {
        "__init__.py": '''
            """Lesson X5's section of the suite: a file per part of the lesson."""

            ORDER = ("test_first_steps.py", "test_last_steps.py")
        ''',
        "conftest.py": '''
            import pytest

            from course.registry import lesson

            X5 = lesson("X5")


            @pytest.fixture
            def x5(graded_module):
                return graded_module(X5)
        ''',
        "common.py": '''
            import pytest

            SIZES = pytest.mark.parametrize("n", [1, 16, 33])
        ''',
        "test_first_steps.py": '''
            import pytest
            import torch

            from .common import SIZES

            pytestmark = pytest.mark.x5


            @pytest.mark.x5_1
            @pytest.mark.parametrize("a", [2.0, -0.5])
            @SIZES
            def test_scale(x5, n, a):
                x = torch.randn(n)
                torch.testing.assert_close(x5.scale(x, a), x * a)


            @pytest.mark.x5_2
            @SIZES
            def test_shift(x5, n):
                x = torch.randn(n)
                torch.testing.assert_close(x5.shift(x, 3.0), x + 3.0)


            @pytest.mark.x5_3
            def test_clip(x5):
                x = torch.linspace(-2, 2, 9)
                torch.testing.assert_close(x5.clip(x, -1.0, 1.0), x.clamp(-1.0, 1.0))
        ''',
        "test_last_steps.py": '''
            import pytest
            import torch

            from .common import SIZES

            pytestmark = pytest.mark.x5


            @pytest.mark.x5_4
            @SIZES
            def test_total(x5, n):
                x = torch.randn(n)
                torch.testing.assert_close(x5.total(x), x.sum())


            @pytest.mark.x5_5
            def test_mean(x5):
                x = torch.arange(4.0)
                torch.testing.assert_close(x5.mean(x), torch.tensor(1.5))
        ''',
    },
}


def explainer(sections, lang):
    """An explainer with a heading per section, in one language."""
    at = 0 if lang == "zh" else 1
    return "# X\n\n" + "".join(f"## {n}. {titles[at]}\n\nText.\n\n" for n, titles in sections.items())


def stub_of(solution, lesson):
    """The reference with each marked body raising NotImplementedError, as the course's stubs do."""
    parts = split_bodies(solution)
    out = []
    for i, (step, body) in enumerate(parts):
        if step is None:
            out.append("".join(body))
            continue
        marker = parts[i - 1][1][-1]
        indent = marker[: len(marker) - len(marker.lstrip())]
        s = next(s for s in lesson.steps if s.id == step)
        said = f"{step} {s.writes[0]}: not written; read §{s.sections[0]} in {' or '.join(lesson.explainers.values())}"
        out.append(f"{indent}raise NotImplementedError({said!r})\n")
    return "".join(out)


def entry(key):
    """The LESSON of ENTRIES[key], defined in this process (not registered)."""
    space = {}
    exec(textwrap.dedent(ENTRIES[key]), space)  # noqa: S102 - our own text above
    return space["LESSON"]


def registered(monkeypatch, keys=("x1", "x5")):
    """Make course.registry list the synthetic lessons alone, in this process; their LESSONs."""
    from course import registry

    lessons = tuple(entry(k) for k in keys)
    monkeypatch.setattr(
        registry,
        "_found",
        dict(
            LESSONS=lessons,
            BY_ID={s.id: s for each in lessons for s in each.steps},
            LESSON_OF={s.id: each for each in lessons for s in each.steps},
            LESSON_BY_ID={each.id: each for each in lessons},
        ),
    )
    return lessons


def synthetic_repo(path, keys=("x1", "x5"), leave_out=()):
    """A repo at path with the machinery and the synthetic lessons `keys` alone; leave_out: paths
    of their files not to write (a lesson lacking a file).  Returns path."""
    path = Path(path)
    real = {p for lesson in LESSONS for p, _ in files_of(lesson)}
    for part in ("course", "tests", "tools", "pytest.ini", "pyproject.toml"):
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, path / part, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "backups"))
        else:
            shutil.copy(src, path / part)
    for rel in real:  # the real lessons' own files: their entries, suites, probes and variants
        if (path / rel).is_dir():  # a suite that is a folder of test files
            shutil.rmtree(path / rel)
        else:
            (path / rel).unlink(missing_ok=True)
    for folder in ("mine", "solutions", "content"):
        (path / folder).mkdir(exist_ok=True)
    for key in keys:
        lesson = entry(key)
        solution = textwrap.dedent(SOLUTIONS[lesson.module]).lstrip()
        old, new = VARIANTS[lesson.module]
        texts = {
            f"course/lessons/{key}.py": textwrap.dedent(ENTRIES[key]).lstrip(),
            f"solutions/{lesson.file}": solution,
            f"mine/{lesson.file}": stub_of(solution, lesson),
        }
        suite = SUITES[key]
        if isinstance(suite, dict):  # a folder: each of its files
            texts |= {f"{lesson.suite}/{name}": textwrap.dedent(text).lstrip() for name, text in suite.items()}
        else:
            texts[lesson.suite] = textwrap.dedent(suite).lstrip()
        for rel, what in files_of(lesson):
            if "another style" in what:
                texts[rel] = solution.replace(old, new)
        for lang, rel in lesson.explainers.items():
            texts[rel] = explainer(lesson.sections, lang)
        for rel, what in files_of(lesson):
            if rel != lesson.suite:  # the suite is written above: a folder is no file
                texts.setdefault(rel, f"# {what}\n")  # the answers
        listed = {rel for rel, _ in files_of(lesson)}
        missing = {rel for rel in texts if rel not in listed and not rel.startswith(f"{lesson.suite}/")}
        assert not missing, f"synthetic.py writes files make check does not list: {missing}"
        for rel, text in texts.items():
            if rel not in leave_out and not any(rel.startswith(f"{left}/") for left in leave_out):
                (path / rel).parent.mkdir(parents=True, exist_ok=True)
                (path / rel).write_text(text)
    return path
