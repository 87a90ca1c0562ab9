"""A step's scorecard row, read from the report the pytest plugin wrote for the step's process
(tools/core/plugin.py): its checks counted, its first failure, and, when the process died before
its report was finished (a crash, an exit, a hang), one line saying how and what the learner can
act on.  Shared by make test (step_runs.py) and make watch (watch.py), which start the process
each their own way."""

import re
import signal
from dataclasses import dataclass, field

from course import seam
from course.i18n import say
from tools.core.failure_words import short, source_line
from tools.learner import scorecard
from tools.learner.failure_blocks import case_name
from tools.learner.time_limits import STEP_LIMIT_S


@dataclass
class Row:
    step: object
    passed: int = 0
    total: int = 0
    reason: str = ""  # the first failing check, one line
    detail: str = ""  # the same failure in full, when it says more than the line
    failures: tuple = ()  # (test, one-line reason) for every failing check
    messages: dict = field(default_factory=dict)  # {test: its failure message in full, pytest's noise stripped}
    kinds: dict = field(default_factory=dict)  # {test: the type of the exception that failed it}
    cases: tuple = ()  # (test, parametrize ids, passed) for every check counted, for the pass/fail pattern
    labels: dict = field(default_factory=dict)  # {test: its parametrize ids in words, one label per id}
    skipped: tuple = ()  # (test, the suite's reason) for every check the suite's own marks skip here
    broke: bool = False  # crashed or timed out
    blocker: str = ""  # why no test could run at all (no import, no pytest), in a few lines

    @property
    def done(self):
        return self.total > 0 and self.passed == self.total


def row_of(s, report, rc, output):
    """The scorecard row of step s from the plugin's report: its checks counted from what was
    collected (a check that never reported, or skipped on its own, is a check not passed)."""
    row = Row(s)
    if report is None:  # not even collected: the suite could not start
        said = [line for line in output.splitlines() if line.strip()][-6:]
        row.reason = say(zh=f"pytest 没能启动（退出状态 {rc}）", en=f"pytest could not start (exit status {rc})")
        row.blocker = "\n".join(
            [
                say(zh=f"{row.reason}，所以哪一步都跑不了：", en=f"{row.reason}, so no step can run:"),
                *("    " + x for x in said),
            ]
        )
        return row
    mine = [c for c in report["collected"] if c["step"] == s.id and not c["suite_skip"]]
    counted = [c["test"] for c in mine]
    results = report["results"]
    row.total = len(counted)
    row.passed = sum(results.get(t, {}).get("outcome") == "passed" for t in counted)
    failed = [t for t in counted if t in results and results[t]["outcome"] != "passed"]
    row.failures = tuple((t, results[t]["cause"] or results[t]["reason"] or results[t]["outcome"]) for t in failed)
    row.messages = {t: results[t].get("message") or results[t]["text"] for t in failed}
    if report.get("timed_out"):  # the clock's "Timeout (>10s of CPU time)": the row's words, in the learner's language
        clock = [t for t, m in row.messages.items() if (m or "").startswith("Timeout (>")]
        row.messages.update(dict.fromkeys(clock, report["timed_out"]))
    row.kinds = {t: results[t].get("kind", "") for t in failed}
    row.cases = tuple(
        (c["test"], c.get("ids", []), results.get(c["test"], {}).get("outcome") == "passed")
        for c in mine
        if c["test"] in results  # a test that never ran (after a timeout or a crash) shows no pattern
    )
    skipped = [c for c in report["collected"] if c["step"] == s.id and c["suite_skip"]]
    row.skipped = tuple((c["test"], c.get("skip_reason", "")) for c in skipped)
    row.labels = {c["test"]: c["labels"] for c in mine + skipped if len(c.get("labels", ())) == len(c.get("ids", ()))}
    unfinished = [t for t in counted if t not in results]
    if report.get("timed_out"):  # the tests after it were never run: they count as not passed
        row.broke, row.reason, row.detail = True, report["timed_out"], report.get("timed_out_at", "")
        before = [t for t in failed if "Timeout (>" not in (results[t].get("message") or results[t]["text"] or "")]
        if before:  # checks that failed before it: the first one's cause first (a hang may follow from it)
            first, cause = results[before[0]], dict(row.failures)[before[0]]
            row.reason = say(
                zh=f"{short(before[0])}：{cause}；之后，{report['timed_out']}",
                en=f"{short(before[0])}: {cause}; then {report['timed_out']}",
            )
            row.detail = "\n".join(x for x in ((first.get("message") or first["text"]).strip(), row.detail) if x)
    elif unfinished:  # the process died, or was stopped, before these tests reported
        row.broke = True
        row.reason, code = died(rc, report.get("running"), output)
        if failed:
            n = len(failed)
            row.reason += say(zh=f"；在它之前已有 {n} 个检查失败", en=f"; {n} check{'s' * (n != 1)} failed before it")
        printed = printed_before(output) if rc is not None else []
        row.detail = crash_detail(row, report.get("running"), code, printed, failed, results)
    elif failed:
        first = results[failed[0]]
        row.reason = f"{short(failed[0])}: {row.failures[0][1]}"
        if "not written yet" not in first["reason"]:  # the stub's message says it all
            row.detail = (first.get("message") or first["text"]).strip() or first["reason"]
        graded = seam.path(s.lesson)
        if (
            not row.passed
            and not first["cause"]
            and {results[t]["reason"] for t in failed} == {first["reason"]}
            and first["reason"].startswith(graded)
        ):  # course/seam.py's report: no import
            row.blocker = "\n".join(
                [
                    say(
                        zh=f"{graded} 没能导入，所以哪一步都跑不了：",
                        en=f"{graded} does not import, so no step can run:",
                    ),
                    "    " + first["reason"],
                    *first["text"].strip().splitlines()[1:2],
                ]
            )
    elif rc not in (0, 5):
        row.reason = say(zh=f"pytest 以状态 {rc} 结束", en=f"pytest stopped with exit status {rc}")
    if row.total == 0 and row.skipped and not row.reason:  # not a pass: nothing was checked
        row.reason = scorecard.not_run_line(row) + say(
            zh="：这一步在这里一个检查都没有", en=": no check of this step runs here"
        )
    if row.total == 0 and not row.reason:
        row.reason = say(zh="这一步没有一个检查运行", en="no test of this step ran")
    return row


FAULT = re.compile(r"(?s)Fatal Python error:.*?(?:Extension modules:[^\n]*|\Z)")  # faulthandler's report
PROGRESS = re.compile(r"^[.FEsxX]+(?:\s+\[\s*\d+%\])?$")  # pytest -q's progress line
DOTS_FIRST = re.compile(r"^(?=[FEsxX]*\.)[.FEsxX]{2,}(?=[a-z(\[<'\"/*])")  # progress, then a C library's words


def printed_before(output, limit=6):
    """The last lines a crashed process printed before faulthandler's report (a C library's
    complaint, your own print), pytest's progress dots left out."""
    text = FAULT.sub("", output)
    lines = (DOTS_FIRST.sub("", line.rstrip()) for line in text.splitlines())
    said = [line for line in lines if line.strip() and not PROGRESS.match(line.strip())]
    return said[-limit:]


# glibc's allocator aborts with one of these when it finds its own bookkeeping overwritten: a write
# out of bounds happened earlier, anywhere, and the line running at the abort only noticed it.
HEAP_CORRUPTED = re.compile(
    r"(?m)^(?:[^\n]*?)((?:free|malloc|realloc|munmap_chunk|malloc_consolidate)\(\): [^\n]+"
    r"|double free or corruption[^\n]*|corrupted (?:size|double-linked list)[^\n]*)$"
)


def died(rc, running, output):
    """One line for a process that never finished its report (crashed, exited, hung), and the code line."""
    graded = seam.graded_paths()
    # faulthandler (on in pytest) prints the stack of a crash, innermost frame first
    yours = re.search(r'File "[^"]*(' + "|".join(map(re.escape, graded)) + r')", line (\d+) in (\w+)', output)
    at = f"{yours[1]} line {yours[2]} ({yours[3]})" if yours else ""
    where_en = (f" in {short(running)}" if running else "") + (f" at {at}" if at else "")
    where_zh = (f"，在 {short(running)}" if running else "") + (f"，{at}" if at else "")
    code = source_line(yours[1], int(yours[2])) if yours else ""
    if rc is None:
        return (
            say(
                zh=f"运行 {STEP_LIMIT_S} s 后仍未结束{where_zh}：已停止（每个测试自己的超时没能打断它）",
                en=f"still running after {STEP_LIMIT_S} s{where_en}: stopped (a hang the per-test timeout "
                "could not interrupt)",
            ),
            code,
        )
    heap = HEAP_CORRUPTED.search(FAULT.sub("", output)) if rc == -signal.SIGABRT else None
    if heap:
        noticed_en = (f" in {short(running)}" if running else "") + (f"; noticed at {at}" if at else "")
        noticed_zh = (f"，在 {short(running)}" if running else "") + (f"；发现于 {at}" if at else "")
        return (
            say(
                zh=f"崩溃了（{signal.Signals(-rc).name}）{noticed_zh}：C 库的内存分配器发现自己的记录被写坏了"
                f"（{heap[1]}），是更早的某次 store 或 atomic 写出了张量的边界；发现它的那一行不一定是写坏它的那一行，"
                "检查每个 store 的掩码和偏移，先看崩溃之前失败的检查；后面的测试没有运行",
                en=f"crashed ({signal.Signals(-rc).name}){noticed_en}: the C library's allocator found its own "
                f"records overwritten ({heap[1]}), so a store or an atomic wrote past a tensor earlier; the line "
                "that noticed is not necessarily the one that wrote: check every store's mask and offsets, and the "
                "checks that failed before the crash first; later tests did not run",
            ),
            code,
        )
    if rc < 0:
        signame = signal.Signals(-rc).name
        out_of_bounds = say(
            zh="是不是有一次 load 或 store 远远超出了张量？检查掩码和偏移",
            en="a load or store far outside a tensor? check the masks and offsets",
        )
        why = {
            "SIGSEGV": out_of_bounds,
            "SIGBUS": out_of_bounds,
            "SIGABRT": say(
                zh="进程中止了（os.abort，或某个 C 库内部的检查失败，比如写坏了内存）",
                en="aborted (os.abort, or a failed check inside a C library, such as memory written out of bounds)",
            ),
        }.get(signame, say(zh="进程被杀掉了", en="killed"))
        return (
            say(
                zh=f"崩溃了（{signame}）{where_zh}：{why}；后面的测试没有运行",
                en=f"crashed ({signame}){where_en}: {why}; later tests did not run",
            ),
            code,
        )
    return (
        say(
            zh=f"测试进程以状态 {rc} 退出{where_zh}，检查还没跑完：你的代码调用了 exit 吗？",
            en=f"the test process exited with status {rc}{where_en} before its checks ran: does your code call exit?",
        ),
        code,
    )


def crash_detail(row, running, code, printed, failed, results):
    """What a learner can act on after a crash: the check and its case, the line it died at, what
    was printed just before, and the first check that failed before it, in full (a shape message)."""
    parts = []
    if running:
        case = case_name(row, running)
        parts.append(say(zh=f"崩溃时正在运行：{case}", en=f"running when it crashed: {case}"))
    parts += [code] if code else []
    if printed:
        parts.append(say(zh="崩溃之前打印的最后几行：", en="the last lines printed before the crash:"))
        parts += ["    " + line for line in printed]
    if failed:
        first = failed[0]
        n = len(failed)
        parts.append(
            say(
                zh=f"崩溃之前已有 {n} 个检查失败，第一个是 {case_name(row, first)}：",
                en=f"before the crash, {n} check{'s' * (n != 1)} failed; the first, {case_name(row, first)}:",
            )
        )
        said = results[first].get("message") or results[first]["text"] or results[first]["reason"]
        parts += ["    " + line for line in said.strip().splitlines()]
    return "\n".join(parts)
