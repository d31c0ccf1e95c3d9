"""The trainer adapters' own parts, without the trainer packages (SkyRL, verifiers, AReaL run
their contract tests in their own venvs: tests/trainers/, scripts/run-trainer-tests.sh)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from referee.errors import ConfigError
from referee.tasks.model import read_tasks
from referee.train import areal, lookup, rllm, skyrl
from referee.train.text_actions import observation_text, parse_text_action, tools_prompt
from referee.verify.redteam import EXPLOITS

FIXTURE = Path(__file__).parents[1] / "trainers" / "fixtures" / "he3.jsonl"
TASKS = read_tasks(FIXTURE)
TRAIN = [t for t in TASKS if t.split == "train"]
HELDOUT = next(t for t in TASKS if t.split != "train")
EXPLOIT = {e.name: e for e in EXPLOITS}


def gold(task) -> str:
    return "```python\n" + task.payload["code_prompt"] + task.hidden["reference"] + "```"


def exploit(task, name) -> str:
    return "```python\n" + task.payload["code_prompt"] + EXPLOIT[name].completion(task) + "```"


@pytest.fixture(autouse=True)
def task_file(monkeypatch):
    monkeypatch.setenv(lookup.TASKS_ENV, str(FIXTURE))


# ---- rows ------------------------------------------------------------------------------------
def test_rows_carry_the_task_id_and_never_hidden_data():
    t = TRAIN[0]
    rows = [skyrl.skyrl_row(t, 4), rllm.rllm_row(t, 4), areal.areal_row(t, 4)]
    for row in rows:
        text = json.dumps(row)
        assert t.hidden["reference"].strip() not in text
        assert lookup.task_id_of(row) == t.id
    sk, rl, ar = rows
    assert sk["env_class"] == "referee" and sk["reward_spec"]["ground_truth"] == t.id
    assert sk["extra_info"] == {"index": 4, "task_id": t.id, "split": "train"}
    assert sk["prompt"] == [m.model_dump() for m in t.prompt]
    assert rl["question"] == t.prompt[-1].content and rl["ground_truth"] == t.id
    assert ar["messages"] == sk["prompt"] and ar["task_id"] == t.id


def test_skyrl_row_of_a_heldout_task_names_the_evaluation_env():
    assert skyrl.skyrl_row(HELDOUT)["env_class"] == "referee-eval"
    assert skyrl.skyrl_row(HELDOUT, env_class="x")["env_class"] == "x"


# ---- finding the task ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "row",
    [
        {"task_id": "A"},
        {"extra_info": {"task_id": "A"}},
        {"reward_spec": {"ground_truth": "A"}},
        {"reward_model": {"ground_truth": "A"}, "extra_info": {"index": 0}},
        {"ground_truth": "A"},
    ],
)
def test_task_id_of_each_trainers_row(row):
    assert lookup.task_id_of(row) == "A"


def test_missing_id_file_or_task_are_errors(monkeypatch):
    with pytest.raises(ConfigError, match="names no referee task"):
        lookup.task_id_of({"prompt": "x"})
    with pytest.raises(ConfigError, match="HumanEval/99"):
        lookup.resolve_task({"task_id": "HumanEval/99"})
    monkeypatch.delenv(lookup.TASKS_ENV)
    with pytest.raises(ConfigError, match="REFEREE_TASKS"):
        lookup.resolve_task({"task_id": "HumanEval/0"})
    assert lookup.resolve_task({"task_id": "HumanEval/0"}, TASKS).id == "HumanEval/0"
    inline = {"task": TASKS[1].model_dump(mode="json")}
    assert lookup.resolve_task(inline).content_hash == TASKS[1].content_hash


def test_check_split():
    lookup.check_split(TRAIN[0], allow_heldout=False)
    lookup.check_split(HELDOUT, allow_heldout=True)
    with pytest.raises(ConfigError, match="held out"):
        lookup.check_split(HELDOUT, allow_heldout=False)


# ---- text actions ----------------------------------------------------------------------------
def test_parse_text_action_reads_hermes_tool_calls():
    text = (
        "Plan.\n<tool_call>\n"
        '{"name": "write_file", "arguments": {"path": "a.py", "content": "x = 1"}}\n'
        '</tool_call>\n<tool_call>{"name": "submit", "arguments": {}}</tool_call><|im_end|>'
    )
    msg = parse_text_action(text)
    assert msg["content"] == "Plan."
    fns = [c["function"] for c in msg["tool_calls"]]
    assert [f["name"] for f in fns] == ["write_file", "submit"]
    assert json.loads(fns[0]["arguments"]) == {"path": "a.py", "content": "x = 1"}
    assert [c["id"] for c in msg["tool_calls"]] == ["call_0", "call_1"]


def test_parse_text_action_malformed_calls_become_reportable_calls():
    from referee.envs.tools import parse_tool_calls

    broken = parse_text_action('<tool_call>{"name": "write_file", "arguments": {</tool_call>')
    [call] = parse_tool_calls(broken)
    assert call.name == "write_file" and "not valid JSON" in call.error
    nameless = parse_text_action('<tool_call>{"arguments": {}}</tool_call>')
    assert "needs" in parse_tool_calls(nameless)[0].error
    # An unterminated block (out of tokens) still counts.
    cut = parse_text_action('<tool_call>{"name": "submit", "arguments": {}}')
    assert cut["tool_calls"][0]["function"]["name"] == "submit"


def test_parse_text_action_plain_text_has_no_tool_calls():
    msg = parse_text_action("```python\nreturn 1\n```</s>")
    assert msg == {"role": "assistant", "content": "```python\nreturn 1\n```"}


def test_tools_prompt_and_observation_text():
    from referee.envs.code_tools import TOOL_SCHEMAS

    offer = tools_prompt(list(TOOL_SCHEMAS.values()))
    listed = offer.split("<tools>\n")[1].split("\n</tools>")[0].splitlines()
    assert [json.loads(line)["name"] for line in listed] == list(TOOL_SCHEMAS)
    assert '<tool_call>\n{"name": <function-name>' in offer
    obs = observation_text(
        [
            {"role": "tool", "tool_call_id": "c", "name": "run_python", "content": "exit 0"},
            {"role": "user", "content": "No tool call found."},
        ]
    )
    assert obs == "<tool_response>\nexit 0\n</tool_response>\nNo tool call found."


# ---- rewards ---------------------------------------------------------------------------------
@pytest.mark.parametrize("task", TRAIN, ids=[t.id for t in TRAIN])
def test_areal_reward_gold_is_1_with_eos_text(task):
    row = areal.areal_row(task)
    assert areal.reward_fn("p", gold(task) + "<|im_end|>", [1], [2], **row) == 1.0


@pytest.mark.parametrize("answer", ["", "return None", "always-equal-object", "sys-exit-at-import"])
def test_areal_reward_wrong_and_exploits_are_0(answer):
    t = TRAIN[0]
    text = exploit(t, answer) if answer in EXPLOIT else answer
    assert areal.reward_fn("p", text, [1], [2], **areal.areal_row(t)) == 0.0


def test_areal_reward_refuses_heldout_and_eval_reward_takes_it():
    row = areal.areal_row(HELDOUT)
    with pytest.raises(ConfigError, match="held out"):
        areal.reward_fn("p", gold(HELDOUT), [1], [2], **row)
    assert areal.eval_reward_fn("p", gold(HELDOUT), [1], [2], **row) == 1.0


def test_areal_reward_is_picklable_by_reference():
    import pickle

    assert pickle.loads(pickle.dumps(areal.reward_fn)) is areal.reward_fn


def test_persistent_infra_error_raises(monkeypatch):
    from referee.errors import VerifierError
    from referee.verify.verdict import Verdict

    calls = []

    class Broken:
        def verify(self, task, answer):
            calls.append(answer)
            return Verdict(task_id=task.id, passed=False, reward=0.0, infra_error="sandbox died")

    with pytest.raises(VerifierError, match="sandbox died"):
        lookup.verify_answer(TRAIN[0], "x", runtime=Broken())  # type: ignore[arg-type]
    assert len(calls) == 3


# ---- the SkyRL episode, without skyrl_gym ----------------------------------------------------
def episode(task, **kw):
    extras = {**skyrl.skyrl_row(task), "max_turns": kw.pop("max_turns", 1)}
    return skyrl.TextEpisode(extras, **kw)


def test_text_episode_single_turn():
    t = TRAIN[1]
    ep = episode(t)
    prompt = skyrl.skyrl_row(t)["prompt"]
    assert ep.init(prompt) == (prompt, {"task_id": t.id, "multi_turn": False})
    obs, reward, done, meta = ep.step(gold(t))
    assert (obs, reward, done, meta["passed"]) == ([], 1.0, True, True)
    with pytest.raises(ConfigError, match="over"):
        ep.step(gold(t))
    ep = episode(t)
    ep.init(prompt)
    assert ep.step(exploit(t, "always-equal-object"))[1:3] == (0.0, True)
    with pytest.raises(ConfigError, match="held out"):
        episode(HELDOUT)
    assert episode(HELDOUT, allow_heldout=True).step(gold(HELDOUT))[1] == 1.0


def test_text_episode_multi_turn_with_text_tool_calls():
    t = TRAIN[2]
    ep = episode(t, multi_turn=True, max_turns=3)
    messages, meta = ep.init(skyrl.skyrl_row(t)["prompt"])
    assert meta["multi_turn"] and messages[0]["role"] == "system"
    assert "<tools>" in messages[0]["content"] and "truncate_number" in messages[-1]["content"]
    solution = t.payload["code_prompt"] + t.hidden["reference"]
    call = {"name": "write_file", "arguments": {"path": "solution.py", "content": solution}}
    obs, reward, done, _ = ep.step(f"<tool_call>{json.dumps(call)}</tool_call>")
    assert (reward, done) == (0.0, False) and obs[0]["role"] == "user"
    assert "<tool_response>" in obs[0]["content"]
    obs, reward, done, meta = ep.step('<tool_call>{"name": "submit"}</tool_call>')
    assert (obs, reward, done, meta["reason"]) == ([], 1.0, True, "submitted")
    ep.close()
    ep.close()


def test_skyrl_module_imports_without_skyrl_gym():
    mod = importlib.import_module("referee.train.skyrl")
    assert mod.ENTRY_POINT == "referee.train.skyrl:RefereeEnv"
    try:
        import skyrl_gym  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            mod.RefereeEnv  # noqa: B018 (the lazy attribute needs skyrl_gym)
    with pytest.raises(AttributeError):
        mod.NoSuchThing  # noqa: B018
