"""A tensor whose base address breaks TMA's rule 3, for test_tma_rules.py and test_tma_rules_read.py."""

import torch

from support import DEVICE


def unaligned(rows, cols, dtype, off_bytes=4):
    """A row-major tensor whose base is off_bytes past a 16-byte boundary."""
    flat = torch.zeros(rows * cols + 16, dtype=dtype, device=DEVICE)
    off = off_bytes // flat.element_size()
    return flat[off : off + rows * cols].view(rows, cols)
