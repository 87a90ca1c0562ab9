"""Lesson T5.2's host side reads no tensor value (§3.2): TMA's rules are about shapes, strides and the base
address, so tma_problem, tma_ready and make_descriptors, run on every matmul call, never wait for the device.
On the CPU nothing syncs: tests/host_reads.py records each read of a value made by the graded file instead
(hunt14: a tma_ready that checked its operands with torch.isfinite(a).all() was told only as a second copy)."""

import os

import pytest
import torch

from course.messages import fail

from .common import T5
from host_reads import host_reads
from support import random

pytestmark = pytest.mark.t5  # the lesson's marker; each test also carries its step's


@pytest.mark.t5_2
def test_tma_ready_and_descriptors_read_no_value(t5):
    """A legal pair, b = W.t() (read K-major) and an fp16 a with odd K (copied): tma_ready, then
    make_descriptors on what it returned, under the host-read watch; a call that raises is left to the
    other tests of T5.2, the reads made before it still counted."""
    w = random((24, 33), torch.float16)
    pairs = (
        (random((40, 64), torch.float16), random((64, 24), torch.float16)),
        (random((40, 64), torch.float32), random((24, 64), torch.float32).t()),
        (random((40, 33), torch.float16), w.t()),
    )
    graded = {os.path.realpath(getattr(t5, "__file__", "") or "")}
    with host_reads(graded) as mode:
        for a, b in pairs:
            try:
                a2, b2, kmajor = t5.tma_ready(a, b, True)
                c = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
                t5.make_descriptors(a2, b2, c, kmajor, 32, 32, 32, 1)
            except NotImplementedError:  # the stub: "not written yet", as every test of T5.2 says
                raise
            except Exception:  # noqa: BLE001 - a wrong answer or an error here is the other tests' to tell
                continue
    if mode.reads:
        what, function, file, line = mode.reads[0]
        count = len(mode.reads)
        fail(
            T5,
            f"tma_ready 和 make_descriptors 在主机上读了张量的值 {count} 次，第一次是 {function}（{file} 第 {line} "
            f"行）里的 {what}：每次 matmul 都会走这里，在 GPU 上每读一次都要等设备算完，CUDA graph 也捕获不了；"
            "TMA 的规则只看形状、stride 和基地址（t.stride()、t.data_ptr()），不看元素的值",
            f"tma_ready and make_descriptors read tensor values back to the host {count} "
            f"time{'s' * (count != 1)}, first {what} in {function} ({file} line {line}): every matmul call runs "
            "them, and on a GPU each read waits for the device, which a CUDA graph cannot capture; TMA's rules look "
            "at the shapes, the strides and the base address alone (t.stride(), t.data_ptr()), never at values",
            "3.2",
        )
