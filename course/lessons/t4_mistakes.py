"""Lesson T4's classic mistakes, for its explainer §8 table (python -m tools.explainers.mistakes --lesson T4),
and mutants of our own that only `make check` runs (table=False).

Each is a text substitution in solutions/t4_matmul.py and the one test of tests/t4/ (by name) that
must catch it; tools/explainers/mistakes.py makes each one and runs that test.  A mistake's cause
is a key of CAUSES: its message must say those words, and no other mistake's message may (make
check: each_mistake_names_its_own_cause_and_no_other).  T4.4's, the wrapper, are in
t4_mistakes_wrapper.py and T4.5's, the fused bias and GELU, in t4_mistakes_fused.py, gathered into
TABLE in that order after T4.1-T4.3's; the mutants of our own are in
t4_mistakes_own.py, t4_mistakes_learner.py, t4_mistakes_hunter.py, t4_mistakes_calls.py,
t4_mistakes_hunt3.py, t4_mistakes_hunt4.py, t4_mistakes_hunt5.py and t4_mistakes_hunt6.py.
"""

from course.lesson_data import Mistake
from course.lessons.t4_mistakes_calls import CALLS
from course.lessons.t4_mistakes_enlearner12 import ENLEARNER12, ENLEARNER12_CAUSES
from course.lessons.t4_mistakes_fused import FUSED
from course.lessons.t4_mistakes_gpu34 import GPU34, GPU34_CAUSES
from course.lessons.t4_mistakes_hunt3 import HUNT3, HUNT3_CAUSES
from course.lessons.t4_mistakes_hunt4 import HUNT4, HUNT4_CAUSES
from course.lessons.t4_mistakes_hunt5 import HUNT5, HUNT5_CAUSES
from course.lessons.t4_mistakes_hunt6 import HUNT6, HUNT6_CAUSES
from course.lessons.t4_mistakes_hunt7 import HUNT7, HUNT7_CAUSES
from course.lessons.t4_mistakes_hunt9 import HUNT9, HUNT9_CAUSES
from course.lessons.t4_mistakes_hunt11 import HUNT11, HUNT11_CAUSES
from course.lessons.t4_mistakes_hunt12 import HUNT12, HUNT12_CAUSES
from course.lessons.t4_mistakes_hunt13 import HUNT13, HUNT13_CAUSES
from course.lessons.t4_mistakes_hunt15 import HUNT15, HUNT15_CAUSES
from course.lessons.t4_mistakes_hunt36 import HUNT36, HUNT36_CAUSES
from course.lessons.t4_mistakes_hunter import HUNTER
from course.lessons.t4_mistakes_lead28 import LEAD28, LEAD28_CAUSES
from course.lessons.t4_mistakes_lead35 import LEAD35, LEAD35_CAUSES
from course.lessons.t4_mistakes_learner import LEARNER, LEARNER_CAUSES
from course.lessons.t4_mistakes_learner7 import LEARNER7, LEARNER7_CAUSES
from course.lessons.t4_mistakes_learner9 import LEARNER9, LEARNER9_CAUSES
from course.lessons.t4_mistakes_left8 import LEFT8, LEFT8_CAUSES
from course.lessons.t4_mistakes_left10 import LEFT10, LEFT10_CAUSES
from course.lessons.t4_mistakes_left11 import LEFT11, LEFT11_CAUSES
from course.lessons.t4_mistakes_left12 import LEFT12, LEFT12_CAUSES
from course.lessons.t4_mistakes_left13 import LEFT13, LEFT13_CAUSES
from course.lessons.t4_mistakes_left36 import LEFT36, LEFT36_CAUSES
from course.lessons.t4_mistakes_own import OWN
from course.lessons.t4_mistakes_styles15 import STYLES15, STYLES15_CAUSES
from course.lessons.t4_mistakes_styles16 import STYLES16, STYLES16_CAUSES
from course.lessons.t4_mistakes_wrapper import WRAPPER
from course.lessons.t4_mistakes_zhlearner10 import ZHLEARNER10, ZHLEARNER10_CAUSES
from course.lessons.t4_mistakes_zhlearner14 import ZHLEARNER14, ZHLEARNER14_CAUSES

# The words a message says when, and only when, its check has detected that cause: {key: (zh, en)}.
CAUSES = {
    "gpu-refuses": ("Hopper GPU（sm_90）编译", "compile matmul_kernel for a Hopper GPU"),
    "short-last-group": ("最后一组只有", "The last group has only"),
    "partials-rounded": (
        "结果和「每个 tl.dot(a, b) 先舍入成 fp16 再累加」一致",
        "it matches each tl.dot(a, b) rounded to fp16",
    ),
    "fp16-accumulator": ("结果和 fp16 累加器一致", "it matches an fp16 accumulator"),
    "acc-not-fp32": ("mainloop 必须返回 float32 累加器", "mainloop must return a float32 accumulator"),
    "wrong-advance": ("在循环里按错的 stride 前进", "by the wrong stride (along M or N instead of along K)"),
    "pointers-stay": ("结果等于第 0 个 K 块被累加了", "it equals K-block 0 summed"),
    "k-tail-dropped": ("漏掉 K 尾部", "without the K tail of"),
    "layout-dependent": ("换成 row-major 存放时结果是对的", "stored row-major give the right result"),
    "store-unmasked": ("全都在边上的 tile 伸出 C 的位置", "all of them where edge tiles stick out of C"),
    "c-addresses": ("C 的地址不对", "C's addresses are off"),
    "wrong-cast": ("C 里是 acc 舍入成", "C holds acc rounded to"),
    "grid-too-small": ("个程序，比这个配置下 C 的", "programs, fewer than the"),
    "torch-product": ("包装函数调用了", "the wrapper called"),
    "changed-after-launch": ("返回之后，C 里还有", "changed after matmul_kernel returned"),
    "not-the-launched-c": (
        "matmul 返回的张量不是内核写入的那个",
        "matmul returned a tensor the kernel did not write into",
    ),
    "copied-operand": ("的一份拷贝", "a copy of the caller's"),
    "escape": ("被评分的代码不许 skip、xfail 或中途结束检查", "the graded code may not skip, xfail or end a check"),
    "config-kwargs": ("**config.kwargs 不带", "not **config.kwargs"),
    "bf16-accepted": ("bf16 在解释器上跑了", "bf16 ran on the interpreter"),
    "bias-past-end": ("说明 bias 的 load 读过了末尾", "so the bias load read past its end"),
    "bias-unit-stride": ("按 stride 1 读 bias", "a bias read with stride 1"),
    "bias-after-gelu": ("bias 是在 GELU 之后加的", "the bias was added after the GELU"),
    "tanh-gelu": ("这是 GELU 的 tanh 近似", "this is the tanh approximation of GELU"),
    "bias-by-row": ("说明 bias 是沿行方向加的", "so the bias went down the rows"),
    "bias-wrong-tile": ("别的列的 bias", "the bias of other columns"),
    "nan-not-from-bias": ("所以 NaN 不是从 bias 读来的", "so the NaN comes from no read of the bias"),
    "added-into-c": ("kernel 把 acc 加到了 C 原来的内容上", "the kernel added acc into C's old contents"),
    "launch-strides": ("这些张量实际的 stride 是", "where the tensors' own strides are"),
    "launch-sizes": ("它拿到的 A、B、C 是", "where the A, B and C it got have"),
    "one-buffer": ("两次调用返回的 C 是同一块内存", "both calls returned C in one buffer"),
    "nan-from-padding": ("换成 0 以后同一个调用就没有了", "none once the NaN padding around A and B is made 0"),
    "nan-not-from-padding": ("换成 0 以后照样有", "NaN again with the NaN padding around A and B made 0"),
}

TABLE = (
    Mistake(
        "modulo-group-m",
        "T4.1",
        "最后一组按 GROUP_M 取模，而不是 group_size_m",
        "the last group taken modulo GROUP_M, not group_size_m",
        "2.2",
        "pid_m = first_pid_m + pid_in_group % group_size_m\n    pid_n = pid_in_group // group_size_m",
        "pid_m = first_pid_m + pid_in_group % GROUP_M\n    pid_n = pid_in_group // GROUP_M",
        "test_tile_coords_exact_map[5-3-2]",
        cause="short-last-group",
    ),
    Mistake(
        "k-unmasked",
        "T4.2",
        "K 的尾部没有掩码",
        "the K tail not masked",
        "4.1",
        "mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_remaining)",
        "mask=offs_m[:, None] < M",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        "k-tail-lanes-on",  # left11: the tail's lanes seen on, whatever the mask compares (was masks-lack)
    ),
    Mistake(
        "partials-rounded",
        "T4.2",
        "每块 tl.dot 的结果先舍入成 fp16 再累加",
        "each block's tl.dot rounded to fp16 before it is added",
        "4.2",
        "acc = tl.dot(a, b, acc)",
        "acc += tl.dot(a, b).to(tl.float16)",
        "test_mainloop_accumulates_in_fp32",
        cause="partials-rounded",
    ),
    Mistake(
        "fp16-acc",
        "T4.2",
        "用 fp16 做累加器",
        "an fp16 accumulator",
        "4.2",
        "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)",
        "test_mainloop_accumulates_in_fp32",
        cause="acc-not-fp32",
    ),
    Mistake(
        "unit-stride",
        "T4.2",
        "忽略 stride，假定列方向步长为 1",
        "a stride ignored: unit stride assumed",
        "3.1",
        "offs_k[None, :] * stride_ak",
        "offs_k[None, :]",
        "test_mainloop[32-32-64-16-16-16-column-major-torch.float16]",
        cause="layout-dependent",
    ),
    Mistake(
        "advance-wrong-stride",
        "T4.2",
        "循环里移动 a_ptrs 时用了 stride_am，而不是 stride_ak",
        "a_ptrs advanced with stride_am instead of stride_ak",
        "4.3",
        "        a_ptrs += BLOCK_K * stride_ak\n",
        "        a_ptrs += BLOCK_K * stride_am\n",
        "test_mainloop[45-37-83-16-32-16-row-major-torch.float16]",
        cause="wrong-advance",
    ),
    Mistake(
        "pointers-stay",
        "T4.2",
        "循环里没有移动指针",
        "the pointers not advanced in the loop",
        "4.3",
        "        a_ptrs += BLOCK_K * stride_ak\n        b_ptrs += BLOCK_K * stride_bk\n",
        "",
        "test_mainloop[64-16-130-32-16-32-row-major-torch.float16]",
        cause="pointers-stay",
    ),
    Mistake(
        "store-unmasked",
        "T4.3",
        "写回 C 时没有掩码",
        "the store into C not masked",
        "5.1",
        "tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)",
        "tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))",
        "test_epilogue[37-45-16-32-row-major-torch.float16]",
        cause="store-unmasked",
    ),
    Mistake(
        "c-strides",
        "T4.3",
        "用 N 代替 stride_cm 寻址 C",
        "C addressed with N instead of stride_cm",
        "5.1",
        "c_ptrs = c_ptr + offs_m[:, None] * stride_cm",
        "c_ptrs = c_ptr + offs_m[:, None] * N",
        "test_epilogue[37-45-16-32-every-other-column-torch.float16]",
        cause="c-addresses",
    ),
)
TABLE += WRAPPER + FUSED  # T4.4's, the wrapper (t4_mistakes_wrapper.py), then T4.5's

# make check runs them all; §8 shows TABLE (T4.5's from FUSED)
MISTAKES = TABLE + OWN + LEARNER + HUNTER + CALLS + HUNT3 + HUNT4 + HUNT5 + HUNT6
CAUSES = {**CAUSES, **LEARNER_CAUSES, **HUNT3_CAUSES, **HUNT4_CAUSES, **HUNT5_CAUSES, **HUNT6_CAUSES}

# the seventh learner's walk (learner7), gathered last
MISTAKES = MISTAKES + LEARNER7
CAUSES |= LEARNER7_CAUSES
MISTAKES = MISTAKES + HUNT7  # hunt7's, last
CAUSES |= HUNT7_CAUSES
MISTAKES = MISTAKES + LEFT8  # left8's, last
CAUSES |= LEFT8_CAUSES
MISTAKES = MISTAKES + LEARNER9  # learner9's, last
CAUSES |= LEARNER9_CAUSES
MISTAKES = MISTAKES + HUNT9  # hunt9's, last
CAUSES |= HUNT9_CAUSES
MISTAKES = MISTAKES + LEAD28  # session 28's lead, last
CAUSES |= LEAD28_CAUSES
MISTAKES = MISTAKES + LEFT10  # left10's, last
CAUSES |= LEFT10_CAUSES
MISTAKES = MISTAKES + ZHLEARNER10  # zhlearner10's, last
CAUSES |= ZHLEARNER10_CAUSES
MISTAKES = MISTAKES + LEFT11  # left11's, last
CAUSES |= LEFT11_CAUSES
MISTAKES = MISTAKES + HUNT11  # hunt11's, last
CAUSES |= HUNT11_CAUSES
MISTAKES = MISTAKES + HUNT12  # hunt12's, last
CAUSES |= HUNT12_CAUSES
MISTAKES = MISTAKES + ENLEARNER12  # enlearner12's, last
CAUSES |= ENLEARNER12_CAUSES
MISTAKES = MISTAKES + LEFT12  # left12's, last
CAUSES |= LEFT12_CAUSES
MISTAKES = MISTAKES + LEFT13  # left13's, last
CAUSES |= LEFT13_CAUSES
MISTAKES = MISTAKES + HUNT13  # hunt13's, last
CAUSES |= HUNT13_CAUSES
MISTAKES = MISTAKES + ZHLEARNER14  # zhlearner14's
CAUSES |= ZHLEARNER14_CAUSES
MISTAKES = MISTAKES + GPU34  # session 34's, found by the suite on a GPU, last
CAUSES |= GPU34_CAUSES
MISTAKES = MISTAKES + LEAD35  # session 35's own
CAUSES |= LEAD35_CAUSES
MISTAKES = MISTAKES + LEFT36  # session 36's leftovers hunt (t4_mistakes_left36.py)
CAUSES |= LEFT36_CAUSES
MISTAKES = MISTAKES + HUNT15  # hunt15's (t4_mistakes_hunt15.py), last
CAUSES |= HUNT15_CAUSES
MISTAKES = MISTAKES + STYLES15  # styles15's (t4_mistakes_styles15.py), last
CAUSES |= STYLES15_CAUSES
MISTAKES = MISTAKES + STYLES16  # styles16's (t4_mistakes_styles16.py), last
CAUSES |= STYLES16_CAUSES
MISTAKES = MISTAKES + HUNT36  # hunt36's, a newcomer's first attempts (t4_mistakes_hunt36.py), last
CAUSES |= HUNT36_CAUSES
