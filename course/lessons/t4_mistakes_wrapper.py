"""Lesson T4's classic mistakes of T4.4, the wrapper (§6: the grid, the launch, autotune, the input
checks), for its explainer §8 table.  Kept beside t4_mistakes.py, which gathers them into its TABLE
after T4.1-T4.3's and before T4.5's (one file was 406 lines); their causes are keys of
t4_mistakes.CAUSES, with the other steps' words.
"""

from course.lesson_data import Mistake

# The end of matmul's body, as in the reference: the shortcuts add torch work after the launch.
LAUNCH = '''    if config is None:
        matmul_kernel_autotuned[grid](*args, **flags)
    else:
        matmul_kernel[grid](*args, **config.all_kwargs(), **flags)
'''

WRAPPER = (
    Mistake(
        "fixed-grid",
        "T4.4",
        "网格按固定的 BLOCK_M、BLOCK_N 计算",
        "a grid computed from a fixed BLOCK_M and BLOCK_N",
        "6.2",
        'grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)',
        "grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)",
        "test_grid_follows_the_config",
        cause="grid-too-small",
    ),
    Mistake(
        "fp32-output",
        "T4.4",
        "输出 C 的 dtype 写死成 float32",
        "C allocated as float32 whatever the inputs",
        "6.2",
        "c = torch.empty((M, N), device=a.device, dtype=a.dtype)",
        "c = torch.empty((M, N), device=a.device, dtype=torch.float32)",
        "test_matmul[45-37-83-row-major-torch.float16]",
    ),
    Mistake(
        "torch-does-it",
        "T4.4",
        "把乘法交给 torch",
        "the product handed to torch",
        "6.2",
        "matmul_kernel[grid](*args, **config.all_kwargs(), **flags)",
        "c.copy_(a @ b)",
        "test_wrapper_launches_the_kernel",
        cause="torch-product",
    ),
    Mistake(
        "torch-after-launch",
        "T4.4",
        "象征性地启动一次 kernel，再用 torch 重算 C",
        "a token launch, then C computed again in torch",
        "6.2",
        LAUNCH,
        (
            # a launch over no rows: every cell of C then comes from torch, so the count in the
            # message does not hang on float rounding, which differs between CPUs
            "    matmul_kernel[(1,)](*args[:4], 0, *args[5:], **(config or INTERPRET_CONFIG).all_kwargs(), **flags)\n"
            "    c.copy_((a[:, :, None].float() * b[None].float()).sum(1))\n"
        ),
        "test_matmul[45-37-83-row-major-torch.float16]",
        cause="changed-after-launch",
    ),
    Mistake(
        "scratch-buffer",
        "T4.4",
        "kernel 写进另一个缓冲区，返回的 C 由 torch 填",
        "the kernel launched into a scratch buffer, C filled by torch",
        "6.2",
        "args = (a, b, c, bias,",
        "args = (a, b, torch.empty_like(c), bias,",
        "test_matmul[45-37-83-row-major-torch.float16]",
        cause="not-the-launched-c",
    ),
    Mistake(
        "skip-from-code",
        "T4.4",
        "在代码里调用 pytest.skip，让检查消失",
        "pytest.skip called from the graded code to make checks vanish",
        "6.3",
        "    tensors = {",
        "    __import__('pytest').skip('later')\n    tensors = {",
        "test_input_validation[activation]",
        cause="escape",
    ),
    Mistake(
        "exit-from-code",
        "T4.4",
        "在代码里调用 sys.exit",
        "sys.exit called from the graded code",
        "6.3",
        "    tensors = {",
        "    __import__('sys').exit(0)\n    tensors = {",
        "test_matmul[45-37-83-row-major-torch.float16]",
        cause="escape",
    ),
    Mistake(
        "kwargs-not-all",
        "T4.4",
        "用 config.kwargs 启动，丢了 num_warps 和 num_stages",
        "launched with config.kwargs, which drops num_warps and num_stages",
        "6.2",
        "matmul_kernel[grid](*args, **config.all_kwargs(), **flags)",
        "matmul_kernel[grid](*args, **config.kwargs, **flags)",
        "test_wrapper_launches_the_kernel",
        cause="config-kwargs",
    ),
    Mistake(
        "interpreter-autotunes",
        "T4.4",
        "解释器下也走 autotune",
        "autotune on the interpreter path too",
        "6.2",
        "    if config is None and INTERPRETING:\n        config = INTERPRET_CONFIG\n",
        "",
        "test_default_launch_path",
    ),
    Mistake(
        "smem-too-big",
        "T4.4",
        "配置需要的共享内存超过 H100/H200 的上限",
        "a config over an H100's shared memory",
        "4.4",
        "_config(128, 256, 64, 8, 8, 3),",
        "_config(128, 256, 128, 8, 8, 3),",
        "test_autotune_configs_fit_hopper_shared_memory",
    ),
    Mistake(
        "key-without-k",
        "T4.4",
        "autotune 的 key 里没有 K",
        "an autotune key without K",
        "6.1",
        'key=["M", "N", "K", "stride_bn"]',
        'key=["M", "N", "stride_bn"]',
        "test_autotuned_kernel",
    ),
    Mistake(
        "no-activation-check",
        "T4.4",
        "不检查 activation 参数",
        "the activation argument not checked",
        "6.3",
        "    if activation not in ACTIVATIONS:\n",
        "    if False:\n",
        "test_input_validation[activation]",
    ),
    Mistake(
        "no-bias-dtype-check",
        "T4.4",
        "只检查 a 和 b 的 dtype，漏了 bias",
        "the dtypes of a and b checked, not the bias's",
        "6.3",
        "dtypes = {name: t.dtype for name, t in tensors.items()}",
        'dtypes = {"a": a.dtype, "b": b.dtype}',
        "test_input_validation[bias dtype]",
    ),
    Mistake(
        "vague-error",
        "T4.4",
        "报错信息不说出错在哪",
        "an error that does not say what is wrong",
        "6.3",
        'raise ValueError(f"matmul: inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")',
        'raise ValueError("matmul: bad shapes")',
        "test_input_validation[inner dims differ]",
    ),
    Mistake(
        "bf16-on-cpu",
        "T4.4",
        "解释器下不拒绝 bf16",
        "bf16 not refused on the interpreter",
        "6.3",
        "    if a.dtype == torch.bfloat16 and INTERPRETING:\n",
        "    if False:\n",
        "test_bf16_is_never_silently_wrong_on_the_interpreter",
        cause="bf16-accepted",
    ),
)
