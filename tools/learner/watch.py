"""`make watch`: re-grade your file each time you save it, and say first what the save broke.

    python -m tools.learner.watch                 the step in progress (the first one not done)
    python -m tools.learner.watch --step T4.2     that step, every save
    python -m tools.learner.watch --bench         save-to-verdict times, in a scratch copy

Each save re-runs the step in progress, and every earlier step whose marked bodies (`# ---- T4.x
begin` / `end`) changed since it was last graded, or whose `needs` (course/registry.py) did, or
whose file changed outside the marked bodies.  An earlier step that passed before the save and
fails now is a regression: it is shown first, in full.  A step that passed and whose code did not
change is not run again (the seed is the same, so neither is its result); when the step in
progress passes, the next step not known to pass runs at once.  Every verdict names the time of
the save it belongs to (the file's modification time, HH:MM:SS).

One process stays warm: it has imported torch and triton once, and for each step it grades it
forks a child that runs pytest on the step's marker with the grader's plugin, and imports your
file afresh (the warm parent never imports it).  The steps of one save run side by side.  A crash
or a hang costs that child, and so one row, never the loop: the per-test timeout of learner runs
(time_limits.LEARNER_TIMEOUT_S) stops a hung check, and a child still running after
time_limits.STEP_LIMIT_S is killed (forked_steps.py).  The file is polled (its mtime), no dependency.
"""

import argparse
import hashlib
import random
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from course import ROOT, registry, seam
from course.i18n import say
from course.warm import warm_up
from tools.core.bodies import MARK
from tools.learner import grade, scorecard, state
from tools.learner.failure_blocks import which_pass
from tools.learner.forked_steps import POLL_S, run_forked
from tools.learner.step_row import Row
from tools.learner.step_runs import Live
from tools.learner.terminal import wrap
from tools.learner.upgrade import scaffold_notice


# ------------------------------------------------------------------------------------------------
# What changed: the file cut into its marked bodies, and a fingerprint of what each step's checks run
# ------------------------------------------------------------------------------------------------
def regions(text):
    """{step id: its marked bodies, joined}; key "" holds everything outside them (markers included)."""
    parts, inside = {"": []}, None
    for line in text.splitlines(keepends=True):
        m = MARK.match(line)
        if m and m[2] == "begin":
            parts[""].append(line)
            inside = m[1]
        elif m:
            parts[""].append(line)
            inside = None
        else:
            parts.setdefault(inside or "", []).append(line)
    return {k: "".join(v) for k, v in parts.items()}


def fingerprint(s, parts):
    """What step s's checks depend on in the file: its own bodies, those of the steps it needs, and
    the code outside the marked bodies (a helper or an import the learner changed; its comments
    and blank lines do not count)."""
    outside = [line for line in parts.get("", "").splitlines() if line.strip() and not line.lstrip().startswith("#")]
    h = hashlib.sha256()
    for key, text in (("", "\n".join(outside)), *((k, parts.get(k, "")) for k in (s.id, *s.needs))):
        h.update(key.encode() + b"\0" + text.encode() + b"\0")
    return h.hexdigest()


def clock(mtime):
    """HH:MM:SS of a save, in local time."""
    return time.strftime("%H:%M:%S", time.localtime(mtime))


@dataclass
class Known:
    """The last grading of a step: for which version of its code, its row, and the save it graded."""

    fingerprint: str
    row: object
    saved: str  # HH:MM:SS


# ------------------------------------------------------------------------------------------------
# What a save shows
# ------------------------------------------------------------------------------------------------
def verdict(lesson, row, seed):
    """What a run shows: the first failure in full, which cases pass, the row and what to do."""
    out = []
    if row.detail and not row.done:
        out += scorecard.first_failure(row)
    if row.cases and row.failures and not row.broke:
        out += which_pass(row)
    out += scorecard.rows_table(lesson, [row]) + scorecard.advice(lesson, [row], "", seed)
    if row.failures and len(row.failures) > 1:
        out.append(
            say(
                zh=f"        每个失败检查的完整信息：make test STEP={row.step.id}",
                en=f"        every failing check in full: make test STEP={row.step.id}",
            )
        )
    return out


def failure(lesson, row):
    """An earlier step's failure: its first failing check in full, and its row."""
    return (scorecard.first_failure(row) if row.detail else []) + scorecard.rows_table(lesson, [row])[1:]


class Watcher:
    """The loop's state: the step in progress, and what each step's last grading found for which
    version of its code.

    runner(steps, seed) -> {step id: Row} grades steps (default: forked children); out prints;
    path is the graded file; keep=False leaves .grade.json alone (tests)."""

    def __init__(self, lesson, step=None, seed=None, out=print, path=None, runner=None, keep=True):
        self.lesson, self.pinned, self.out, self.keep = lesson, step is not None, out, keep
        self.seed = seed if seed is not None else random.randrange(10**6)
        self.path = Path(path) if path else ROOT / seam.path(lesson)
        self.runner = runner or self.forked
        self.seen = ()  # no stamp: the first look grades, a file not there included (its row says so)
        self.parts = regions(self.text())  # the file as it was at the last grading (or at the start)
        remembered = (state.remembered(lesson) or {}) if keep else {}
        self.known = {  # the steps make test last saw pass, for the file as it is now
            s.id: Known(fingerprint(s, self.parts), Row(s, 1, 1), "") for s in lesson.steps if remembered.get(s.id)
        }
        self.step = step or lesson.next_step(self.done()) or lesson.steps[0]

    def forked(self, steps, seed):
        tty = sys.stdout.isatty()
        live = Live(tty=True) if tty else None
        try:
            return run_forked(steps, seed, live)
        finally:
            if live:
                live.close()

    def text(self):
        try:
            return self.path.read_text(errors="replace")
        except OSError:
            return ""

    def stamp(self):
        try:
            st = self.path.stat()
            return st.st_mtime_ns, st.st_size
        except OSError:
            return None

    def changed(self):
        now = self.stamp()
        if now == self.seen:
            return False
        self.seen = now
        return True

    def current(self, s, parts=None):
        """Whether step s's last grading was of its code as it is in `parts` (default: the last run's)."""
        k = self.known.get(s.id)
        return k is not None and k.fingerprint == fingerprint(s, parts or self.parts)

    def done(self, parts=None):
        """{step id: passes} for every step graded at its current code."""
        return {s.id: self.known[s.id].row.done for s in self.lesson.steps if self.current(s, parts)}

    def to_recheck(self, parts):
        """The steps before the one in progress whose code changed since they were last graded (or, if
        never graded here, since the last run)."""
        earlier = self.lesson.steps[: self.lesson.steps.index(self.step)]
        return [
            s
            for s in earlier
            if fingerprint(s, parts)
            != (self.known[s.id].fingerprint if s.id in self.known else fingerprint(s, self.parts))
        ]

    def run(self):
        """Grade the file as it is now; show regressions first, then the step in progress, and move
        on while it passes.  Returns the rows graded, by step id."""
        text = self.text()
        started, parts = time.monotonic(), regions(text)
        st = self.stamp()
        saved = clock(st[0] / 1e9) if st else time.strftime("%H:%M:%S")
        recheck = self.to_recheck(parts)
        was = {s.id: self.known[s.id].row.done for s in recheck if s.id in self.known}
        rows = self.runner([*recheck, self.step], self.seed)
        for s in recheck:
            self.known[s.id] = Known(fingerprint(s, parts), rows[s.id], saved)
        self.parts = parts
        if sys.stdout.isatty():
            self.out("\033[2J\033[H", end="")
        earlier = self.earlier_steps(recheck, rows, was, saved)
        if earlier:
            self.out("\n".join(earlier))
        graded = dict(rows)
        while True:
            row = graded[self.step.id]
            self.known[self.step.id] = Known(fingerprint(self.step, parts), row, saved)
            self.out(
                say(zh=f"-- {self.step.id}：{saved} 保存的版本 --", en=f"-- {self.step.id}, your save of {saved} --")
            )
            self.out("\n".join(verdict(self.lesson, row, self.seed)))
            following = None if self.pinned or not row.done else self.lesson.next_step(self.done())
            if following is None or self.lesson.steps.index(following) <= self.lesson.steps.index(self.step):
                break  # done, pinned, failing, or an earlier step fails: stay here
            self.step = following
            graded.update(self.runner([self.step], self.seed))
        if self.text() == text:  # the time moved, not the text (a flush after the write: FUSE, WSL's /mnt)
            self.seen = self.stamp()
        if self.keep:
            state.remember(self.lesson, self.done())
        said = say(
            zh=f"（{saved} 保存的版本，{time.monotonic() - started:.1f} s 评完；"
            f"保存 {self.path.name} 就会重跑，Ctrl-C 退出）",
            en=f"(your save of {saved}, graded in {time.monotonic() - started:.1f} s; "
            f"save {self.path.name} to run again, Ctrl-C to stop)",
        )
        self.out("\n".join(wrap(said, 1, first="")), flush=True)
        return graded

    def earlier_steps(self, recheck, rows, was, saved):
        """Lines about the steps before the one in progress: regressions first, in full; then those
        still failing from an earlier save (not run again: their code did not change); then the
        re-checked ones that pass, a row each."""
        before = self.lesson.steps[: self.lesson.steps.index(self.step)]
        lines = []
        for s in recheck:
            if was.get(s.id) and not rows[s.id].done:
                lines.append(
                    say(
                        zh=f"!! 退步：{s.id} 在这次保存之前通过，{saved} 保存之后不通过了",
                        en=f"!! Regression: {s.id} passed before your save of {saved} and fails now",
                    )
                )
                lines += failure(self.lesson, rows[s.id]) + [
                    say(
                        zh=f"        每个失败检查的完整信息：make test STEP={s.id}",
                        en=f"        every failing check in full: make test STEP={s.id}",
                    )
                ]
        for s in before:
            k = self.known.get(s.id)
            if k is None or k.row.done or (s in recheck and was.get(s.id)):
                continue
            if s in recheck:
                lines.append(
                    say(
                        zh=f"!! {s.id}：你改了它，{saved} 保存的版本不通过",
                        en=f"!! {s.id}: changed, and your save of {saved} fails it",
                    )
                )
                lines += failure(self.lesson, rows[s.id])
            else:
                lines.append(
                    say(
                        zh=f"!! {s.id} 仍不通过（{k.saved} 保存之后没改过，没有重跑）：",
                        en=f"!! {s.id} still fails (unchanged since your save of {k.saved}, not run again):",
                    )
                )
                lines += scorecard.rows_table(self.lesson, [k.row])[1:]
        passing = [rows[s.id] for s in recheck if rows[s.id].done]
        if passing:
            lines.append(
                say(
                    zh=f"{saved} 保存后重跑了改过的前面步骤，仍然通过：",
                    en=f"re-run after your save of {saved}, because they changed, and still passing:",
                )
            )
            lines += scorecard.rows_table(self.lesson, passing)[1 : 1 + len(passing)]
        return lines + ([""] if lines else [])

    def loop(self, runs=0):
        """Poll the file; grade it on every save.  runs > 0: stop after that many gradings."""
        graded = 0
        while True:
            if self.changed():
                self.run()
                graded += 1
                if runs and graded >= runs:
                    return
            time.sleep(POLL_S)


def stopped(*_):
    """SIGTERM (kill, timeout): leave as Ctrl-C does, the children stopped too (run_forked).  A second
    SIGTERM is ignored: under `timeout 40 make watch` one came while Python was exiting, and the
    exit raised in torch's exit handler printed a traceback."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(143)


def main(argv=None):
    parser = grade.Parser(description=__doc__.splitlines()[0])
    grade.lesson_flags(parser, "watch this step only (default: the step in progress)")
    grade.seed_flag(parser, "the seed of every random input (default: SEED, else random)")
    parser.add_argument("--runs", type=int, default=0, help=argparse.SUPPRESS)  # tests: stop after N gradings
    parser.add_argument("--bench", action="store_true", help="time save to verdict (the first two steps, a regression)")
    args = parser.parse_args(argv)
    if args.bench:
        from tools.learner.watch_bench import bench

        bench()
        return 0
    seed, bad = grade.seed_of(args)
    if bad:
        return grade.refuse(bad)
    try:
        lesson = state.current_lesson(args.lesson)
        s = registry.step(args.step, within=lesson.id) if args.step else None
        lesson = s.lesson if s else lesson  # a step of another lesson watches that lesson's file
    except KeyError as e:
        return grade.refuse(grade.not_found(e, args))
    notice = scaffold_notice(lesson)  # a file begun before a course update: said once, before the first run
    if notice:
        print(notice + "\n", flush=True)
    print(say(zh="预热中（导入 torch 和 triton）……", en="warming up (importing torch and triton) ..."), flush=True)
    warm_up()
    signal.signal(signal.SIGTERM, stopped)
    try:
        Watcher(lesson, s, seed).loop(args.runs)
    except KeyboardInterrupt:
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
