"""`make reset`: start over from the stub, without losing what you wrote.

Each file of yours in mine/ that differs from the stub is first copied to
mine/backups/<name>.<time>.py (git-ignored), then restored as committed in git's HEAD.
Nothing is written for a file whose copy fails.  LESSON=T4 resets that lesson's file alone.
"""

import os
import shutil
import subprocess
import sys
import time

from course import ROOT, registry
from course.i18n import say
from tools.core.repo import committed
from tools.learner.terminal import wrap

BACKUPS = ROOT / "mine" / "backups"


def tell(words, file=None):
    """print(words), wrapped to the terminal (a line of make reset's or make upgrade's)."""
    print("\n".join(wrap(words, 2, first="")), file=file)


def keep_copy(lesson, mine):
    """Copy `mine` to mine/backups/<module>.<time>.py and say so: the copy's path from the repo, or
    None (said on stderr) where the copy failed.  make upgrade keeps its copies here too."""
    BACKUPS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup, n = BACKUPS / f"{lesson.module}.{stamp}.py", 1
    while backup.exists():  # two resets in one second keep both
        backup, n = backup.with_name(f"{lesson.module}.{stamp}-{n}.py"), n + 1
    shutil.copy2(mine, backup)
    if backup.read_bytes() != mine.read_bytes():
        tell(
            say(
                zh=f"没能在 {backup} 留一份副本；什么都没有改。",
                en=f"could not keep a copy in {backup}; nothing changed.",
            ),
            file=sys.stderr,
        )
        return None
    kept = backup.relative_to(ROOT)
    tell(say(zh=f"你的文件已保存在 {kept}", en=f"your file is kept in {kept}"))
    return kept


def reset(lesson):
    rel = f"mine/{lesson.file}"
    mine = ROOT / rel
    try:
        stub = committed(rel)
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        tell(
            say(
                zh=f"make reset 需要 git，以及一个含有 {rel} 的提交（{e}）；什么都没有改。",
                en=f"make reset needs git and a commit holding {rel} ({e}); nothing changed.",
            ),
            file=sys.stderr,
        )
        return 1
    if mine.exists() and mine.read_text() == stub:
        tell(
            say(
                zh=f"{rel} 和 HEAD 里提交的一样，不用重置。如果你提交过自己写的代码，HEAD 里就是它："
                f"git log -- {rel} 列出各次提交，git checkout <课程的那次提交> -- {rel} 取回 stub。",
                en=f"{rel} is already as committed in HEAD; nothing to do.  If you committed your own work, "
                f"HEAD holds it: git log -- {rel} lists the commits, and git checkout <the course's commit> -- {rel} "
                "takes the stub from there.",
            )
        )
        return 0
    if mine.exists():
        kept = keep_copy(lesson, mine)
        if kept is None:
            return 1
        tell(say(zh=f"  （对比：diff {kept} {rel}）", en=f"  (compare: diff {kept} {rel})"))
    mine.write_text(stub)
    tell(say(zh=f"{rel} 又是提交（HEAD）里的 stub 了。", en=f"{rel} is the stub again, as committed in HEAD."))
    return 0


def on_chosen_lessons(action):
    """action(lesson) for LESSON's lesson, else for every lesson; the worst exit status (2: no such lesson).
    make reset and make upgrade both take LESSON= so."""
    chosen = os.environ.get("LESSON")
    try:
        lessons = [registry.lesson(chosen)] if chosen else registry.LESSONS
    except KeyError:
        known = ", ".join(lesson.id for lesson in registry.LESSONS)
        tell(
            say(zh=f"没有 {chosen!r} 这一课；可选的课：{known}", en=f"no lesson {chosen!r}; lessons are {known}"),
            file=sys.stderr,
        )
        return 2
    return max(action(lesson) for lesson in lessons)


def main():
    return on_chosen_lessons(reset)


if __name__ == "__main__":
    sys.exit(main())
