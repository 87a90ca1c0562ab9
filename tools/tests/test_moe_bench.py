"""tools/gpu/moe_bench.py and moe_tune.py on a machine without a GPU: the MoE shapes of issue 20,
the seeded routing generators, the counting sort the baselines get, the tuning and held-out sets
kept apart, the options, and the summary of a saved run."""

import csv
import os
import statistics

import pytest

from course import ROOT
from course.hardware import H100_SMEM, shared_memory
from tools.gpu import bench, moe_bench, moe_tune

torch = pytest.importorskip("torch")
SAVED = ROOT / "content" / "bench" / "h200-2026-12-01-t6-final.csv"


def test_the_models_of_issue_20():
    got = {m.name: (m.experts, m.top_k, m.hidden, m.ffn) for m in moe_bench.MODELS.values()}
    assert got == {
        "Mixtral-8x7B": (8, 2, 4096, 14336),
        "OLMoE": (64, 8, 2048, 1024),
        "Qwen3-30B-A3B": (128, 8, 2048, 768),
        "DeepSeek-V3": (256, 8, 7168, 2048),
    }


def test_the_issue_set_and_its_decode_rows():
    cases = moe_bench.issue_cases()
    assert len(cases) == 4 * 4 * 2 == len(set(cases))
    assert {c.tokens for c in cases} == {512, 4096, 16384, moe_bench.DECODE_TOKENS}
    decode = [c for c in cases if c.tokens == moe_bench.DECODE_TOKENS]
    assert decode and all(c.tokens_per_expert <= 16 for c in decode)  # the weight-bandwidth target's rows
    c = moe_bench.Case("olmoe", moe_bench.MODELS["olmoe"], 512, "zipf")
    assert c.rows == 4096 and c.flops == 2 * 4096 * 1024 * 2048


def test_tuning_and_heldout_are_apart():
    """No held-out case is tuned on; the tuned model rows are the named ones only; the synthetic
    layers are of no model in the set; every bucket of pick_config has a tuning case."""
    tuning = moe_bench.tuning_cases()
    held = moe_bench.heldout_cases(moe_bench.issue_cases())
    assert not set(tuning) & set(held)
    assert all(c.tuned for c in tuning) and not any(c.tuned for c in held)
    assert {(c.key, c.tokens) for c in tuning if c.key in moe_bench.MODELS} == set(moe_bench.TUNED_MODEL_ROWS)
    assert not set(moe_bench.SYNTHETIC.values()) & set(moe_bench.MODELS.values())
    per_expert = [c.tokens_per_expert for c in tuning]
    assert min(per_expert) <= 16 and any(16 < p <= 64 for p in per_expert) and max(per_expert) > 128
    assert len(held) == len(moe_bench.issue_cases()) - 2 * len(moe_bench.TUNED_MODEL_ROWS)


@pytest.mark.parametrize("tokens, experts, top_k", [(64, 8, 2), (37, 64, 8), (100, 128, 8), (5, 3, 3)])
def test_balanced_ids(tokens, experts, top_k):
    ids = moe_bench.balanced_ids(tokens, experts, top_k, torch.Generator().manual_seed(1), torch)
    assert ids.shape == (tokens, top_k) and ids.dtype == torch.int32
    assert (ids.sort(1).values.diff(1) != 0).all(), "a token chose one expert twice"
    counts = torch.bincount(ids.reshape(-1).long(), minlength=experts)
    assert counts.max() - counts.min() <= 1, counts.tolist()
    again = moe_bench.balanced_ids(tokens, experts, top_k, torch.Generator().manual_seed(1), torch)
    assert torch.equal(ids, again)


def test_balanced_ids_refuse_more_choices_than_experts():
    with pytest.raises(ValueError, match="top_k=4 > experts=3"):
        moe_bench.balanced_ids(8, 3, 4, torch.Generator().manual_seed(0), torch)


def test_zipf_ids_are_seeded_distinct_and_skewed():
    make = lambda seed: moe_bench.zipf_ids(2048, 64, 8, torch.Generator().manual_seed(seed), torch)  # noqa: E731
    ids = make(0)
    assert ids.shape == (2048, 8) and ids.min() >= 0 and ids.max() < 64
    assert (ids.sort(1).values.diff(1) != 0).all()
    assert torch.equal(ids, make(0)) and not torch.equal(ids, make(1))
    counts = torch.bincount(ids.reshape(-1).long(), minlength=64)
    assert counts.max() > 4 * counts.float().mean(), counts.tolist()  # balanced would be 256 each


def test_routing_ids_follow_the_case():
    case = moe_bench.Case("qwen3", moe_bench.MODELS["qwen3"], 64, "balanced")
    ids = moe_bench.routing_ids(case, 0, torch)
    assert ids.shape == (64, 8) and torch.equal(ids, moe_bench.routing_ids(case, 0, torch))
    skewed = moe_bench.routing_ids(moe_bench.Case("qwen3", case.moe, 64, "zipf"), 0, torch)
    assert not torch.equal(ids, skewed)


def test_sort_by_expert_is_a_stable_counting_sort():
    ids = torch.tensor([[2, 0], [0, 1], [2, 1], [0, 2]], dtype=torch.int32)
    counts, offs, token_of = moe_bench.sort_by_expert(ids, 4, torch)
    assert counts.tolist() == [3, 2, 3, 0]
    assert offs.tolist() == [3, 5, 8, 8] and offs.dtype == torch.int32  # torch._grouped_mm's offs
    assert token_of.tolist() == [0, 1, 3, 1, 2, 0, 2, 3]  # expert 0's tokens, then 1's, then 2's, in token order


def test_options():
    args = moe_bench.parse_args([])
    assert args.dtype == ["bf16", "fp16"] and args.timing == ["graph", "eager"] and args.set == "issue"
    assert len(moe_bench.cases_of(args)) == 32
    args = moe_bench.parse_args(["--models", "olmoe", "--tokens", "512", "--routing", "zipf", "--dtype", "fp16"])
    assert [(c.key, c.tokens, c.routing) for c in moe_bench.cases_of(args)] == [("olmoe", 512, "zipf")]
    assert moe_bench.cases_of(moe_bench.parse_args(["--set", "tuning"])) == moe_bench.tuning_cases()
    assert not any(c.tuned for c in moe_bench.cases_of(moe_bench.parse_args(["--set", "heldout"])))
    with pytest.raises(SystemExit):
        moe_bench.parse_args(["--models", "gpt4"])


def test_other_layers_by_key_or_by_numbers():
    """--models takes OTHER_MODELS' keys; --layer KEY=E,TOP_K,HIDDEN,FFN times a layer of the user's own,
    alone unless --models names others too; a malformed or impossible layer is refused."""
    cases = moe_bench.cases_of(moe_bench.parse_args(["--models", "qwen15", "--tokens", "48", "--routing", "zipf"]))
    assert [(c.moe.name, c.moe.experts, c.rows) for c in cases] == [("Qwen1.5-MoE-A2.7B", 60, 192)]
    args = moe_bench.parse_args(["--layer", "mine=24,3,1024,640", "--tokens", "512", "--routing", "balanced"])
    assert [(c.key, c.moe, c.tuned) for c in moe_bench.cases_of(args)] == [
        ("mine", moe_bench.Moe("mine", 24, 3, 1024, 640), False)
    ]
    args = moe_bench.parse_args(["--models", "olmoe", "--layer", "mine=24,3,1024,640", "--tokens", "512"])
    assert [c.key for c in moe_bench.cases_of(args)] == ["olmoe", "olmoe", "mine", "mine"]
    assert not set(moe_bench.OTHER_MODELS.values()) & set(moe_bench.MODELS.values())
    for bad in ("mine=24,3,1024", "=24,3,1024,640", "mine=4,8,1024,640", "mine=24,3,0,640"):
        with pytest.raises(SystemExit):
            moe_bench.parse_args(["--layer", bad])


def row(**kw):
    base = dict(dtype="bf16", model="M", key="m", experts=64, top_k=8, hidden=1024, ffn=512, tokens=512,
                routing="balanced", tuned=False, active=64, timing="graph", kernel="T6", ms=1.0, tflops=1.0,
                vs_gmm=1.0, weight_tbs=1.0, spread=0.0)  # fmt: skip
    return {**base, **kw}


def test_summary_of_known_rows(tmp_path, capsys):
    """Geometric means over the issue's token counts (the decode rows apart), held-out alone, T6 /
    loop at >= 64 experts, the weight bandwidth at <= 16 tokens per expert, the routing's share."""
    rows = [
        row(kernel="grouped_mm", ms=2.0),
        row(kernel="T6", vs_gmm=2.0, ms=1.0),
        row(kernel="loop", vs_gmm=0.5, ms=4.0),
        row(tokens=4096, kernel="T6", vs_gmm=0.5, tuned=True),
        row(tokens=64, kernel="T6", vs_gmm=9.0, weight_tbs=3.6),
        row(tokens=4096, kernel="route T6", ms=0.01, tflops="", vs_gmm="", weight_tbs=""),
        row(tokens=4096, kernel="layer", ms=0.2, vs_gmm=""),
    ]
    path = tmp_path / "moe.csv"
    moe_bench.write_csv(rows, path)
    bench.main(["--moe", "--summary", str(path)])  # make bench ARGS="--moe ..." reaches moe_bench
    out = capsys.readouterr().out
    assert "bf16 graph T6 / bf16 grouped_mm: geometric mean 1.000 over 2, lowest 0.50 at M 4096 balanced" in out
    assert "held-out: geometric mean 2.000 over 1" in out
    assert "T6 / loop at >= 64 experts: geometric mean 4.00x, lowest 4.00x over 1" in out
    assert "bf16 graph T6 at <= 16 tokens per expert: weight bytes at 75-75 % of 4.8 TB/s over 1" in out
    assert "route T6 M 4096 balanced: 10.0 us, 5.0 % of the layer" in out


def test_summary_of_the_saved_run(capsys):
    moe_bench.main(["--summary", str(SAVED)])
    out = capsys.readouterr().out
    with open(SAVED) as f:
        rows = [r for r in csv.DictReader(f) if r["kernel"] == "T6" and r["timing"] == "graph" and r["dtype"] == "bf16"]
    want = statistics.geometric_mean(float(r["vs_gmm"]) for r in rows if r["tokens"] != "64")
    assert f"bf16 graph T6 / bf16 grouped_mm: geometric mean {want:.3f} over 24" in out


def test_tuning_candidates_fit_in_shared_memory():
    """Every candidate, and every CONFIGS entry as pick_config hands it out (SwiGLU's pass loads two
    B boxes), fits the H100/H200's shared memory."""
    for bm, bn, bk, _, _, stages in moe_tune.CANDIDATES + moe_tune.CANDIDATES_2:
        assert shared_memory(bm, bn, bk, stages, 2) <= H100_SMEM, (bm, bn, bk, stages)
    assert moe_tune.bucket_blocks(12) == (16, 32) and 128 in moe_tune.bucket_blocks(300)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without a GPU")
def test_refuses_without_a_gpu(run_python):
    out = run_python(["-m", "tools.gpu.bench", "--moe", "--models", "olmoe"], ROOT, dict(os.environ), 120)
    assert out.returncode != 0 and "needs a CUDA GPU" in out.stderr, out.stderr
