"""What tools/study/groups.py finds wrong in a grouped tile schedule: the rules of the lesson's §3,
checked on what the graded file did (its route's counts and offsets, its expert_tile_counts, the
trace its grouped_tiles recorded), one line each, in the learner's language."""

from dataclasses import dataclass

from course.i18n import say


def cdiv(a, b):
    return -(-a // b)


def ranges(numbers):
    """[0, 1, 2, 5, 7, 8] -> '0-2, 5, 7-8'."""
    out, run = [], []
    for x in [*sorted(numbers), None]:
        if run and x is not None and x == run[-1] + 1:
            run.append(x)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [x]
    return ", ".join(out) or "-"


def tiles_were(numbers):
    """'tile 3 was' or 'tiles 0-2, 5 were'."""
    return f"tile {numbers[0]} was" if len(numbers) == 1 else f"tiles {ranges(numbers)} were"


def expected_tiles(counts, block_m, block_n, n):
    """{(expert, pid_m, pid_n): (row_begin, row_end)} of every tile the counts give: each expert's
    rows in whole m-blocks, the last cut at the expert's last row, times the n-blocks."""
    want, start = {}, 0
    for e, c in enumerate(counts):
        for pm in range(cdiv(max(0, c), block_m)):
            for pn in range(cdiv(n, block_n)):
                want[(e, pm, pn)] = (start + pm * block_m, min(start + (pm + 1) * block_m, start + c))
        start += max(0, c)
    return want


@dataclass
class Schedule:
    """What the graded file did for one routing."""

    histogram: list  # the routing's own rows per expert, counted on the host
    counts: list  # route's counts
    offsets: list  # route's row ends
    sorted_slots: list  # route's sorted_slots
    slot_experts: list  # slot_experts[s]: the expert slot s chose
    m_blocks: list  # expert_tile_counts' m_blocks (None when no expert has rows)
    tile_ends: list  # and its tile_ends
    trace: list  # trace[tile id] = (epilogues, expert, pid_m, pid_n, row begin, row end, program)
    n: int
    block_m: int
    block_n: int
    programs: int

    @property
    def num_pid_n(self):
        return cdiv(self.n, self.block_n)

    def done_tiles(self):
        """[(tile id, trace row)] of the tile ids whose epilogue ran at least once."""
        return [(t, row) for t, row in enumerate(self.trace) if row[0]]

    def route_problems(self):
        out = []
        if self.counts != self.histogram:
            out.append(
                say(
                    zh=f"route 的 counts 是 {self.counts}，路由里每个专家其实有 {self.histogram} 行",
                    en=f"route's counts are {self.counts}; the routing gives the experts {self.histogram} rows",
                )
            )
        ends = [sum(self.counts[: e + 1]) for e in range(len(self.counts))]
        if self.offsets != ends:
            out.append(
                say(
                    zh=f"route 的 offsets 是 {self.offsets}，counts 的累加（每个专家的行尾）是 {ends}",
                    en=f"route's offsets are {self.offsets}; the running sum of its counts (the row ends) is {ends}",
                )
            )
        for e, end in enumerate(ends):
            for pos in range(end - self.counts[e], end):
                slot = self.sorted_slots[pos] if pos < len(self.sorted_slots) else -1
                if not 0 <= slot < len(self.slot_experts) or self.slot_experts[slot] != e:
                    chose = self.slot_experts[slot] if 0 <= slot < len(self.slot_experts) else "?"
                    out.append(
                        say(
                            zh=f"排序后的第 {pos} 行在专家 {e} 的行里，放的却是 slot {slot}（它选的是专家 {chose}）",
                            en=f"sorted row {pos} is among expert {e}'s rows, yet holds slot {slot} (which chose "
                            f"expert {chose})",
                        )
                    )
                    return out  # one is enough: `make test` for the routing step says more
        return out

    def count_problems(self):
        if self.m_blocks is None:
            return []
        want_m = [cdiv(max(0, c), self.block_m) for c in self.counts]
        want_ends = [sum(want_m[: e + 1]) * self.num_pid_n for e in range(len(want_m))]
        if self.m_blocks == want_m and self.tile_ends == want_ends:
            return []
        return [
            say(
                zh=f"expert_tile_counts 给出 m_blocks {self.m_blocks}、tile_ends {self.tile_ends}，"
                f"应当是 {want_m}、{want_ends}",
                en=f"expert_tile_counts gives m_blocks {self.m_blocks} and tile_ends {self.tile_ends}, not "
                f"{want_m} and {want_ends}",
            )
        ]

    def tile_problems(self):
        want = expected_tiles(self.counts, self.block_m, self.block_n, self.n)
        total = len(want)
        ends = [sum(max(0, c) for c in self.counts[: e + 1]) for e in range(len(self.counts))]
        out, seen, never, twice, elsewhere = [], {}, [], [], []
        for t, (epilogues, e, pm, pn, begin, end, prog) in enumerate(self.trace):
            if t >= total:
                if epilogues:
                    out.append(
                        say(
                            zh=f"一共只有 {total} 个 tile，tile 号 {t} 却也做了：循环要停在设备上读出的总数",
                            en=f"there are {total} tiles, yet tile id {t} was done: the loop must stop at the total",
                        )
                    )
                continue
            if epilogues == 0:
                never.append(t)
                continue
            if epilogues > 1:
                twice.append(t)
            if prog != t % self.programs:
                elsewhere.append(t)
            key = (e, pm, pn)
            if key in seen:
                out.append(
                    say(
                        zh=f"tile {seen[key]} 和 tile {t} 做的是同一个 (专家 {e}, m-block {pm}, n-block {pn})",
                        en=f"tiles {seen[key]} and {t} both did (expert {e}, m-block {pm}, n-block {pn})",
                    )
                )
            seen.setdefault(key, t)
            if key not in want:
                out.append(
                    say(
                        zh=f"tile {t} 放在 (专家 {e}, m-block {pm}, n-block {pn})，这个专家没有这个 tile",
                        en=f"tile {t} went to (expert {e}, m-block {pm}, n-block {pn}), which that expert does not "
                        "have",
                    )
                )
                continue
            if any(begin < x < end for x in ends):
                out.append(
                    say(
                        zh=f"tile {t}（专家 {e}）的行 {begin}..{end - 1} 越过了专家的边界，混进了另一个专家的行",
                        en=f"tile {t} (expert {e}) covers rows {begin}..{end - 1}, across an expert's end: it mixes "
                        "two experts' rows",
                    )
                )
            elif (begin, end) != want[key]:
                a, b = want[key]
                out.append(
                    say(
                        zh=f"tile {t}（专家 {e}, m-block {pm}）的行是 {begin}..{end - 1}，应当是 {a}..{b - 1}",
                        en=f"tile {t} (expert {e}, m-block {pm}) covers rows {begin}..{end - 1}, not {a}..{b - 1}",
                    )
                )
        if never:
            out.insert(0, say(zh=f"tile {ranges(never)} 没人做", en=f"{tiles_were(never)} never done"))
        if twice:
            out.insert(0, say(zh=f"tile {ranges(twice)} 做了不止一次", en=f"{tiles_were(twice)} done more than once"))
        if elsewhere:
            out.append(
                say(
                    zh=f"tile {ranges(elsewhere)} 不是由程序 tile 号 mod {self.programs} 做的",
                    en=f"{tiles_were(elsewhere)} not done by program (tile id mod {self.programs})",
                )
            )
        missing = sorted(set(want) - set(seen))
        if missing:
            e, pm, pn = missing[0]
            out.append(
                say(
                    zh=f"{len(missing)} 个 (专家, m-block, n-block) 没有 tile 去做，例如 ({e}, {pm}, {pn})",
                    en=f"{len(missing)} place{'s' * (len(missing) > 1)} (expert, m-block, n-block) got no tile, "
                    f"({e}, {pm}, {pn}) for one",
                )
            )
        return out

    def problems(self):
        """What is wrong, one line each (empty when every rule of §3 holds)."""
        return self.route_problems() + self.count_problems() + self.tile_problems()
