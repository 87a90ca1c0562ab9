"""Print the block of element offsets one program of the kernel loads, the way §3 builds it.

    python -m tools.explainers.offsets                      # A of shape (6, 8), row-major, pid_m = 0, k = 0
    python -m tools.explainers.offsets --pid-m 1 --k 1      # the next row block, second trip of the K loop
    python -m tools.explainers.offsets --transposed         # the same A stored column-major (like w.t())

The offsets are computed with torch broadcasting exactly as in mainloop (offs_m[:, None] *
stride_am + offs_k[None, :] * stride_ak), and then checked: reading the tensor's storage at
each offset must give the element A[m, k] the cell claims to hold.  Cells the mask switches
off (m >= M or k >= K) are shown as `masked`.
"""

import argparse

import torch


def offsets(rows, cols, stride_row, stride_col, pid, k_iter, block_rows, block_cols):
    """(offs_m, offs_k, offset block, mask) for one program's block, as in §3 and §4."""
    offs_m = pid * block_rows + torch.arange(block_rows)
    offs_k = k_iter * block_cols + torch.arange(block_cols)  # the columns, after k_iter pointer moves
    block = offs_m[:, None] * stride_row + offs_k[None, :] * stride_col
    mask = (offs_m[:, None] < rows) & (offs_k[None, :] < cols)
    return offs_m, offs_k, block, mask


def verify(a, offs_m, offs_k, block, mask):
    """Reading a's storage at each unmasked offset gives a[m, k]; raise if not."""
    storage = torch.as_strided(a, (a.untyped_storage().nbytes() // a.element_size(),), (1,), 0)
    for i, m in enumerate(offs_m.tolist()):
        for j, k in enumerate(offs_k.tolist()):
            if mask[i, j] and storage[block[i, j]] != a[m, k]:
                raise AssertionError(f"offset {block[i, j].item()} does not hold A[{m}, {k}]")


def table(offs_m, offs_k, block, mask, rows, cols):
    def why_masked(m, k):
        return {(True, False): "masked (m >= M)", (False, True): "masked (k >= K)"}.get(
            (m >= rows, k >= cols), "masked (both)"
        )

    head = "| row m \\ column k | " + " | ".join(str(k) for k in offs_k.tolist()) + " |"
    rule = "| ---: |" + " ---: |" * len(offs_k)
    body = []
    for i, m in enumerate(offs_m.tolist()):
        cells = [
            f"{block[i, j].item()} = A[{m},{k}]" if mask[i, j] else why_masked(m, k)
            for j, k in enumerate(offs_k.tolist())
        ]
        body.append(f"| **{m}** | " + " | ".join(cells) + " |")
    return "\n".join([head, rule] + body)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=6, help="M, rows of A")
    p.add_argument("--cols", type=int, default=8, help="K, columns of A")
    p.add_argument("--block-m", type=int, default=4)
    p.add_argument("--block-k", type=int, default=4)
    p.add_argument("--pid-m", type=int, default=0)
    p.add_argument("--k", type=int, default=0, help="trip of the K loop (pointers moved k times)")
    p.add_argument("--transposed", action="store_true", help="store A column-major, as x.t() does")
    args = p.parse_args()

    values = torch.arange(args.rows * args.cols, dtype=torch.float64)
    a = values.reshape(args.cols, args.rows).t() if args.transposed else values.reshape(args.rows, args.cols)
    stride_am, stride_ak = a.stride()
    offs_m, offs_k, block, mask = offsets(
        args.rows, args.cols, stride_am, stride_ak, args.pid_m, args.k, args.block_m, args.block_k
    )
    verify(a, offs_m, offs_k, block, mask)
    print(
        f"A: shape ({args.rows}, {args.cols}), stride_am = {stride_am}, stride_ak = {stride_ak}; "
        f"BLOCK_M = {args.block_m}, BLOCK_K = {args.block_k}, pid_m = {args.pid_m}, K-loop trip k = {args.k}\n"
    )
    moved = args.k * args.block_k * stride_ak
    print(
        f"offs_m[:, None] * stride_am = {(offs_m * stride_am).tolist()} (one per row), "
        f"offs_k[None, :] * stride_ak = {(torch.arange(args.block_k) * stride_ak).tolist()} (one per column)"
        + (
            f"; the pointers have moved {args.k} x BLOCK_K * stride_ak = {moved} elements, and "
            f"K - {args.k} * BLOCK_K = {args.cols - args.k * args.block_k} columns of K remain"
            if args.k
            else ""
        )
        + "\n"
    )
    print(table(offs_m, offs_k, block, mask, args.rows, args.cols))
    print(
        f"\nchecked: reading A's storage at every unmasked offset gives the A[m,k] shown "
        f"({int(mask.sum())} of {mask.numel()} cells unmasked)"
    )


if __name__ == "__main__":
    main()
