"""The learner's loop around the suite (tools/learner/): what the scorecard says it did not check,
the finished lesson kept in sight, a timeout on a GPU run once more, crash rows a learner can act
on, and every line in the learner's language.  Fake reports throughout; the CPU clock's own tests
are in test_time_limits.py."""

import textwrap

import pytest

from course import i18n
from course.registry import BY_ID, lesson
from tools.core.cpu_clock import CPU_LIMIT_GPU
from tools.learner import grade, reset, scorecard, state, step_row, step_runs, terminal

T4 = lesson("T4")
T5 = lesson("T5")

GPU_ONLY = "GPU only: the tuned configs are the H200's"


def collected(test, step, skip="", ids=(), labels=()):
    return dict(test=test, step=step, suite_skip=bool(skip), skip_reason=skip, ids=list(ids), labels=list(labels))


def result(outcome="passed", message="", cause=""):
    first = message.splitlines()[0] if message else ""
    return dict(outcome=outcome, reason=first, text=message, message=message, kind="", cause=cause)


def t5_4_report(ran=2, skipped=6):
    tests = [f"tests/t5/test_tile_loop.py::test_runs_{i}" for i in range(ran)]
    gpu = [f"tests/t5/test_streams_graphs_and_plans.py::test_gpu_{i}[M={i}]" for i in range(skipped)]
    return dict(
        collected=[collected(t, "T5.4") for t in tests]
        + [collected(t, "T5.4", GPU_ONLY, [f"M={i}"], [f"M={i}"]) for i, t in enumerate(gpu)],
        results={t: result() for t in tests} | {t: result("skipped", GPU_ONLY) for t in gpu},
    )


# ------------------------------------------------------------------------------------------------
# What was not checked here
# ------------------------------------------------------------------------------------------------
def test_the_scorecard_says_which_checks_need_a_gpu(lang):
    row = step_row.row_of(BY_ID["T5.4"], t5_4_report(), 0, "")
    assert row.done and row.total == 2 and len(row.skipped) == 6
    table = "\n".join(scorecard.rows_table(T5, [row]))
    said = "6 个检查需要 GPU，这里没有运行" if lang == "zh" else "6 checks need a GPU and did not run here"
    assert said in table, table
    listing = "\n".join(scorecard.not_run_listing(row))
    assert listing.count("test_gpu_") == 6 and "[M=5]" in listing, listing


def test_the_total_counts_the_checks_that_did_not_run(lang):
    rows = [step_row.row_of(BY_ID["T5.4"], t5_4_report(), 0, "")]
    other = step_row.row_of(
        BY_ID["T5.1"], dict(collected=[collected("t::a", "T5.1")], results={"t::a": result()}), 0, ""
    )
    text = " ".join(" ".join(scorecard.rows_table(T5, [other, *rows], whole=True)).split())  # wrapped lines joined
    assert (
        "另有 6 个检查这里没有运行"
        if lang == "zh"
        else "3 of 3 checks pass (advanced steps are optional); 6 more did not run here"
    ) in text, text


def test_a_step_whose_every_check_is_skipped_does_not_pass(lang):
    row = step_row.row_of(BY_ID["T5.4"], t5_4_report(ran=0), 0, "")
    assert not row.done and row.total == 0
    table = "\n".join(scorecard.rows_table(T5, [row]))
    assert "[ ] T5.4" in table and "[x]" not in table, table
    assert ("这一步在这里一个检查都没有" if lang == "zh" else "no check of this step runs here") in table, table


# ------------------------------------------------------------------------------------------------
# The finished lesson stays in sight
# ------------------------------------------------------------------------------------------------
def test_a_finished_lesson_is_one_green_line_above_the_next_card(lang, monkeypatch, capsys):
    monkeypatch.setattr(state, "remembered", lambda lesson: {s.id: lesson is T4 for s in lesson.steps})
    monkeypatch.setattr(state, "remember", lambda lesson, done: None)
    assert state.current_lesson() is T5 and state.finished_before(T5) == [T4]
    failing = dict(collected=[collected("t::a", "T5.1")], results={"t::a": result("failed", "wrong")})
    monkeypatch.setattr(
        grade, "run_steps", lambda steps, seed, live=None: [step_row.row_of(s, failing, 1, "") for s in steps]
    )
    assert grade.main(["--seed", "1"]) == 1
    out = capsys.readouterr().out.splitlines()
    first = out.index(next(line for line in out if "T5" in line))
    lines = [line for line in out[:first] if "T4" in line]
    assert len(lines) == 1 and lines[0].startswith("  [x] ") and "LESSON=T4" in lines[0], out
    assert ("完成" in lines[0]) if lang == "zh" else ("done" in lines[0]), lines
    assert grade.main(["--seed", "1", "--lesson", "T5"]) == 1  # a lesson asked for by name: its card alone
    assert not any("LESSON=T4" in line for line in capsys.readouterr().out.splitlines())


def test_a_lesson_graded_with_no_lesson_given_says_why_when_a_later_one_was_graded(lang, monkeypatch, capsys):
    """enlearner14: make test LESSON=T5 then make grade graded T4 (never seen passing) without a word of why."""
    monkeypatch.setattr(state, "remembered", lambda lesson: {"T5.1": True} if lesson is T5 else None)
    monkeypatch.setattr(state, "remember", lambda lesson, done: None)
    failing = dict(collected=[collected("t::a", "T4.1")], results={"t::a": result("failed", "wrong")})
    monkeypatch.setattr(
        grade, "run_steps", lambda steps, seed, live=None: [step_row.row_of(s, failing, 1, "") for s in steps]
    )
    assert grade.main(["--seed", "1"]) == 1
    said = capsys.readouterr().out
    assert "make test LESSON=T5" in said and ("评的是 T4" if lang == "zh" else "grading T4") in said, said
    for asked in (["--seed", "1", "--lesson", "T4"], ["--seed", "1", "--step", "T4.1"]):
        grade.main(asked)  # a lesson or a step asked for by name: no such line
        assert "LESSON=T5" not in capsys.readouterr().out
    monkeypatch.setattr(state, "remembered", lambda lesson: None)  # no later lesson graded: no line either
    grade.main(["--seed", "1"])
    assert "LESSON=T5" not in capsys.readouterr().out


def test_an_unfinished_earlier_lesson_gets_no_line(monkeypatch):
    monkeypatch.setattr(state, "remembered", lambda lesson: {s.id: s.id != "T4.2" for s in lesson.steps})
    assert state.finished_before(T5) == [] and state.current_lesson() is T4


# ------------------------------------------------------------------------------------------------
# Timeouts: a GPU run that timed out is run once more (the CPU clock itself: test_time_limits.py)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend, runs", [("gpu", 2), ("interpreter", 1)])
def test_a_gpu_timeout_is_run_once_more_before_it_is_called_a_hang(monkeypatch, backend, runs):
    calls = []
    hung = dict(collected=[collected("t::a", "T4.1")], results={}, backend=backend, timed_out="t::a timed out")
    passed = dict(collected=[collected("t::a", "T4.1")], results={"t::a": result()}, backend=backend)

    def fake(args, cwd, env, timeout, progress=None):
        calls.append(dict(env))
        return (hung if len(calls) == 1 else passed), 0, ""

    monkeypatch.setattr(step_runs, "run_pytest", fake)
    row = step_runs.run_step(BY_ID["T4.1"], seed=1, hangs=step_runs.Hangs())
    assert len(calls) == runs
    assert row.done == (backend == "gpu")
    if runs == 2:
        assert float(calls[1][CPU_LIMIT_GPU]) == 2 * float(calls[0][CPU_LIMIT_GPU])


def test_a_timeout_after_a_failure_shows_that_failure_first(lang):
    """A check that failed before the one that timed out (a stray write, say, whose flag then never
    rises) is the row's first words; the timeout follows, and that later checks did not run."""
    tests = ["tests/t5/test_a.py::test_stray", "tests/t5/test_b.py::test_hangs", "tests/t5/test_c.py::test_never"]
    report = dict(
        collected=[collected(t, "T5.3") for t in tests],
        results={
            tests[0]: result("failed", "a probe wrote 1 cell outside every tensor", "a probe wrote 1 cell outside"),
            tests[1]: result("failed", "Timeout (>10s of CPU time)"),
        },
        timed_out="test_hangs timed out after 10 s of CPU time",
        timed_out_at="t5_persistent.py line 9",
    )
    row = step_row.row_of(BY_ID["T5.3"], report, 1, "")
    assert row.broke and row.passed == 0 and row.total == 3
    assert row.reason.startswith("test_stray") and "a probe wrote 1 cell outside" in row.reason, row.reason
    assert row.reason.endswith("test_hangs timed out after 10 s of CPU time"), row.reason
    assert row.detail.startswith("a probe wrote 1 cell outside every tensor") and "line 9" in row.detail, row.detail
    # the timed-out check's own block says the row's words (the learner's language), not the clock's English
    assert row.messages[tests[1]] == "test_hangs timed out after 10 s of CPU time", row.messages
    alone = dict(report, results={tests[1]: result("failed", "Timeout (>10s of CPU time)")})
    assert step_row.row_of(BY_ID["T5.3"], alone, 1, "").reason == "test_hangs timed out after 10 s of CPU time"


# ------------------------------------------------------------------------------------------------
# A crash: the check, the line, the last words, and what failed before it
# ------------------------------------------------------------------------------------------------
FAULT = textwrap.dedent(
    """\
    ..........FFcorrupted double-linked list
    Fatal Python error: Aborted

    Current thread 0x00007f (most recent call first):
      File "/x/site-packages/triton/runtime/interpreter.py", line 1481 in _restore_args_dev
      File "/x/tests/t4/test_wrapper.py", line 794 in launch
      File "/x/mine/t4_matmul.py", line 228 in matmul
      File "/x/tests/t4/test_wrapper.py", line 879 in test_matmul

    Extension modules: numpy._core._multiarray_umath, torch._C (total: 2)
    """
)


def test_a_crash_shows_what_the_learner_can_act_on(lang):
    shape = "45x83 @ 83x37: matmul must return a (45, 37) tensor, got (45, 83)"
    tests = [
        "tests/t4/test_wrapper.py::test_matmul[45]",
        "tests/t4/test_wrapper.py::test_matmul[33]",
        "tests/t4/test_wrapper.py::test_later",
    ]
    report = dict(
        collected=[collected(t, "T4.4", ids=[t[-3:-1]], labels=[f"M={t[-3:-1]}"]) for t in tests[:2]]
        + [collected(tests[2], "T4.4")],
        results={tests[0]: result("failed", shape)},
        running=tests[1],
    )
    row = step_row.row_of(BY_ID["T4.4"], report, -6, FAULT)
    assert row.broke and not row.done
    assert "SIGABRT" in row.reason and "test_matmul" in row.reason and "mine/t4_matmul.py line 228" in row.reason
    assert ("1 个检查失败" in row.reason) if lang == "zh" else ("1 check failed before it" in row.reason), row.reason
    assert "test_matmul [M=33]" in row.detail, row.detail  # the check running, its case in words
    assert "corrupted double-linked list" in row.detail and "....." not in row.detail, row.detail
    assert shape in row.detail and "test_matmul [M=45]" in row.detail, row.detail  # the shape message, whole
    assert "Extension modules" not in row.detail and "_restore_args_dev" not in row.detail, row.detail
    if lang == "zh":
        assert "崩溃" in row.reason and "later tests" not in row.reason, row.reason
    shown = "\n".join(scorecard.first_failure(row))
    assert shape.split(": ")[1] in " ".join(shown.split()), shown


@pytest.mark.parametrize(
    "said",
    ["free(): invalid next size (fast)", "double free or corruption (out)", "malloc(): corrupted top size"],
)
def test_a_heap_the_allocator_found_corrupted_is_blamed_on_an_earlier_store(said):
    """glibc aborts where it notices its records overwritten, often long after the store that wrote
    past a tensor: the row must not present the line running then as the cause."""
    fault = FAULT.replace("corrupted double-linked list", said)
    reason, _ = step_row.died(-6, "tests/t4/test_wrapper.py::test_matmul[1]", fault)
    assert said in reason and "a store or an atomic wrote past a tensor earlier" in reason, reason
    assert "noticed at mine/t4_matmul.py line 228 (matmul)" in reason, reason
    plain = FAULT.replace("corrupted double-linked list", "my own complaint")
    reason, _ = step_row.died(-6, "tests/t4/test_wrapper.py::test_matmul[1]", plain)  # os.abort(), no allocator words
    assert "aborted (os.abort" in reason and "allocator" not in reason, reason
    assert " at mine/t4_matmul.py line 228 (matmul)" in reason, reason


def test_the_last_words_before_a_crash_leave_out_pytest_and_faulthandler():
    glued = "..........FFFFFatal Python error: Aborted\n" + FAULT.split("Fatal Python error: Aborted\n", 1)[1]
    assert step_row.printed_before("free(): invalid pointer\n" + glued) == ["free(): invalid pointer"]
    assert step_row.printed_before(FAULT) == ["corrupted double-linked list"]
    assert step_row.printed_before("Extension of mine\n....F\n") == ["Extension of mine"]  # words, not progress


def test_reasons_are_wrapped_never_cut(lang):
    long = "crashed (SIGSEGV) in test_matmul at mine/t4_matmul.py line 228 (matmul): " + "word " * 60 + "END"
    row = step_row.Row(BY_ID["T4.4"], total=3, reason=long)
    table = scorecard.rows_table(T4, [row])
    assert "END" in table[-1] or any(line.rstrip().endswith("END") for line in table), table
    assert not any(line.rstrip().endswith("...") for line in table), table
    assert all(i18n.display_width(line) <= max(terminal.WIDTH, 30) for line in table), table


# ------------------------------------------------------------------------------------------------
# Every line in the learner's language
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rc", [None, -11, -6, 3])
def test_crash_and_hang_rows_speak_the_learners_language(monkeypatch, rc):
    monkeypatch.setenv("COURSE_LANG", "zh")
    reason, _ = step_row.died(rc, "tests/t4/test_wrapper.py::test_matmul[1]", FAULT)
    assert i18n.has_cjk(reason), reason
    english = {None: "still running", -11: "a load or store", -6: "allocator", 3: "exited with status"}[rc]
    assert english not in reason, reason
    monkeypatch.setenv("COURSE_LANG", "en")
    assert english in step_row.died(rc, "tests/t4/test_wrapper.py::test_matmul[1]", FAULT)[0]


def test_unknown_steps_and_lessons_are_refused_in_the_learners_language(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh")
    assert grade.main(["--step", "T9.9"]) == 2
    said = capsys.readouterr().err
    assert "没有 'T9.9' 这一步" in said and "T4.1" in said, said
    assert grade.main(["--lesson", "T9"]) == 2
    assert "没有 'T9' 这一课" in capsys.readouterr().err


def test_make_reset_speaks_the_learners_language(tmp_path, monkeypatch, capsys, lang):
    (tmp_path / "mine").mkdir()
    monkeypatch.setattr(reset, "ROOT", tmp_path)
    monkeypatch.setattr(reset, "BACKUPS", tmp_path / "mine" / "backups")
    monkeypatch.setattr(reset, "committed", lambda rel: "stub\n")
    monkeypatch.setattr(terminal, "WIDTH", 1000)  # a line a message: each counted below
    mine = tmp_path / "mine" / T4.file
    mine.write_text("mine\n")
    assert reset.reset(T4) == 0
    out = capsys.readouterr().out
    assert mine.read_text() == "stub\n" and len(list((tmp_path / "mine" / "backups").iterdir())) == 1
    assert reset.reset(T4) == 0
    out += capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 4, out
    for line in lines:
        words = line.replace(f"mine/{T4.file}", "").replace("make reset", "").replace("HEAD", "")
        assert i18n.has_cjk(words) == (lang == "zh"), line
