"""The suite's two fixed points: solutions/ passes every step, the untouched stub fails every step
because its bodies are not written (not because of a crash or a wrong test)."""
from tools.checks.common import pristine_stub, run_suite
from tools.steps import STEPS


def check_solutions_pass_every_step():
    results, output = run_suite(solution=True)
    if not results:
        return ["the suite produced no results on solutions/:\n" + output[-2000:]]
    problems = [f"{r['test']}: {r['outcome']}: {r['reason']}" for r in results
                if r["outcome"] == "failed"]
    for s in STEPS:
        if not any(r["step"] == s.id and r["outcome"] == "passed" for r in results):
            problems.append(f"{s.id}: no test of this step passed on solutions/")
    return problems


def check_untouched_stub_fails_every_step_for_the_right_reason():
    results, output = run_suite(mine_text=pristine_stub())
    if not results:
        return ["the suite produced no results on the stub:\n" + output[-2000:]]
    problems = [f"{r['test']} passes on the untouched stub: it cannot tell a blank body from a "
                f"written one" for r in results if r["outcome"] == "passed"]
    problems += [f"{r['test']} fails on the stub for another reason than a missing body: {r['reason']}"
                 for r in results if r["outcome"] == "failed" and "not written yet" not in r["reason"]]
    problems += [f"{r['test']} has no step marker" for r in results if r["step"] is None]
    for s in STEPS:
        if not any(r["step"] == s.id and r["outcome"] == "failed" for r in results):
            problems.append(f"{s.id}: no test of this step fails on the stub")
    return problems
