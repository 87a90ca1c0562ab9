"""The lines under the scorecard agree with its rows: a step whose first failure is another step's body
not written yet (T6.2's checks run T4.1's tile_coords) sends the learner to that step and its sections
first; a file that does not import leaves every step unrun, so no row claims checks skipped for want of a
GPU.  Fake reports, as in test_learner_loop.py."""

import pytest

from course import seam
from course.messages import read, stub_report
from course.registry import BY_ID, lesson
from tools.learner import scorecard, step_row

T6 = lesson("T6")

# The stubs' own words (mine/t4_matmul.py, mine/t5_persistent.py), as a T6 check reaches them.
T4_1_STUB = "T4.1 tile_coords: map pid to (pid_m, pid_n) in grouped order; read §2 in content/t4.md or content/t4.en.md"
T5_2_STUB = (
    "T5.2 tma_problem: name the TMA rule the tensor breaks, or return None; read §3.2 in content/t5.md or "
    "content/t5.en.md"
)
GPU_ONLY = "GPU only: the tuned configs are the H200's"


def collected(test, step, skip=""):
    return dict(test=test, step=step, suite_skip=bool(skip), skip_reason=skip, ids=[], labels=[])


def result(outcome="passed", message=""):
    first = message.splitlines()[0] if message else ""
    return dict(outcome=outcome, reason=first, text=message, message=message, kind="", cause="")


def row(step_id, message=None, gpu=0):
    """A row of step_id: two checks, both failing with `message` (None: both pass), and `gpu` checks the
    suite skips here for want of a GPU."""
    tests = [f"tests/t6/test_x.py::test_{step_id[-1]}_{i}" for i in range(2)]
    skipped = [f"tests/t6/test_x.py::test_gpu_{step_id[-1]}_{i}" for i in range(gpu)]
    report = dict(
        collected=[collected(t, step_id) for t in tests] + [collected(t, step_id, GPU_ONLY) for t in skipped],
        results={t: result() if message is None else result("failed", message) for t in tests},
    )
    return step_row.row_of(BY_ID[step_id], report, 0 if message is None else 1, "")


def card(rows, whole=True):
    blocked = scorecard.blocker(rows)
    lines = scorecard.rows_table(T6, rows, blocked, whole) + scorecard.advice(T6, rows, blocked, 1, whole)
    return "\n".join(lines)


def next_lines(text):
    at = next(i for i, line in enumerate(text.splitlines()) if line.lstrip().startswith(("Next", "下一步")))
    return " ".join(" ".join(text.splitlines()[at:]).split())  # wrapped lines joined


@pytest.mark.parametrize(
    ("step_id", "stub", "earlier", "sections"),
    [("T6.2", T4_1_STUB, "T4.1", ("2",)), ("T6.3", T5_2_STUB, "T5.2", ("3.2",))],
)
@pytest.mark.parametrize("whole", [True, False])
def test_next_points_at_the_earlier_step_the_row_says_is_not_written(lang, step_id, stub, earlier, sections, whole):
    rows = [row("T6.1"), row("T6.2", stub_report(stub) if step_id == "T6.2" else None), row("T6.3", stub_report(stub))]
    text = card(rows, whole)
    said = next_lines(text)
    step = BY_ID[earlier]
    where = " ".join(read(step, *sections, titled=True).split())
    assert where in " ".join(text.split()), text  # the row says it ...
    assert where in said, said  # ... and so does Next
    assert f"{earlier} {step.name}" in said and seam.path(step.lesson) in said, said
    assert f"make hint STEP={earlier}" in said and f"make hint STEP={step_id}" not in said, said
    assert "content/t6" not in said, said  # not the T6 step's own sections
    assert step_id in said, said  # why: this step's checks run it


def test_next_keeps_the_step_when_its_own_body_is_not_written(lang):
    own = "T6.2 expert_tile_counts: count each expert's tiles; read §3.2 in content/t6.md or content/t6.en.md"
    said = next_lines(card([row("T6.1"), row("T6.2", stub_report(own))]))
    assert "T6.2" in said and "STEP=T6.2" in said and "T4" not in said, said


def test_a_file_that_does_not_import_claims_no_gpu_skips(lang):
    graded = seam.path(T6)
    broken = f"{graded} line 273: SyntaxError: invalid syntax\n    def broken(:"
    rows = [row("T6.1", broken, gpu=1), row("T6.2", broken), row("T6.3", broken, gpu=5)]
    assert scorecard.blocker(rows), [r.blocker for r in rows]
    text = card(rows)
    assert "GPU" not in text, text
    assert ("这里没有运行" if lang == "zh" else "did not run") not in text, text
    alone = row("T6.3", gpu=5)  # a file that imports: its skips are still said
    assert ("5 个检查需要 GPU" if lang == "zh" else "5 checks need a GPU") in card([alone], whole=False)


@pytest.mark.parametrize("whole", [True, False])
def test_the_seed_replay_names_what_was_graded(lang, whole):
    """make test SEED=n alone grades the first lesson not done: after make test LESSON=T6 with T4 still a
    stub it would grade T4, so the whole card's replay names its lesson, a step's its step."""
    said = next_lines(card([row("T6.1"), row("T6.2", "AssertionError: 3 cells wrong")], whole))
    assert ("make test SEED=1 LESSON=T6" if whole else "make test SEED=1 STEP=T6.2") in said, said
