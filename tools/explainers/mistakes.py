"""Make each classic mistake in a copy of the reference, run the test that should catch it, and
print what the learner would see (explainer §8).

    python -m tools.explainers.mistakes --lang zh          # a markdown table, one row per mistake
    python -m tools.explainers.mistakes --only fixed-grid  # one mistake, with the whole failure line

Every mistake is a text substitution in solutions/t4_matmul.py; the copy becomes mine/t4_matmul.py
of a scratch repo and one test runs on Triton's interpreter, the way a learner without a GPU runs
it, with COURSE_LANG set to the table's language, so each table quotes the messages a learner
reading that language sees.  To keep `make check` quick, a few worker processes each import torch
and triton once and run their share of the mistakes one pytest session after another, and what
they saw is kept in the temp folder under a hash of everything it depends on and the language, so
the tables and `make check`'s message check (tools/checks/messages.py) share the runs.  A
substitution that no longer matches the reference is an
error, so the table cannot quietly describe code that has changed.  Numbers that vary from run to
run (relative errors of random inputs) print as x.xe-xx.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from course import ROOT
from course.registry import T4
from tools.checks.common import scratch_repo, solution_file
from tools.study import common as study

SOLUTION = solution_file(T4)


@dataclass(frozen=True)
class Mistake:
    key: str
    step: str
    zh: str
    en: str
    section: str
    old: str
    new: str
    test: str  # the node id (tests/test_t4.py::...) that catches it


# bias_and_activation's two blocks, as in the reference: the bias-after-gelu mistake swaps them.
BIAS_BLOCK = (
    "    if HAS_BIAS:\n        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
    "        bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)\n"
    "        acc = acc + bias.to(tl.float32)[None, :]  # one bias value per column of C\n"
)
GELU_BLOCK = (
    "    if ACTIVATION == \"gelu\":\n"
    "        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))  # exact GELU: x * Phi(x)\n"
)

# The end of matmul's body, as in the reference: the shortcuts add torch work after the launch.
LAUNCH = '''    if config is None:
        matmul_kernel_autotuned[grid](*args, **flags)
    else:
        matmul_kernel[grid](*args, **config.all_kwargs(), **flags)
'''

MISTAKES = (
    Mistake(
        "modulo-group-m",
        "T4.1",
        "最后一组按 GROUP_M 取模，而不是 group_size_m",
        "the last group taken modulo GROUP_M, not group_size_m",
        "2.2",
        "pid_m = first_pid_m + pid_in_group % group_size_m\n    pid_n = pid_in_group // group_size_m",
        "pid_m = first_pid_m + pid_in_group % GROUP_M\n    pid_n = pid_in_group // GROUP_M",
        "test_tile_coords_exact_map[5-3-2]",
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
    ),
    Mistake(
        "fixed-grid",
        "T4.4",
        "网格按固定的 BLOCK_M、BLOCK_N 计算",
        "a grid computed from a fixed BLOCK_M and BLOCK_N",
        "6.2",
        'grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)',
        "grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)",
        "test_grid_follows_the_config",
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
    ),
    Mistake(
        "torch-after-launch",
        "T4.4",
        "象征性地启动一次 kernel，再用 torch 重算 C",
        "a token launch, then C computed again in torch",
        "6.2",
        LAUNCH,
        (
            "    matmul_kernel[(1,)](*args, **(config or INTERPRET_CONFIG).all_kwargs(), **flags)\n"
            "    c.copy_((a[:, :, None].float() * b[None].float()).sum(1))\n"
        ),
        "test_matmul[45-37-83-row-major-torch.float16]",
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
        'key=["M", "N", "K"]',
        'key=["M", "N"]',
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
    ),
    Mistake(
        "bias-in-torch",
        "T4.5",
        "kernel 里不加 bias、不做 GELU，交给 torch 在启动之后做",
        "bias and GELU left out of the kernel and done in torch after the launch",
        "5.2",
        'flags = dict(HAS_BIAS=bias is not None, ACTIVATION=activation or "none")',
        'flags = dict(HAS_BIAS=False, ACTIVATION="none")',
        "test_bias_and_gelu[48-48-40-True-gelu-torch.float16]",
    ),
    Mistake(
        "bias-unmasked",
        "T4.5",
        "加载 bias 时没有掩码",
        "the bias loaded without a mask",
        "5.2",
        "bias = tl.load(bias_ptr + offs_n * stride_bias, mask=offs_n < N, other=0.0)",
        "bias = tl.load(bias_ptr + offs_n * stride_bias)",
        "test_bias_and_activation[70-32-True-none-torch.float16]",
    ),
    Mistake(
        "bias-after-gelu",
        "T4.5",
        "先 GELU 再加 bias",
        "the bias added after the GELU",
        "5.2",
        BIAS_BLOCK + GELU_BLOCK,
        GELU_BLOCK + BIAS_BLOCK,
        "test_bias_and_gelu[48-48-40-True-gelu-torch.float16]",
    ),
    Mistake(
        "tanh-gelu",
        "T4.5",
        "用 GELU 的 tanh 近似代替精确的 erf 版本",
        "the tanh approximation of GELU instead of the exact (erf) one",
        "5.2",
        "acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))",
        "acc = acc * tl.sigmoid(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))",
        "test_bias_and_gelu[48-48-40-True-gelu-torch.float32]",
    ),
    Mistake(
        "bias-by-row",
        "T4.5",
        "bias 按行而不是按列加",
        "the bias added per row, not per column",
        "5.2",
        "acc = acc + bias.to(tl.float32)[None, :]",
        "acc = acc + bias.to(tl.float32)[:, None]",
        "test_bias_is_one_value_per_column",
    ),
    Mistake(
        "bias-stride",
        "T4.5",
        "bias 的 stride 被忽略",
        "the bias stride ignored",
        "5.2",
        "bias_ptr + offs_n * stride_bias",
        "bias_ptr + offs_n",
        "test_bias_and_activation[70-32-True-none-torch.float16]",
    ),
)

VARYING = re.compile(r"\d\.\d+e[+-]\d+")  # relative errors of random inputs
# The pointers a message ends with: where to read (the table has its own column) and `make loads`.
WHERE = re.compile(
    r"[;；]? ?(?:read content/t4\.en\.md .*?\(Chinese: content/t4\.md\)"
    r"|详见 content/t4\.md .*?（English: content/t4\.en\.md）)"
)
LOADS = re.compile(r"[.。] ?(?:see your own loads: make loads|用 make loads) .*$")
HEADS = {
    "zh": ("错误", "步骤", "讲解", "抓住它的测试", "你会看到的失败信息（第一行）"),
    "en": ("mistake", "step", "read", "the test that catches it", "what you see (first line)"),
}


def mistaken_source(m, reference):
    if reference.count(m.old) != 1:
        raise SystemExit(
            f"mistake {m.key!r}: its text occurs {reference.count(m.old)} times in {SOLUTION.name}, "
            f"not once; update tools/explainers/mistakes.py to the reference as it is now"
        )
    return reference.replace(m.old, m.new)


def run_in_worker(keys, reference, lang):
    """{key: (outcome, first line, first line as printed)} for these mistakes, run by one worker
    process in its own copy with COURSE_LANG=lang."""
    with scratch_repo() as tmp:
        jobs = Path(tmp) / "jobs.json"
        jobs.write_text(json.dumps({m.key: [m.test, mistaken_source(m, reference)] for m in MISTAKES if m.key in keys}))
        # `-m` from the scratch copy: its packages come first on sys.path, ahead of the checkout's.
        proc = subprocess.run(
            [sys.executable, "-m", "tools.explainers.mistakes", "--worker", str(jobs)],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=900,
            env=dict(os.environ, TRITON_INTERPRET="1", SOLUTION="0", SEED="0", COURSE_LANG=lang),
        )
        out = Path(tmp) / "seen.json"
        if not out.exists():
            raise SystemExit(f"tools/explainers/mistakes.py worker failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
        return json.loads(out.read_text())


def worker(jobs_path):
    """Inside a scratch repo: one pytest session per mistake, in this one process."""
    import pytest

    from tools.learner import plugin

    seen = {}
    for key, (test, source) in json.loads(Path(jobs_path).read_text()).items():
        Path(f"mine/{T4.file}").write_text(source)
        # all of course/ too: `from course import t4_probes` would find the old probes as an attribute
        for name in [
            n
            for n in sys.modules
            if n.split(".")[0] in ("mine", "course", "conftest", "test_t4") or n == plugin.__name__
        ]:
            del sys.modules[name]  # the next session imports the mistaken file afresh
        os.environ[plugin.REPORT] = report = os.path.abspath(f"report-{key}.json")
        pytest.main([f"{T4.suite}::{test}", "-q", "--tb=no", "-p", plugin.__name__])
        results = json.loads(Path(report).read_text())["results"] if Path(report).exists() else {}
        if len(results) != 1:
            raise SystemExit(f"mistake {key!r}: expected one result for {test}, got {results}")
        (result,) = results.values()
        reason = VARYING.sub("x.xe-xx", LOADS.sub("", WHERE.sub("", result["reason"]))).strip()
        seen[key] = (result["outcome"], reason, result["reason"])
    Path("seen.json").write_text(json.dumps(seen))


def saw_before(keys, reference, lang):
    """The cache file for these mistakes: a hash of the reference, the suite, the tools that run it,
    the versions of Python, torch and triton and the language, so any change to what could alter a
    message misses it."""
    from importlib import metadata

    h = hashlib.sha256(reference.encode())
    for part in ("course", "tests", "tools"):
        for f in sorted((ROOT / part).rglob("*.py")):
            h.update(f.read_bytes())
    for pkg in ("torch", "triton", "numpy", "pytest"):
        h.update(metadata.version(pkg).encode())
    h.update((sys.version + ",".join(sorted(keys)) + lang).encode())
    return Path(tempfile.gettempdir()) / f"t4-mistakes-{h.hexdigest()[:20]}.json"


def seen_by_learner(chosen, lang):
    """{key: (outcome, first line without its pointers, first line as printed)} for these
    mistakes, each run under COURSE_LANG=lang; cached (saw_before)."""
    # TRITON_INTERPRET=1 in the workers: the same messages on every machine, the learner's CPU path.
    reference = SOLUTION.read_text()
    for m in chosen:
        mistaken_source(m, reference)  # refuse a stale substitution even when the cache would answer
    cache = saw_before([m.key for m in chosen], reference, lang)
    if cache.exists():
        return json.loads(cache.read_text())
    n = min(len(chosen), os.cpu_count() or 2)
    with ThreadPoolExecutor(max_workers=n) as pool:
        shares = pool.map(lambda i: run_in_worker({m.key for m in chosen[i::n]}, reference, lang), range(n))
        found = {k: v for share in shares for k, v in share.items()}
    cache.write_text(json.dumps(found))
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lang", choices=HEADS, default="zh")
    p.add_argument("--only", nargs="+", metavar="KEY", help=", ".join(m.key for m in MISTAKES))
    p.add_argument("--worker", metavar="JOBS", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args.worker)
    chosen = [m for m in MISTAKES if not args.only or m.key in args.only]
    found = seen_by_learner(chosen, args.lang)
    seen = [found[m.key] for m in chosen]
    caught = [(m, reason) for m, (outcome, reason, _) in zip(chosen, seen, strict=False) if outcome == "failed"]
    missed = [m.key for m, (outcome, _, _) in zip(chosen, seen, strict=False) if outcome != "failed"]
    if missed:
        raise SystemExit(f"the suite no longer catches: {', '.join(missed)}")
    rows = [
        (getattr(m, args.lang), m.step, f"§{m.section}", f"`{m.test.split('[')[0]}`", reason.replace("|", "\\|"))
        for m, reason in caught
    ]
    print(study.table(HEADS[args.lang], rows, markdown=True))


if __name__ == "__main__":
    main()
