"""The toolworld environment: a scripted multi-turn episode end to end through RolloutRunner."""

import asyncio
import json

from referee.domains import generate_family
from referee.envs import SyncEnvironment, make_env
from referee.policy.scripted import ScriptedPolicy
from referee.rollout.runner import RolloutRunner


def call(name, **arguments):
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"c-{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def refund_agent(messages, tools):
    """A scripted agent that reads the world's answers: find the customer, their order of the
    product named in the request, its amount, and refund it."""
    request = next(m["content"] for m in messages if m["role"] == "user")
    results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    if not results:
        email = request.split("(")[1].split(")")[0]
        return call("find_customer", email=email)
    if len(results) == 1:
        return call("list_orders", customer_id=results[0]["customer_id"])
    if len(results) == 2:
        order = next(
            o
            for o in results[1]
            if f"order of {o['product']} delivered on {o['delivered_on']}" in request
        )
        return call("get_order", order_id=order["order_id"])
    if len(results) == 3:
        return call(
            "refund_order", order_id=results[2]["id"], amount_cents=results[2]["paid_cents"]
        )
    return "Your refund is on its way."


def test_a_scripted_agent_refunds_through_the_runner_and_the_store_is_judged():
    tasks = generate_family("shop-refund", count=2, difficulty=0.4, seed=11)
    runner = RolloutRunner(
        lambda: make_env("toolworld"), ScriptedPolicy(refund_agent), concurrency=2
    )
    trajectories = runner.run_sync(tasks)
    assert [t.passed for t in trajectories] == [True, True], [t.verdict for t in trajectories]
    assert all(t.end_reason == "answered" for t in trajectories)
    assert len(trajectories[0].turns) == 5


def test_claiming_success_without_calls_ends_the_episode_unrewarded():
    task = generate_family("shop-refund", count=1, difficulty=0.0, seed=3)[0]
    runner = RolloutRunner(lambda: make_env("toolworld"), ScriptedPolicy(["Refunded, all done!"]))
    (trajectory,) = runner.run_sync([task])
    assert not trajectory.passed and trajectory.reward == 0.0


def test_tools_errors_snapshot_and_restore():
    task = generate_family("shop-cancel", count=1, difficulty=0.2, seed=3)[0]
    env = SyncEnvironment(make_env("toolworld"))
    try:
        env.reset(task)
        names = [t["function"]["name"] for t in env.tools()]
        assert "cancel_order" in names and "sql_exec" not in names and "_set_balance" not in names
        bad = env.step(call("cancel_order", order_id=424242))
        assert bad.observations[0]["content"] == "error: order 424242 not found" and not bad.done
        plan = json.loads(task.hidden["reference"])
        snap = env.snapshot()
        for c in plan:
            env.step(call(c["name"], **c["arguments"]))
        assert env.verify().passed
        env.restore(snap)  # back before the plan: nothing done yet
        assert not env.verify().passed
    finally:
        env.close()


def test_every_episode_starts_from_a_fresh_store():
    task = generate_family("shop-cancel", count=1, difficulty=0.0, seed=8)[0]
    env = make_env("toolworld")
    plan = json.loads(task.hidden["reference"])

    async def episode(steps):
        await env.reset(task)
        for c in steps:
            await env.step(call(c["name"], **c["arguments"]))
        return (await env.verify()).passed

    assert asyncio.run(episode(plan)) is True
    assert asyncio.run(episode(plan)) is True  # the first episode's cancel is gone
    asyncio.run(env.close())
