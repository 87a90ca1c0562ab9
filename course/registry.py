"""The one list of the course's lessons: for each, its files, its explainer sections, its steps
and their hints.  Everything that names a lesson or a step reads it from here: the test markers,
the failure messages, `make test`, `make hint`, `make check` and the explainers' step tables.

A lesson is: an explainer pair in content/ (Chinese first, English companion), a stub in mine/,
a reference in solutions/, its section of the one suite in tests/, and an entry here.  To add one,
add those files and a Lesson to LESSONS; the machinery reads the rest from the entry.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    id: str  # "T4.1": the lesson's id, a dot, the step's number
    title: str
    sections: tuple  # explainer sections to read, keys of the lesson's SECTIONS
    writes: tuple  # names in the lesson's file whose marked bodies this step fills in
    hints: tuple  # from gentle to concrete; the last still leaves something to write
    advanced: bool = False

    @property
    def marker(self):  # pytest marker: T4.2 -> t4_2
        return self.id.lower().replace(".", "_")

    @property
    def lesson(self):
        return LESSON_OF[self.id]

    def where_to_read(self):
        secs = ", ".join("§" + s for s in self.sections)
        return f"read {self.lesson.explainers['zh']} {secs} (English: {self.lesson.explainers['en']})"


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one object per lesson
class Lesson:
    id: str  # "T4"
    title: str
    module: str  # mine/<module>.py is the learner's file, solutions/<module>.py the reference
    explainers: dict  # {"zh": path, "en": path}
    sections: dict  # {number: (Chinese title, English title)}; every heading has its number
    steps: tuple
    suite: str  # the lesson's section of the one suite
    probes: str = ""  # kernels that test one device function alone (course/), if the lesson has them
    note: tuple = ()  # (zh, en): said under the advice when a failure of a step in note_steps is about torch
    note_steps: tuple = ()

    @property
    def file(self):
        return f"{self.module}.py"

    @property
    def marker(self):  # pytest marker of every test of the lesson
        return self.id.lower()

    def files(self):
        """The lesson's code files, relative to the repo: its stub, reference, suite and probes."""
        return [f"mine/{self.file}", f"solutions/{self.file}", self.suite] + ([self.probes] if self.probes else [])

    def next_step(self, done):
        """The first required step not done, else the first advanced one, else None; done: {id: bool}."""
        return next(
            (s for s in self.steps if not done.get(s.id) and not s.advanced),
            next((s for s in self.steps if not done.get(s.id)), None),
        )


T4 = Lesson(
    id="T4",
    title="a fast matrix multiply in Triton",
    module="t4_matmul",
    explainers={"zh": "content/t4.md", "en": "content/t4.en.md"},
    suite="tests/test_t4.py",
    probes="course/t4_probes.py",
    # Section numbers shared by both explainers.  Each heading in them starts with its number
    # ("## 2 ...", "### 5.1 ..."); `make check` proves every one exists under this title.
    sections={
        "1": ("全景：一个程序算一个 C 瓦片", "The whole picture: one program per C tile"),
        "2": ("分组的程序顺序", "Grouped program order"),
        "3": ("用广播构造二维指针块", "2-D pointer blocks by broadcasting"),
        "4": ("主循环：掩码、tl.dot 与流水线", "The main loop: masks, tl.dot and pipelining"),
        "5": ("收尾（epilogue）", "The epilogue"),
        "5.1": ("转换类型与带掩码的写回", "Cast and masked store"),
        "5.2": ("进阶：融合 bias 与 GELU", "Advanced: fused bias and GELU"),
        "6": ("自动调优与主机端包装函数", "Autotuning and the host wrapper"),
        "6.1": ("triton.autotune 做了什么", "What triton.autotune does"),
        "6.2": ("网格是 meta 的函数", "The grid is a function of meta"),
        "6.3": ("输入检查", "Input checks"),
        "7": ("对比与延伸", "Comparisons and extensions"),
        "8": ("常见错误与自测", "Pitfalls and self-check"),
    },
    note=(
        "T4.4 和 T4.5 会盯住那次 launch：C 必须就是 matmul_kernel 写进去的那个 tensor，launch 之后谁也不能再改它，"
        "launch 拿到的 bias 和 flag 必须是这次调用传进来的；torch.matmul 及其同类一调就报错。"
        "把活交给 torch 算一律不通过，因为这一课练的是你自己的 kernel。",
        "T4.4 and T4.5 watch the launch: C must be the tensor matmul_kernel wrote into, nothing may "
        "touch it after the launch, the launch must get the bias and the flags of the call, and "
        "torch.matmul and its relatives raise. Work done in torch fails, because the point is your kernel.",
    ),
    note_steps=("T4.4", "T4.5"),
    steps=(
        Step(
            "T4.1",
            "grouped program order",
            ("2",),
            ("tile_coords",),
            (
                "Draw it first: number the tiles of a 4 x 4 grid with GROUP_M = 2 in the order the programs "
                "take them (down the first two rows column by column, then the next two rows). "
                "make tiles ARGS=\"4 4 2 --solution\" draws that order, make tiles ARGS=\"4 4 2\" yours.",
                "Count: a group holds GROUP_M rows of tiles times num_pid_n columns, so num_pid_in_group = "
                "GROUP_M * num_pid_n, group_id = pid // num_pid_in_group and its first row is group_id * GROUP_M. "
                "The last group can be short: group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M).",
                "Inside the group, ids run down a column first: pid_m = first_pid_m + "
                "(pid % num_pid_in_group) % group_size_m, pid_n = (pid % num_pid_in_group) // group_size_m. "
                "Check pid 5 of a 4 x 4 grid with GROUP_M = 2 by hand: (1, 2).",
            ),
        ),
        Step(
            "T4.2",
            "pointer blocks and the K loop",
            ("3", "4"),
            ("mainloop",),
            (
                "offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M) names this tile's rows; do the same for "
                "columns (offs_n) and for the first BLOCK_K of K (offs_k = tl.arange(0, BLOCK_K)).",
                "A column vector plus a row vector broadcasts to a matrix: a_ptr + offs_m[:, None] * stride_am "
                "+ offs_k[None, :] * stride_ak is a [BLOCK_M, BLOCK_K] block of addresses. Never assume a "
                "stride is 1: b.t() has stride_bk = 1.",
                "Start acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32); in each of tl.cdiv(K, BLOCK_K) "
                "iterations load with mask offs_k < K - k * BLOCK_K (and the M or N edge), other=0.0, then "
                "acc = tl.dot(a, b, acc) and move a_ptrs by BLOCK_K * stride_ak, b_ptrs by BLOCK_K * stride_bk.",
            ),
        ),
        Step(
            "T4.3",
            "epilogue and masked store",
            ("5.1",),
            ("epilogue",),
            (
                "Rebuild offs_m and offs_n for this tile, and C's pointer block from stride_cm and stride_cn.",
                "The edge tiles stick out of C: store with mask (offs_m[:, None] < M) & (offs_n[None, :] < N), "
                "or you write into whatever lies beside C.",
                "Cast before storing: acc.to(c_ptr.dtype.element_ty).",
            ),
        ),
        Step(
            "T4.4",
            "autotune configs and the host wrapper",
            ("6", "6.1", "6.2", "6.3"),
            ("AUTOTUNE_CONFIGS", "INTERPRET_CONFIG", "matmul_kernel_autotuned", "check_inputs", "matmul"),
            (
                "Configs are triton.Config(dict(BLOCK_M=..., BLOCK_N=..., BLOCK_K=..., GROUP_M=...), "
                "num_warps=..., num_stages=...). Keep each under 232,448 B of shared memory: "
                "num_stages * (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * 2 bytes (`make smem` prints it).",
                "The grid must follow the config that runs: grid = lambda meta: "
                "(triton.cdiv(M, meta['BLOCK_M']) * triton.cdiv(N, meta['BLOCK_N']),). Under TRITON_INTERPRET "
                "launch matmul_kernel with INTERPRET_CONFIG (config.all_kwargs()); on a GPU the autotuned one, "
                "whose key must hold M, N and K.",
                "Check before launching: types, dtypes, 2-D shapes, inner dimensions, bias shape, activation, "
                "devices, and CPU tensors without TRITON_INTERPRET. Return early for M == 0 or N == 0.",
            ),
        ),
        Step(
            "T4.5",
            "fused bias and GELU",
            ("5.2",),
            ("bias_and_activation",),
            (
                "The bias has one value per column of C: load it with offs_n (masked by N) and add "
                "bias[None, :] to acc.",
                "Order matters: C = gelu(A @ B + bias), so add the bias first, then apply the activation.",
                "Exact GELU is x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))); tl.erf works on the float32 acc.",
            ),
            advanced=True,
        ),
    ),
)

LESSONS = (T4,)
BY_ID = {s.id: s for lesson in LESSONS for s in lesson.steps}
LESSON_OF = {s.id: lesson for lesson in LESSONS for s in lesson.steps}
LESSON_BY_ID = {lesson.id: lesson for lesson in LESSONS}


def lesson(lesson_id=None):
    """A lesson by "T4" or "t4"; the first lesson when lesson_id is empty."""
    if not lesson_id:
        return LESSONS[0]
    key = lesson_id.strip().upper()
    if key not in LESSON_BY_ID:
        raise KeyError(f"no lesson {lesson_id!r}; lessons are {', '.join(LESSON_BY_ID)}")
    return LESSON_BY_ID[key]


def step(step_id, within=None):
    """A step by "T4.2", "t4.2", "t4_2", or "2" (a step of `within`, by default the first lesson)."""
    key = step_id.strip().upper().replace("_", ".")
    if "." not in key:
        key = f"{lesson(within).id}.{key}"
    if key not in BY_ID:
        raise KeyError(f"no step {step_id!r}; steps are {', '.join(BY_ID)}")
    return BY_ID[key]
