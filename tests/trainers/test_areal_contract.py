"""Contract: AReaL's AsyncRewardWrapper and RLVRWorkflow run referee's reward function, and
referee's workflow runs an episode through an OpenAI-compatible server as AReaL's proxy does.

Runs in the areal venv (scripts/run-trainer-tests.sh areal). AReaL's own code: the wrapper's
process pool (the function is pickled by reference, the row is passed as ``**kwargs``), its
timeout and retries, and ``RLVRWorkflow.arun_episode`` with a fake inference engine whose
completion keeps the EOS text (decoded without ``skip_special_tokens``, as AReaL does). The
proxy is stood in for by tests/policy/fake_openai.py (no model).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "he3.jsonl"
# Read by every process that judges (the pool's workers are forked from this one): the task
# file, and referee's deadline on one candidate, well below AReaL's timeout.
os.environ["REFEREE_TASKS"] = str(FIXTURE)
os.environ["REFEREE_REWARD_DEADLINE_S"] = "3"
sys.path.insert(0, str(HERE / "probes"))

from _tiny_tokenizer import tokenizer  # noqa: E402
from areal.api.cli_args import GenerationHyperparameters  # noqa: E402
from areal.api.io_struct import ModelResponse  # noqa: E402
from areal.api.reward_api import AsyncRewardWrapper  # noqa: E402
from areal.workflow.rlvr import RLVRWorkflow  # noqa: E402
from tests.policy.fake_openai import CodeAnswer, FakeOpenAI  # noqa: E402

from referee.errors import ConfigError  # noqa: E402
from referee.tasks.model import read_tasks  # noqa: E402
from referee.train.areal import RefereeWorkflow, areal_row, eval_reward_fn, reward_fn  # noqa: E402
from referee.verify.redteam import EXPLOITS  # noqa: E402

TASKS = read_tasks(FIXTURE)
TRAIN = [t for t in TASKS if t.split == "train"]
HELDOUT = next(t for t in TASKS if t.split != "train")
EXPLOIT = {e.name: e for e in EXPLOITS}


def gold(task) -> str:
    return "```python\n" + task.payload["code_prompt"] + task.hidden["reference"] + "```"


def exploit(task, name) -> str:
    return "```python\n" + task.payload["code_prompt"] + EXPLOIT[name].completion(task) + "```"


def wrapped(fn, **kw):
    return AsyncRewardWrapper(fn, **{"timeout_seconds": 15, "max_workers": 2, **kw})


def test_wrapper_gold_1_empty_and_exploits_0():
    w = wrapped(reward_fn)

    async def main():
        calls = [w("p", gold(t) + "</s>", [1], [2], **areal_row(t)) for t in TRAIN]
        t = TRAIN[0]
        calls += [
            w("p", "", [1], [2], **areal_row(t)),
            w("p", exploit(t, "always-equal-object"), [1], [2], **areal_row(t)),
            w("p", exploit(t, "os-exit-at-import"), [1], [2], **areal_row(t)),
        ]
        return await asyncio.gather(*calls)

    assert asyncio.run(main()) == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]


def test_hung_candidate_is_bounded_by_referees_deadline_and_frees_the_worker():
    # One worker: if the hung call still held it, the next call would wait behind it.
    w = AsyncRewardWrapper(reward_fn, timeout_seconds=12, max_workers=1, max_retries=0)
    t = TRAIN[0]

    async def main():
        start = time.monotonic()
        hung = await w("p", exploit(t, "infinite-loop"), [1], [2], **areal_row(t))
        hung_s = time.monotonic() - start
        start = time.monotonic()
        after = await w("p", gold(t), [1], [2], **areal_row(t))
        return hung, hung_s, after, time.monotonic() - start

    hung, hung_s, after, after_s = asyncio.run(main())
    assert hung == 0.0 and hung_s < 10, hung_s  # referee's 3 s deadline, not AReaL's 12 s
    assert after == 1.0 and after_s < 5, after_s


def test_heldout_task_is_refused_for_training_and_judged_for_evaluation():
    row = areal_row(HELDOUT)
    with pytest.raises(ConfigError, match="held out"):
        asyncio.run(wrapped(reward_fn, max_retries=0)("p", gold(HELDOUT), [1], [2], **row))
    assert asyncio.run(wrapped(eval_reward_fn)("p", gold(HELDOUT), [1], [2], **row)) == 1.0


def test_unknown_task_is_raised_to_the_workflow_not_a_zero():
    row = dict(areal_row(TRAIN[0]), task_id="no/such-task")
    with pytest.raises(ConfigError, match="no/such-task"):
        asyncio.run(wrapped(reward_fn, max_retries=0)("p", "x", [1], [2], **row))


class FakeEngine:
    def __init__(self, tok, text):
        self.tok, self.text = tok, text

    async def agenerate(self, req):
        out = [*self.tok.encode(self.text, add_special_tokens=False), self.tok.eos_token_id]
        return ModelResponse(
            input_tokens=req.input_ids,
            output_tokens=out,
            output_logprobs=[0.0] * len(out),
            output_versions=[0] * len(out),
            tokenizer=self.tok,
        )


@pytest.mark.parametrize(("answer", "reward"), [("gold", 1.0), ("exploit", 0.0), ("empty", 0.0)])
def test_rlvr_workflow_with_reward_fn_by_import_path(answer, reward):
    tok = tokenizer()
    t = TRAIN[2]
    text = {"gold": gold(t), "exploit": exploit(t, "always-equal-object"), "empty": ""}[answer]
    wf = RLVRWorkflow(
        reward_fn="referee.train.areal.reward_fn",
        gconfig=GenerationHyperparameters(max_new_tokens=64),
        tokenizer=tok,
    )
    res = asyncio.run(wf.arun_episode(FakeEngine(tok, text), areal_row(t)))
    assert res["rewards"].tolist() == [reward]


@pytest.fixture(scope="module")
def proxy():
    with FakeOpenAI() as fake:
        for t in TASKS:
            solution = t.payload["code_prompt"] + t.hidden["reference"]
            fake.code_answers[t.payload["entry_point"] + "("] = CodeAnswer(solution)
        yield fake


def run_workflow(wf, data, proxy):
    return asyncio.run(wf.run(data, base_url=proxy.url, api_key="session-key", http_client=None))


def test_workflow_single_turn_through_the_proxy(proxy):
    wf = RefereeWorkflow(model="code-single")
    assert [run_workflow(wf, areal_row(t), proxy) for t in TRAIN] == [1.0, 1.0, 1.0]
    assert proxy.headers[-1]["Authorization"] == "Bearer session-key"


def test_workflow_multi_turn_with_tools_through_the_proxy(proxy):
    wf = RefereeWorkflow(model="code-agent", multi_turn=True, max_turns=4)
    assert run_workflow(wf, areal_row(TRAIN[1]), proxy) == 1.0
    last = proxy.requests[-1]
    assert {tool["function"]["name"] for tool in last["tools"]} >= {"write_file", "submit"}


def test_workflow_wrong_answer_is_0_and_heldout_refused(proxy):
    assert run_workflow(RefereeWorkflow(model="echo"), areal_row(TRAIN[0]), proxy) == 0.0
    with pytest.raises(ConfigError, match="held out"):
        run_workflow(RefereeWorkflow(model="code-single"), areal_row(HELDOUT), proxy)
    evaluation = RefereeWorkflow(model="code-single", allow_heldout=True)
    assert run_workflow(evaluation, areal_row(HELDOUT), proxy) == 1.0


def test_workflow_proxy_down_raises_not_zero(proxy):
    from referee.errors import PolicyError

    with pytest.raises(PolicyError):
        run_workflow(RefereeWorkflow(model="down", max_infra_retries=0), areal_row(TRAIN[0]), proxy)


def test_workflow_runs_a_domain_task_in_its_domains_environment(proxy):
    """A tool world's task (toolworld needs only sqlite3 and pydantic, both in this venv): the
    episode runs in its world with the world's tools offered; the reference plan earns 1, an
    answer without a tool call 0."""
    import json

    from referee.domains import generate_family

    task = generate_family("shop-refund", count=1, seed=0)[0]
    plan = json.loads(task.hidden["reference"])
    proxy.plans[task.prompt[-1].content] = plan
    wf = RefereeWorkflow([task], model="plan-agent", max_turns=len(plan) + 2)
    assert run_workflow(wf, areal_row(task), proxy) == 1.0
    last = proxy.requests[-1]
    tools = {tool["function"]["name"] for tool in last["tools"]}
    assert {"find_customer", "refund_order"} <= tools and "write_file" not in tools
    assert sum(m["role"] == "tool" for m in last["messages"]) == len(plan)
    assert run_workflow(RefereeWorkflow([task], model="echo"), areal_row(task), proxy) == 0.0
