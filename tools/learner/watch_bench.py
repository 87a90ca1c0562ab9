"""`python -m tools.learner.watch --bench`: how long `make watch` takes from a save to its verdict,
measured in a scratch copy of the repo with a real watch process (figures in README)."""

import os
import subprocess
import sys
import time
from pathlib import Path

from course import registry
from tools.core.bodies import fill_in, plant
from tools.core.repo import pristine_stub, scratch_repo, solution_file

# Planted at the start of the first step's first body: its checks fail there, whatever the lesson.
BROKEN = ["    raise AssertionError('planted by --bench')\n"]


def bench(repeats=3):
    """Save-to-verdict times: a watch process in a scratch copy, timed from the write to the line
    that ends the save's output.  For the first lesson's first two steps alone (--step), each save
    the reference's body (passing) or the stub's (failing); then, watching the second, saves that
    break the first (a regression, shown first) and mend it, both graded side by side.  A lesson
    of one step has no regression to time."""
    lesson = registry.lesson()
    stub, solution = pristine_stub(lesson), solution_file(lesson).read_text()
    results = {}
    for s in lesson.steps[:2]:
        before = {x.id for x in lesson.steps[: lesson.steps.index(s)]}
        texts = [fill_in(stub, solution, before | {s.id}), fill_in(stub, solution, before)]
        saves = timed_saves(lesson, s, texts[1], texts * repeats)
        results[s.id] = [t for t, _, _ in saves]
        show_times(f"{s.id}", saves)
    if len(lesson.steps) < 2:
        return results
    first, second = lesson.steps[:2]
    mended = fill_in(stub, solution, {first.id, second.id})
    broken = fill_in(stub, plant(solution, first.id, BROKEN)[0], {first.id, second.id})
    saves = timed_saves(lesson, second, mended, [broken] + [mended, broken] * repeats)
    regressions = saves[2::2]  # the first step known to pass before each of these
    missed = [said for _, _, said in regressions if f"Regression: {first.id}" not in said.split(f"-- {second.id}")[0]]
    if missed:
        raise RuntimeError("a regression save did not show the regression first:\n" + missed[0])
    results["regression"] = [t for t, _, _ in regressions]
    show_times(f"{second.id} in progress, {first.id} broken (the regression shown first)", regressions)
    results["mended"] = [t for t, _, _ in saves[1::2]]
    show_times(f"{second.id} in progress, {first.id} mended", saves[1::2])
    print(f"load average while measuring: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
    return results


def show_times(what, saves):
    """One line: the wall times of the saves, and the CPU seconds each took (of the watch process and
    its children): on a busy machine the wall time grows, the CPU time hardly does."""
    times, cpu = [t for t, _, _ in saves], [c for _, c, _ in saves]
    median = sorted(times)[len(times) // 2]
    line = f"{what}: save to verdict {', '.join(f'{t:.1f}' for t in times)} s (median {median:.1f} s)"
    if all(c is not None for c in cpu):
        line += f"; CPU {', '.join(f'{c:.1f}' for c in cpu)} s (median {sorted(cpu)[len(cpu) // 2]:.1f} s)"
    print(line, flush=True)


def cpu_seconds(pid):
    """CPU seconds of a process and of its children it has waited for (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


def timed_saves(lesson, s, start, texts):
    """[(seconds from the write to the end of its output, CPU seconds, that output)] for each text saved in turn,
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
                began, cpu = time.monotonic(), cpu_seconds(proc.pid)
                mine.write_text(text)
                said = until_graded(proc)
                spent = cpu_seconds(proc.pid)
                timed.append((time.monotonic() - began, None if cpu is None else spent - cpu, said))
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
