"""The suite's two fixed points, for every lesson: solutions/ passes every step, and the untouched
stub fails every check because its bodies are not written (not because of a crash or a wrong test)."""

from course.registry import LESSONS
from tools.checks.common import costly, suite_run
from tools.core.repo import pristine_stubs


def outcomes(report):
    """[(test, step, outcome, reason)] of every collected test; a test that never reported is 'missing'."""
    results = report["results"]
    return [
        (
            c["test"],
            c["step"],
            results.get(c["test"], {}).get("outcome", "missing"),
            results.get(c["test"], {}).get("reason", ""),
        )
        for c in report["collected"]
        if not c["suite_skip"]
    ]


def steps_without(seen, outcome):
    """Ids of the steps none of whose tests in `seen` (outcomes()) ended in `outcome`.  Both fixed
    points ask it of every step, so that a step with no test that can pass (or fail) shows."""
    return [
        s.id
        for lesson in LESSONS
        for s in lesson.steps
        if not any(step == s.id and o == outcome for _, step, o, _ in seen)
    ]


def stub_run(lang):
    """The whole suite on the untouched stubs, every lesson's, its messages in lang: one run per
    language, read here and by messages.check_the_untouched_stub_speaks_the_learners_language."""
    return suite_run(pristine_stubs(), COURSE_LANG=lang)


@costly(30)
def check_solutions_pass_every_step():
    report, output = suite_run(solution=True)
    if not report["collected"]:
        return ["the suite collected nothing on solutions/:\n" + output[-2000:]]
    seen = outcomes(report)
    problems = [f"{test}: {outcome}: {reason}" for test, _, outcome, reason in seen if outcome != "passed"]
    problems += [f"{s}: no test of this step passed on solutions/" for s in steps_without(seen, "passed")]
    return problems


@costly(15)
def check_untouched_stub_fails_every_step_for_the_right_reason():
    report, output = stub_run("en")  # the reason "not written yet" is English
    if not report["collected"]:
        return ["the suite collected nothing on the stub:\n" + output[-2000:]]
    seen = outcomes(report)
    problems = [
        f"{test} passes on the untouched stub: it cannot tell a blank body from a written one"
        for test, _, outcome, _ in seen
        if outcome == "passed"
    ]
    problems += [
        f"{test} fails on the stub for another reason than a missing body: {outcome}: {reason}"
        for test, _, outcome, reason in seen
        if outcome != "passed" and "not written yet" not in reason
    ]
    problems += [f"{test} has no step marker" for test, step, _, _ in seen if step is None]
    problems += [f"{s}: no test of this step fails on the stub" for s in steps_without(seen, "failed")]
    return problems
