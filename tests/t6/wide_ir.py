"""Where moe_kernel, made with WIDE=True (x or out past 2**31 elements, §4.3), narrows to int32 a value worked
out from its int64 strides: an offset that wraps on a GPU there, and that the interpreter, on small tensors,
never shows.  Read from the kernel's Triton IR (test_hopper_compile.py makes it with the tile loop's)."""

import re

STRIDES = ("stride_xm", "stride_xk", "stride_om", "stride_on")
NAME = re.compile(r"%[\w.]+")


def narrowed_strides(text):
    """[(function, file, line)] of each arith.trunci to i32 whose operand is worked out from a stride: in
    each function of the IR, its i64 parameters named in STRIDES and every value computed from them (through
    loop-carried values too), followed op by op."""
    locs = dict(re.findall(r"^(#loc\d*) = (loc\(.*\))$", text, re.M))

    def place(loc):
        for _ in range(16):  # loc("name"(#locN)) names a value and points on; loc("file":line:col) ends it
            at = re.match(r'loc\("([^"]+)":(\d+):\d+\)', loc)
            if at:
                return at[1], int(at[2])
            inner = re.search(r"\((#loc\d*)\)\)$", loc)
            if not inner or inner[1] not in locs:
                return None, None
            loc = locs[inner[1]]
        return None, None

    found = []
    for body in re.split(r"\n(?=\s*tt\.func )", text)[1:]:
        head, *lines = body.split("\n")
        function = re.search(r"@([\w.]+?)(?:__\w*)?\(", head)
        tainted = {f"%{n}" for n in STRIDES if re.search(rf"%{n}: i64", head)}
        for _ in range(4):  # values carried around a loop come back to its head: a few passes
            before = len(tainted)
            for line in lines:
                result, _, rest = line.partition(" = ")
                names = {n.split("#")[0] for n in NAME.findall(rest)}
                if "iter_args(" in rest:  # the loop's own values start as what they are handed
                    for carried, handed in re.findall(r"(%[\w.]+) = (%[\w.#]+)", rest):
                        if handed.split("#")[0] in tainted:
                            tainted.add(carried)
                if result.strip().startswith("%") and names & tainted:
                    tainted.add(result.strip().split(":")[0])
            if len(tainted) == before:
                break
        for line in lines:
            cut = re.search(r"arith\.trunci (%[\w.#]+) : \S*i64\S* to \S*i32", line)
            if cut and cut[1].split("#")[0] in tainted:
                loc = re.search(r"loc\((#loc\d*)\)\s*$", line)
                file, at = place(locs.get(loc[1], "")) if loc else (None, None)
                found.append((function[1].rsplit(".", 1)[-1] if function else "?", file, at))
    return found
