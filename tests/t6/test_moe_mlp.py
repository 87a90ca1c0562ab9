"""T6.4 (advanced): the expert MLP in two launches, gate/up then down, through moe_mlp: its result,
what it reads back to the host, and the ids it refuses (gate/up alone: test_expert_mlp.py)."""

import pytest
import torch

from course.i18n import agree, say
from course.messages import fail

from .common import (
    T6,
    changed_cells,
    copies,
    make_ids,
    names_one_of,
    same_memory,
    watch_grouped,
)
from .layer import layer_inputs, layer_output, layer_want
from .mlp_launches import check_config_reached, weighted_h
from .test_host_syncs_and_graphs import check_no_host_reads, host_reads
from support import INTERPRETING, LaunchWatch, rel_err

pytestmark = pytest.mark.t6  # the lesson's marker; each test also carries its step's


# ================================================================================================
# T6.4 (advanced) the expert MLP in two launches, through moe_mlp
# ================================================================================================
@pytest.mark.t6_4
def test_moe_mlp_in_two_launches(t6, monkeypatch):
    tokens, top_k, experts, K, F = 19, 2, 4, 32, 16
    ids = make_ids("balanced", tokens, top_k, experts)
    x, w_gate_up, w_down, weights = layer_inputs(tokens, top_k, experts, K, F)
    given = {"x": x, "w_gate_up": w_gate_up, "w_down": w_down, "topk_ids": ids, "topk_weights": weights}
    before = copies(given)
    watch = watch_grouped(t6, monkeypatch)
    # route's last kernel, watched: which sorted_slots tensors it wrote during the call
    routed = LaunchWatch(t6, monkeypatch, {"scatter_slots": True}, "route", "sorted_slots_ptr", shared_names=False)
    cfg = t6.Config(32, 16, 16, 1, 4, 1)  # not the interpreter's pick_config: the caller's, for both launches
    y = layer_output(t6, x, w_gate_up, w_down, ids, weights, config=cfg)
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
        # down launched in sorted order (the host sets BY_SLOT from combine) and no combine_topk launched
        uncombined = kinds == [("swiglu", False), ("none", False)] and not watch.of("combine_topk")
        # gate/up launched with no activation and the down one right: SwiGLU done on the host between them (hunt16)
        unfused = kinds == [("none", False), ("none", True)]
        said = ("", "")
        if uncombined:
            said = (
                "；down 那次 grouped_matmul 没有传 combine=True（BY_SLOT=False，combine_topk 一次也没有启动）："
                "每个 token 的 top_k 行要由 combine_topk 在 float32 里按 j 的顺序相加，不在 torch 里加",
                "; the down call of grouped_matmul was made without combine=True (BY_SLOT=False, combine_topk never "
                "launched): each token's top_k rows are summed by combine_topk, in float32 in j order, not in torch",
            )
        if unfused:
            said = (
                '；gate/up 那次 grouped_matmul 没有传 activation="swiglu"（ACTIVATION=none）：SwiGLU 在 kernel 的 '
                "epilogue 里做（gate_up_product 再 swiglu），不在 torch 里、两次启动之间做",
                '; the gate/up call of grouped_matmul was made without activation="swiglu" (ACTIVATION=none): SwiGLU '
                "is done in the kernel's epilogue (gate_up_product, then swiglu), not in torch between the launches",
            )
        fail(
            T6,
            f"moe_mlp 应当启动 moe_kernel 两次：先 gate/up（ACTIVATION=swiglu），再 down（按 slot 写出、合并），"
            f"得到 {len(kinds)} 次" + (f"：{got}" if got else "") + said[0],
            f"moe_mlp should launch moe_kernel twice: gate/up (ACTIVATION=swiglu), then down (written by slot and "
            f"combined, BY_SLOT=True), got {len(kinds)}" + (f": {got}" if got else "") + said[1],
            "5",
        )
    check_config_reached(launched, cfg)
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
    for name, w, args in (("w_gate_up", w_gate_up, gate_up_args), ("w_down", w_down, down_args)):
        which = name[2:].replace("_", "/")  # the launch: gate/up, down
        if not same_memory(getattr(args.get("w_desc"), "base", None), w):  # hunt14; both keep TMA's rules here
            fail(
                T6,
                f"moe_mlp：{which} 那次启动读的权重不在调用者的 {name} 的内存里（是它的副本，或者别的张量）："
                f"{name} 合乎 TMA 的规则，grouped_matmul 会原样读它；把调用者的权重原样交给 grouped_matmul："
                "每次调用都复制一遍所有专家的权重，GPU 上就多读、多写一遍",
                f"moe_mlp: the {which} launch reads its weights from other memory than the caller's {name} (a copy "
                f"of it, or another tensor): {name} keeps TMA's rules, so grouped_matmul reads it as it is; hand the "
                "caller's weights to grouped_matmul as they are: a copy reads and writes every expert's weights once "
                "more on each call",
                "5.2",
            )
    if not same_memory(down_args.get("x_ptr"), gate_up_args.get("out_ptr")) or not down_args.get("X_SORTED"):
        scaled = weighted_h(gate_up_args, down_args, weights)
        fail(
            T6,
            "moe_mlp：down 那次启动读的不是 gate/up 那次写出的 h（X_SORTED=True，原样交过去，不拷贝）"
            + (
                "；它读的是 h 每一行乘上了这个 slot 的路由权重（在两次启动之间，在 torch 里乘的）："
                "h 原样交给 down，topk_weights 交给 down 那次 grouped_matmul，在它的 epilogue 里乘"
                if scaled
                else ""
            ),
            "moe_mlp: the down launch does not read the h the gate/up launch wrote (X_SORTED=True, handed on as it "
            "is, no copy)"
            + (
                "; what it reads is h with each row times its slot's routing weight (multiplied in torch, between "
                "the launches): hand h on as it is, and topk_weights to the down call of grouped_matmul, whose "
                "epilogue applies them"
                if scaled
                else ""
            ),
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
    # §2, §5: that routing is route()'s, sorted on the device: its sorted_slots is what scatter_slots wrote.
    scattered = [launch.args.get("sorted_slots_ptr") for launch in routed.of("scatter_slots")]
    if not any(same_memory(slots[0], s) for s in scattered):
        fail(
            T6,
            "moe_mlp：两次 moe_kernel 启动读的 sorted_slots 不是这次调用里 scatter_slots 写出的"
            + (
                f"（scatter_slots 启动了 {len(scattered)} 次，写的是别的张量）：把 route() 给的 Routing 原样交给两次"
                "grouped_matmul"
                if scattered
                else "（这次调用里 scatter_slots 一次也没有启动：route 的三个 kernel 都没有跑，路由是别的办法做的）"
                "：调用 route(topk_ids, E) 一次，让它的三个 kernel 在设备上排好 slot"
            ),
            "moe_mlp: the sorted_slots its two launches of moe_kernel read is not what scatter_slots wrote in this "
            "call"
            + (
                f" (scatter_slots was launched {len(scattered)} {agree(len(scattered), 'time', 'times')}, into "
                "another tensor): hand the Routing route() returned to both grouped_matmul calls as it is"
                if scattered
                else " (scatter_slots was not launched at all in this call: none of route's three kernels ran, so "
                "the routing was made some other way): call route(topk_ids, E) once, and let its "
                "three kernels sort the slots on the device"
            ),
            "5",
            "2.1",
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
    if y.dtype != x.dtype:
        fail(
            T6,
            f"moe_mlp：x 是 {x.dtype}，返回的 y 却是 {y.dtype}：这一层的输出和 x 同一个 dtype，"
            "正如 grouped_matmul 的合并结果（combine_topk 最后转换成的就是它）",
            f"moe_mlp: x is {x.dtype}, and the y it returned is {y.dtype}: the layer's output is in x's dtype, as "
            "grouped_matmul's combined result is (combine_topk's one cast at the end is to it)",
            "5.2",
            "4.4",
        )
    want = layer_want(x, w_gate_up, w_down, ids, weights)
    err = rel_err(y, want) if y.shape == want.shape else float("inf")
    if err > 4e-3:
        # the weights made to sum to 1 per token first (a router's renormalisation, which is the router's to do)
        summed = (
            y.shape == want.shape
            and rel_err(y, layer_want(x, w_gate_up, w_down, ids, weights / weights.sum(1, True))) <= 4e-3
        )
        order = torch.sort(ids.reshape(-1).long(), stable=True).indices.to(weights.device)  # sorted_slots
        in_sorted_order = (
            not summed
            and y.shape == want.shape
            and rel_err(y, layer_want(x, w_gate_up, w_down, ids, weights.reshape(-1)[order].view_as(weights))) <= 4e-3
        )
        fail(
            T6,
            f"moe_mlp：和 float64 的结果差 {err:.2e}（相对）"
            + (
                "：它等于把每个 token 的 topk_weights 先归一化到和为 1 的结果：权重要照调用者给的用，不改"
                if summed
                else "：它等于先把 topk_weights 排成排好序的顺序（slot s 拿到 weights[sorted_slots[s]]）的结果："
                "kernel 自己按 slot 读 weights[slot]，权重照调用者的 [tokens, top_k] 顺序交给它"
                if in_sorted_order
                else ""
            ),
            f"moe_mlp: off from float64 by {err:.2e} (relative)"
            + (
                ": it is the output with each token's topk_weights first scaled to sum to 1: the caller's weights are "
                "used as given"
                if summed
                else ": it is the output with topk_weights first put in sorted order (slot s given "
                "weights[sorted_slots[s]]): the kernel reads weights[slot] itself, so the weights go to it in the "
                "caller's [tokens, top_k] order"
                if in_sorted_order
                else ""
            ),
            "5.2",
        )
    if not same_memory(launched[1].args.get("weights_ptr"), weights):  # right numbers, from a copy
        fail(
            T6,
            "moe_mlp：down 那次启动读的路由权重不是调用者的 topk_weights，而是一份副本（转了类型或改过的）："
            "照调用者给的原样交给 grouped_matmul，它自己会读",
            "moe_mlp: the down launch read routing weights that are not the caller's topk_weights but a copy (of "
            "another dtype, or changed): hand them to grouped_matmul as given, and it reads them itself",
            "5.2",
        )
    # a second call of the same shapes, other ids: nothing of the first call (its routing, say) may be kept
    ids2 = make_ids("skewed", tokens, top_k, experts)
    y2 = layer_output(t6, x, w_gate_up, w_down, ids2, weights)
    err = rel_err(y2, layer_want(x, w_gate_up, w_down, ids2, weights)) if y2.shape == want.shape else float("inf")
    if err > 4e-3:
        stale = y2.shape == want.shape and rel_err(y2, want) <= 4e-3
        # The second call has no config (pick_config's block sizes): these ids with the first call's config
        # tell the block sizes from the ids.
        y3 = None if stale else layer_output(t6, x, w_gate_up, w_down, ids2, weights, config=cfg)
        sizes = y3 is not None and rel_err(y3, layer_want(x, w_gate_up, w_down, ids2, weights)) <= 4e-3
        fail(
            T6,
            f"moe_mlp：第一次调用（给了 config）是对的，形状相同、topk_ids 不同、不给 config 的第二次调用和 float64 "
            f"的结果差 {err:.2e}（相对）"
            + ("：它给出的正是第一次那些 ids 的结果，第一次调用的东西（比如路由）被留下来又用了" if stale else "")
            + ("：这些 ids 用第一次的 config 是对的，所以错在 pick_config 给的块大小上，不在 ids 上" if sizes else ""),
            f"moe_mlp: a first call (given a config) was right, and a second one, of the same shapes with other "
            f"topk_ids and no config, is off from float64 by {err:.2e} (relative)"
            + (
                ": it gave the first call's ids' output, so something of that call (its routing, say) was kept"
                if stale
                else ""
            )
            + (
                ": these ids with the first call's config are right, so what breaks it is the block sizes "
                "pick_config gave, not the ids"
                if sizes
                else ""
            ),
            "5.2",
            "5.1",
        )


@pytest.mark.t6_4
@pytest.mark.skipif(not INTERPRETING, reason="watched on the CPU, as grouped_matmul's reads are")
def test_moe_mlp_reads_nothing_back_but_the_id_check(t6):
    """§3.4, §5.2: the layer, routing to combine, has no host sync between its kernels; the one read
    allowed is route's look at the ids (check_routing_inputs, skipped under capture).  Called twice, the
    second time with ids equal to the first's in a new tensor: a routing kept and used again when the ids
    compare equal (torch.equal) reads them back, which one call alone never shows."""
    tokens, top_k, experts, K, F = 24, 2, 4, 32, 16
    ids = make_ids("skewed", tokens, top_k, experts)
    x, w_gate_up, w_down, weights = layer_inputs(tokens, top_k, experts, K, F)
    with host_reads(t6, allowed=("check_routing_inputs",)) as mode:
        layer_output(t6, x, w_gate_up, w_down, ids, weights)
        first = len(mode.reads)
        layer_output(t6, x, w_gate_up, w_down, ids.clone(), weights)
    case = say(
        zh=f"{tokens} 个 token，{experts} 个专家，除去 route 对专家号的检查",
        en=f"{tokens} tokens, {experts} experts, route's check of the ids aside",
    )
    if mode.reads and not first:
        compared = mode.reads[0][0] in ("equal", "allclose")
        case += say(
            zh="，只在第二次调用里：它的 topk_ids 与第一次的相等（新的张量）"
            + ("；拿专家号去和留下的比较，本身就读回了它们：每次调用都重新 route" if compared else ""),
            en=", in the second call alone, whose topk_ids equal the first call's (a new tensor)"
            + ("; comparing the ids with kept ones reads them back: route them again at each call" if compared else ""),
        )
    check_no_host_reads(mode.reads, case, "moe_mlp", "3.4")


@pytest.mark.t6_4
def test_moe_mlp_refuses_ids_out_of_range(t6, monkeypatch):
    """§5.2: moe_mlp keeps route's look at the ids: an id past the experts is an error naming topk_ids (or route's
    num_experts, as T6.1 takes), not a slot left out (whose by-slot row no tile writes, and the combine would
    read).  route is watched: a cause is named only where its call shows it (check_ids=False, or an expert count
    not w's)."""
    tokens, top_k, experts, K, F = 6, 2, 4, 32, 16
    ids = make_ids("balanced", tokens, top_k, experts)
    ids[2, 1] = experts
    x, w_gate_up, w_down, weights = layer_inputs(tokens, top_k, experts, K, F)
    routed, route = [], t6.route  # (num_experts, check_ids) of each call of route

    def watched_route(topk_ids, num_experts, *args, **kwargs):
        routed.append((num_experts, kwargs.get("check_ids", True)))
        return route(topk_ids, num_experts, *args, **kwargs)

    monkeypatch.setattr(t6, "route", watched_route)
    try:
        t6.moe_mlp(x, w_gate_up, w_down, ids, weights)
    except (ValueError, TypeError) as e:
        if names_one_of(str(e), ("topk_ids", "num_experts")):
            return
        said = f"{type(e).__name__}: {str(e)[:200]}"
    else:
        said = None
    finally:
        monkeypatch.undo()
    unchecked = [n for n, check in routed if not check]
    other_e = [n for n, check in routed if check and n != experts]
    why_zh, why_en = (
        (
            "：route 对专家号的检查不要关掉（check_ids=False 会略过这个槽）",
            ": keep route's check of the ids on (check_ids=False leaves that slot out)",
        )
        if unchecked
        else (
            f"：route 收到的专家数是 {other_e[0]}，不是 w_gate_up 的 {experts} 个（w_gate_up.shape[0]）："
            "它按这个数查专家号",
            f": route was given {other_e[0]} experts, not w_gate_up's {experts} (w_gate_up.shape[0]), and "
            "checks the ids against that number",
        )
        if other_e
        else (
            "：moe_mlp 没有调用 route，而 route 会检查专家号",
            ": moe_mlp never called route, whose check refuses such ids",
        )
        if not routed
        else ("", "")
    )
    fail(
        T6,
        f"topk_ids 里有专家号 {experts}，只有 {experts} 个专家：moe_mlp 应当抛出写着 topk_ids（或 num_experts）的 "
        "ValueError" + (f"，却抛出了 {said}" if said else "，却什么也没抛") + why_zh,
        f"topk_ids holds expert {experts} of {experts} experts: moe_mlp should raise a ValueError naming topk_ids "
        "(or num_experts)" + (f", and raised {said}" if said else ", and raised nothing") + why_en,
        "5.2",
    )
