"""Keep content/ true to the code: code citations and tool output embedded in the explainers.

Two kinds of block, both checked by `make check` (tools/checks/docs.py):

1. A citation quotes lines of a file, and the fenced block right after it must equal them:

       <!-- cite: solutions/t4_matmul.py:24-32 -->
       ```python
       ...those lines, verbatim...
       ```

   When code moves but the quoted lines still exist unchanged, `python tools/docs.py fix`
   renumbers the citation; when the lines themselves changed, edit the text by hand.

2. A generated block holds what a command prints, run from the repo root:

       <!-- generated: python tools/tile_order.py 4 4 2 --format markdown -->
       ...output...
       <!-- end generated -->

   A command that draws a picture takes `--png PATH`; the check draws it again into a scratch
   file and compares pixels with the committed PATH.  `python tools/docs.py regen` reruns every
   command and rewrites the blocks and pictures.
"""
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "content").glob("*.md"))
CITE = re.compile(r"<!-- cite: (?P<path>[\w./-]+):(?P<first>\d+)-(?P<last>\d+) -->\n```[\w-]*\n(?P<code>.*?)```", re.S)
GENERATED = re.compile(r"(<!-- generated: (?P<cmd>.+?) -->\n)(?P<out>.*?)(<!-- end generated -->)", re.S)


def citations(text):
    for m in CITE.finditer(text):
        yield m, m["path"], int(m["first"]), int(m["last"]), m["code"]


def citation_problems(doc):
    problems = []
    for m, path, first, last, code in citations(doc.read_text()):
        target = ROOT / path
        if not target.exists():
            problems.append(f"{doc.name}: cites {path}, which does not exist")
            continue
        lines = target.read_text().splitlines(keepends=True)
        if "".join(lines[first - 1:last]) != code:
            problems.append(f"{doc.name}: {path}:{first}-{last} no longer holds the quoted code "
                            f"(`python tools/docs.py fix` renumbers it if the code only moved)")
    return problems


def fix_citations(doc):
    text = doc.read_text()

    def renumber(m):
        lines = (ROOT / m["path"]).read_text().splitlines(keepends=True)
        n = m["code"].count("\n")
        hits = [i for i in range(len(lines) - n + 1) if "".join(lines[i:i + n]) == m["code"]]
        if len(hits) != 1:
            return m[0]
        return m[0].replace(f":{m['first']}-{m['last']} -->", f":{hits[0] + 1}-{hits[0] + n} -->", 1)
    doc.write_text(CITE.sub(renumber, text))


def run(cmd, png_to=None):
    """Run a block's command from the repo root; with png_to, draw its picture there instead."""
    argv = shlex.split(cmd)
    if argv[0] == "python":
        argv[0] = sys.executable
    if png_to is not None and "--png" in argv:
        argv[argv.index("--png") + 1] = str(png_to)
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"`{cmd}` failed:\n{out.stderr[-2000:]}")
    return out.stdout


def png_path(cmd):
    argv = shlex.split(cmd)
    return ROOT / argv[argv.index("--png") + 1] if "--png" in argv else None


def same_picture(a, b):
    import matplotlib.image as mpimg
    x, y = mpimg.imread(a), mpimg.imread(b)
    return x.shape == y.shape and (x == y).all()


def generated_problems(doc):
    problems = []
    for m in GENERATED.finditer(doc.read_text()):
        cmd, png = m["cmd"], png_path(m["cmd"])
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / "fresh.png"
            try:
                out = run(cmd, png_to=fresh if png else None)
            except RuntimeError as e:
                problems.append(f"{doc.name}: {e}")
                continue
            if out != m["out"]:
                problems.append(f"{doc.name}: the output of `{cmd}` changed (`python tools/docs.py regen`)")
            if png and (not png.exists() or not same_picture(png, fresh)):
                problems.append(f"{doc.name}: {png.relative_to(ROOT)} differs from what `{cmd}` draws now "
                                f"(`python tools/docs.py regen`)")
    return problems


def regen(doc):
    text = doc.read_text()
    doc.write_text(GENERATED.sub(lambda m: m[1] + run(m["cmd"]) + m[4], text))


if __name__ == "__main__":
    verb = sys.argv[1] if len(sys.argv) > 1 else "check"
    docs = [Path(p).resolve() for p in sys.argv[2:]] or DOCS
    if verb == "fix":
        for d in docs:
            fix_citations(d)
    elif verb == "regen":
        for d in docs:
            regen(d)
    found = [p for d in docs for p in citation_problems(d) + generated_problems(d)]
    print("\n".join(found) or f"{len(docs)} explainer(s): citations and generated blocks hold")
    sys.exit(1 if found else 0)
