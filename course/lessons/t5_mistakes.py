"""Lesson T5's classic mistakes, for its explainer §8 table (python -m tools.explainers.mistakes --lesson T5).

Each is a text substitution in solutions/t5_persistent.py and the one test of tests/t5/ (by name) that
must catch it on the interpreter; tools/explainers/mistakes.py makes each one, with the reference
of T4 in mine/ beside it (T5 imports tile_coords and bias_and_activation from it), and runs that
test.  After the classic mistakes come the fix-up's ordering mistakes, caught on the CPU by running
the programs in other orders (course/interpreter_order.py): five shown in §8 (row), the rest, with the
holes the suite once let through, mutants of our own (own: table=False) that only make check runs.
The fix-up's mistakes are in t5_mistakes_fixup.py, the other mutants of our own in
t5_mistakes_own.py, t5_mistakes_holes.py, t5_mistakes_msg.py, t5_mistakes_learner2.py, t5_mistakes_hunter.py,
t5_mistakes_causes.py, t5_mistakes_zhlearner.py, t5_mistakes_hunt3.py, t5_mistakes_hunt4.py,
t5_mistakes_hunt5.py, t5_mistakes_learner6.py and t5_mistakes_hunt6.py, so that no file of them passes 400
lines.
"""

from course.lesson_data import Mistake
from course.lessons.t5_mistakes_causes import CAUSES_NAMED, DETECTED_CAUSES
from course.lessons.t5_mistakes_enlearner14 import ENLEARNER14, ENLEARNER14_CAUSES
from course.lessons.t5_mistakes_fixup import FIXUP
from course.lessons.t5_mistakes_holes import HOLES
from course.lessons.t5_mistakes_hunt3 import HUNT3, HUNT3_CAUSES
from course.lessons.t5_mistakes_hunt4 import HUNT4, HUNT4_CAUSES
from course.lessons.t5_mistakes_hunt5 import HUNT5, HUNT5_CAUSES
from course.lessons.t5_mistakes_hunt6 import HUNT6, HUNT6_CAUSES
from course.lessons.t5_mistakes_hunt7 import HUNT7, HUNT7_CAUSES
from course.lessons.t5_mistakes_hunt9 import HUNT9, HUNT9_CAUSES
from course.lessons.t5_mistakes_hunt10 import HUNT10, HUNT10_CAUSES
from course.lessons.t5_mistakes_hunt11 import HUNT11, HUNT11_CAUSES
from course.lessons.t5_mistakes_hunt12 import HUNT12, HUNT12_CAUSES
from course.lessons.t5_mistakes_hunt13 import HUNT13, HUNT13_CAUSES
from course.lessons.t5_mistakes_hunt14 import HUNT14, HUNT14_CAUSES
from course.lessons.t5_mistakes_hunt16 import HUNT16, HUNT16_CAUSES
from course.lessons.t5_mistakes_hunter import HUNTER, HUNTER_CAUSES
from course.lessons.t5_mistakes_lead34 import LEAD34, LEAD34_CAUSES
from course.lessons.t5_mistakes_learner2 import LEARNER2
from course.lessons.t5_mistakes_learner6 import LEARNER6, LEARNER6_CAUSES
from course.lessons.t5_mistakes_learner9 import LEARNER9, LEARNER9_CAUSES
from course.lessons.t5_mistakes_learner11 import LEARNER11, LEARNER11_CAUSES
from course.lessons.t5_mistakes_learner37 import LEARNER37, LEARNER37_CAUSES
from course.lessons.t5_mistakes_left8 import LEFT8, LEFT8_CAUSES
from course.lessons.t5_mistakes_left10 import LEFT10, LEFT10_CAUSES
from course.lessons.t5_mistakes_left11 import LEFT11, LEFT11_CAUSES
from course.lessons.t5_mistakes_left11b import LEFT11B, LEFT11B_CAUSES
from course.lessons.t5_mistakes_left12 import LEFT12, LEFT12_CAUSES
from course.lessons.t5_mistakes_left13 import LEFT13, LEFT13_CAUSES
from course.lessons.t5_mistakes_left36 import LEFT36, LEFT36_CAUSES
from course.lessons.t5_mistakes_left37 import LEFT37, LEFT37_CAUSES
from course.lessons.t5_mistakes_msg import MSG
from course.lessons.t5_mistakes_own import COORDS, LOOP, OWN
from course.lessons.t5_mistakes_spin11 import SPIN11, SPIN11_CAUSES
from course.lessons.t5_mistakes_styles8 import STYLES8, STYLES8_CAUSES
from course.lessons.t5_mistakes_styles15 import STYLES15, STYLES15_CAUSES
from course.lessons.t5_mistakes_waits15 import WAITS15, WAITS15_CAUSES
from course.lessons.t5_mistakes_zhlearner import ZHLEARNER, ZHLEARNER_CAUSES
from course.lessons.t5_mistakes_zhlearner12 import ZHLEARNER12, ZHLEARNER12_CAUSES
from course.lessons.t5_mistakes_zhlearner15b import ZHLEARNER15B, ZHLEARNER15B_CAUSES

# The words a T5 message says when, and only when, it has detected the cause (make check:
# each_mistake_names_its_own_cause): {key: (Chinese, English)}.
CAUSES = {
    "owner-alone": (
        "每个 tile 都由 owner 自己把全部 k-block 算完了",
        "every tile's owner summed all its k-blocks itself",
    ),
    "read-early": ("owner 读到了还没写进来的 partial", "the owner read a partial before that partial was written"),
    "flag-first": ("先举 flag 后存 partial", "flag was raised before the partial is stored"),
    "no-barrier": ("之间没有 tl.debug_barrier()", "no tl.debug_barrier() between"),
    "not-release": ("不是 release 语义", "without release semantics"),
    "not-acquire": ("不是 acquire 语义", "without acquire semantics"),
    "flags-left-up": ("没有一个被 owner 放回 0", "none was put back to 0 by an owner"),
    "flags-never-read": ("没有别的程序读过它们", "no other program read any of them"),
    "scope-cta": ('scope="cta"', 'scope="cta"'),
    "waits-forever": ("会永远等下去", "it would wait for good"),  # course/interpreter_spin.py's words
    "gpu-refuses": ("Hopper GPU（sm_90）编译", "compile t5_kernel for a Hopper GPU"),
    "no-bias": ("bias 没有加上", "the bias was not added"),
    "no-activation": ("没有做 activation", "the activation was not applied"),
    "bias-by-pid-m": ("bias 是按 pid_m 取的列", "the bias columns were taken at pid_m * BLOCK_N"),
    "kmajor-unchecked": (
        "只有 b.t() 本身合规时才能按 K-major 读",
        "Read b K-major only when b.t() itself keeps the rules",
    ),
    "descriptor-refused": ("违反了 TMA 的规矩", "which breaks a TMA rule"),  # tma_ready returned an offender
    "right-half-bias": (
        "右半块的 bias 从第 pid_n * BLOCK_N + BLOCK_N // 2 列开始",
        "the right half's bias starts at column",
    ),
    "left-half-bias": ("左半块的 bias 从第 pid_n * BLOCK_N 列开始", "the left half's bias starts at column"),
    "coords-swapped": ("pid_m 和 pid_n 拿反了", "pid_m and pid_n are the other way round"),
    "row-major-split": ("每个 tile 都落在按行优先的位置上", "every tile is at its row-major place"),
    "even-odd-halves": ("左半块放的是 acc 的偶数列", "left half holds acc's even columns"),
    "flag-plain-store": ("用普通的 tl.store 举 flag", "flag raised by a plain tl.store"),
    "descriptor-elsewhere": (
        "make_descriptors 在别的张量上建了描述符",
        "make_descriptors built a descriptor on some other",
    ),
    "past-stream-k": ("stream-K 的各段加起来", "the stream-K runs cover"),
    "offset-in-blocks": ("列偏移不是 16 字节的倍数", "column offset is not a multiple of 16 bytes"),
    "publish-after-wait": ("发布要在任何等待之前", "every publish comes before any wait"),
    "halves-swapped": ("两半互换了位置", "two halves are in each other's place"),
    "left-half-twice": ("两半放的都是 acc 的左半", "both halves of each tile hold acc's left half"),
    "rule-order": (
        "三条要按顺序查，报第一条违反的：先连续",
        "check the three in order and report the first one broken",
    ),
    "rule-unchecked": ("这条它没有查", "so it does not check that rule"),
    "flatten-dropped": ("现在没有传", "it is not passed now"),
    "slot-along": ("存进了第 p + 1 个槽", "went into slot p + 1"),
    "coords-minus-first": ("tile_coords 要传 tile_id 本身", "pass tile_id itself to tile_coords"),
    "kb-range": ("循环写成 range(kb_begin, kb_end)", "loop over range(kb_begin, kb_end)"),
    "fixed-cast": ("不要写死一种", "not to a fixed one"),
    "right-half-left-bias": ("右半块加的是左半块的 bias", "the right half was given the left half's bias"),
    "torch-product": ("乘积必须由 t5_kernel 算出来", "the product must come from t5_kernel"),
    "descriptor-other-tensor": ("建在了另一个张量上", "is built on another tensor"),
    "stray-access": ("都在这次启动拿到的所有张量之外", "outside every tensor that launch was given"),
    "load-coords-swapped": ("按反过来的坐标载入", "loaded with their coordinates the other way round"),
    "store-coords-swapped": ("按反过来的坐标存储", "stored with its coordinates the other way round"),
    "k-offset-moved": ("每次 load 的偏移都差了一个 BLOCK_K", "every load's offset is one BLOCK_K off"),
    "dot-overwrites": ("只有最后一个 k-block 留了下来", "only the last k-block's product is left"),
    "sums-turned": ("每个 tile 的和在 (pid_n, pid_m) 处算", "each one's sum is taken at (pid_n, pid_m)"),
    "segment-global": ("从整段 stream-K 的开头数的", "counted over all the stream-K tiles"),
    "collect-slot-along": ("读的是第 p + 1 个槽", "read from slot p + 1"),
    "partials-lost": (
        "owner 之前那些程序的 partial 一个也没进结果",
        "not one partial of the programs before the owner reached the result",
    ),
    "right-half-off": ("左半块都对，右半块都不对", "the left halves are all right and the right halves all off"),
    "coords-mn-swapped": ("num_pid_m 和 num_pid_n 传反了", "num_pid_m and num_pid_n were passed to tile_coords"),
    "descriptor-argument": ("而是这次调用的别的参数", "but another argument of that call"),
    "nan-from-workspace": ("换成填 0 就没有 NaN", "with it filled with zeros instead C has none"),
    "finish-other-tile": (
        "finish_tile 拿到的 tile 编号和它前面 k_segment 拿到的不一样",
        "finish_tile was given other tile numbers than the k_segment before it",
    ),
    "flags-raised-at-start": ("开始时这些 flag 还举着", "which started with those flags raised"),
    "ready-not-three": ("应当返回三个值 (a, b, b_kmajor)", "not the three values (a, b, b_kmajor)"),
    "sk-tiles-past": ("sk_tiles 最多是 num_tiles", "sk_tiles is at most num_tiles"),
    "flags-still-up": ("没有 owner 把它们放回 0", "no owner put them back to 0"),
    "loop-counts": ("这正是一个从", "the counts of a loop that starts at"),
    "width-not-stride": ("判断跟着宽度走", "the verdict follows the width"),
    "programs-past-k-blocks": ("程序比 k-block 还多", "more programs than k-blocks"),
    "partial-added": ("partial 被加到了槽里原有的值上", "the partial was added to what the slot held"),
    "kb-under-pid": ("k-block 都记在了编号等于程序号的 tile 上", "k-blocks were all counted on the tile numbered as"),
}

MISTAKES = (
    Mistake(
        "strict-refuses-w-t",
        "T5.2",
        "fallback=False 时先拒绝了 b，没有先试 b.t()（nn.Linear 的 W.t() 也被拒绝）",
        "with fallback=False, b is refused before b.t() is tried (nn.Linear's W.t() refused too)",
        "3.2",
        "    b_kmajor = False\n",
        "    b_kmajor = False\n    if not fallback and tma_problem(b, \"b\"):\n"
        "        raise ValueError(f\"matmul: TMA cannot read {tma_problem(b, 'b')}\")\n",
        "test_tma_ready_reads_b_t_k_major_without_a_copy",
        table=False,
    ),
    Mistake(
        "grid-not-capped",
        "T5.1",
        "persistent_grid 直接返回 SM 数，没有和 tile 数取最小值",
        "persistent_grid returns the SM count, not capped at the number of tiles",
        "2.2",
        "return min(num_sms, num_tiles)",
        "return num_sms",
        "test_persistent_grid[1-132-1]",
        "grid-is-sms",  # named since session 34 (t5_mistakes_lead34.py)
    ),
    Mistake(
        "loop-start",
        "T5.1",
        "循环从 pid 开始，而不是 first_tile + pid",
        "the loop starts at pid, not at first_tile + pid",
        "2.2",
        LOOP,
        LOOP.replace("first_tile + tl.program_id(0)", "tl.program_id(0)"),
        "test_every_tile_once_over_many_grids[plain]",
        "loop-counts",
    ),
    Mistake(
        "loop-stride",
        "T5.1",
        "循环步长是 1，而不是 NUM_PROGS",
        "the loop steps by 1, not by NUM_PROGS",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS,", "num_tiles, 1,"),
        "test_a_program_does_several_tiles",
        "loop-counts",
    ),
    Mistake(
        "no-tile-coords",
        "T5.1",
        "tile 号直接按行优先拆成 (pid_m, pid_n)，没有经过 tile_coords",
        "the tile number split row-major into (pid_m, pid_n), not passed through tile_coords",
        "2.2",
        LOOP + COORDS,
        LOOP + "        pid_m, pid_n = tile_id // num_pid_n, tile_id % num_pid_n\n",
        "test_every_tile_once_over_many_grids[plain]",
        "row-major-split",
    ),
    Mistake(
        "stride-in-elements",
        "T5.2",
        "tma_problem 按元素而不是按字节检查行 stride 是否为 16 的倍数",
        "tma_problem checks the row stride in elements, not in bytes, for a multiple of 16",
        "3.2",
        "if (t.stride(0) * size) % 16:",
        "if t.stride(0) % 16:",
        "test_tma_problem_accepts_legal_tensors",
        cause="stride-in-elements",  # named since learner9 (t5_mistakes_learner9.py)
    ),
    Mistake(
        "kmajor-box",
        "T5.2",
        "K-major 的 B 也用 [BLOCK_K, BLOCK_N] 的 box",
        "a [BLOCK_K, BLOCK_N] box for a K-major B too",
        "3.1",
        "[BLOCK_N, BLOCK_K] if b_kmajor else [BLOCK_K, BLOCK_N]",
        "[BLOCK_K, BLOCK_N]",
        "test_make_descriptors_boxes",
    ),
    Mistake(
        "kmajor-no-transpose",
        "T5.2",
        "K-major 的 B 读进来之后没有转置",
        "a K-major B box not transposed after the load",
        "3.1",
        "b = b_desc.load([off_n, off_k]).T",
        "b = b_desc.load([off_n, off_k])",
        "test_k_block_loop[17-50-70-0-3-True-torch.float16]",
    ),
    Mistake(
        "sk-extra-last",
        "T5.3",
        "多出来的 k-block 分给了最后几个程序，而不是前几个",
        "the extra k-blocks given to the last programs, not the first",
        "4.1",
        "    begin = pid * base + tl.minimum(pid, extra)\n    end = begin + base + (pid < extra).to(tl.int32)\n",
        (
            "    begin = pid * base + tl.maximum(pid - (NUM_PROGS - extra), 0)\n"
            "    end = begin + base + (pid >= NUM_PROGS - extra).to(tl.int32)\n"
        ),
        "test_sk_runs_cover_every_k_block_once[13-3]",
    ),
    Mistake(
        "flags-not-reset",
        "T5.3",
        "owner 加完 partial 没有把旗放回 0",
        "the owner does not put a flag back to 0 after adding its partial",
        "4.2",
        '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n',
        "",
        "test_stream_k_every_tile_once",
        "flags-left-up",
    ),
    Mistake(
        "thin-wave-alone",
        "T5.3",
        "薄的最后一波单独走 stream-K，没有和一整波合起来",
        "the thin last wave alone given to stream-K, not merged with one full wave",
        "4.3",
        "sk_tiles = num_tiles if full_waves == 0 else rest + num_sms",
        "sk_tiles = rest",
        "test_stream_k_split[300-8-132-auto-want3]",
        cause="last-wave-alone",  # named since learner9 (t5_mistakes_learner9.py)
    ),
    Mistake(
        "right-half-bias",
        "T5.4",
        "分块后右半传了 pid_n，而不是 2 * pid_n + 1",
        "pid_n passed for the right half after subtiling, not 2 * pid_n + 1",
        "5",
        "2 * pid_n + 1",
        "pid_n",
        "test_store_tile_subtiled_bias_per_half[none]",
        "right-half-bias",
    ),
)

# the table's first (the classic ones, then the fix-up's), then our own
MISTAKES = (
    MISTAKES + FIXUP + OWN + HOLES + MSG + LEARNER2 + HUNTER + CAUSES_NAMED + ZHLEARNER + HUNT3 + HUNT4 + HUNT5 + HUNT6
)
MISTAKES = MISTAKES + LEARNER6
CAUSES = {
    **CAUSES,
    **HUNTER_CAUSES,
    **DETECTED_CAUSES,
    **ZHLEARNER_CAUSES,
    **HUNT3_CAUSES,
    **HUNT4_CAUSES,
    **HUNT5_CAUSES,
    **LEARNER6_CAUSES,
    **HUNT6_CAUSES,
}
MISTAKES = MISTAKES + HUNT7
CAUSES |= HUNT7_CAUSES
MISTAKES = MISTAKES + LEFT8  # left8's, last
CAUSES |= LEFT8_CAUSES
MISTAKES = MISTAKES + STYLES8  # styles8's, last
CAUSES |= STYLES8_CAUSES
MISTAKES = MISTAKES + LEARNER9  # learner9's, last
CAUSES |= LEARNER9_CAUSES
MISTAKES = MISTAKES + HUNT9  # hunt9's, last
CAUSES |= HUNT9_CAUSES
MISTAKES = MISTAKES + LEFT10  # left10's, last
CAUSES |= LEFT10_CAUSES
MISTAKES = MISTAKES + HUNT10  # hunt10's, last
CAUSES |= HUNT10_CAUSES
MISTAKES = MISTAKES + LEARNER11  # learner11's, last
CAUSES |= LEARNER11_CAUSES
MISTAKES = MISTAKES + LEFT11  # left11's, last
CAUSES |= LEFT11_CAUSES
MISTAKES = MISTAKES + HUNT11  # hunt11's, last
CAUSES |= HUNT11_CAUSES
MISTAKES = MISTAKES + LEFT11B  # left11b's, last
CAUSES |= LEFT11B_CAUSES
MISTAKES = MISTAKES + SPIN11  # spin11's, last
CAUSES |= SPIN11_CAUSES
MISTAKES = MISTAKES + ZHLEARNER12  # zhlearner12's, last
CAUSES |= ZHLEARNER12_CAUSES
MISTAKES = MISTAKES + HUNT12  # hunt12's, last
CAUSES |= HUNT12_CAUSES
MISTAKES = MISTAKES + LEFT12  # left12's, last
CAUSES |= LEFT12_CAUSES
MISTAKES = MISTAKES + LEFT13  # left13's, last
CAUSES |= LEFT13_CAUSES
MISTAKES = MISTAKES + HUNT13  # hunt13's, last
CAUSES |= HUNT13_CAUSES
MISTAKES = MISTAKES + HUNT14  # hunt14's (t5_mistakes_hunt14.py), last
CAUSES |= HUNT14_CAUSES
MISTAKES = MISTAKES + ENLEARNER14  # enlearner14's, last
CAUSES |= ENLEARNER14_CAUSES
MISTAKES = MISTAKES + ZHLEARNER15B  # zhlearner15b's (t5_mistakes_zhlearner15b.py), last
CAUSES |= ZHLEARNER15B_CAUSES
MISTAKES = MISTAKES + STYLES15  # styles15's (t5_mistakes_styles15.py), last
CAUSES |= STYLES15_CAUSES
MISTAKES = MISTAKES + WAITS15  # waits15's (t5_mistakes_waits15.py), last
CAUSES |= WAITS15_CAUSES
MISTAKES = MISTAKES + LEAD34  # session 34's lead (t5_mistakes_lead34.py), last
CAUSES |= LEAD34_CAUSES
MISTAKES = MISTAKES + HUNT16  # hunt16's (t5_mistakes_hunt16.py), last
CAUSES |= HUNT16_CAUSES
MISTAKES = MISTAKES + LEFT36  # left36's (t5_mistakes_left36.py)
CAUSES |= LEFT36_CAUSES
MISTAKES = MISTAKES + LEARNER37  # learner37's new-learner plants (t5_mistakes_learner37.py)
CAUSES |= LEARNER37_CAUSES
MISTAKES = MISTAKES + LEFT37  # left37's: learner37's plants that named no cause (t5_mistakes_left37.py), last
CAUSES |= LEFT37_CAUSES
