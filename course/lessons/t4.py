"""Lesson T4: its sections, steps, hints and note; course/registry.py finds it here.

The lesson's other files: content/t4*.md, mine/ and solutions/t4_matmul.py, tests/t4/,
course/lessons/t4_probes.py.
"""

from course.registry import Lesson, Step

LESSON = Lesson(
    id="T4",
    title="a fast matrix multiply in Triton",
    title_zh="用 Triton 写一个快的矩阵乘法",
    module="t4_matmul",
    explainers={"zh": "content/t4.md", "en": "content/t4.en.md"},
    suite="tests/t4",
    probes="course/lessons/t4_probes.py",
    # code both sides read, not write (matmul's decorators; B's layout for the reference's speed)
    given=("given/t4_limits.py", "given/t4_capture.py", "given/t4_config.py", "given/t4_layout.py"),
    # Section numbers shared by both explainers.  Each heading in them starts with its number
    # ("## 2 ...", "### 5.1 ..."); `make check` proves every one exists under this title.
    sections={
        "1": ("全景：一个程序算 C 的一个 tile", "The whole picture: one program per C tile"),
        "2": ("分组的程序顺序", "Grouped program order"),
        "3": ("用广播构造二维指针块", "2-D pointer blocks by broadcasting"),
        "4": ("主循环：掩码、tl.dot 与流水线", "The main loop: masks, tl.dot and pipelining"),
        "4.6": ("nn.Linear 的 W.t()：不带掩码的整块 K 步", "nn.Linear's W.t(): whole K steps without a mask"),
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
        "launch 拿到的 a、b、bias 必须就是这次调用传进来的那几个 tensor（不能是拷贝），flag 也必须是这次调用的；"
        "torch.matmul 及其同类一调就报错。"
        "把活交给 torch 算一律不通过，因为这一课练的是你自己的 kernel。",
        "T4.4 and T4.5 watch the launch: C must be the tensor matmul_kernel wrote into, nothing may "
        "touch it after the launch, the launch must get the caller's own a, b and bias (no copies) and the "
        "flags of the call, and torch.matmul and its relatives raise. Work done in torch fails, because the "
        "point is your kernel.",
    ),
    note_steps=("T4.4", "T4.5"),
    steps=(
        Step(
            "T4.1",
            "grouped program order",
            ("2",),
            ("tile_coords",),
            (
                (
                    "先画出来：4 × 4 的 tile 网格、GROUP_M = 2，按程序领取的顺序给每个 tile 编号（先竖着走完前两行的第"
                    '一列，再走第二列，走完这两行再走下两行）。make tiles ARGS="4 4 2 --solution" 画出正确的顺序，'
                    'make tiles ARGS="4 4 2" 画出你的。',
                    "Draw it first: number the tiles of a 4 x 4 grid with GROUP_M = 2 in the order the programs take "
                    "them (down the first column of the first two rows, then the second column, and the next two rows "
                    'after those). make tiles ARGS="4 4 2 --solution" draws that order, make tiles ARGS="4 4 2" yours.',
                ),
                (
                    "数一数：一组有 GROUP_M 行、每行 num_pid_n 个 tile。用整除算出 pid 落在第几组、这一组第一行的行号"
                    "。最后一组可能不满 GROUP_M 行：这一组实际有几行？（用 tl.minimum。）",
                    "Count: a group holds GROUP_M rows of num_pid_n tiles. Integer division tells which group pid "
                    "falls in and the row of that group's first row. The last group can be short: how many rows does "
                    "it really have? (tl.minimum.)",
                ),
                (
                    "组内先竖着走：pid 在组内的序号除以这一组的实际行数（不是 GROUP_M），余数决定行、商决定列。写完用 "
                    "4 × 4、GROUP_M = 2 的 pid 5 手算核对，应该得到 (1, 2)；再用 5 × 3 的网格看最后一组。",
                    "Inside a group the ids run down a column first: divide the pid's position in its group by the "
                    "group's real number of rows (not GROUP_M); the remainder gives the row, the quotient the column. "
                    "Check pid 5 of a 4 x 4 grid with GROUP_M = 2 by hand: (1, 2); then look at the last group of a 5 "
                    "x 3 grid.",
                ),
            ),
            title_zh="分组的程序顺序",
        ),
        Step(
            "T4.2",
            "pointer blocks and the K loop",
            ("3", "4"),
            ("mainloop",),
            (
                (
                    "这个 tile 的行号是从 pid_m * BLOCK_M 开始的 BLOCK_M 个连续整数（tl.arange 加上起点）；列号 "
                    "offs_n 同理，K 方向先取第一段的 0..BLOCK_K-1。",
                    "The tile's rows are the BLOCK_M consecutive integers from pid_m * BLOCK_M (tl.arange plus the "
                    "start); its columns offs_n likewise, and along K the first stretch 0..BLOCK_K-1.",
                ),
                (
                    "列向量 [:, None] 加行向量 [None, :] 广播成矩阵：A 的地址块是 a_ptr 加上“行号乘 stride_am”和“K 列"
                    "号乘 stride_ak”，形状 [BLOCK_M, BLOCK_K]；B 的照此构造，形状 [BLOCK_K, BLOCK_N]。不要假定哪个 "
                    "stride 是 1：b.t() 的 stride_bk 就是 1。",
                    "A column vector [:, None] plus a row vector [None, :] broadcasts to a matrix: A's block of "
                    "addresses is a_ptr plus row numbers times stride_am plus K columns times stride_ak, shape "
                    "[BLOCK_M, BLOCK_K]; build B's the same way, shape [BLOCK_K, BLOCK_N]. Never assume a stride is "
                    "1: b.t() has stride_bk = 1.",
                ),
                (
                    "循环 tl.cdiv(K, BLOCK_K) 次，累加器用 float32 的零张量起步。第 k 次时这一段只剩 K - k * BLOCK_K "
                    "列有效：A、B 的 mask 都要同时管住这个 K 尾部和 M 或 N 的边，并给 other=0.0；acc 作为 tl.dot 的第"
                    "三个参数传入；最后两个指针块沿 K 前移 BLOCK_K 个元素：各自该乘哪个 stride？",
                    "Loop tl.cdiv(K, BLOCK_K) times, starting from a float32 tensor of zeros. On trip k only K - k * "
                    "BLOCK_K columns of the stretch are left: both masks must cover that K tail and the M or N edge, "
                    "with other=0.0; pass acc to tl.dot as its third argument; then move both pointer blocks BLOCK_K "
                    "elements along K: times which stride each?",
                ),
            ),
            title_zh="指针块与 K 循环",
        ),
        Step(
            "T4.3",
            "epilogue and masked store",
            ("5.1",),
            ("epilogue",),
            (
                (
                    "照 mainloop 的样子重新算出这个 tile 的 offs_m 和 offs_n，再用 C 自己的 stride_cm、stride_cn 构造 "
                    "C 的指针块。",
                    "Rebuild offs_m and offs_n for this tile as mainloop does, and C's pointer block from C's own "
                    "stride_cm and stride_cn.",
                ),
                (
                    "边上的 tile 会伸出 C：写回时的 mask 要同时管住行（< M）和列（< N），否则会写到 C 旁边的内存里。",
                    "The edge tiles stick out of C: the store's mask must cover both the rows (< M) and the columns "
                    "(< N), or you write into whatever lies beside C.",
                ),
                (
                    "写回前把 acc 转成 C 的元素类型：指针参数的元素类型是 c_ptr.dtype.element_ty。tl.store 其实也会隐"
                    "式转换，但显式写出来，舍入发生在哪里一眼可见（§5.1）。",
                    "Cast acc to C's element type before the store: a pointer argument's element type is "
                    "c_ptr.dtype.element_ty. tl.store would convert it anyway, but written out, where the rounding "
                    "happens is plain to see (§5.1).",
                ),
            ),
            title_zh="收尾与带掩码的写回",
        ),
        Step(
            "T4.4",
            "autotune configs and the host wrapper",
            ("6", "6.1", "6.2", "6.3"),
            ("AUTOTUNE_CONFIGS", "INTERPRET_CONFIG", "matmul_kernel_autotuned", "check_inputs", "matmul"),
            (
                (
                    "配置写成 triton.Config(四个块参数组成的 dict, num_warps=..., num_stages=...)。每个配置在 fp16 下"
                    "的 shared memory num_stages * (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * 2 字节不能超过 232,448 B"
                    "（make smem 会算）。",
                    "A config is triton.Config(a dict of the four block parameters, num_warps=..., num_stages=...). "
                    "Keep each under 232,448 B of shared memory in fp16: num_stages * (BLOCK_M * BLOCK_K + BLOCK_K * "
                    "BLOCK_N) * 2 bytes (make smem prints it).",
                ),
                (
                    "grid 要跟着实际运行的配置走：写成一个接受 meta 字典、返回一元组的函数，程序个数按 meta 里的 "
                    "BLOCK_M、BLOCK_N 算 C 的 tile 数（§6.2）。解释器下用 INTERPRET_CONFIG 启动普通的 matmul_kernel（"
                    "展开 config.all_kwargs()）；GPU 上用 autotune 过的那个，它的 key 要包含 M、N、K。",
                    "The grid must follow the config that runs: a function of the meta dict returning a 1-tuple, the "
                    "number of C's tiles for meta's BLOCK_M and BLOCK_N (§6.2). Under TRITON_INTERPRET launch the "
                    "plain matmul_kernel with INTERPRET_CONFIG (spread config.all_kwargs()); on a GPU the autotuned "
                    "one, whose key must hold M, N and K.",
                ),
                (
                    "启动前逐项检查：类型、dtype、二维形状、内维、bias 形状、activation、设备，以及不开 "
                    "TRITON_INTERPRET 时的 CPU 张量；报错里写出出错的值（§6.3 的表）。M == 0 或 N == 0 时不必启动 "
                    "kernel，直接返回。",
                    "Check before launching: types, dtypes, 2-D shapes, inner dimensions, bias shape, activation, "
                    "devices, and CPU tensors without TRITON_INTERPRET, each message naming the value at fault "
                    "(§6.3's table). For M == 0 or N == 0 there is nothing to launch: return early.",
                ),
            ),
            title_zh="autotune 配置与主机端包装函数",
            needs=("T4.1", "T4.2", "T4.3"),
        ),
        Step(
            "T4.5",
            "fused bias and GELU",
            ("5.2",),
            ("bias_and_activation",),
            (
                (
                    "bias 每列一个值：用这个 tile 的列号 offs_n 读（mask 掉 >= N 的列，地址乘 stride_bias），再沿行广"
                    "播加到 acc 上。",
                    "The bias has one value per column of C: load it with this tile's column numbers offs_n (masked "
                    "by N, addressed with stride_bias) and broadcast it down the rows of acc.",
                ),
                (
                    "顺序有讲究：C = gelu(A @ B + bias)，先加 bias，再做激活。",
                    "Order matters: C = gelu(A @ B + bias), so add the bias first, then apply the activation.",
                ),
                (
                    "用精确的 GELU：x * Phi(x)，Phi 是标准正态分布的累积分布函数，可以用 erf 写出来；tl.erf 作用在 "
                    "float32 的 acc 上。不要用 tanh 近似，它在 fp32 的测试里会失败（§5.2）。",
                    "Use the exact GELU, x * Phi(x), where Phi is the standard normal CDF, which erf expresses; "
                    "tl.erf works on the float32 acc. Not the tanh approximation: it fails the fp32 tests (§5.2).",
                ),
            ),
            advanced=True,
            title_zh="融合 bias 与 GELU",
            needs=("T4.1", "T4.2", "T4.3", "T4.4"),
        ),
    ),
)
