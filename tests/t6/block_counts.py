"""Lesson T6's check of scan_counts' input and its sums (T6.1): where route's counts are wrong, the
per-block counts count_experts wrote tell the scan's mistakes apart (test_routing.py)."""

import torch

from course.i18n import count
from course.messages import fail

from .common import ROUTE_BLOCK, SCAN_ROWS, T6, UNSET
from .routings import counts_in_range


def check_block_counts(block_counts, r, ids, experts, case, block_base=None):
    """Where counts are wrong: block_counts, count_experts' output and scan_counts' input (read back
    after route), tell the two apart where they show how: the right per-block counts at a row pitch
    of num_experts (where rows are E_BLOCK wide), counts that are the sum of block_counts read at
    that pitch, or counts all 0 from right block_counts (scan_counts' sum never grew; with block_base,
    scan_counts' other output, never written either, its loop over the batches never ran)."""
    want_counts, _ = counts_in_range(ids, experts)
    counts = r.counts.cpu()
    if torch.equal(counts, want_counts) or not isinstance(block_counts, torch.Tensor) or block_counts.dim() != 2:
        return
    flat = ids.reshape(-1).cpu().long()
    blocks, e_block = block_counts.shape
    keep = (flat >= 0) & (flat < experts)
    block = torch.arange(flat.numel()) // ROUTE_BLOCK
    per_block = torch.bincount(block[keep] * experts + flat[keep], minlength=blocks * experts).view(blocks, experts)
    got = block_counts.cpu().long()
    packed = got.reshape(-1)[: blocks * experts].view(blocks, experts)  # read at a row pitch of num_experts
    if experts != e_block and torch.equal(packed, per_block) and not torch.equal(got[:, :experts], per_block):
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}；count_experts 写出的 block_counts "
            f"是每块的正确计数，却是按行距 num_experts = {experts} 排的：block_counts 的每一行有 E_BLOCK = "
            f"{e_block} 个数，块 b 专家 e 在 b * E_BLOCK + e",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}; count_experts wrote the right "
            f"count of each block into block_counts, but at a row pitch of num_experts = {experts}: a row of "
            f"block_counts holds E_BLOCK = {e_block} counts, block b's of expert e at b * E_BLOCK + e",
            "2.1",
        )
    if torch.equal(got[:, :experts], per_block + UNSET):  # hunt14: atomics onto the row as route handed it over
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}；block_counts"
            f"（count_experts 的输出）每一格都正好是这一块的计数加上 {UNSET}，"
            f"而 {UNSET} 正是 route 交给它时每一格原有的值（route 用 torch.empty 分配 block_counts，"
            f"不清零；这些测试里新的整数张量一开始都是 {UNSET}）：计数是加到这一行原有的值上的"
            "（比如直接 tl.atomic_add），而不是写进这一行。用 tl.histogram 算出整行再 store 一次，"
            "或者先 store 一行 0、tl.debug_barrier()，再 atomic_add",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}; every cell of block_counts "
            f"(count_experts' output) is its block's count plus {UNSET}, the value each cell held when route handed it "
            f"over (route allocates block_counts with torch.empty, never zeroed; in these tests a new integer tensor "
            f"starts at {UNSET}): the counts were added onto the row as it was (a bare tl.atomic_add, say), not "
            "written into it. Count the whole row with tl.histogram and store it once, or store a row of zeros, "
            "tl.debug_barrier(), then the atomic adds",
            "2.1",
        )
    # early37: every program stored its row at row 0 (the address without tl.program_id(0) * E_BLOCK)
    if blocks > 1 and bool((got[1:] == UNSET).all()) and any(torch.equal(got[0, :experts], row) for row in per_block):
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}；block_counts 只有第 0 行写过"
            f"（是某一块的计数），其余 {blocks - 1} 行还是 route 交给它时的 {UNSET}：每个程序都存到了第 0 行，"
            "存储的地址少了 tl.program_id(0) * E_BLOCK",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}; block_counts has row 0 "
            f"written alone (one block's counts), its other {blocks - 1} rows still the {UNSET} route handed over: "
            "every program stored at row 0, its address without tl.program_id(0) * E_BLOCK",
            "2.1",
        )
    # early37: each program's slots from b, not b * BLOCK (tl.program_id(0) + tl.arange(0, BLOCK)): blocks overlap
    from_b = [
        torch.bincount(flat[b : b + ROUTE_BLOCK][keep[b : b + ROUTE_BLOCK]], minlength=experts) for b in range(blocks)
    ]
    if blocks > 1 and torch.equal(got[:, :experts], torch.stack(from_b)):
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}；count_experts 存下的 block_counts "
            f"第 b 行正是 slot b .. b + {ROUTE_BLOCK - 1} 的计数：程序 b 从 slot b 读起，而不是从 b * BLOCK，"
            "相邻的块几乎整块重叠，一个 slot 被数了好几遍（slots = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)）",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}; row b of the block_counts "
            f"count_experts wrote is the count of slots b .. b + {ROUTE_BLOCK - 1}: program b read from slot b, "
            "not from b * BLOCK, so neighbouring blocks overlap almost whole and a slot is counted many times "
            "(slots = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK))",
            "2.1",
        )
    if not torch.equal(got[:, :experts], per_block):
        return
    if experts != e_block and torch.equal(counts.long(), packed.sum(0)):
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}；block_counts 是对的，而 counts "
            f"正是按行距 num_experts = {experts} 读 block_counts 再相加得到的：它的每一行有 E_BLOCK = {e_block} 个数",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}; block_counts are right, and "
            f"counts are their sum read at a row pitch of num_experts = {experts}: a row of block_counts holds "
            f"E_BLOCK = {e_block} counts",
            "2.1",
        )
    never = isinstance(block_base, torch.Tensor) and bool((block_base.cpu() == UNSET).all())
    if not counts.any() and never:
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到全 0；scan_counts 读的 block_counts 是对的，"
            f"而它的另一个输出 block_base 一个单元也没写过：按批的循环一次也没有跑（{blocks} 块要从块 0 起、"
            "每次 SCAN_ROWS 块地走到 num_blocks）",
            f"{case}: counts should be {want_counts.tolist()}, got all 0; the block_counts scan_counts reads are "
            f"right, and it never wrote one cell of block_base, its other output: its loop over the batches never "
            f"ran ({count(blocks, 'block')} to go through, from block 0 up to num_blocks, SCAN_ROWS at a time)",
            "2.1",
        )
    if not counts.any():
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到全 0；scan_counts 读的 block_counts 是对的：它的累计量 "
            "running 一直没有增长（每一批之后要加上这一批各列的和）",
            f"{case}: counts should be {want_counts.tolist()}, got all 0; the block_counts scan_counts reads are "
            "right: its running sum never grew (after each batch, add the batch's column sums to it)",
            "2.1",
        )
    times = (torch.arange(blocks) + 1).clamp_max(SCAN_ROWS)  # the batches of SCAN_ROWS rows that hold block b
    if blocks > 1 and torch.equal(counts.long(), (per_block * times[:, None]).sum(0)):
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}；block_counts 是对的，而 counts "
            f"正是把第 b 块数了 min(b + 1, {SCAN_ROWS}) 遍的和：每一批 SCAN_ROWS 行只隔一块就开始时，每一块被它所在的"
            "每一批各数一遍；下一批要从这一批之后 SCAN_ROWS 块开始",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}; block_counts are right, and "
            f"counts are their sum with block b counted min(b + 1, {SCAN_ROWS}) times, as batches of SCAN_ROWS rows "
            "that start one block apart count it, once in each batch that holds it: start each batch SCAN_ROWS "
            "blocks after the one before",
            "2.1",
        )
    if blocks > SCAN_ROWS and torch.equal(counts.long(), per_block[:SCAN_ROWS].sum(0)):
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}；block_counts 是对的，而 counts "
            f"正是只有前 SCAN_ROWS = {SCAN_ROWS} 块的和：第一批以后的块一块也没有加进来：按批的循环走完第一批就停了，"
            f"或者掩码挡掉了后面各批的行（行的掩码是 start + tl.arange(0, SCAN_ROWS) < num_blocks）；"
            f"{blocks} 块要一直走到 num_blocks",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}; block_counts are right, and "
            f"counts are the sum of the first SCAN_ROWS = {SCAN_ROWS} blocks alone: no block after the first batch "
            "was added, as when the loop over the batches stopped after the first, or a mask kept the later batches' "
            "rows out (the rows' mask is start + tl.arange(0, SCAN_ROWS) < num_blocks); "
            f"{count(blocks, 'block')} go up to num_blocks",
            "2.1",
        )
    batches = -(-blocks // SCAN_ROWS)  # early37: every batch read the first SCAN_ROWS blocks (b0 left out)
    if blocks > SCAN_ROWS and torch.equal(counts.long(), per_block[:SCAN_ROWS].sum(0) * batches):
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}；block_counts 是对的，而 counts "
            f"正是前 SCAN_ROWS = {SCAN_ROWS} 块的和乘以批数 {batches}：每一批读的都是前 {SCAN_ROWS} 块，"
            "这一批的块号没有加上它的起点（blocks = b0 + tl.arange(0, SCAN_ROWS)）",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}; block_counts are right, and "
            f"counts are the first SCAN_ROWS = {SCAN_ROWS} blocks' sum times the {batches} batches: each "
            f"batch read the first {SCAN_ROWS} blocks, its block numbers without the batch's start "
            "(blocks = b0 + tl.arange(0, SCAN_ROWS))",
            "2.1",
        )
    last = (blocks - 1) // SCAN_ROWS * SCAN_ROWS  # the last batch's first block
    if blocks > SCAN_ROWS and torch.equal(counts.long(), per_block[last:].sum(0)):
        fail(
            T6,
            f"{case}：counts 应当是 {want_counts.tolist()}，得到 {counts.tolist()}；block_counts 是对的，而 counts "
            f"正是只有最后一批（块 {last}..{blocks - 1}）的和：存的是最后一批的 tl.sum，而不是跨各批累加的 running",
            f"{case}: counts should be {want_counts.tolist()}, got {counts.tolist()}; block_counts are right, and "
            f"counts are the sum of the last batch alone (blocks {last}..{blocks - 1}): the last batch's tl.sum was "
            "stored, not the running sum carried over every batch",
            "2.1",
        )
