"""tools/explainers/offsets.py checks its own table: a block built with the wrong strides must be refused."""

import pytest
import torch

from tools.explainers import offsets


@pytest.mark.parametrize("transposed", [False, True])
def test_the_broadcast_block_addresses_every_element(transposed):
    a = torch.arange(48.0).reshape(8, 6).t() if transposed else torch.arange(48.0).reshape(6, 8)
    for pid in (0, 1):
        for k in (0, 1):
            offs_m, offs_k, block, mask = offsets.offsets(6, 8, *a.stride(), pid, k, 4, 4)
            offsets.verify(a, offs_m, offs_k, block, mask)  # raises if a cell is wrong


def test_the_worked_example_of_section_3():
    offs_m, offs_k, block, mask = offsets.offsets(6, 8, 8, 1, 0, 0, 4, 4)
    assert block.tolist() == [[0, 1, 2, 3], [8, 9, 10, 11], [16, 17, 18, 19], [24, 25, 26, 27]]


def test_swapped_strides_are_refused():
    a = torch.arange(48.0).reshape(6, 8)
    offs_m, offs_k, block, mask = offsets.offsets(6, 8, 1, 8, 0, 0, 4, 4)  # stride_am and stride_ak swapped
    with pytest.raises(AssertionError, match="does not hold"):
        offsets.verify(a, offs_m, offs_k, block, mask)
