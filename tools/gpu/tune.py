"""Fill the tuning cache of the first lesson whose reference tunes per shape (tools/gpu/references.py)
from the TUNING shapes only (content/ref.perf.md §3), never the held-out ones.

    T5_AUTOTUNE=1 T5_TUNE_CACHE=tuned.json python -m tools.gpu.tune [MxNxK ...: retune only these]

Each shape, in both layouts of B, is one first call: matmul times its bucket's candidates there and
keeps the fastest (given/t5_host.py, tuned_config).  Then time the held-out set with
T5_TUNE_FROZEN=1, so that a bucket the tuning set left empty falls back to the rules instead of
being tuned on a held-out shape.  fp16 tunes the buckets of both 16-bit types.
"""

import json
import sys

# (kind, M, N, K): the same kinds as tools/gpu/heldout.py's HELDOUT, other shapes.
TUNING = [
    *[("square", s, s, s) for s in (1152, 1280, 1664, 1792, 2560, 3328, 4608, 6656)],
    ("llm", 2048, 5120, 5120),
    ("llm", 4096, 6144, 4096),
    ("llm", 3072, 14336, 4096),
    ("llm", 4096, 4096, 14336),
    ("llm", 2048, 3584, 18944),
    ("llm", 3072, 2560, 10240),
    ("llm", 2048, 28672, 4096),
    ("llm", 4096, 5120, 13824),
    ("llm", 2048, 8192, 4096),
    ("llm", 2048, 5120, 10240),
    ("llm", 2048, 11008, 2560),
    ("llm", 2048, 16384, 4096),
    *[
        ("decode", m, n, k)
        for m, n, k in (
            (1, 5120, 5120),
            (3, 4096, 14336),
            (6, 11008, 4096),
            (12, 16384, 4096),
            (10, 4096, 10240),
            (24, 14336, 4096),
            (40, 4096, 16384),
            (60, 5120, 5120),
            (80, 4096, 4096),
            (112, 4096, 16384),
            (144, 11008, 4096),
            (160, 4096, 11008),
            (192, 14336, 4096),
            (240, 9216, 4096),
            (72, 6144, 8192),  # these seven were added on 2026-12-02 (t5.perf §3), as tuning shapes
            (120, 8192, 8192),
            (176, 5120, 13824),
            (232, 16384, 4096),
            (100, 4096, 14336),
            (144, 5120, 13824),
            (88, 2560, 10240),
        )
    ],
    ("small", 640, 640, 640),
    ("small", 1024, 768, 768),
    # multiples of 8, not of 64 (t5.perf §3, 2026-12-02): the pitch rule was chosen on these
    *[("pitch", m, n, k) for m, n, k in ((3000, 3000, 3000), (1000, 1000, 1000), (2000, 5000, 3000))],
    *[("pitch", m, n, k) for m, n, k in ((5000, 2000, 3000), (3000, 3000, 1000), (100, 5000, 3000))],
    ("pitch", 6000, 1000, 6000),
    # added 2026-12-02 (session 15, t5.perf §3): the pitch rule's split by 16 and 32 bytes was chosen on these
    *[("pitch", m, n, k) for m, n, k in ((1800, 1800, 9000), (2600, 2600, 5000), (2400, 1800, 7000))],
    *[("pitch", m, n, k) for m, n, k in ((1400, 3400, 7400), (3800, 1000, 5800), (2000, 3000, 3000))],
    *[("pitch", m, n, k) for m, n, k in ((4200, 4200, 2600), (2000, 2000, 6000), (3600, 3600, 3600))],
    *[("pitch", m, n, k) for m, n, k in ((600, 5200, 4400), (1200, 6800, 2800), (5200, 5200, 2000))],
    # and these decode shapes, where no config beat the rules (the same session)
    *[("decode", m, n, k) for m, n, k in ((136, 11008, 4096), (128, 14336, 4096), (256, 11008, 4096))],
    ("decode", 128, 8192, 4096),
    # the decode band's sweep (2026-12-04, session 29, t5.perf §3): the 128x128 rule was chosen on these
    *[
        ("decode", m, n, k)
        for m, n, k in (
            (168, 12288, 2048),
            (216, 6144, 2048),
            (184, 8192, 12288),
            (248, 5632, 16384),
            (136, 14336, 1536),
            (160, 7168, 3072),
            (224, 3584, 8192),
            (176, 9728, 6144),
            (200, 13312, 2560),
            (144, 4608, 10240),
            (104, 10240, 2048),
            (80, 6656, 12288),
            (232, 7680, 3584),
            (152, 12800, 5120),
        )
    ],
]


def main():
    import torch

    if not torch.cuda.is_available():
        sys.exit("tune needs a CUDA GPU")
    from tools.gpu.bench import parse_shape
    from tools.gpu.references import TUNES_PER_SHAPE, first_with

    _, ref = first_with(TUNES_PER_SHAPE)
    if not ref.AUTOTUNE or ref.TUNE_FROZEN:  # read from the environment when the reference was imported
        sys.exit(f"{ref.__name__} does not tune: set its AUTOTUNE switch, not TUNE_FROZEN (tools/gpu/tune.py's usage)")

    host = ref.host  # its Host (given/t5_host.py): tuned_config keeps the buckets there, in host.tuned
    only = {parse_shape(s) for s in sys.argv[1:]}  # retune these shapes' buckets (a cache holds the rest)
    for _, M, N, K in TUNING:
        if only and (M, N, K) not in only:
            continue
        for layout in ("row-major", "W.t()"):
            if host.tuned is None:  # the cache as tuned_config reads it, so that the other buckets stay
                host.tuned = {k: ref.Config(*v) for k, v in json.load(open(ref.TUNE_CACHE)).items()} if only else {}
            host.tuned.pop(ref.shape_bucket(M, N, K, torch.float16, layout == "W.t()"), None)
            a = torch.randn(M, K, device="cuda", dtype=torch.float16)
            b = torch.randn(N, K, device="cuda", dtype=torch.float16)
            b = b.t() if layout == "W.t()" else b.reshape(K, N)
            ref.matmul(a, b)
            bucket = ref.shape_bucket(M, N, K, torch.float16, layout == "W.t()")
            print(f"{M}x{N}x{K} {layout}: {bucket}: {host.tuned.get(bucket)}", flush=True)
    print(f"# wrote {ref.TUNE_CACHE}: {len(host.tuned)} buckets")


if __name__ == "__main__":
    main()
