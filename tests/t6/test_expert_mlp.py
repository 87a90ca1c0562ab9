"""T6.4 (advanced): the expert MLP in two launches: gate and up with SwiGLU, then down."""

import pytest
import torch

from course.i18n import say
from course.messages import fail

from .accesses import Accesses, fail_if_read_past_k
from .common import (
    OUT_RTOL,
    T6,
    changed_cells,
    copies,
    make_ids,
    names_one_of,
    raised_in,
    reference,
    same_memory,
    watch_grouped,
    watched_call,
)
from .test_host_syncs_and_graphs import check_no_host_reads, host_reads
from bounds import AddressWatch
from support import DEVICE, DTYPES, INTERPRETING, UNWRITTEN, descriptor, rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T6.4 (advanced) the expert MLP in two launches
# ================================================================================================
@pytest.mark.t6_4
def test_gate_up_product_alone(probes, monkeypatch):
    """gate_up_product on one tile, fp16 inputs over K = 488 (eight k-boxes, the last one 40 wide): gate
    and up are sums of exact fp16 products, so summed in float32 they sit within 1e-5 of float64 (§5.1),
    where the whole layer's test, after the rounding to fp16, cannot tell a sum kept in fp16 from one in
    float32.  On the interpreter each read is watched too: each element of x's live rows is read once,
    for both, and none of the 24 padding cells that follow each row of x (a view) past K."""
    bm, bn, bk, K, F, pad = 16, 16, 64, 488, 32, 24
    x = torch.randn(20, K + pad, device=DEVICE).half()[:, :K]  # a row's box past K would read the padding
    w2d = torch.randn(3 * 2 * F, K, device=DEVICE).half()  # three experts' [gate; up] rows
    x_rows = torch.full((bm,), -1, dtype=torch.int32)
    x_rows[:11] = torch.randint(0, 20, (11,), dtype=torch.int32)  # 11 live rows, the rest not
    gate_row, up_row = 2 * F + bn, 2 * F + F + bn  # expert 1, pid_n = 1
    gate = torch.full((bm, bn), UNWRITTEN, device=DEVICE)
    up = torch.full((bm, bn), UNWRITTEN, device=DEVICE)
    accesses = Accesses()
    AddressWatch(probes, monkeypatch, ("gate_up_probe",), seen=accesses)
    probes.gate_up_probe[(1,)](
        x,
        descriptor(w2d, [bn, bk]),
        x_rows.to(DEVICE),
        gate,
        up,
        gate_row,
        up_row,
        K,
        x.stride(0),
        x.stride(1),
        bm,
        bn,
        bk,
    )
    live = x_rows >= 0
    a = x.cpu().double()[x_rows[live].long()]
    errs = {}
    for name, got, row in (("gate", gate, gate_row), ("up", up, up_row)):
        got = got.cpu()
        want = a @ w2d.cpu().double()[row : row + bn].T
        errs[name] = (rel_err(got[live], want), int((got[~live] != 0).sum()))
    if any(err > 1e-5 or dead for err, dead in errs.values()):
        (eg, dg), (eu, du) = errs["gate"], errs["up"]
        off = eg > 1e-5 or eu > 1e-5  # the live rows: each sum stated over 1e-5 only when it is
        w64 = w2d.cpu().double()
        swapped = (
            off
            and all(  # gate holds up's product and up gate's
                rel_err(got.cpu()[live], a @ w64[row : row + bn].T) <= 1e-5
                for got, row in ((gate, up_row), (up, gate_row))
            )
        )
        same = None  # both products of one box: up read at gate_row, or gate at up_row
        if off and not swapped:
            for name, got, row in (("up", up, gate_row), ("gate", gate, up_row)):
                if rel_err(got.cpu()[live], a @ w64[row : row + bn].T) <= 1e-5:
                    same = name
        fail(
            T6,
            f"gate_up_product，fp16 输入，K={K}："
            + (
                f"live 行上 gate 和 float64 差 {eg:.2e}，up 差 {eu:.2e}（相对），"
                "超过 1e-5（fp16 的乘积在 float32 里相加，误差在它之内）"
                if off
                else f"live 行是对的（gate 差 {eg:.2e}，up 差 {eu:.2e}，都在 1e-5 之内）"
            )
            + (f"；不 live 的行里 gate 有 {dg} 个、up 有 {du} 个非零值，应当全是 0" if dg + du else "")
            + ("：gate 里是 up 的乘积，up 里是 gate 的（gate_row 和 up_row 用反了）" if swapped else "")
            + (
                f"：{same} 里是 {'gate' if same == 'up' else 'up'} 的乘积（{same} 的 box 是从 "
                f"{'gate_row' if same == 'up' else 'up_row'} 读的）"
                if same
                else ""
            ),
            f"gate_up_product, fp16 inputs, K={K}: "
            + (
                f"on the live rows gate is off from float64 by {eg:.2e} and up by {eu:.2e} (relative), over 1e-5 "
                "(fp16 products summed in float32 stay within it)"
                if off
                else f"the live rows are right (gate off by {eg:.2e}, up by {eu:.2e}, within 1e-5)"
            )
            + (
                f"; the rows not live hold {dg} nonzero cells of gate and {du} of up, where all must be 0"
                if dg + du
                else ""
            )
            + (": gate holds up's product and up gate's (gate_row and up_row swapped)" if swapped else "")
            + (
                f": {same} holds {'gate' if same == 'up' else 'up'}'s product (its box was read at "
                f"{'gate_row' if same == 'up' else 'up_row'})"
                if same
                else ""
            ),
            "5.1",
        )
    first, end = x.data_ptr(), x.data_ptr() + x.shape[0] * x.stride(0) * x.element_size()
    read = [a[(a >= first) & (a < end) & inside] for what, a, inside in accesses.log if what == "read"]
    column = [(a - first) // x.element_size() % x.stride(0) for a in read]  # x's column; >= K: the padding
    fail_if_read_past_k(accesses, x, K, x_rows[live], bk, "gate_up_product", "5.1")
    x_reads = sum(int((c < K).sum()) for c in column)
    rows = int(live.sum())
    needed = rows * K
    if x_reads > needed:
        fail(
            T6,
            f"gate_up_product 从 x 读了 {x_reads} 个元素，而它要的只是 live 的 {rows} 行 × K={K} = {needed} 个"
            f"（{x_reads / needed:.1f} 倍）：每个 A 的块只读一次，gate 和 up 都用它",
            f"gate_up_product read {x_reads} elements of x, where the {rows} live rows x K={K} = {needed} are all "
            f"it needs ({x_reads / needed:.1f} times): load each A box once and use it for both gate and up",
            "5.1",
        )


@pytest.mark.t6_4
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gate_up_with_swiglu(t6, monkeypatch, dtype):
    # F not a multiple of BLOCK_N: gate boxes reach up's rows; K = 33, one past BLOCK_K's 32: a last k-box one
    # column wide, which a k loop over range(0, K - 1, BLOCK_K) leaves out (w's rows then need the host's copy)
    tokens, top_k, experts, K, F = 21, 2, 5, 33, 24
    ids = make_ids("skewed", tokens, top_k, experts)
    x = torch.randn(K, tokens, device=DEVICE).to(dtype).t()  # a transposed view: x's stride along K is T
    w = (torch.randn(experts, 2 * F, K, device=DEVICE) / K**0.5).to(dtype)
    r = t6.route(ids, experts)
    case = say(zh=f"gate/up，F={F}，{dtype}，x 是列主序的视图", en=f"gate/up, F={F}, {dtype}, x a column-major view")
    out = watched_call(t6, monkeypatch, case, "5.1", x, w, r, activation="swiglu")
    want = reference(x, w, ids, activation="swiglu")
    err = rel_err(out, want) if out.shape == want.shape else float("inf")
    if err > OUT_RTOL[dtype]:
        plain = reference(x, w, ids)  # [R, 2F]: each sorted row's gate, then up
        gate, up = plain[:, :F], plain[:, F:]
        forms = (  # two ways to write SwiGLU wrong, each worked out on the same inputs: named when out is one
            (
                gate * up,
                "算的是 gate * up：少了 sigmoid（silu(g) = g * sigmoid(g)）",
                "it is gate * up: silu's sigmoid is missing (silu(g) = g * sigmoid(g))",
            ),
            (
                torch.sigmoid(gate) * up,
                "算的是 sigmoid(gate) * up：silu(g) 是 g * sigmoid(g)，不是 sigmoid(g)",
                "it is sigmoid(gate) * up: silu(g) is g * sigmoid(g), not sigmoid(g)",
            ),
        )
        said = [(zh, en) for got, zh, en in forms if out.shape == got.shape and rel_err(out, got) <= OUT_RTOL[dtype]]
        fail(
            T6,
            f"{case}：结果应当是 [{tokens * top_k}, {F}] 的 silu(gate) * up，和 float64 差 {err:.2e}（相对）"
            + (f"：{said[0][0]}" if said else ""),
            f"{case}: the result should be silu(gate) * up, [{tokens * top_k}, {F}]; off from float64 by {err:.2e} "
            "(relative)" + (f": {said[0][1]}" if said else ""),
            "5.1",
        )


def layer_inputs(tokens, top_k, experts, K, F):
    """x [tokens, K], w_gate_up [E, 2F, K], w_down [E, K, F] (fp16, scaled to keep the sums near 1) and
    topk_weights [tokens, top_k]: an MoE layer's inputs beside its ids."""
    x = torch.randn(tokens, K, device=DEVICE).half()
    w_gate_up = (torch.randn(experts, 2 * F, K, device=DEVICE) / K**0.5).half()
    w_down = (torch.randn(experts, K, F, device=DEVICE) / F**0.5).half()
    return x, w_gate_up, w_down, torch.rand(tokens, top_k, device=DEVICE)


def layer_output(t6, x, w_gate_up, w_down, ids, weights):
    """moe_mlp's y.  Where check_expert_inputs refused a grouped_matmul call of moe_mlp's own (the
    layer's input is valid), the test fails here, naming the call, and the cause where it is seen:
    h, [T*top_k, F] in sorted order, handed to the down launch without x_sorted=True."""
    calls, real = [], t6.grouped_matmul

    def recorded(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(t6, "grouped_matmul", recorded)
        try:
            return t6.moe_mlp(x, w_gate_up, w_down, ids, weights)
        except (ValueError, TypeError) as e:
            if not calls or not raised_in(e, t6, "check_expert_inputs"):
                raise
            refused = f"{type(e).__name__}: {str(e)[:200]}"
    args, kwargs = calls[-1]
    given_x, given_w = (args + (None, None))[:2]
    given_x, given_w = kwargs.get("x", given_x), kwargs.get("w", given_w)
    slots = ids.numel()
    unsorted = (
        same_memory(given_w, w_down)
        and not kwargs.get("x_sorted")
        and isinstance(given_x, torch.Tensor)
        and given_x.dim() == 2
        and given_x.shape[0] == slots
    )
    if unsorted:
        fail(
            T6,
            f"moe_mlp：down 那次 grouped_matmul 没有传 x_sorted=True。h 是 gate/up 那次按排好的顺序写出的，"
            f"每个 slot 一行（T*top_k = {slots} 行），不传 x_sorted 时 x 每个 token 一行（{ids.shape[0]} 行），"
            f"所以 check_expert_inputs 拒绝了它：{refused}",
            f"moe_mlp: the down launch's grouped_matmul was called without x_sorted=True. h, which the gate/up "
            f"launch wrote in sorted order, has a row per slot (T*top_k = {slots} rows), where x without x_sorted "
            f"has a row per token ({ids.shape[0]} rows), so check_expert_inputs refused it: {refused}",
            "5.2",
        )
    fail(
        T6,
        f"moe_mlp 第 {len(calls)} 次调用 grouped_matmul 时被 check_expert_inputs 拒绝了（moe_mlp 拿到的输入是合法的，"
        f"这次调用的参数是它自己给的）：{refused}",
        f"moe_mlp's call {len(calls)} of grouped_matmul was refused by check_expert_inputs (moe_mlp's own input is "
        f"valid; that call's arguments are moe_mlp's): {refused}",
        "5.2",
    )


@pytest.mark.t6_4
def test_moe_mlp_in_two_launches(t6, monkeypatch):
    tokens, top_k, experts, K, F = 19, 2, 4, 32, 16
    ids = make_ids("balanced", tokens, top_k, experts)
    x, w_gate_up, w_down, weights = layer_inputs(tokens, top_k, experts, K, F)
    given = {"x": x, "w_gate_up": w_gate_up, "w_down": w_down, "topk_ids": ids, "topk_weights": weights}
    before = copies(given)
    watch = watch_grouped(t6, monkeypatch)
    y = layer_output(t6, x, w_gate_up, w_down, ids, weights)
    monkeypatch.undo()
    changed = list(changed_cells(given, before))
    if changed:
        fail(
            T6,
            f"moe_mlp 改动了调用者的 {'、'.join(changed)}",
            f"moe_mlp changed the caller's {', '.join(changed)}",
            "5.2",
        )
    launched = watch.of("moe_kernel")
    kinds = [(launch.args.get("ACTIVATION"), bool(launch.args.get("BY_SLOT"))) for launch in launched]
    if kinds != [("swiglu", False), ("none", True)]:
        got = "; ".join(f"ACTIVATION={activation}, BY_SLOT={by_slot}" for activation, by_slot in kinds)
        fail(
            T6,
            f"moe_mlp 应当启动 moe_kernel 两次：先 gate/up（ACTIVATION=swiglu），再 down（按 slot 写出、合并），"
            f"得到 {len(kinds)} 次" + (f"：{got}" if got else ""),
            f"moe_mlp should launch moe_kernel twice: gate/up (ACTIVATION=swiglu), then down (written by slot and "
            f"combined, BY_SLOT=True), got {len(kinds)}" + (f": {got}" if got else ""),
            "5",
        )
    # §4.1, §5.2: gate/up gathers x's rows itself, and down reads h as gate/up wrote it: no copies.
    gate_up_args, down_args = launched[0].args, launched[1].args
    if not same_memory(gate_up_args.get("x_ptr"), x) or gate_up_args.get("X_SORTED"):
        fail(
            T6,
            "moe_mlp：gate/up 那次启动读的不是调用者的 x"
            + ("（它的 X_SORTED=True）" if gate_up_args.get("X_SORTED") else "")
            + "：按 sorted_slots 在 kernel 里直接从 x 收集行，不拷贝",
            "moe_mlp: the gate/up launch does not read the caller's x"
            + (" (its X_SORTED=True)" if gate_up_args.get("X_SORTED") else "")
            + ": gather x's rows in the kernel through sorted_slots, no copy",
            "5.2",
            "4.1",
        )
    if not same_memory(down_args.get("x_ptr"), gate_up_args.get("out_ptr")) or not down_args.get("X_SORTED"):
        fail(
            T6,
            "moe_mlp：down 那次启动读的不是 gate/up 那次写出的 h（X_SORTED=True，原样交过去，不拷贝）",
            "moe_mlp: the down launch does not read the h the gate/up launch wrote (X_SORTED=True, handed on as it "
            "is, no copy)",
            "5.2",
        )
    # §5: one routing, shared by both launches (route again for down and the numbers agree, at three
    # more launches): the two launches must get the very same sorted_slots.
    slots = [launch.args.get("sorted_slots_ptr") for launch in launched]
    if not same_memory(*slots):
        fail(
            T6,
            "moe_mlp：两次 moe_kernel 启动拿到的是两个不同的 sorted_slots 张量，也就是两份路由："
            "只调用 route 一次，把同一个 Routing 交给两次 grouped_matmul",
            "moe_mlp: its two launches of moe_kernel got two different sorted_slots tensors, so two routings: "
            "call route once and pass the same Routing to both grouped_matmul calls",
            "5",
        )
    # Which launch scaled by the weights: scaling h (after SwiGLU, or `up` alone) gives the same
    # numbers, so only the launches can tell.  §5.2 asks for h unweighted, the weights in down's epilogue.
    weighted = [bool(launch.args.get("HAS_WEIGHTS")) for launch in launched]
    if weighted != [False, True]:
        said = [
            (
                "gate/up 那次启动收到了路由权重（HAS_WEIGHTS=True）",
                "the gate/up launch got the routing weights (HAS_WEIGHTS=True)",
            )
        ] * weighted[0] + [
            (
                "down 那次启动没有收到路由权重（HAS_WEIGHTS=False）",
                "the down launch got no routing weights (HAS_WEIGHTS=False)",
            )
        ] * (not weighted[1])
        fail(
            T6,
            "moe_mlp：路由权重只在 down 那次启动的 epilogue 里乘，h 不乘权重；" + "，".join(zh for zh, _ in said),
            "moe_mlp: the routing weights go to the down launch alone, applied in its epilogue, and h stays "
            "unweighted; " + ", ".join(en for _, en in said),
            "5.2",
        )
    want = layer_want(x, w_gate_up, w_down, ids, weights)
    err = rel_err(y, want) if y.shape == want.shape else float("inf")
    if err > 4e-3:
        fail(
            T6,
            f"moe_mlp：和 float64 的结果差 {err:.2e}（相对）",
            f"moe_mlp: off from float64 by {err:.2e} (relative)",
            "5.2",
        )
    # a second call of the same shapes, other ids: nothing of the first call (its routing, say) may be kept
    ids2 = make_ids("skewed", tokens, top_k, experts)
    y2 = layer_output(t6, x, w_gate_up, w_down, ids2, weights)
    err = rel_err(y2, layer_want(x, w_gate_up, w_down, ids2, weights)) if y2.shape == want.shape else float("inf")
    if err > 4e-3:
        stale = y2.shape == want.shape and rel_err(y2, want) <= 4e-3
        fail(
            T6,
            f"moe_mlp：第一次调用是对的，形状相同、topk_ids 不同的第二次调用和 float64 的结果差 {err:.2e}（相对）"
            + ("：它给出的正是第一次那些 ids 的结果，第一次调用的东西（比如路由）被留下来又用了" if stale else ""),
            f"moe_mlp: a first call was right, and a second one, of the same shapes with other topk_ids, is off from "
            f"float64 by {err:.2e} (relative)"
            + (
                ": it gave the first call's ids' output, so something of that call (its routing, say) was kept"
                if stale
                else ""
            ),
            "5.2",
        )


def layer_want(x, w_gate_up, w_down, ids, weights):
    """The layer's float64 output, [tokens, K]: each slot's expert MLP on its token, weighted, summed per token."""
    tokens, top_k = ids.shape
    K = w_down.shape[1]
    hidden = reference(x, w_gate_up, ids, activation="swiglu", combine=False)
    flat = ids.reshape(-1).cpu()
    by_slot = torch.empty_like(hidden)
    by_slot[torch.sort(flat, stable=True).indices] = hidden
    want = torch.zeros(tokens, K, dtype=torch.float64)
    for s in range(tokens * top_k):
        want[s // top_k] += weights.reshape(-1)[s].double().cpu() * (w_down[flat[s]].double().cpu() @ by_slot[s])
    return want


@pytest.mark.t6_4
@pytest.mark.skipif(not INTERPRETING, reason="watched on the CPU, as grouped_matmul's reads are")
def test_moe_mlp_reads_nothing_back_but_the_id_check(t6):
    """§3.4, §5.2: the layer, routing to combine, has no host sync between its kernels; the one read
    allowed is route's look at the ids (check_routing_inputs, skipped under capture)."""
    tokens, top_k, experts, K, F = 24, 2, 4, 32, 16
    ids = make_ids("skewed", tokens, top_k, experts)
    x, w_gate_up, w_down, weights = layer_inputs(tokens, top_k, experts, K, F)
    with host_reads(t6, allowed=("check_routing_inputs",)) as mode:
        layer_output(t6, x, w_gate_up, w_down, ids, weights)
    case = say(
        zh=f"{tokens} 个 token，{experts} 个专家，除去 route 对专家号的检查",
        en=f"{tokens} tokens, {experts} experts, route's check of the ids aside",
    )
    check_no_host_reads(mode.reads, case, "moe_mlp", "3.4")


@pytest.mark.t6_4
def test_moe_mlp_refuses_ids_out_of_range(t6):
    """§5.2: moe_mlp keeps route's look at the ids: an id past the experts is an error naming topk_ids,
    not a slot left out (whose by-slot row no tile writes, and the combine would read)."""
    tokens, top_k, experts, K, F = 6, 2, 4, 32, 16
    ids = make_ids("balanced", tokens, top_k, experts)
    ids[2, 1] = experts
    x, w_gate_up, w_down, weights = layer_inputs(tokens, top_k, experts, K, F)
    try:
        t6.moe_mlp(x, w_gate_up, w_down, ids, weights)
    except (ValueError, TypeError) as e:
        if names_one_of(str(e), ("topk_ids",)):
            return
        said = f"{type(e).__name__}: {str(e)[:200]}"
    else:
        said = None
    fail(
        T6,
        f"topk_ids 里有专家号 {experts}，只有 {experts} 个专家：moe_mlp 应当抛出写着 topk_ids 的 ValueError"
        + (f"，却抛出了 {said}" if said else "，却什么也没抛")
        + "：route 对专家号的检查不要关掉（check_ids=False 会略过这个槽）",
        f"topk_ids holds expert {experts} of {experts} experts: moe_mlp should raise a ValueError naming topk_ids"
        + (f", and raised {said}" if said else ", and raised nothing")
        + ": keep route's check of the ids on (check_ids=False leaves that slot out)",
        "5.2",
    )
