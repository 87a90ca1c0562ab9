"""T5.3: the fix-up's two halves alone, sk_publish_partial and sk_collect_partials, each through its probe: a slot
or an order they get wrong is named here, before the products of stream-K (test_stream_k_products.py) would only
be off."""

import pytest
import torch

from course.i18n import cells, say
from course.messages import fail

from .common import T5
from .crashes import waits_told
from .stream_k_cases import (
    FIX_BM,
    FIX_BN,
    collect_order_slip,
    in_order_sum,
    slot_of_another,
    spread_tiles,
)
from support import DEVICE

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


@pytest.mark.t5_3
def test_sk_publish_partial_alone(probes):
    """Each of 4 programs publishes its tile: its slot holds the tile, its flag is 1; the slot past
    the last program's is never written.  The tile is twice as tall as it is wide (BLOCK_M != BLOCK_N):
    on a square one, rows laid BLOCK_M apart are rows laid BLOCK_N apart."""
    n, bm, bn = 4, 2 * FIX_BM, FIX_BN
    src = spread_tiles(n, bm, bn)
    partials = torch.full((n + 1, bm, bn), float("nan"), device=DEVICE)
    flags = torch.zeros(n + 1, dtype=torch.int32, device=DEVICE)
    probes.publish_probe[(n,)](src, partials, flags, bm, bn)
    if all(torch.equal(partials[p + 1], src[p]) for p in range(n)):
        fail(
            T5,
            f"sk_publish_partial：程序 p 的 partial 存进了第 p + 1 个槽（{n} 个程序都是），第 {n} 个槽没有程序，"
            "也被写了：程序 p 的槽从 partials_ptr + p * BLOCK_M * BLOCK_N 开始",
            f"sk_publish_partial: program p's partial went into slot p + 1 (all {n} programs'), so slot {n}, no "
            "program's, was written: program p's slot starts at partials_ptr + p * BLOCK_M * BLOCK_N",
            "4.2",
        )
    # the last program's tile, no spill over it: its slot at p * BLOCK_M (or BLOCK_N), not p * BLOCK_M * BLOCK_N
    flat = partials.flatten()
    for size, words in ((bm, "BLOCK_M"), (bn, "BLOCK_N")):
        at = flat[(n - 1) * size : (n - 1) * size + bm * bn].view(bm, bn)
        if not torch.equal(partials[n - 1], src[n - 1]) and torch.equal(at, src[n - 1]):
            fail(
                T5,
                f"sk_publish_partial：程序 {n - 1} 的 partial 从第 {n - 1} * {words} = {(n - 1) * size} 个 float 存起，"
                f"槽和槽叠在一起：程序 p 的槽从 partials_ptr + p * BLOCK_M * BLOCK_N 开始（p * {bm * bn}），"
                "每个槽放得下一整个 tile",
                f"sk_publish_partial: program {n - 1}'s partial was stored from float {n - 1} * {words} = "
                f"{(n - 1) * size} on, so the slots overlap: program p's slot starts at partials_ptr + p * BLOCK_M * "
                f"BLOCK_N (p * {bm * bn}), room for a whole tile",
                "4.2",
            )
    # row r at r * BLOCK_M of its slot, not r * BLOCK_N
    rows_bm = flat.as_strided((bm, bn), (bm, 1), (n - 1) * bm * bn)
    if not torch.equal(partials[n - 1], src[n - 1]) and torch.equal(rows_bm, src[n - 1]):
        fail(
            T5,
            f"sk_publish_partial：{bm}x{bn} 的 tile，每一行在槽里隔了 BLOCK_M = {bm} 个 float 放，不是 BLOCK_N = "
            f"{bn} 个：tile 的第 r 行从槽里的第 r * BLOCK_N 个 float 开始（offs = 行号 * BLOCK_N + 列号）；"
            "BLOCK_M 和 BLOCK_N 相等时看不出来",
            f"sk_publish_partial: a {bm}x{bn} tile's rows were laid BLOCK_M = {bm} floats apart in the slot, not "
            f"BLOCK_N = {bn}: row r of the tile starts at float r * BLOCK_N of the slot (offs = row * BLOCK_N + "
            "column); with BLOCK_M equal to BLOCK_N it would not show",
            "4.2",
        )
    for p in range(n):
        wrong = (partials[p] != src[p]).sum().item()
        if wrong:
            # the same values in another order: the tile stored in another layout than §4.2's row-major slot
            moved = torch.equal(partials[p].flatten().sort().values, src[p].flatten().sort().values)
            # published again into a workspace of 0.5 (NaN + x is NaN): the slot then holds 0.5 + the partial
            again = torch.full_like(partials, 0.5)
            probes.publish_probe[(n,)](src, again, torch.zeros_like(flags), bm, bn)
            added = not moved and all(torch.equal(again[q], src[q] + 0.5) for q in range(n))
            # the partial rounded to a 2-byte float before the store: the slot holds it, bit for bit, so rounded
            narrow = next(
                (d for d in (torch.float16, torch.bfloat16) if torch.equal(partials[p], src[p].to(d).float())), None
            )
            shared = slot_of_another(partials, src, p, n)
            fail(
                T5,
                f"sk_publish_partial：程序 {p} 的槽（第 {p} 个 {bm}x{bn} 块）"
                f"有 {wrong} 个格子不等于它的 partial{shared[0]}"
                + ("：值都在，只是顺序不同。槽里的 tile 要按行主序放（§4.2），测试和 owner 都这样读" if moved else "")
                + (
                    "：partial 被加到了槽里原有的值上（工作区先填 0.5，槽里就是 0.5 + partial），比如用了浮点 "
                    "atomic_add；槽里原来的内容是上一次启动留下的，partial 要用 tl.store 存进去"
                    if added
                    else ""
                )
                + (
                    f"：槽里逐位是舍入成 {narrow} 的 partial。槽是 float32 的：partial 要原样存，"
                    "到 owner 把整块加完、写 C 时才舍入一次"
                    if narrow
                    else ""
                ),
                f"sk_publish_partial: {cells(wrong)} of program {p}'s slot (the {p}-th {bm}x{bn} tile "
                f"of the workspace) differ from its partial{shared[1]}"
                + (
                    ": the values are all there, in another order. A slot holds the tile row-major (§4.2), and "
                    "the tests read it so"
                    if moved
                    else ""
                )
                + (
                    ": the partial was added to what the slot held (a workspace of 0.5 gets 0.5 + the partial), "
                    "by a float atomic_add, say; a slot holds what an earlier launch left there, so the partial "
                    "is stored with tl.store"
                    if added
                    else ""
                )
                + (
                    f": the slot holds, bit for bit, the partial rounded to {narrow}. The slots are float32: store "
                    "the partial as it is, and round once, when the owner has summed the whole tile and writes C"
                    if narrow
                    else ""
                ),
                "4.2",
            )
    if not partials[n].isnan().all():
        fail(
            T5,
            f"sk_publish_partial：{n} 个程序发布，第 {n} 个槽（没有程序的）被写了",
            f"sk_publish_partial: {n} programs published, yet slot {n} (no program's) was written",
            "4.2",
        )
    if flags.cpu().tolist() != [1] * n + [0]:
        shifted = flags.cpu().tolist() == [0] + [1] * n  # each program raised flags_ptr + pid + 1, the next one's
        fail(
            T5,
            f"sk_publish_partial：发布之后 flag 应当是 {[1] * n + [0]}（每个程序把自己的 flag 置为 1），"
            f"得到 {flags.cpu().tolist()}"
            + (
                "：每个程序举的都是下一个程序的旗（flags_ptr + pid + 1）；程序 p 的旗是 flags_ptr + pid"
                if shifted
                else ""
            ),
            f"sk_publish_partial: after publishing, flags {[1] * n + [0]} expected (each program raises its "
            f"own flag to 1), got {flags.cpu().tolist()}"
            + (
                ": each program raised the next program's flag (flags_ptr + pid + 1); program p's flag is "
                "flags_ptr + pid"
                if shifted
                else ""
            ),
            "4.2",
        )


@pytest.mark.t5_3
def test_sk_collect_partials_alone(probes):
    """Program 6 owns a tile whose other segments are programs 2..5's: it adds their partials onto
    its acc in that order, each flag put back to 0; flags outside 2..5 (other tiles') untouched.  The
    tile is twice as tall as it is wide, as in test_sk_publish_partial_alone."""
    n, first, pid, bm, bn = 8, 2, 6, 2 * FIX_BM, FIX_BN
    acc, partials = spread_tiles(1, bm, bn)[0], spread_tiles(n, bm, bn)
    flags = torch.ones(n, dtype=torch.int32, device=DEVICE)
    out = torch.full_like(acc, float("nan"))
    case = say(
        zh=f"sk_collect_partials(first_pid={first}, pid={pid})，由一个程序（程序 0）运行，"
        f"旗 {first}..{pid - 1} 开始时都举着",
        en=f"sk_collect_partials(first_pid={first}, pid={pid}), run by a launch of one program (program 0), flags "
        f"{first}..{pid - 1} raised at the start",
    )
    with waits_told(case):  # a wait that never ends, named with its cause where flag_log.py finds one
        probes.collect_probe[(1,)](acc, partials, flags, out, first, pid, bm, bn)
    want = in_order_sum(acc, partials, first, pid)
    if not torch.equal(out, want):
        backwards = torch.equal(out, in_order_sum(acc, partials.flip(0), n - pid, n - first))
        along = torch.equal(out, in_order_sum(acc, partials, first + 1, pid + 1))  # slots first + 1 .. pid
        late = torch.equal(out, in_order_sum(acc, partials, first + 1, pid))  # first_pid's partial left out
        early = torch.equal(out, in_order_sum(acc, partials, first, pid - 1))  # pid - 1's partial left out
        # each slot read with its rows BLOCK_M floats apart, not BLOCK_N (slots 0 .. pid - 1 stay inside)
        rows_bm = partials.flatten().as_strided((pid, bm, bn), (bm * bn, bm, 1))
        by_bm = torch.equal(out, in_order_sum(acc, rows_bm, first, pid))
        rounded = torch.equal(out, in_order_sum(acc, partials.half().float(), first, pid))  # each read to fp16
        # one program's slot read on every turn of the loop (p never used in the address), or -1
        one = next((q for q in range(n) if torch.equal(out, in_order_sum(acc, partials[[q] * n], first, pid))), -1)
        slip = collect_order_slip(out, acc, partials, first, pid)
        replaced = torch.equal(out, partials[pid - 1])  # acc = the partial read, each turn: the last one alone left
        fail(
            T5,
            f"sk_collect_partials(first_pid={first}, pid={pid})：{(out != want).sum().item()} 个格子（共 "
            f"{out.numel()}）不等于 acc + 程序 {first}..{pid - 1} 的 partial 按这个顺序逐个相加"
            + ("：这是倒着加的结果" if backwards else "")
            + (
                f"：这是 acc 只加上程序 {first + 1}..{pid - 1} 的 partial，程序 {first} 的漏掉了："
                "owner 要加程序 first_pid 到 pid - 1 的 partial，first_pid 也在内"
                if late
                else ""
            )
            + (
                f"：这是 acc 只加上程序 {first}..{pid - 2} 的 partial，程序 {pid - 1} 的漏掉了："
                "owner 要加程序 first_pid 到 pid - 1 的 partial，pid - 1 也在内"
                if early
                else ""
            )
            + (
                "：这是每个 partial 先舍入成 fp16 再加上的结果：读到的 partial 原样（float32）加进 acc"
                if rounded
                else ""
            )
            + (
                f"：这是第 {first + 1}..{pid} 个槽的和，程序 p 的 partial 读的是第 p + 1 个槽；"
                "程序 p 的槽从 partials_ptr + p * BLOCK_M * BLOCK_N 开始"
                if along
                else ""
            )
            + (
                f"：这是把每个槽的行隔 BLOCK_M = {bm} 个 float 读出来的和，不是隔 BLOCK_N = {bn} 个：tile 的第 r 行"
                "从槽里的第 r * BLOCK_N 个 float 开始（offs = 行号 * BLOCK_N + 列号）"
                if by_bm
                else ""
            )
            + (
                f"：这是程序 {one} 的 partial 被加了 {pid - first} 遍，其他程序的一个也没加：循环每一轮读的是同一个槽；"
                "第 p 轮要读程序 p 的槽，partials_ptr + p * BLOCK_M * BLOCK_N"
                if one >= 0
                else ""
            )
            + slip[0]
            + (
                f"：这正是程序 {pid - 1} 的 partial 本身：每一轮读到的 partial 都换掉了 acc（acc = 读到的值），"
                "owner 自己的 acc 和前面的 partial 都丢了；要加上去：acc += 读到的 partial"
                if replaced
                else ""
            )
            + "（每个槽里的 tile 按行主序放，§4.2）",
            f"sk_collect_partials(first_pid={first}, pid={pid}): {(out != want).sum().item()} of {out.numel()} "
            f"cells differ from acc + the partials of programs {first}..{pid - 1}, added one by one in that order"
            + (": this is their sum added backwards" if backwards else "")
            + (
                f": this is acc plus the partials of programs {first + 1}..{pid - 1} alone, program {first}'s left "
                "out: the owner adds the partials of programs first_pid to pid - 1, first_pid included"
                if late
                else ""
            )
            + (
                f": this is acc plus the partials of programs {first}..{pid - 2} alone, program {pid - 1}'s left "
                "out: the owner adds the partials of programs first_pid to pid - 1, pid - 1 included"
                if early
                else ""
            )
            + (
                ": this is the sum with each partial rounded to fp16 before it is added: add the partial as it is "
                "read, float32"
                if rounded
                else ""
            )
            + (
                f": this is the sum of slots {first + 1}..{pid}, program p's partial read from slot p + 1; "
                "program p's slot starts at partials_ptr + p * BLOCK_M * BLOCK_N"
                if along
                else ""
            )
            + (
                f": this is the sum of the slots read with their rows BLOCK_M = {bm} floats apart, not BLOCK_N = "
                f"{bn}: row r of the tile starts at float r * BLOCK_N of the slot (offs = row * BLOCK_N + column)"
                if by_bm
                else ""
            )
            + (
                f": this is program {one}'s partial added {pid - first} times, no other program's at all: every turn "
                "of the loop read the same slot; turn p reads program p's slot, partials_ptr + p * BLOCK_M * BLOCK_N"
                if one >= 0
                else ""
            )
            + slip[1]
            + (
                f": this is program {pid - 1}'s partial itself: each turn the partial read replaced acc (acc = the "
                "value read), so the owner's own acc and the partials before were lost; add it: acc += the partial"
                if replaced
                else ""
            )
            + " (each slot holds its tile row-major, §4.2)",
            "4.2",
        )
    want_flags = [0 if first <= p < pid else 1 for p in range(n)]
    if flags.cpu().tolist() != want_flags:
        own = flags.cpu().tolist() == [0 if p == pid else 1 for p in range(n)]  # the owner's own flag put down alone
        fail(
            T5,
            f"sk_collect_partials(first_pid={first}, pid={pid})：结束时 flag 是 {flags.cpu().tolist()}，"
            f"应当是 {want_flags}：加过的 partial 的 flag 放回 0，别的程序的不碰"
            + (
                f"；放回 0 的只有 owner 自己的旗（flags_ptr + pid，程序 {pid}），程序 {first}..{pid - 1} 的都还举着："
                "加完程序 p 的 partial，放回的是 flags_ptr + p"
                if own
                else ""
            ),
            f"sk_collect_partials(first_pid={first}, pid={pid}): flags {flags.cpu().tolist()} at the end, "
            f"{want_flags} expected: the flags of the partials added go back to 0, no other flag changes"
            + (
                f"; the owner's own flag alone went down (flags_ptr + pid, program {pid}), those of programs "
                f"{first}..{pid - 1} are still up: after adding program p's partial, put flags_ptr + p back"
                if own
                else ""
            ),
            "4.2",
        )
