"""The hosts' plan caches (given/t5_host.py KeptPlans): a model whose shapes change from call to call
keeps at most LIMIT plans, the most recently made, and a plan made again moves to the newest place."""

from given.t5_host import KeptPlans


def test_the_oldest_plan_goes_past_the_limit():
    plans = KeptPlans()
    for n in range(KeptPlans.LIMIT + 40):
        plans[("shape", n)] = n
    assert len(plans) == KeptPlans.LIMIT
    assert ("shape", 39) not in plans and plans[("shape", 40)] == 40
    assert plans[("shape", KeptPlans.LIMIT + 39)] == KeptPlans.LIMIT + 39


def test_a_plan_made_again_is_the_newest():
    plans = KeptPlans()
    for n in range(KeptPlans.LIMIT):
        plans[n] = n
    plans[0] = "again"  # made again: the oldest now is 1
    plans["new"] = "new"
    assert plans[0] == "again" and 1 not in plans and len(plans) == KeptPlans.LIMIT


def test_both_hosts_keep_their_plans_in_one():
    import solutions.t5_persistent as t5
    import solutions.t6_moe as t6

    assert isinstance(t5._plans, KeptPlans)
    assert isinstance(t6._plans, KeptPlans) and isinstance(t6._route_plans, KeptPlans)
