"""GPU facts the course's machinery computes with, each defined here only: the suite (tests/t4's
shared-memory limit), the study tools, the benchmarks and the explainers' generated tables import
them from this file.  A lesson's file (reference, stub or other style) imports no course/ module (a
learner's file need not): T5's pick_config asks the GPU for its own SM count (num_sms) rather than
assume H200_SMS below.  tests/t5's cases of persistent_grid and stream_k_split write sms=132 out:
each is an input of the function under test, beside its expected answer (persistent_grid's cases
take 3 SMs as well), so a case reads alone.

Shared memory: a pipelined matmul keeps num_stages A blocks (BLOCK_M x BLOCK_K) and num_stages
B blocks (BLOCK_K x BLOCK_N) in shared memory at once (explainer §4), so

    shared memory = num_stages * (BLOCK_M*BLOCK_K + BLOCK_K*BLOCK_N) * bytes per element
"""

BYTES_PER_ELEMENT = {"fp16": 2, "bf16": 2, "fp32": 4}
# Bytes of shared memory one block may opt in to, by GPU (CUDA's sharedMemPerBlockOptin).
SMEM_LIMITS = {"T4": 65_536, "RTX 4090": 101_376, "A100": 166_912, "H100/H200": 232_448}
H100_SMEM = SMEM_LIMITS["H100/H200"]

# The NVIDIA H200 the course measures on: torch.cuda.get_device_properties(0) there gave
# multi_processor_count = 132 and L2_cache_size = 62,914,560 B (60 MiB) on 2026-11-30.
H200_SMS = 132
H200_L2_BYTES = 62_914_560
# Its DRAM bandwidth by NVIDIA's H200 datasheet (HBM3e): the roofline of a memory-bound product.
H200_DRAM_BYTES_PER_S = 4.8e12


def shared_memory(block_m, block_n, block_k, num_stages, bytes_per_element):
    return num_stages * (block_m * block_k + block_k * block_n) * bytes_per_element


def blocks_of(cfg):
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_stages) of a triton.Config: the arguments of shared_memory()."""
    return cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"], cfg.kwargs["BLOCK_K"], cfg.num_stages


def smem_bytes(cfg, bytes_per_element):
    """shared_memory() of a triton.Config."""
    return shared_memory(*blocks_of(cfg), bytes_per_element)


def fits(nbytes):
    """{GPU: whether a block needing nbytes of shared memory can run there}."""
    return {gpu: nbytes <= limit for gpu, limit in SMEM_LIMITS.items()}
