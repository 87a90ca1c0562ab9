"""What make_descriptors' box is, where it is one of the boxes a learner gives by mistake (T5.2,
test_make_descriptors_boxes): each named only when the box is exactly that one, with the three block sizes
all different, so no two of these boxes are the same."""


def box_cause(name, got, bm, bn, bk, kmajor, subtile):
    """(zh, en): the words after "box X, Y expected" for descriptor `name` whose box is `got`; ("", "") if
    it is none of the known ones."""
    causes = (
        (
            name == "b_desc" and kmajor,
            "（K-major 时读的是 Bᵀ，box 是 [BLOCK_N, BLOCK_K]）",
            " (K-major, it reads B^T: the box is [BLOCK_N, BLOCK_K])",
        ),
        (
            name == "c_desc" and got == [bm // 2, bn // subtile],  # C's rows alone halved
            "（行数被减半了：EPILOGUE_SUBTILE 只切分列，box 的行数仍是 BLOCK_M）",
            " (its rows halved: EPILOGUE_SUBTILE splits the columns alone; the box keeps BLOCK_M rows)",
        ),
        (
            name == "c_desc" and subtile == 2 and got == [bm, bn],  # the subtile left out
            "（整个 tile：EPILOGUE_SUBTILE=2 时一次只写半个 tile，box 是 [BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE]）",
            " (the whole tile: with EPILOGUE_SUBTILE=2 a store writes half a tile, so the box is "
            "[BLOCK_M, BLOCK_N // EPILOGUE_SUBTILE])",
        ),
        (
            name == "a_desc" and got == [bk, bm],  # A's box the other way round
            "（是 [BLOCK_K, BLOCK_M]，横竖反了：A 的 box 是 BLOCK_M 行、BLOCK_K 列）",
            " ([BLOCK_K, BLOCK_M], turned round: A's box is BLOCK_M rows of BLOCK_K columns)",
        ),
        (
            name == "c_desc" and subtile == 2 and got == [bm // 2, bn],  # the rows split where the columns should be
            "（是 [BLOCK_M // EPILOGUE_SUBTILE, BLOCK_N]，切的是行：EPILOGUE_SUBTILE 把 tile 按列切成左右两半，"
            "每半 BLOCK_M 行、BLOCK_N // 2 列）",
            " ([BLOCK_M // EPILOGUE_SUBTILE, BLOCK_N]: the rows split: EPILOGUE_SUBTILE cuts the tile into a left "
            "and a right half, each BLOCK_M rows of BLOCK_N // 2 columns)",
        ),
        (
            name == "b_desc" and not kmajor and got == [bn, bk],  # B row-major given the K-major box
            "（是 [BLOCK_N, BLOCK_K]，那是 K-major 的 B 的 box：B 行主序、形状 (K, N) 时，box 是 BLOCK_K 行、"
            "BLOCK_N 列）",
            " ([BLOCK_N, BLOCK_K], the box of a K-major B: a row-major B of shape (K, N) has boxes of BLOCK_K rows "
            "of BLOCK_N columns)",
        ),
    )
    return "".join(zh for hit, zh, _ in causes if hit), "".join(en for hit, _, en in causes if hit)
