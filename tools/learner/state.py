"""What the learner's commands remember between runs, in two git-ignored files of the repo:
.grade.json (which steps the last scorecards saw done, and for which version of the graded
file) and .hints.json (how many hints of each step were shown)."""

import json

from course import ROOT, seam

LAST_GRADE = ROOT / ".grade.json"
HINTS_SEEN = ROOT / ".hints.json"


def _stamp(lesson):
    graded = ROOT / seam.path(lesson)
    return dict(path=seam.path(lesson), mtime=graded.stat().st_mtime if graded.exists() else None)


def _read(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def remembered(lesson):
    """{step id: done} from the last scorecards, if the graded file has not changed since; else None."""
    last = _read(LAST_GRADE).get(lesson.id, {})
    return last.get("done") if {k: last.get(k) for k in _stamp(lesson)} == _stamp(lesson) else None


def remember(lesson, done):
    """Keep which steps passed ({step id: bool}), and for which version of the graded file."""
    state = _read(LAST_GRADE)
    state[lesson.id] = dict(_stamp(lesson), done=dict(remembered(lesson) or {}, **done))
    try:
        LAST_GRADE.write_text(json.dumps(state))
    except OSError:
        pass  # a read-only checkout still gets its scorecard


def hints_seen():
    return _read(HINTS_SEEN)


def see_hints(seen):
    HINTS_SEEN.write_text(json.dumps(seen, indent=1) + "\n")


def current_lesson(chosen=None):
    """The lesson named by `chosen` (LESSON=T5), else the first whose required steps the last
    scorecards did not all see pass, for the files as they are now: make test moves on to T5 once
    T4.1-T4.4 pass."""
    from course import registry

    if chosen:
        return registry.lesson(chosen)
    for lesson in registry.LESSONS:
        done = remembered(lesson) or {}
        if not all(done.get(s.id) for s in lesson.steps if not s.advanced):
            return lesson
    return registry.LESSONS[-1]


def finished_before(lesson):
    """The lessons before `lesson` whose required steps the last scorecards all saw pass, for the
    files as they are now: make test shows each as one green line above the lesson in progress."""
    from course import registry

    earlier = registry.LESSONS[: registry.LESSONS.index(lesson)]
    return [done for done in earlier if all((remembered(done) or {}).get(s.id) for s in done.steps if not s.advanced)]
