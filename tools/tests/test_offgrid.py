"""tools/gpu/offgrid.py on the CPU (its small mode under the interpreter): the references pass a few
drawn cases of each lesson, and a result with one wrong cell, a NaN or the wrong shape is called wrong."""

import os
import random

import pytest

from course import ROOT
from tools.gpu import offgrid

torch = pytest.importorskip("torch")


def test_the_references_pass_drawn_cases_on_the_interpreter(run_python):
    out = run_python(["-m", "tools.gpu.offgrid", "--cases", "3"], ROOT, dict(os.environ, TRITON_INTERPRET="1"), 300)
    assert out.returncode == 0 and "every case right" in out.stdout, out.stdout + out.stderr
    assert "T5 (dense, solutions): 0 of 3" in out.stdout and "T6 (grouped, solutions): 0 of 3" in out.stdout


def test_judge_names_what_is_wrong():
    ref = torch.randn(64, 48, dtype=torch.float64)
    assert offgrid.judge(ref.half(), ref, "float16", torch) == ""
    one_off = ref.half().clone()
    one_off[5, 7] += 3.0  # a single wrong cell: the norm alone would not see it in a large result
    assert "1 of 3072 cells far off" in offgrid.judge(one_off, ref, "float16", torch)
    nan = ref.half().clone()
    nan[0, 0] = float("nan")
    assert "NaN" in offgrid.judge(nan, ref, "float16", torch)
    assert "shape (64, 47)" in offgrid.judge(ref.half()[:, :47], ref, "float16", torch)
    assert "dtype torch.float32" in offgrid.judge(ref.float(), ref, "float16", torch)


def test_a_wrong_call_is_seen_on_a_second_call_too():
    """A matmul right on its first call and wrong on the next (a stale plan) fails the case."""

    class Stale:
        calls = 0

        @staticmethod
        def matmul(a, b, *, bias=None, activation=None):
            Stale.calls += 1
            return (a.float() @ b.float() * (1 if Stale.calls == 1 else 0)).to(a.dtype)

    case = dict(M=9, N=7, K=5, dtype="float32", a="contiguous", b="W.t()", bias=None, activation=None, out=False)
    results = offgrid.run_dense(Stale, case, torch.Generator().manual_seed(0), torch, "cpu")
    verdicts = [offgrid.judge(out, ref, case["dtype"], torch) for _, out, ref in results]
    assert verdicts[0] == "" and "relative error" in verdicts[1]


def test_draws_are_seeded_and_cover_the_layouts():
    cases = [offgrid.draw_dense(random.Random(f"7-T5-{n}"), False, True) for n in range(200)]
    assert cases == [offgrid.draw_dense(random.Random(f"7-T5-{n}"), False, True) for n in range(200)]
    assert {c["b"] for c in cases} == {"row-major", "W.t()", "pitched"} and {c["a"] for c in cases} == {
        "contiguous",
        "pitched",
        "a.t()",
        "expanded",
    }
    assert max(c["M"] * c["N"] * c["K"] for c in cases) <= 2**33 and min(c["M"] for c in cases) == 1
    grouped = [offgrid.draw_grouped(random.Random(f"7-T6-{n}"), False) for n in range(200)]
    assert {c["call"] for c in grouped} == {"sorted", "weighted", "combine", "swiglu", "moe_mlp"}
    assert all(c["experts"] * c["N"] * c["K"] <= 2**28 for c in grouped)
