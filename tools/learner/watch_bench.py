"""`python -m tools.learner.watch --bench`: how long `make watch` takes from a save to its verdict,
measured in a scratch copy of the repo with a real watch process (figures in README)."""

import os
import subprocess
import sys
import time

from course import registry
from tools.checks.common import pristine_stub, scratch_repo, solution_file
from tools.checks.grader import fill_in, plant

BROKEN_T41 = ["    pid = pid + 1  # planted by --bench: every tile moves one program on\n"]


def bench(repeats=3):
    """Save-to-verdict times: a watch process in a scratch copy, timed from the write to the line
    that ends the save's output.  For T4.1 and T4.2 alone (--step), each save the reference's body
    (passing) or the stub's (failing); then, watching T4.2, saves that break T4.1 (a regression,
    shown first) and mend it, T4.1 and T4.2 graded side by side."""
    lesson = registry.lesson()
    stub, solution = pristine_stub(lesson), solution_file(lesson).read_text()
    first, second = lesson.steps[:2]
    results = {}
    for s in (first, second):
        before = {x.id for x in lesson.steps[: lesson.steps.index(s)]}
        texts = [fill_in(stub, solution, before | {s.id}), fill_in(stub, solution, before)]
        results[s.id] = [t for t, _ in timed_saves(lesson, s, texts[1], texts * repeats)]
        show_times(f"{s.id}", results[s.id])
    mended = fill_in(stub, solution, {first.id, second.id})
    broken = fill_in(stub, plant(solution, first.id, BROKEN_T41)[0], {first.id, second.id})
    saves = timed_saves(lesson, second, mended, [broken] + [mended, broken] * repeats)
    regressions = [(t, said) for t, said in saves[2::2]]  # T4.1 known to pass before each of these
    missed = [said for _, said in regressions if f"Regression: {first.id}" not in said.split(f"-- {second.id}")[0]]
    if missed:
        raise RuntimeError("a regression save did not show the regression first:\n" + missed[0])
    results["regression"] = [t for t, _ in regressions]
    show_times(f"{second.id} in progress, {first.id} broken (the regression shown first)", results["regression"])
    results["mended"] = [t for t, _ in saves[1::2]]
    show_times(f"{second.id} in progress, {first.id} mended", results["mended"])
    print(f"load average while measuring: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
    return results


def show_times(what, times):
    median = sorted(times)[len(times) // 2]
    print(f"{what}: save to verdict {', '.join(f'{t:.1f}' for t in times)} s (median {median:.1f} s)", flush=True)


def timed_saves(lesson, s, start, texts):
    """[(seconds from the write to the end of its output, that output)] for each text saved in turn,
    a watch process on step s in a scratch copy whose file starts as `start` (its first run, with
    the warm-up in it, is not timed)."""
    with scratch_repo({lesson: start}) as tmp:
        env = dict(os.environ, SOLUTION="0", COURSE_LANG="en", PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(
            [sys.executable, "-m", "tools.learner.watch", "--step", s.id, "--runs", str(len(texts) + 1)],
            cwd=tmp,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        mine, timed = tmp / "mine" / lesson.file, []
        try:
            until_graded(proc)
            for text in texts:
                time.sleep(0.5)
                began = time.monotonic()
                mine.write_text(text)
                said = until_graded(proc)
                timed.append((time.monotonic() - began, said))
            proc.wait(timeout=60)
        finally:
            proc.kill()
    return timed


def until_graded(proc):
    """The output of one save, up to the line that ends it."""
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "Ctrl-C to stop)" in line:
            return "".join(seen)
    raise RuntimeError("the watch process ended before its verdict:\n" + "".join(seen))
