"""T4.4: the autotune configs and the interpreter's config are well formed and fit a Hopper GPU."""

import pytest
import triton

from course.hardware import H100_SMEM, smem_bytes
from course.i18n import say
from course.messages import read, stub_report

from .common import BLOCK_KEYS, require_configs

pytestmark = pytest.mark.t4  # the lesson's marker; each test also carries its step's


def config_problems(cfg):
    if not isinstance(cfg, triton.Config):
        return [say(zh=f"{cfg!r} 不是 triton.Config", en=f"{cfg!r} is not a triton.Config")]
    found = [say(zh=f"kwargs 里没有 {k}", en=f"kwargs lack {k}") for k in BLOCK_KEYS if k not in cfg.kwargs]
    # the block sizes are tl.arange lengths, so powers of two; GROUP_M only counts rows of tiles (§2):
    # any positive int gives a valid order (6 as well as 8)
    found += [
        say(zh=f"{k}={cfg.kwargs[k]!r} 不是 2 的幂", en=f"{k}={cfg.kwargs[k]!r} is not a power of two")
        for k in BLOCK_KEYS
        if k in cfg.kwargs
        and k != "GROUP_M"
        and not (isinstance(cfg.kwargs[k], int) and cfg.kwargs[k] > 0 and cfg.kwargs[k] & (cfg.kwargs[k] - 1) == 0)
    ]
    group_m = cfg.kwargs.get("GROUP_M")
    if "GROUP_M" in cfg.kwargs and not (isinstance(group_m, int) and not isinstance(group_m, bool) and group_m > 0):
        found.append(say(zh=f"GROUP_M={group_m!r} 不是正整数", en=f"GROUP_M={group_m!r} is not a positive int"))
    found += [
        say(
            zh=f"BLOCK_{d}={cfg.kwargs.get('BLOCK_' + d)} < 16：tl.dot 至少要 16",
            en=f"BLOCK_{d}={cfg.kwargs.get('BLOCK_' + d)} < 16: tl.dot needs at least 16",
        )
        for d in "MNK"
        if isinstance(cfg.kwargs.get("BLOCK_" + d), int) and cfg.kwargs["BLOCK_" + d] < 16
    ]
    if not (cfg.num_warps and cfg.num_warps & (cfg.num_warps - 1) == 0):
        found.append(
            say(zh=f"num_warps={cfg.num_warps} 不是 2 的幂", en=f"num_warps={cfg.num_warps} is not a power of two")
        )
    if not (cfg.num_stages and cfg.num_stages >= 1):
        found.append(
            say(zh=f"num_stages={cfg.num_stages} 至少要是 1", en=f"num_stages={cfg.num_stages} must be at least 1")
        )
    return found


@pytest.mark.t4_4
def test_autotune_configs_are_well_formed(t4):
    require_configs(t4)
    found = {str(cfg): config_problems(cfg) for cfg in t4.AUTOTUNE_CONFIGS}
    found = {k: v for k, v in found.items() if v}
    assert not found, say(
        zh=f"这些配置写得不对：{found}；{read('T4.4', '6.1')}",
        en=f"malformed configs: {found}; {read('T4.4', '6.1')}",
    )


@pytest.mark.t4_4
def test_autotune_configs_fit_hopper_shared_memory(t4):
    require_configs(t4)
    too_big = [(str(cfg), smem_bytes(cfg, 2)) for cfg in t4.AUTOTUNE_CONFIGS if smem_bytes(cfg, 2) > H100_SMEM]
    assert not too_big, say(
        zh=f"这些配置需要的共享内存超过了 H100/H200 上一个 block 能用的 {H100_SMEM:,} B"
        f"（fp16 下是 num_stages * (BM*BK + BK*BN) * 2 B），autotuner 在那里会悄悄跳过它们："
        f"{too_big}；{read('T4.4', '4.4', '6.1')}",
        en=f"these configs need more than the {H100_SMEM:,} B of shared memory an H100/H200 block may "
        f"use (num_stages * (BM*BK + BK*BN) * 2 B in fp16), so the autotuner would silently skip them "
        f"there: {too_big}; {read('T4.4', '4.4', '6.1')}",
    )
    assert any(smem_bytes(cfg, 4) <= H100_SMEM for cfg in t4.AUTOTUNE_CONFIGS), say(
        zh=f"输入是 4 字节的 fp32 时，没有一个配置能放进 {H100_SMEM:,} B，fp32 在 H100 上就跑不了；"
        f"加一个小一点的配置；{read('T4.4', '4.4', '6.1')}",
        en=f"no config fits {H100_SMEM:,} B with 4-byte fp32 inputs, so fp32 could not run on an H100; "
        f"add a smaller one; {read('T4.4', '4.4', '6.1')}",
    )


@pytest.mark.t4_4
def test_autotune_configs_use_the_grouped_order(t4):
    """GROUP_M = 1 is row-major order: with it in every config, T4.1's grouped order never runs on a GPU."""
    require_configs(t4)
    groups = sorted({cfg.kwargs.get("GROUP_M") for cfg in t4.AUTOTUNE_CONFIGS}, key=str)
    assert any(isinstance(g, int) and g > 1 for g in groups), say(
        zh=f"AUTOTUNE_CONFIGS 里的 GROUP_M 只有 {groups}：GROUP_M = 1 就是按行的顺序，T4.1 的分组顺序在 GPU 上"
        f"一次也不会用到。至少一个配置要用 GROUP_M > 1（如 8）；{read('T4.4', '2.3', '6.1')}",
        en=f"the AUTOTUNE_CONFIGS have GROUP_M {groups} only: GROUP_M = 1 is row-major order, so T4.1's grouped "
        f"order would never run on a GPU. Give at least one config GROUP_M > 1 (8, say); {read('T4.4', '2.3', '6.1')}",
    )


@pytest.mark.t4_4
def test_interpret_config(t4):
    cfg = t4.INTERPRET_CONFIG
    if cfg is None:
        pytest.fail(stub_report("T4.4 INTERPRET_CONFIG is None", sections=("6.1",)), pytrace=False)
    assert not config_problems(cfg), f"INTERPRET_CONFIG: {config_problems(cfg)}; {read('T4.4', '6.1')}"
    tile = cfg.kwargs["BLOCK_M"] * cfg.kwargs["BLOCK_N"]
    assert tile <= 64 * 64, say(
        zh=f"INTERPRET_CONFIG 应该小一点（BLOCK_M * BLOCK_N <= 4096，现在是 {tile}）："
        f"解释器用 numpy 逐个跑每个程序；{read('T4.4', '6.1')}",
        en=f"INTERPRET_CONFIG should be small (BLOCK_M * BLOCK_N <= 4096, got {tile}): "
        f"the interpreter runs every program in numpy; {read('T4.4', '6.1')}",
    )


@pytest.mark.t4_4
def test_autotuned_kernel(t4):
    require_configs(t4)
    tuned = t4.matmul_kernel_autotuned
    wanted = "triton.autotune(configs=AUTOTUNE_CONFIGS, key=[...])(matmul_kernel)"
    assert isinstance(tuned, triton.runtime.Autotuner), say(
        zh=f"matmul_kernel_autotuned 应该是 {wanted}，实际是 {tuned!r}；{read('T4.4', '6.1')}",
        en=f"matmul_kernel_autotuned must be {wanted}, got {tuned!r}; {read('T4.4', '6.1')}",
    )
    assert tuned.fn is t4.matmul_kernel, say(
        zh=f"matmul_kernel_autotuned 必须包的是 matmul_kernel 本身；{read('T4.4', '6.1')}",
        en=f"matmul_kernel_autotuned must wrap matmul_kernel itself; {read('T4.4', '6.1')}",
    )
    assert list(tuned.configs) == list(t4.AUTOTUNE_CONFIGS), say(
        zh=f"要在全部 AUTOTUNE_CONFIGS 上调优，一个都不能少；{read('T4.4', '6.1')}",
        en=f"autotune over AUTOTUNE_CONFIGS, all of them; {read('T4.4', '6.1')}",
    )
    missing = [k for k in ("M", "N", "K") if k not in tuned.keys]
    why = say(  # the example for what is missing: K's is the lesson's (§6.1), M's or N's the tile's
        zh="K 一变，最好的 BLOCK_K 就变" if "K" in missing else "M、N 一变，最好的 tile 大小就变",
        en="K changes the best BLOCK_K" if "K" in missing else "M and N change the best tile size",
    )
    assert not missing, say(
        zh=f"autotune 的 key {tuned.keys} 缺了 {missing}：为一种形状调出来的配置会被其他所有形状沿用"
        f"（{why}）；{read('T4.4', '6.1')}",
        en=f"the autotune key {tuned.keys} lacks {missing}: a config tuned for one shape "
        f"would be reused for every other ({why}); {read('T4.4', '6.1')}",
    )
