"""Lesson T5's classic mistakes, for its explainer §8 table (python -m tools.explainers.mistakes --lesson T5).

Each is a text substitution in solutions/t5_persistent.py and the one test of tests/test_t5.py that
must catch it on the interpreter; tools/explainers/mistakes.py makes each one, with the reference
of T4 in mine/ beside it (T5 imports tile_coords and bias_and_activation from it), and runs that
test.  Not here, because no CPU test can see it: partials added in no fixed order (the interpreter
runs the programs one after another, in order); content/t5*.md §8 names the GPU test instead.
"""

from tools.explainers.mistakes import Mistake

# The head of data_parallel_tiles's loop: tile_coords is called twice in the reference, once here.
LOOP = "for tile_id in tl.range(first_tile + tl.program_id(0), num_tiles, NUM_PROGS, flatten=FLATTEN):\n"
COORDS = "        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)\n"

MISTAKES = (
    Mistake(
        "grid-not-capped",
        "T5.1",
        "persistent_grid 直接返回 SM 数，没有和 tile 数取最小值",
        "persistent_grid returns the SM count, not capped at the number of tiles",
        "2.2",
        "return min(num_sms, num_tiles)",
        "return num_sms",
        "test_persistent_grid[1-132-1]",
    ),
    Mistake(
        "loop-start",
        "T5.1",
        "循环从 pid 开始，而不是 first_tile + pid",
        "the loop starts at pid, not at first_tile + pid",
        "2.2",
        LOOP,
        LOOP.replace("first_tile + tl.program_id(0)", "tl.program_id(0)"),
        "test_every_tile_once_over_many_grids[plain]",
    ),
    Mistake(
        "loop-stride",
        "T5.1",
        "循环步长是 1，而不是 NUM_PROGS",
        "the loop steps by 1, not by NUM_PROGS",
        "2.2",
        LOOP,
        LOOP.replace("num_tiles, NUM_PROGS,", "num_tiles, 1,"),
        "test_a_program_does_several_tiles",
    ),
    Mistake(
        "no-tile-coords",
        "T5.1",
        "tile 号直接按行优先拆成 (pid_m, pid_n)，没有经过 tile_coords",
        "the tile number split row-major into (pid_m, pid_n), not passed through tile_coords",
        "2.2",
        LOOP + COORDS,
        LOOP + "        pid_m, pid_n = tile_id // num_pid_n, tile_id % num_pid_n\n",
        "test_every_tile_once_over_many_grids[plain]",
    ),
    Mistake(
        "stride-in-elements",
        "T5.2",
        "tma_problem 按元素而不是按字节检查行 stride 是否为 16 的倍数",
        "tma_problem checks the row stride in elements, not in bytes, for a multiple of 16",
        "3.2",
        "if (t.stride(0) * size) % 16:",
        "if t.stride(0) % 16:",
        "test_tma_problem_accepts_legal_tensors",
    ),
    Mistake(
        "kmajor-box",
        "T5.2",
        "K-major 的 B 也用 [BLOCK_K, BLOCK_N] 的 box",
        "a [BLOCK_K, BLOCK_N] box for a K-major B too",
        "3.1",
        "[BLOCK_N, BLOCK_K] if b_kmajor else [BLOCK_K, BLOCK_N]",
        "[BLOCK_K, BLOCK_N]",
        "test_make_descriptors_boxes",
    ),
    Mistake(
        "kmajor-no-transpose",
        "T5.2",
        "K-major 的 B 读进来之后没有转置",
        "a K-major B box not transposed after the load",
        "3.1",
        "b = b_desc.load([off_n, off_k]).T",
        "b = b_desc.load([off_n, off_k])",
        "test_k_block_loop[17-50-70-0-3-True-torch.float16]",
    ),
    Mistake(
        "sk-extra-last",
        "T5.3",
        "多出来的 k-block 分给了最后几个程序，而不是前几个",
        "the extra k-blocks given to the last programs, not the first",
        "4.1",
        "    begin = pid * base + tl.minimum(pid, extra)\n    end = begin + base + (pid < extra).to(tl.int32)\n",
        (
            "    begin = pid * base + tl.maximum(pid - (NUM_PROGS - extra), 0)\n"
            "    end = begin + base + (pid >= NUM_PROGS - extra).to(tl.int32)\n"
        ),
        "test_sk_runs_cover_every_k_block_once[13-3]",
    ),
    Mistake(
        "flags-not-reset",
        "T5.3",
        "owner 加完 partial 没有把旗放回 0",
        "the owner does not put a flag back to 0 after adding its partial",
        "4.2",
        '        tl.atomic_xchg(flags_ptr + p, 0, sem="relaxed")  # the workspace is clean for the next launch\n',
        "",
        "test_stream_k_every_tile_once",
    ),
    Mistake(
        "thin-wave-alone",
        "T5.3",
        "薄的最后一波单独走 stream-K，没有和一整波合起来",
        "the thin last wave alone given to stream-K, not merged with one full wave",
        "4.3",
        "sk_tiles = num_tiles if full_waves == 0 else rest + num_sms",
        "sk_tiles = rest",
        "test_stream_k_split[300-8-132-auto-want3]",
    ),
    Mistake(
        "right-half-bias",
        "T5.4",
        "分块后右半传了 pid_n，而不是 2 * pid_n + 1",
        "pid_n passed for the right half after subtiling, not 2 * pid_n + 1",
        "5",
        "2 * pid_n + 1",
        "pid_n",
        "test_store_tile_subtiled_bias_per_half[none]",
    ),
)
