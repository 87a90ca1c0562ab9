"""Where a mainloop's loads read, against the elements of A and B: the reads past K's last index, for
test_mainloop to name a K tail left unmasked, or a K-tail mask that lets k == K through (no test here: a
helper of tests/t4/test_mainloop.py)."""

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


def read_past_k(probes, monkeypatch, a, b, launch, bk):
    """(names, beyond): which of "A" and "B" the loop read past K's last index with the lane on, in the
    last k-block (A[m, k] for m < M, B[k, n] for n < N, K <= k < cdiv(K, BLOCK_K) * BLOCK_K), when every
    other read it made with a lane on was of an element of A or B; beyond True where each of them read all
    of that tail (the tail read unmasked), False where each read all of k == K and nothing past it (a mask
    that lets k == K through).  launch() runs the loop again under an AddressWatch that records each read.
    ((), False) when it read nothing there, read only part of it, or read elsewhere outside A and B too
    (then another cause is at work), and off the interpreter, where no address can be seen."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return (), False
    reads = []
    with monkeypatch.context() as patched:  # the watch goes with this run: later runs read as before
        watch = bounds.AddressWatch(
            probes, patched, ("mainloop_probe",), seen=lambda what, at, _: what == "read" and reads.append(at)
        )
        if not watch.active:
            return (), False
        launch()
    (M, K), N = a.shape, b.shape[1]
    end = -(-K // bk) * bk  # the last k-block's end: a loop of cdiv(K, BLOCK_K) steps reads no further
    read = np.unique(np.concatenate(reads)) if reads else np.zeros(0, dtype=np.uint64)
    inside = np.isin(read, element_addresses(a, (0, M), (0, K))) | np.isin(read, element_addresses(b, (0, K), (0, N)))
    tails = {"A": element_addresses(a, (0, M), (K, end)), "B": element_addresses(b, (K, end), (0, N))}
    edges = {"A": element_addresses(a, (0, M), (K, K + 1)), "B": element_addresses(b, (K, K + 1), (0, N))}
    outside = read[~inside]
    if end <= K + 1 or not np.isin(outside, np.concatenate(list(tails.values()))).all():
        return (), False  # a read elsewhere outside A and B; or a last k-block one column past K, where the two agree
    # An unmasked tail reads all of it; a mask with <= reads all of column (row) K and no further.  A read of part
    # of the tail alone (a block built on swapped strides that strays into it, say) names neither.
    whole = tuple(name for name in tails if np.isin(tails[name], read).all())
    if whole and np.isin(outside, np.concatenate([tails[name] for name in whole])).all():
        return whole, True
    edge = tuple(name for name in edges if np.isin(edges[name], read).all())
    if edge and np.isin(outside, np.concatenate([edges[name] for name in edge])).all():
        return edge, False
    return (), False


def k_edge_words(which):
    """The words for read_past_k's find at k == K alone: which, "A" and/or "B"."""
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


def k_tail_words(which):
    """The words for read_past_k's find past k == K: which, "A" and/or "B", read the tail unmasked."""
    places = {
        "A": ("A 在 K 之后的列（A[m, k]，k >= K）", "A's columns past K (A[m, k], k >= K)"),
        "B": ("B 在 K 之后的行（B[k, n]，k >= K）", "B's rows past K (B[k, n], k >= K)"),
    }
    zh = "和".join(places[n][0] for n in which)
    en = " and ".join(places[n][1] for n in which)
    return say(
        zh=f"最后一个 k 块里，循环读了 {zh}，lane 是开着的，除此之外没有读 A、B 之外的地方："
        f"K 的尾部没有掩码。这个 load 的掩码还要加上 offs_k 和 K - k * BLOCK_K 的比较（严格小于），other=0.0",
        en=f"in the last k-block the loop read {en} with the lane on, and nothing else outside A and B: the "
        f"K tail is not masked. That load's mask needs offs_k compared with K - k * BLOCK_K too (strictly "
        f"less), with other=0.0",
    )
