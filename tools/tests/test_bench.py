"""tools/gpu/bench.py, ncu_group.py, ncu_lessons.py and wgmma_serial.py on a machine without a GPU: they refuse
at once, saying why; the parts that need no GPU (shapes, the CSV table) are right."""

import os
import shutil
import subprocess

import pytest

from course import ROOT
from tools.gpu import bench, ncu_lessons, wgmma_serial

torch = pytest.importorskip("torch")
no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="these check the refusal without a GPU")


@pytest.mark.parametrize(
    "text, shape", [("4096", (4096,) * 3), ("16x8192x8192", (16, 8192, 8192)), ("4096X11008x4096", (4096, 11008, 4096))]
)
def test_shapes(text, shape):
    assert bench.parse_shape(text) == shape


@no_gpu
@pytest.mark.parametrize(
    "tool",
    [
        "tools.gpu.bench",
        "tools.gpu.ncu_group",
        "tools.gpu.ncu_lessons",
        "tools.gpu.session_check --out /tmp/x",
        "tools.gpu.wgmma_serial",
    ],
)
def test_refuses_without_a_gpu(tool, run_python):
    out = run_python(["-m", *tool.split()], ROOT, dict(os.environ), 120)
    assert out.returncode != 0 and "needs a CUDA GPU" in out.stderr, out.stderr


@no_gpu
@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_make_bench_refuses_before_any_setup(lang):
    out = subprocess.run(
        ["make", "--no-print-directory", "bench", "PY=false"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, COURSE_LANG=lang),
    )
    said = "需要 CUDA GPU" if lang == "zh" else "needs a CUDA GPU"
    assert out.returncode == 2 and said in out.stdout, out.stdout + out.stderr


def test_table_has_a_row_per_shape_and_the_ratio_to_torch(tmp_path, capsys):
    rows = [
        dict(dtype="fp16", M=8, N=8, K=8, kernel=k, ms=1, tflops=t, vs_torch=r, spread=0, config="")
        for k, t, r in (("torch", 100.0, 1.0), ("solutions", 95.0, 0.95))
    ]
    path = tmp_path / "b.csv"
    bench.write_csv(rows, path, announce=False)
    bench.print_table(path)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| dtype | M x N x K | torch | solutions |"
    assert lines[2] == "| fp16 | 8 x 8 x 8 | 100.0 (1.00) | 95.0 (0.95) |"
    assert len(lines) == 3


def test_ncu_log_read_per_kernel():
    """ncu's --csv log, the program's own output mixed in: one entry per launch, numbers with thousands separators."""
    head = '"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
    log = [
        "== the program's own line\n",
        head,
        '"0","7","matmul_kernel","dram__bytes_read.sum","byte","1,493,500,000"\n',
        '"0","7","matmul_kernel","lts__t_sector_hit_rate.pct","%","69.9"\n',
        '"1","7","t5_kernel","dram__bytes_read.sum","byte","1,502,100,000"\n',
    ]
    kernels = ncu_lessons.per_kernel(log)
    assert kernels == {
        "0": {"kernel": "matmul_kernel", "dram__bytes_read.sum": 1.4935e9, "lts__t_sector_hit_rate.pct": 69.9},
        "1": {"kernel": "t5_kernel", "dram__bytes_read.sum": 1.5021e9},
    }


@pytest.mark.parametrize("lang, words", [("zh", ("几何平均", "数据类型")), ("en", ("geometric mean", "dtype"))])
def test_saved_run_in_each_language(monkeypatch, capsys, lang, words):
    """--table and --summary read a saved bench.csv with no GPU, in the language --lang pins."""
    monkeypatch.setenv("COURSE_LANG", "en" if lang == "zh" else "zh")  # --lang must win; restored afterwards
    saved = str(ROOT / "content" / "bench" / "h200-2026-11-30-t5-final.csv")
    bench.main(["--summary", saved, "--lang", lang])
    bench.main(["--table", saved, "--lang", lang])
    out = capsys.readouterr().out
    assert all(w in out for w in words), out
    assert "T5 solutions" in out and "16x8192x8192" in out


def test_heldout_shapes_are_apart():
    """The held-out set is at least 30 shapes of every kind issue 18 names, and shares no shape with
    the tuning set, the bench grid or TUNED: no held-out figure comes from a shape something was tuned on."""
    from solutions import t5_persistent
    from tools.gpu import heldout, tune

    held = {shape[1:] for shape in heldout.HELDOUT}
    assert len(held) == len(heldout.HELDOUT) >= 30
    assert {kind for kind, *_ in heldout.HELDOUT} == {"square", "llm", "decode", "small", "pitch"}
    for kind, _, N, K in heldout.HELDOUT + tune.TUNING:  # "pitch": a 16-bit row of K or N is not whole 128 bytes
        assert (kind == "pitch") == bool(K * 2 % 128 or N * 2 % 128), (kind, N, K)
    grid = {bench.parse_shape(s) for s in [*map(str, bench.SQUARE), *bench.LLM]}
    tuned = {key[1:] for key in t5_persistent.TUNED}
    for name, other in (("tune.TUNING", {s[1:] for s in tune.TUNING}), ("the bench grid", grid), ("TUNED", tuned)):
        assert not held & other, f"held-out shapes also in {name}: {held & other}"


def test_drawn_sets_are_apart_and_replayable():
    """--drawn SEED gives the same 19 shapes for the same seed, of every kind, none of HELDOUT, the
    tuning set or the bench grid; a seed whose draw hits one of those is refused, not used."""
    from tools.gpu import heldout

    known = heldout.known_shapes()
    for seed in range(200):
        try:
            shapes = heldout.drawn(seed)
        except ValueError as refused:
            assert "take another seed" in str(refused)
            continue
        assert shapes == heldout.drawn(seed), seed
        assert len(shapes) == 19 and {kind for kind, *_ in shapes} == {"llm", "decode", "pitch", "small"}
        assert not {s[1:] for s in shapes} & known, seed
        assert all(M >= 1 and N >= 8 and K >= 8 for _, M, N, K in shapes)
    real = heldout.drawn
    heldout.HELDOUT.append(("llm", *real(7)[0][1:]))  # a drawn shape made known: that seed is refused
    try:
        with pytest.raises(ValueError, match="take another seed"):
            heldout.drawn(7)
    finally:
        heldout.HELDOUT.pop()


def test_every_config_the_rules_give_fits_an_h200():
    """rule_config's (at row pitches of 128, 64, 32 and 16 bytes) and tune_candidates' configs, over the
    tuning and held-out shapes and a sweep of others in all three dtypes, fit an H200's shared
    memory (stages of A and B boxes, C's box, half wide when sub-tiled, and 1 KB for the barriers)
    at their programs per SM, with power-of-two boxes: a rule edit that gives a config no H200 can
    launch fails here, not on the GPU (a 128x256x64 tile with 4 stages was one: 262,176 B, measured
    2026-12-02; an fp32 128x256x32 tile with 3 stages another: 279,552 B)."""
    import torch

    from course.hardware import H100_SMEM, H200_SMS, shared_memory
    from solutions import t5_persistent as t5
    from tools.gpu import heldout, tune

    shapes = {s[1:] for s in [*heldout.HELDOUT, *tune.TUNING]}
    shapes |= {
        (m, n, k)
        for m in (1, 17, 48, 65, 100, 200, 300, 1000, 3000, 9000)
        for n in (96, 1000, 5000, 20000)
        for k in (64, 3000, 20000)
    }
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        size = torch.finfo(dtype).bits // 8
        for M, N, K in sorted(shapes):
            rules = [t5.rule_config(M, N, K, dtype, H200_SMS, pitch) for pitch in (128, 64, 32, 16)]
            for cfg in [*rules, *t5.tune_candidates(M, N, K, dtype, H200_SMS)]:
                boxes = (cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K)
                assert all(b >= 16 and b & (b - 1) == 0 for b in boxes), (M, N, K, dtype, cfg)
                need = (
                    shared_memory(*boxes, cfg.num_stages, size)
                    + cfg.BLOCK_M * cfg.BLOCK_N // cfg.EPILOGUE_SUBTILE * size
                    + 1024
                )
                assert need * cfg.occupancy <= H100_SMEM, (
                    f"{M}x{N}x{K} {dtype}: {cfg} needs {need:,} B x {cfg.occupancy}"
                )


def test_ptxas_verdict_reads_the_serialization_and_the_spills(tmp_path):
    """wgmma_serial's reading of `ptxas -v` (its lines as CUDA 12.8's ptxas prints them, from a stand-in)."""
    said = [
        "ptxas info    : Compiling entry function 'k' for 'sm_90a'",
        "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
        "non wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline "
        "stage in the function 'k'",
        "ptxas info    : Function properties for k",
        "    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads",
        "ptxas info    : Used 188 registers, used 1 barriers",
    ]
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\ncat >&2 <<'END'\n" + "\n".join(said) + "\nEND\n")
    fake.chmod(0o755)
    serialized, why, used = wgmma_serial.ptxas_verdict("// ptx", str(fake))
    assert serialized and why.startswith("non wgmma instructions defining accumulator registers"), why
    assert used == "Used 188 registers, used 1 barriers; 0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads"
    fake.write_text("#!/bin/sh\necho 'ptxas info    : Used 210 registers, used 1 barriers' >&2\n")
    assert wgmma_serial.ptxas_verdict("// ptx", str(fake)) == (False, "", "Used 210 registers, used 1 barriers")
