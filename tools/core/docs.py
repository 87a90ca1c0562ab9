"""Keep content/ true to the code: code citations and tool output embedded in the explainers.

Two kinds of block, both checked by `make check` (tools/checks/docs.py):

1. A citation quotes lines of a file, and the fenced block right after it must equal them:

       <!-- cite: solutions/t4_matmul.py:24-32 -->
       ```python
       ...those lines, verbatim...
       ```

   When code moves but the quoted lines still exist unchanged, `python -m tools.core.docs fix`
   renumbers the citation; when the lines themselves changed, edit the text by hand.  To add a
   citation, write the marker and an empty fence (```python + ```): `fix` fills it in.

2. A generated block holds what a command prints, run from the repo root:

       <!-- generated: python -m tools.study.tile_order 4 4 2 --format markdown -->
       ...output...
       <!-- end generated -->

   The output sits there as is (a markdown table, say), or inside one fence (```text ... ```)
   when it is plain text; regen keeps whichever form the block has.  A command that draws a
   picture takes `--png PATH`; the check draws it again into a scratch file and compares pixels
   with the committed PATH.  `python -m tools.core.docs regen` reruns every command and rewrites the
   blocks and pictures.

The pages are content/*.md and the READMEs (README.md, README.zh.md): `pages()`.

Every function takes the repo root, so tools/tests/test_docs.py can run them on a scratch copy.
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from course import ROOT
from course.warm import run_python

# The READMEs by language: each embeds every lesson's table of steps in its own language
# (tools/checks/docs.py holds that), so they are checked and regenerated like the explainers.
READMES = {"en": "README.md", "zh": "README.zh.md"}


def pages(root=ROOT):
    """Every page whose citations, generated blocks and pictures are kept true: content/*.md and the
    READMEs (one that is missing is left to tools/checks/docs.py to name, not a crash here)."""
    readmes = [root / rel for rel in READMES.values() if (root / rel).exists()]
    return sorted((root / "content").glob("*.md")) + readmes


DOCS = pages()
CITE = re.compile(r"<!-- cite: (?P<path>[\w./-]+):(?P<first>\d+)-(?P<last>\d+) -->\n```[\w-]*\n(?P<code>.*?)```", re.S)
CITE_MARK = re.compile(r"<!-- cite:.*?-->")
GENERATED = re.compile(r"(<!-- generated: (?P<cmd>.+?) -->\n)(?P<out>.*?)(<!-- end generated -->)", re.S)
GENERATED_MARK = re.compile(r"<!-- generated:.*?-->")
FENCED = re.compile(r"(?P<open>```[\w-]*\n)(?P<body>.*)(?P<close>```\n)\Z", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<src>[^)\s]+)\)")


def citations(text):
    for m in CITE.finditer(text):
        yield m, m["path"], int(m["first"]), int(m["last"]), m["code"]


def citation_problems(doc, root=ROOT):
    text = doc.read_text()
    problems = []
    well_formed = {m.start() for m in CITE.finditer(text)}
    for mark in CITE_MARK.finditer(text):  # a marker the fence does not follow is checked by nothing
        if mark.start() not in well_formed:
            line = text.count("\n", 0, mark.start()) + 1
            problems.append(
                f"{doc.name}:{line}: `{mark[0]}` must be `<!-- cite: PATH:FIRST-LAST -->` "
                f"followed on the next line by a fenced block holding those lines"
            )
    for _, path, first, last, code in citations(text):
        target = root / path
        if not target.exists():
            problems.append(f"{doc.name}: cites {path}, which does not exist")
            continue
        lines = target.read_text().splitlines(keepends=True)
        if "".join(lines[first - 1 : last]) != code:
            problems.append(
                f"{doc.name}: {path}:{first}-{last} no longer holds the quoted code "
                f"(`python -m tools.core.docs fix` renumbers it if the code only moved)"
            )
    return problems


def fix_citations(doc, root=ROOT):
    """Renumber every citation whose quoted lines occur exactly once in the file, and fill in every
    empty one from the lines it names; return how many changed."""
    text, moved = doc.read_text(), []

    def renumber(m):
        target = root / m["path"]
        if not target.exists():
            return m[0]
        lines = target.read_text().splitlines(keepends=True)
        if not m["code"]:  # a new citation, written with an empty fence: quote the lines it names
            moved.append(m["path"])
            return m[0][:-3] + "".join(lines[int(m["first"]) - 1 : int(m["last"])]) + "```"
        n = m["code"].count("\n")
        hits = [i for i in range(len(lines) - n + 1) if "".join(lines[i : i + n]) == m["code"]]
        if len(hits) != 1 or (hits[0] + 1, hits[0] + n) == (int(m["first"]), int(m["last"])):
            return m[0]
        moved.append(m["path"])
        return m[0].replace(f":{m['first']}-{m['last']} -->", f":{hits[0] + 1}-{hits[0] + n} -->", 1)

    doc.write_text(CITE.sub(renumber, text))
    return len(moved)


def run(cmd, root=ROOT, png_to=None):
    """Run a block's command from the repo root; with png_to, draw its picture there instead.

    The output names the committed path, not the scratch one, so that it compares equal."""
    argv = shlex.split(cmd)
    if argv[0] == "python":
        argv[0] = sys.executable
    if png_to is not None and "--png" in argv:
        committed = argv[argv.index("--png") + 1]
        argv[argv.index("--png") + 1] = str(png_to)
    if argv[0] == sys.executable and argv[1:2] == ["-m"]:  # forked warm where that is safe
        rc, stdout, stderr = run_python(argv[1:], root, dict(os.environ), 300)
    else:
        out = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=300)
        rc, stdout, stderr = out.returncode, out.stdout, out.stderr
    if rc != 0:
        raise RuntimeError(f"`{cmd}` failed{'' if rc is not None else ' (past 300 s)'}:\n{stderr[-2000:]}")
    if png_to is not None and "--png" in argv:
        return stdout.replace(str(png_to), committed)
    return stdout


def png_path(cmd, root=ROOT):
    argv = shlex.split(cmd)
    return root / argv[argv.index("--png") + 1] if "--png" in argv else None


def same_picture(a, b):
    import matplotlib.image as mpimg

    x, y = mpimg.imread(a), mpimg.imread(b)
    return x.shape == y.shape and (x == y).all()


def block_body(out):
    """What a block holds of its command's output: the inside of its fence, if it has one."""
    fenced = FENCED.match(out)
    return fenced["body"] if fenced else out


def fresh(cmd, root=ROOT, cache=None):
    """What `cmd` prints now, whether the picture it draws equals the committed one (None if it
    draws none), and the error if it failed.  Several pages may embed one command: give them one
    cache (a dict) and it runs once."""
    ran = {} if cache is None else cache
    if (root, cmd) not in ran:
        png = png_path(cmd, root)
        with tempfile.TemporaryDirectory() as tmp:
            drawn = Path(tmp) / "fresh.png"
            try:
                out = run(cmd, root, png_to=drawn if png else None)
                same = None if png is None else bool(png.exists() and same_picture(png, drawn))
                ran[root, cmd] = (out, same, None)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                ran[root, cmd] = (None, None, e)
    return ran[root, cmd]


def generated_problems(doc, root=ROOT, cache=None):
    text = doc.read_text()
    problems = []
    closed = {m.start() for m in GENERATED.finditer(text)}
    for mark in GENERATED_MARK.finditer(text):
        if mark.start() not in closed:
            line = text.count("\n", 0, mark.start()) + 1
            problems.append(f"{doc.name}:{line}: `{mark[0]}` has no `<!-- end generated -->` after it")
    for m in GENERATED.finditer(text):
        cmd = m["cmd"]
        out, same_picture_now, error = fresh(cmd, root, cache)
        if error is not None:
            problems.append(f"{doc.name}: {error}")
            continue
        if out != block_body(m["out"]):
            problems.append(f"{doc.name}: the output of `{cmd}` changed (`python -m tools.core.docs regen`)")
        if same_picture_now is False:
            problems.append(
                f"{doc.name}: {png_path(cmd, root).relative_to(root)} differs from what `{cmd}` "
                f"draws now (`python -m tools.core.docs regen`)"
            )
    return problems


def image_problems(doc):
    """Every picture a page shows exists (a link is relative to the page)."""
    return [
        f"{doc.name}: shows {m['src']}, which does not exist"
        for m in IMAGE.finditer(doc.read_text())
        if "://" not in m["src"] and not (doc.parent / m["src"]).exists()
    ]


def regen(doc, root=ROOT, only=None):
    """Rerun the commands (those containing `only`, if given) and rewrite their blocks and pictures."""

    def rewrite(m):
        if only and only not in m["cmd"]:
            return m[0]
        out = run(m["cmd"], root)
        fenced = FENCED.match(m["out"])
        return m[1] + (fenced["open"] + out + fenced["close"] if fenced else out) + m[4]

    doc.write_text(GENERATED.sub(rewrite, doc.read_text()))


def problems(doc, root=ROOT, cache=None):
    return citation_problems(doc, root) + generated_problems(doc, root, cache) + image_problems(doc)


if __name__ == "__main__":
    import argparse

    cli = argparse.ArgumentParser(description="check (the default), fix citations, or regen generated blocks")
    cli.add_argument("verb", nargs="?", default="check", choices=("check", "fix", "regen"))
    cli.add_argument("pages", nargs="*", type=Path, help="default: every content/*.md, README.md and README.zh.md")
    cli.add_argument("--only", metavar="TEXT", help="regen: only the commands containing TEXT")
    args = cli.parse_args()
    pages = [p.resolve() for p in args.pages] or DOCS
    for d in pages:
        if args.verb == "fix":
            print(f"{d.name}: renumbered or filled {fix_citations(d)} citation(s)")
        elif args.verb == "regen":
            regen(d, only=args.only)
    # fix and regen report what they leave: citations, and the blocks they did not rewrite.
    ran = {}
    found = [
        p
        for d in pages
        for p in (problems(d, cache=ran) if args.verb == "check" else citation_problems(d) + image_problems(d))
    ]
    print("\n".join(found) or f"{len(pages)} page(s): citations, generated blocks and pictures hold")
    sys.exit(1 if found else 0)
