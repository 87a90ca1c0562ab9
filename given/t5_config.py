"""Lesson T5's config choice (given: read it, nothing to write here): the configs measured on the
H200 (TUNED), the rules for other shapes (pick_config, rule_config), the candidates the bucket
autotune times (shape_bucket, tune_candidates), and what the device says of itself (num_sms).

The same for mine/ and solutions/: given/t5_host.py, the host wrapper, reads it, and a side's
t5_persistent.py sets these names on itself (t5_host.bind), where the tests and the tools read them.
Nothing here calls a side's function.  Banners name the section of content/t5.md (t5.en.md).
"""
import json
import math
import numbers
import os
import threading
from dataclasses import astuple, dataclass, fields, is_dataclass, replace

import torch
import triton

# Read once, at import: Triton itself decides at import time whether @triton.jit interprets.
INTERPRETING = os.environ.get("TRITON_INTERPRET") == "1"
INTERPRET_PROGS = 3  # the "SM count" under the interpreter: small, so every program gets several tiles


# ----------------------------------------------------------------------------------------------
# §6 Configs measured on the H200 (given)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    BLOCK_M: int = 128
    BLOCK_N: int = 256
    BLOCK_K: int = 64
    GROUP_M: int = 8
    num_warps: int = 8
    num_stages: int = 3
    EPILOGUE_SUBTILE: int = 1
    FLATTEN: bool = False
    mode: str = "auto"  # "auto": hybrid data-parallel + stream-K; "dp": never stream-K; "sk": all stream-K;
    # "swap": whole tiles, each summed turned around (§6.3: a decode step, M <= 64);
    # "tail": "auto" without its exception for a last wave at least half full (§6.1: many long waves);
    # "split": every tile cut into the same number of k-ranges, one per program (§6.1: few tiles, a long K)
    occupancy: int = 1  # programs per SM: 2 where two fit in its shared memory and registers (§2.1)
    pdl: bool = False  # launch early, during the previous kernel's last moments (§6.4): for short products


INTERPRET_CONFIG = Config(32, 32, 32, 4, 4, 2, 1, False, "auto")
MODES = ("auto", "dp", "sk", "swap", "tail", "split")


def type_named(value):
    """value's type as an error names it: triton's, T5's and T6's configs are all called Config, and "must be a
    Config, got Config" (T4's triton.Config handed to T5) says nothing, so a Config's module is named too."""
    kind = type(value)
    if kind.__name__ != "Config":
        return kind.__name__
    return "triton.Config" if kind.__module__.split(".")[0] == "triton" else f"{kind.__module__}.Config"


def check_launch_options(caller, config, num_programs, modes=None):
    """Raise unless num_programs is None or an int of at least 1, and config None or a Config (T5's, or T6's
    for T6) whose block sizes are powers of 2, whose GROUP_M (and occupancy, EPILOGUE_SUBTILE and mode where
    it has them) are at least 1, at most 2 and one of `modes`: with 0 or fewer programs, or an occupancy of 0,
    no program would run, and with a GROUP_M of 0 the grouped order divides by zero, so the result would come
    back unwritten with no error; a misspelt mode would run as "auto".  A TypeError for a wrong type, else a
    ValueError, each naming the argument (the caller's name first).  Returns (config, num_programs) with each
    integer as a plain int: np.int64(2) is taken, and Triton's launch would take it for no constexpr int."""
    if num_programs is not None:
        if isinstance(num_programs, bool) or not isinstance(num_programs, numbers.Integral):
            raise TypeError(f"{caller}: num_programs must be an int (the SM count to plan for), got "
                            f"{type(num_programs).__name__}")
        if num_programs < 1:
            raise ValueError(f"{caller}: num_programs must be at least 1, got {num_programs}: no program would run")
    num_programs = None if num_programs is None else int(num_programs)
    if config is None:
        return None, num_programs
    needed = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", *(("EPILOGUE_SUBTILE", "occupancy", "mode") if modes else ()))
    if not all(hasattr(config, f) for f in needed):  # T6's Config for T5's matmul has no mode, say
        own = "T5's Config (given/t5_config.py)" if modes else "T6's Config (given/t6_host.py)"
        raise TypeError(f"{caller}: config must be {own}, with {', '.join(needed)}, got {type_named(config)}")
    for field in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "occupancy", "EPILOGUE_SUBTILE"):
        v = getattr(config, field, 1)
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1 or (field[0] == "B" and v & (v - 1)):
            raise ValueError(f"{caller}: config.{field} must be {'a power of 2' if field[0] == 'B' else 'at least 1'}"
                             f", got {v!r}")
    if config.BLOCK_K < 16:  # tl.dot's k side: an H100 compile (triton 3.6) refused BLOCK_K 4 and 8 (lesson §6)
        raise ValueError(f"{caller}: config.BLOCK_K must be at least 16 (a GPU's tl.dot needs a k side of 16), "
                         f"got {config.BLOCK_K}")
    if modes and config.BLOCK_N // getattr(config, "EPILOGUE_SUBTILE", 1) < 8:  # C's TMA box: 16 bytes or more
        raise ValueError(f"{caller}: config.BLOCK_N // EPILOGUE_SUBTILE must be at least 8 (C's TMA box needs an "
                         f"inner side of 16 bytes or more: 8 elements of 16 bits), got {config.BLOCK_N} // "
                         f"{config.EPILOGUE_SUBTILE}")
    if getattr(config, "EPILOGUE_SUBTILE", 1) > 2:
        raise ValueError(f"{caller}: config.EPILOGUE_SUBTILE must be 1 or 2, got {config.EPILOGUE_SUBTILE}")
    if modes is not None and config.mode not in modes:
        raise ValueError(f"{caller}: config.mode must be one of {modes}, got {config.mode!r}")
    if not is_dataclass(config):  # T5's or T6's Config, or a stand-in with their fields: taken as it is
        return config, num_programs
    values = {f.name: getattr(config, f.name) for f in fields(config)}  # FLATTEN and pdl stay bools
    plain = {name: int(v) for name, v in values.items() if isinstance(v, numbers.Integral) and not isinstance(v, bool)}
    return replace(config, **plain), num_programs

# The winners of the H200 sweeps of 2026-11-30 (content/t5.md §6); other shapes use the rules below.
TUNED = {
    ("fp16", 1024, 1024, 1024): Config(64, 128, 128, 8, 4, 4, 1, True, "dp"),
    ("fp16", 2048, 2048, 2048): Config(128, 128, 64, 8, 4, 3, 2, True, "dp", 2),
    ("fp16", 4096, 4096, 4096): Config(128, 128, 64, 8, 4, 3, 2, True, "dp", 2),
    ("fp16", 8192, 8192, 8192): Config(128, 256, 64, 8, 8, 4, 2, True, "tail"),
    ("fp16", 8192, 8192, 1024): Config(128, 128, 64, 8, 4, 5, 1, True, "dp"),
    ("fp16", 4096, 11008, 4096): Config(128, 128, 64, 8, 4, 5, 1, True, "dp"),
    ("fp16", 16, 8192, 8192): Config(16, 64, 256, 1, 4, 4, 1, False, "swap"),
    ("bf16", 1024, 1024, 1024): Config(64, 128, 128, 8, 4, 4, 1, True, "dp"),
    ("bf16", 2048, 2048, 2048): Config(128, 128, 64, 8, 4, 3, 2, True, "dp", 2),
    ("bf16", 4096, 4096, 4096): Config(128, 128, 64, 8, 4, 3, 2, True, "dp", 2),
    ("bf16", 8192, 8192, 8192): Config(128, 256, 64, 8, 8, 4, 2, True, "tail"),
    ("bf16", 8192, 8192, 1024): Config(128, 128, 64, 8, 4, 5, 1, True, "dp"),
    ("bf16", 4096, 11008, 4096): Config(128, 128, 64, 8, 4, 5, 1, True, "dp"),
    ("bf16", 16, 8192, 8192): Config(16, 64, 256, 1, 4, 4, 1, False, "swap"),
}


def pick_config(M, N, K, dtype, sms=None, pitch=128):
    """TUNED's config for this shape, else the rules below; for a GPU with `sms` SMs (by default the
    current GPU's own count, as matmul passes it).  pitch: the largest of 128, 64, 32 and 16 bytes
    that divides the row pitches of both operands, as TMA reads them."""
    if INTERPRETING:
        return INTERPRET_CONFIG
    name = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}[dtype]
    cfg = TUNED.get((name, M, N, K)) or rule_config(M, N, K, dtype, sms or num_sms(torch.device("cuda")), pitch)
    # §6.4: measured on the H200, launching early gains at 2048³ and below and in a decode step, not above
    return replace(cfg, pdl=M <= 64 or M * N * K <= 2048**3)


def rule_config(M, N, K, dtype, sms, pitch=128):
    """The rules for shapes TUNED lacks (§6), measured on the H200."""
    if M <= 64 and dtype != torch.float32:  # a decode step: bound by reading B, turned around (§6.3)
        if M <= 32:
            cfg = Config(max(16, triton.next_power_of_2(M)), 64, 256, 1, 4, 4, 1, False, "swap")
        else:  # a wider A box: shorter k-blocks, a deeper pipeline (measured 2026-12-01, t5.perf §3)
            cfg = Config(64, 64, 128, 1, 4, 6, 1, False, "swap")
    elif M <= 64:  # in fp32 (tf32), wgmma cannot read the B box turned around: small BLOCK_M, deep pipeline
        cfg = Config(16, 64, 256, 1, 4, 5, 1, False, "auto")
    elif K >= 8192 and triton.cdiv(M, 64) * triton.cdiv(N, 128) * 2 <= sms:
        # so few 64x128 tiles that each can be cut in two or more along a long K: split-K (§6.1)
        cfg = Config(64, 128, 64, 8, 4, 5, 1, True, "split")
    elif M * N <= 512 * 512:  # tiny: 64x32 tiles, data-parallel (a fix-up would cost more than the product)
        cfg = Config(64, 32, 128, 8, 4, 4, 1, False, "dp")
    elif pitch < 128 and M > 256 and M * N > 1536 * 1536 and dtype != torch.float32:
        # a row pitch that is not whole 128 bytes slows every TMA box (t5.perf §3), an odd multiple of 16
        # bytes most: there 128x256 tiles, which read the fewest bytes per product, with stream-K for a
        # thin last wave, lost least; at 32 or 64 bytes, 128x128 data-parallel (measured 2026-12-02, 16-bit)
        if pitch == 16:
            cfg = Config(128, 256, 64, 8, 8, 3, 1, False, "auto")
        else:
            cfg = Config(128, 128, 64, 8, 4, 5, 1, True, "dp")
    elif M <= 256 or M * N <= 1536 * 1536 or wave_use(M, N, 64, 128, sms) > wave_use(M, N, 128, 128, sms) + 0.05:
        # few rows or few tiles, or 128-row tiles that leave more of their last wave idle: 64-row tiles
        # fill more SMs (stream-K measured slower here); 256 columns wide where that fills the slots as
        # well as 128 does, in half the tiles (measured 2026-12-02, t5.perf §3)
        if wave_use(M, N, 64, 256, sms) >= wave_use(M, N, 64, 128, sms):
            cfg = Config(64, 256, 64, 8, 4, 4, 1, True, "dp")
            if 64 < M <= 256 and triton.cdiv(M, 64) % 2 == 0 and dtype != torch.float32:
                # a batch padded to as many rows either way: 128x128 tiles, no more of them than 64x256,
                # read each B box half as often (measured 2026-12-04, t5.perf §3: a drawn decode band)
                cfg = Config(128, 128, 64, 8, 4, 5, 1, True, "dp")
        else:
            cfg = Config(64, 128, 128, 8, 4, 4, 1, True, "dp")
    else:  # stream-K's fix-up pays for a thin last wave only when there are few waves (§6.1)
        waves = triton.cdiv(M, 128) * triton.cdiv(N, 128) / sms
        cfg = Config(128, 128, 64, 8, 4, 5, 1, True, "auto" if waves <= 4 else "dp")
    if dtype == torch.float32:  # tf32 operands take twice the shared memory per element
        cfg = replace(cfg, BLOCK_K=max(16, cfg.BLOCK_K // 2))
    return cfg


def wave_use(M, N, block_m, block_n, sms):
    """The share of the SMs' tile slots that block_m x block_n tiles fill, over whole waves (§6.1)."""
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    return tiles / (triton.cdiv(tiles, sms) * sms)


# ----------------------------------------------------------------------------------------------
# §6 Configs for shapes nobody measured: tuned on first use, per shape bucket (given)
# ----------------------------------------------------------------------------------------------
# With T5_AUTOTUNE=1 the first call in a shape bucket times a few candidates on its own operands
# and keeps the fastest for the whole bucket, on disk (T5_TUNE_CACHE) for the next run; with
# T5_TUNE_FROZEN=1 it tunes nothing new and reads the cache only (held-out timing, content/t5.perf.md
# §3).  A bucket: the operand width, B's layout, M up to 16, 64 or 256 (a decode step) or else log2 of
# M rounded, and log2 of N and of K rounded.  Without T5_AUTOTUNE, or inside a CUDA graph capture, pick_config decides.
# The tuning itself, which times the side's own matmul, is Host.tuned_config (given/t5_host.py).
AUTOTUNE = os.environ.get("T5_AUTOTUNE") == "1"
TUNE_FROZEN = os.environ.get("T5_TUNE_FROZEN") == "1"
TUNE_CACHE = os.path.expanduser(os.environ.get("T5_TUNE_CACHE", "~/.cache/t5-gemm/tuned.json"))


def shape_bucket(M, N, K, dtype, b_kmajor):
    def log2(x):
        return round(math.log2(x))

    m = next((f"M<={top}" for top in (16, 64, 256) if M <= top), log2(M))
    return f"{torch.finfo(dtype).bits}-bit {'W.t()' if b_kmajor else 'row-major'} M {m} N {log2(N)} K {log2(K)}"


def tune_candidates(M, N, K, dtype, sms):
    """A few configs for the shape, pruned by M: the rules' own, and the ones that won somewhere in §6."""
    C = Config
    if M <= 64:
        bm = max(16, triton.next_power_of_2(M))
        deep = 4 if bm <= 32 else 3  # 64 rows x 256 k at 4 stages would need 270,336 B of shared memory
        found = [C(bm, 64, 256, 1, 4, deep, 1, False, "swap"), C(bm, 64, 256, 1, 4, 3, 1, False, "swap"),
                 C(bm, 64, 128, 1, 4, 6, 1, False, "swap"), C(16, 64, 256, 1, 4, 4, 1, False, "auto")]
    elif M <= 256 or M * N <= 1536 * 1536:
        found = [C(64, 128, 128, 8, 4, 4, 1, True, mode) for mode in ("dp", "auto")]
        found += [C(64, 256, 64, 8, 4, 4, 1, True, "dp"), C(64, 64, 128, 8, 4, 6, 1, True, "dp")]
        found += [C(64, 128, 64, 8, 4, 5, 1, True, "split")]
        found += [C(64, 64, 128, 8, 4, 4, 1, True, mode) for mode in ("dp", "auto")]
    else:
        found = [C(128, 128, 64, 8, 4, 3, 2, True, mode, 2) for mode in ("dp", "auto")]
        found += [C(128, 128, 64, 8, 4, 5, 1, True, mode) for mode in ("dp", "auto")]
        found += [C(128, 256, 64, 8, 8, 4, 2, True, "tail")]
    if dtype == torch.float32:
        # 4-byte elements: one program per SM and at most 3 stages, or the boxes and C's outgrow shared memory
        found = [replace(c, BLOCK_K=max(16, c.BLOCK_K // 2), num_stages=min(3, c.num_stages), occupancy=1)
                 for c in found if c.mode != "swap"]
    return list(dict.fromkeys([rule_config(M, N, K, dtype, sms), *found]))


# ----------------------------------------------------------------------------------------------
# §2.2, §6.4 What the device says of itself (given)
# ----------------------------------------------------------------------------------------------
_device_facts = {}  # device -> (SM count, launches early): asked once per device, not once per call


def device_facts(device):
    facts = _device_facts.get(device)
    if facts is None:
        if device.type != "cuda":
            facts = (INTERPRET_PROGS, False)
        else:  # programmatic dependent launch (§6.4) needs compute capability 9.0 (Hopper) or later
            props = torch.cuda.get_device_properties(device)
            facts = (props.multi_processor_count, props.major >= 9)
        _device_facts[device] = facts
    return facts


def num_sms(device):
    return device_facts(device)[0]


def launches_early(device):
    return device_facts(device)[1]


def read_tuned(path):
    """The tuned configs on disk, {bucket: Config}; none if the file is missing or not one we wrote."""
    try:
        with open(path) as f:
            return {k: Config(*v) for k, v in json.load(f).items()}
    except (OSError, ValueError, TypeError):
        return {}


def save_tuned(path, tuned):
    """Write `tuned` to the cache, keeping what other processes wrote there since we read it (the ranks
    of a torchrun job tune side by side).  Each writer fills its own temporary file and renames it in
    one step, so a reader never sees half a file and two writers never rename one file twice."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    merged = {**read_tuned(path), **tuned}
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "w") as f:
        json.dump({k: list(astuple(c)) for k, c in merged.items()}, f)
    os.replace(tmp, path)
