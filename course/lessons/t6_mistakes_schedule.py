"""Lesson T6's classic mistakes of T6.2, the tile schedule over ragged groups (§3), rows of its explainer §8
table: t6_mistakes.py gathers them between T6.1's and T6.3's, so the table keeps its order (one file would pass
400 lines).  Their causes are keys of t6_mistakes.CAUSES, with the other steps' words.
"""

from course.lesson_data import Mistake

# grouped_tiles' lines, as in the reference, that the schedule's mistakes change.
LOOP = "for tile_id in tl.range(tl.program_id(0), total, NUM_PROGS, flatten=FLATTEN):"
CUT = "row_end = tl.minimum(row_begin + BLOCK_M, expert_end)"
ROW_BEGIN = "row_begin = expert_end - tl.load(counts_ptr + expert) + pid_m * BLOCK_M"

SCHEDULE_TABLE = (
    Mistake(
        "m-blocks-floor",
        "T6.2",
        "每个专家的 m-block 数用了 counts // BLOCK_M，丢了最后不满的一块",
        "each expert's m-blocks taken as counts // BLOCK_M, losing the last partial block",
        "3.3",
        "m_blocks = tl.cdiv(counts, BLOCK_M)",
        "m_blocks = counts // BLOCK_M",
        "test_every_tile_of_every_expert_once",
    ),
    Mistake(
        "locate-strict",
        "T6.2",
        "locate_tile 数的是 tile_ends < tile_id：专家的第一个 tile 被算给了前一个专家",
        "locate_tile counts tile_ends < tile_id: an expert's first tile goes to the expert before",
        "3.3",
        "expert = tl.sum((tile_ends <= tile_id).to(tl.int32), axis=0)",
        "expert = tl.sum((tile_ends < tile_id).to(tl.int32), axis=0)",
        "test_tile_counts_and_places_alone",
        cause="expert-by-strict-ends",  # named since zhlearner10 (t6_mistakes_zhlearner10.py)
    ),
    Mistake(
        "loop-past-total",
        "T6.2",
        "循环跑到上界（多一轮 N 方向的 tile），没有停在设备上读出的总数",
        "the loop runs on past the total read on the device (one more row of tiles)",
        "3.4",
        LOOP,
        "for tile_id in tl.range(tl.program_id(0), total + num_pid_n, NUM_PROGS, flatten=FLATTEN):",
        "test_every_tile_of_every_expert_once",
        "past-total",
    ),
    Mistake(
        "rows-not-cut",
        "T6.2",
        "tile 的行没有在专家的最后一行截断：一个 tile 混进了下一个专家的行",
        "a tile's rows not cut at the expert's last row: the tile mixes in the next expert's rows",
        "3.2",
        CUT,
        "row_end = row_begin + BLOCK_M",
        "test_every_tile_of_every_expert_once",
        "mixes-experts",
    ),
    Mistake(
        "row-begin-from-previous-end",
        "T6.2",
        "tile 的第一行取 offsets[expert - 1]：专家 0 读到了 offsets[-1]，offsets 前面的那块内存",
        "a tile's first row taken as offsets[expert - 1]: expert 0 reads offsets[-1], the memory before offsets",
        "3.2",
        ROW_BEGIN,
        "row_begin = tl.load(offsets_ptr + expert - 1) + pid_m * BLOCK_M",
        "test_schedule_reads_only_counts_and_offsets",
        "offsets-minus-one",
    ),
    Mistake(
        "row-end-is-expert-end",
        "T6.2",
        "row_end 传的是专家的末行，而不是 min(row_begin + BLOCK_M, 专家末行)",
        "row_end passed as the expert's end, not min(row_begin + BLOCK_M, the expert's end)",
        "3.2",
        CUT,
        "row_end = expert_end",
        "test_every_tile_of_every_expert_once",
        "row-end-past-block",
    ),
)
