"""Where a mainloop's loads read, against the elements of A and B: the reads one past K's last index,
for test_mainloop to name a K-tail mask that lets k == K through (no test here: a helper of
tests/t4/test_mainloop.py)."""

import os

import numpy as np

from course.i18n import say

import bounds


def element_addresses(t, rows, cols):
    """The byte addresses of t's elements [rows, cols] (index ranges; they may run past t's shape, as a
    mask's lane does), as a numpy array, by t's own strides."""
    r, c = np.arange(*rows, dtype=np.int64), np.arange(*cols, dtype=np.int64)
    offsets = r[:, None] * t.stride(0) + c[None, :] * t.stride(1)
    return (t.data_ptr() + offsets * t.element_size()).astype(np.uint64).ravel()


def read_at_k_equal_k(probes, monkeypatch, a, b, launch):
    """Which of "A" and "B" the loop read at k == K, one past K's last index (A[m, K] for m < M, B[K, n]
    for n < N), with the lane on, when every other read it made with a lane on was of an element of A or
    B: launch() runs the loop again under an AddressWatch that records each read.  () when it read
    nothing there, or read elsewhere outside A and B too (then another cause is at work); () off the
    interpreter, where no address can be seen."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return ()
    reads = []
    with monkeypatch.context() as patched:  # the watch goes with this run: later runs read as before
        watch = bounds.AddressWatch(
            probes, patched, ("mainloop_probe",), seen=lambda what, at, _: what == "read" and reads.append(at)
        )
        if not watch.active:
            return ()
        launch()
    (M, K), N = a.shape, b.shape[1]
    read = np.unique(np.concatenate(reads)) if reads else np.zeros(0, dtype=np.uint64)
    inside = np.isin(read, element_addresses(a, (0, M), (0, K))) | np.isin(read, element_addresses(b, (0, K), (0, N)))
    edges = {"A": element_addresses(a, (0, M), (K, K + 1)), "B": element_addresses(b, (K, K + 1), (0, N))}
    at_edge = {name: np.isin(read, where) & ~inside for name, where in edges.items()}
    if not (inside | at_edge["A"] | at_edge["B"]).all():
        return ()
    return tuple(name for name, hit in at_edge.items() if hit.any())


def k_edge_words(which):
    """The words for read_at_k_equal_k's find: which, "A" and/or "B"."""
    places = {
        "A": ("A 的第 K 列（A[m, K]）", "column K of A (A[m, K])"),
        "B": ("B 的第 K 行（B[K, n]）", "row K of B (B[K, n])"),
    }
    zh = "和".join(places[n][0] for n in which)
    en = " and ".join(places[n][1] for n in which)
    return say(
        zh=f"循环读了 {zh}，lane 是开着的：K 的最后一个下标是 K - 1，这个位置已经在外面了；"
        f"除此之外没有读 A、B 之外的地方。K 尾部的掩码放过了 k == K：它要严格小于，offs_k < K - k * BLOCK_K，不是 <=",
        en=f"the loop read {en} with the lane on, one past K's last index, K - 1, and nothing else outside A and "
        f"B: the K tail's mask lets k == K through; it must be strictly less, offs_k < K - k * BLOCK_K, not <=",
    )
