"""Where a mainloop's loads read, against the elements of A and B: the reads one past K's last index,
for test_mainloop to name a K-tail mask that lets k == K through (no test here: a helper of
tests/t4/test_mainloop.py)."""

import os

import numpy as np
import torch

from course.i18n import say

import bounds
from .source_reads import bool_op_words

# A mask that compares with the other dimension's size: A's rows with N, B's columns with M.
CROSSED = {
    "A": ("A 的行掩码拿 offs_m 和 N", "A's row mask compares offs_m with N"),
    "B": ("B 的列掩码拿 offs_n 和 M", "B's column mask compares offs_n with M"),
}


def element_addresses(t, rows, cols):
    """The byte addresses of t's elements [rows, cols] (index ranges; they may run past t's shape, as a
    mask's lane does), as a numpy array, by t's own strides."""
    r, c = np.arange(*rows, dtype=np.int64), np.arange(*cols, dtype=np.int64)
    offsets = r[:, None] * t.stride(0) + c[None, :] * t.stride(1)
    return (t.data_ptr() + offsets * t.element_size()).astype(np.uint64).ravel()


def read_at_k_equal_k(probes, monkeypatch, a, b, launch, blocks=(64, 64, 64)):
    """Where the loop read outside A and B with the lane on, named when every such read lies at an edge of
    A or B: "A" and "B" for k == K, one past K's last index (A[m, K] for m < M, B[K, n] for n < N); "A-k"
    and "B-k" for the K tail further on (k > K, before the last k-block's end); "A-m" for A's rows past M
    and "B-n" for B's columns past N, each within one tile of its edge (blocks: BLOCK_M, BLOCK_N,
    BLOCK_K) and each read whole, with ("A-m", "N") or ("B-n", "M") where they end exactly at the other
    dimension's size, N or M: the mask that compares with it.  launch() runs the loop again under an
    AddressWatch that records each read.  () when it read nothing outside, or read elsewhere outside A
    and B too (then another cause is at work); () off the interpreter, where no address can be seen."""
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
    bm, bn, bk = blocks
    end_m, end_n, end_k = -(-M // bm) * bm, -(-N // bn) * bn, -(-K // bk) * bk  # where the last tiles end
    read = np.unique(np.concatenate(reads)) if reads else np.zeros(0, dtype=np.uint64)
    inside = np.isin(read, element_addresses(a, (0, M), (0, K))) | np.isin(read, element_addresses(b, (0, K), (0, N)))
    edges = {
        "A": element_addresses(a, (0, M), (K, K + 1)),
        "B": element_addresses(b, (K, K + 1), (0, N)),
        "A-k": element_addresses(a, (0, M), (K + 1, end_k)),
        "B-k": element_addresses(b, (K + 1, end_k), (0, N)),
        "A-m": element_addresses(a, (M, end_m), (0, K)),
        "B-n": element_addresses(b, (0, K), (N, end_n)),
    }
    at_edge = {name: np.isin(read, where) & ~inside for name, where in edges.items()}
    if not (inside | np.logical_or.reduce(list(at_edge.values()))).all():
        return ()
    found = tuple(name for name, hit in at_edge.items() if hit.any())
    # A mask left out reads the whole of its edge, every tile's part of it; reads that only land there (a stride
    # ignored, say) do not, and are no mask's: then nothing is named.
    if any(not np.isin(edges[n], read).all() for n in found if n in ("A-k", "B-k")):
        return ()
    if "A-m" in found:
        rows = np.isin(edges["A-m"], read).reshape(end_m - M, K).all(axis=1)
        if M < N < end_m and found == ("A-m",) and rows[: N - M].all() and not rows[N - M :].any():
            return ("A-m", "N")  # the rows read past M are M .. N - 1 exactly: a row mask against N
        if not rows.all():
            return ()
    if "B-n" in found:
        cols = np.isin(edges["B-n"], read).reshape(K, end_n - N).all(axis=0)
        if N < M < end_n and found == ("B-n",) and cols[: M - N].all() and not cols[M - N :].any():
            return ("B-n", "M")
        if not cols.all():
            return ()
    return found


def k_edge_words(which):
    """The words for read_at_k_equal_k's find: which, a tuple of "A", "B" (k == K alone), "A-k", "B-k"
    (further into the K tail), "A-m" or "B-n" (rows or columns past the tensor's edge), the last two
    possibly followed by the size their mask compared with."""
    if which[-1] in ("M", "N"):  # rows or columns read past one edge, exactly up to the other size
        row = which[0] == "A-m"
        return say(
            zh=f"循环在 lane 开着时读了 {'A 第 M 行及以后的行' if row else 'B 第 N 列及以后的列'}，正好读到第 "
            f"{which[1]} {'行' if row else '列'}为止，除此之外没有读 A、B 之外的地方："
            f"{CROSSED['A' if row else 'B'][0]} 比了，要和 {'M' if row else 'N'} 比",
            en=f"the loop read {'rows of A from row M on' if row else 'columns of B from column N on'} with the lane "
            f"on, exactly up to {'row' if row else 'column'} {which[1]}, and nothing else outside A and B: "
            f"{CROSSED['A' if row else 'B'][1]}; compare it with {'M' if row else 'N'}",
        )
    if set(which) - {"A", "B"}:
        parts = {
            "A-k": ("A 在 K 之外的列（不只第 K 列）", "A's columns past K (not only K)"),
            "B-k": ("B 在 K 之外的行（不只第 K 行）", "rows of B past K (not only row K)"),
            "A-m": ("A 第 M 行及以后的行", "rows of A from row M on", "offs_m[:, None] < M"),
            "B-n": ("B 第 N 列及以后的列", "columns of B from column N on", "offs_n[None, :] < N"),
        }
        named = [parts[n] for n in which if n in parts]
        lack = list(dict.fromkeys(p[2] for p in named if len(p) > 2))
        said = []
        if lack:
            said.append(say(zh=f"load 的掩码里少了 {'、'.join(lack)}", en=f"the loads' masks lack {', '.join(lack)}"))
        if "A-k" in which or "B-k" in which:  # every lane of the tail read: seen, not how the mask was written
            said.append(
                say(
                    zh="load 的掩码没有关掉 K 尾部的 lane：每一步要拿 offs_k 和这一步剩下的 K - k * BLOCK_K 比"
                    "（k 数的是第几步）；掩码里没有这个条件，或者拿更大的数来比（K，或者 k 数步数时的 K - k），"
                    "读到的都正是这些",
                    en="the loads' masks leave the K tail's lanes on: each step compares offs_k with what is left at "
                    "that step, K - k * BLOCK_K (k counting steps); a mask without that condition, or one against a "
                    "larger bound (K, or K - k with k counting steps), reads exactly these",
                )
            )
        # and, where the learner's mainloop joins a mask's conditions with `and` or `or`, that line (source_reads.py)
        return (
            say(
                zh=f"循环在 lane 开着时读了 {'、'.join(p[0] for p in named)}，除此之外没有读 A、B 之外的地方：",
                en=f"the loop read {', '.join(p[1] for p in named)} with the lane on, and nothing else outside A and "
                "B: ",
            )
            + say(zh="；", en="; ").join(said)
            + bool_op_words("mainloop", sentence=False)
        )

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


def mask_against_other_size(acc, ref, rtol):
    """Words for a mainloop whose row mask compares offs_m with N (rows from N on zero, where N < M) or
    whose column mask compares offs_n with M (columns from M on zero, where M < N), every other cell
    right; None when acc is not that."""
    M, N = ref.shape
    if M == N:
        return None
    rows = M > N  # the rows from N on are lost, or the columns from M on
    lost = acc[N:, :] if rows else acc[:, M:]
    kept, want = (acc[:N, :], ref[:N, :]) if rows else (acc[:, :M], ref[:, :M])
    if lost.any() or not torch.allclose(kept.double(), want, rtol=rtol, atol=rtol * want.abs().max().item()):
        return None
    return say(
        zh=f"结果只在{'行号 >= N 的行' if rows else '列号 >= M 的列'}上是 0，其余都对："
        f"{CROSSED['A' if rows else 'B'][0]} 比了，要和 {'M' if rows else 'N'} 比",
        en=f"it is 0 in exactly {'the rows from N on' if rows else 'the columns from M on'}, and right everywhere "
        f"else: {CROSSED['A' if rows else 'B'][1]}; compare it with {'M' if rows else 'N'}",
    )
