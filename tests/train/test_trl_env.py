"""environment_class: TRL's environment_factory contract over referee's environments.

Unit tests drive the generated class by hand (tools, reset, rewards, infrastructure errors);
two short GRPOTrainer runs check the plumbing inside TRL: one with a random tiny model (which
calls no tool), one whose generation is scripted to call write_file then submit, so TRL's own
tool loop runs the sandboxed tools and scores a correct and a wrong answer.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from referee.envs import CodeEnv, CodeRuntime, Environment, StepResult, function_tool
from referee.envs.code_tools import TOOL_SCHEMAS
from referee.errors import ConfigError
from referee.tasks import Task, generate
from referee.train.trl_adapter import tasks_dataset
from referee.train.trl_env import TRLEnvironment, environment_class
from referee.verify.verdict import Verdict

WRONG_BODY = "    return 12345\n"


def _solution(task: Task, body: str | None = None) -> str:
    """A whole solution.py: the code prompt and a body (default: the reference)."""
    return task.payload["code_prompt"] + (task.hidden["reference"] if body is None else body)


def _conversational(tasks):
    return tasks_dataset(tasks, prompt=lambda t: [m.model_dump() for m in t.prompt])


@pytest.fixture(scope="module")
def runtime(harness_sb):
    rt = CodeRuntime(sandbox=harness_sb)
    yield rt
    rt.close()


@pytest.fixture(scope="module")
def tasks(harness_sb):
    """Two recorded train tasks, and a held-out one."""
    from referee.verify.record import record_function_tasks

    drafts = [
        generate("list-pipeline", difficulty=0.3, seed=11),
        generate("recurrence", difficulty=0.3, seed=13),
        generate("string-pipeline", difficulty=0.3, seed=12, split="heldout"),
    ]
    return record_function_tasks(harness_sb, drafts)


@pytest.fixture
def env_class(runtime, tasks):
    cls = environment_class(lambda rt: CodeEnv(rt, single_turn=False), tasks, runtime=runtime)
    yield cls
    cls.shutdown()


# ---- the generated class ------------------------------------------------------------------


def test_tools_are_real_functions_that_get_json_schema_reads(env_class):
    from transformers.utils import get_json_schema

    # What TRL looks at: public functions of the class, reset and get_reward set apart.
    public = {n for n, _ in inspect.getmembers(env_class, inspect.isfunction) if n[0] != "_"}
    assert public == {*TOOL_SCHEMAS, "reset", "get_reward"}
    assert env_class.__name__ == "RefereeEnv" and issubclass(env_class, TRLEnvironment)
    instance = env_class()  # no arguments, as TRL makes them
    for name, schema in TOOL_SCHEMAS.items():
        want = schema["function"]
        got = get_json_schema(getattr(instance, name))["function"]
        assert got["name"] == name and got["description"] == want["description"]
        params = got["parameters"]
        assert set(params.get("required", [])) == set(want["parameters"]["required"]), name
        assert set(params["properties"]) == set(want["parameters"]["properties"]), name
        for key, prop in want["parameters"]["properties"].items():
            assert params["properties"][key]["type"] == prop["type"], (name, key)
            assert params["properties"][key]["description"], (name, key)
    sig = inspect.signature(env_class.read_file)
    assert str(sig) == (
        "(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str"
    )
    assert "Args:" in env_class.write_file.__doc__ and "Returns:" in env_class.write_file.__doc__
    assert env_class.write_file.__annotations__ == {"path": str, "content": str, "return": str}


def test_reset_refuses_held_out_unknown_and_missing_tasks(env_class, tasks):
    env = env_class()
    heldout = tasks[2]
    assert heldout.split == "heldout"
    with pytest.raises(ConfigError, match="held out"):
        env.reset(task_id=heldout.id, prompt=[{"role": "user", "content": "x"}])
    with pytest.raises(ConfigError, match="was not given task"):
        env.reset(task_id="proc/nope-v1")
    with pytest.raises(ConfigError, match="no 'task_id'"):
        env.reset(prompt=[{"role": "user", "content": "x"}])
    with pytest.raises(ConfigError, match="held-out"):
        env_class.dataset([heldout])
    with pytest.raises(ConfigError, match="reset"):
        env.get_reward()  # no episode yet


def test_scripted_episodes_are_judged_by_the_verifier(env_class, tasks):
    task = tasks[0]
    row = _conversational([task])[0]
    env = env_class()

    # The dataset holds the task's prompt; reset adds the environment's system instructions.
    added = env.reset(**row)
    assert added is not None and added.startswith("\n\n") and "solution.py" in added
    assert "wrote" in env.write_file(path="solution.py", content=_solution(task))
    assert "visible tests" in env.run_tests()
    assert "7" in env.run_python(code="print(3 + 4)")
    after_tests = env.sandbox
    assert after_tests.runs >= 1 and after_tests.cpu_s > 0  # run_python ran in the sandbox
    assert env.submit() == "submitted"
    assert env.submit().startswith("not run: the episode is over (submitted)")
    assert env.get_reward() == 1.0
    assert env.verdict is not None and env.verdict.passed
    assert env.metrics["tool_calls"] >= 4.0
    # The episode's sandbox cost: the tool's runs and the verification's, metered across the
    # environment's loop thread.
    assert env.verdict.sandbox is not None and env.verdict.sandbox.runs >= 1
    assert env.sandbox.runs >= after_tests.runs + env.verdict.sandbox.runs

    # The same instance again, as TRL's pool reuses it: the previous episode is closed.
    first = env._sync
    assert env.reset(**row) is not None
    assert first is not None and first._loop.is_closed()
    assert "wrote" in env.write_file("solution.py", _solution(task, WRONG_BODY))  # positional
    assert env.submit() == "submitted"
    reward = env.get_reward()
    assert reward is not None and reward < 1.0 and env.verdict is not None
    assert env.verdict.infra_error is None and not env.verdict.passed

    # Without submit the workspace as it stands is judged (the model's last message, which
    # holds no tool call, never reaches the environment).
    env.reset(**row)
    assert env.sandbox.runs == 0  # a new episode's cost starts from nothing
    env.write_file(path="solution.py", content=_solution(task))
    assert env.get_reward() == 1.0
    assert env_class.episodes == 3 and env_class.reward_calls == 3
    assert env_class.infra_errors == 0


def test_model_mistakes_are_observations_not_exceptions(env_class, tasks):
    env = env_class()
    env.reset(task_id=tasks[0].id)
    assert env.read_file(path="nope.py").startswith("error: no file")
    # Arguments the schema does not know reach the environment, which tells the model.
    assert env.read_file(path="solution.py", colour="red").startswith("error: unknown argument")
    assert env.read_file(path="solution.py", start_line=None) == tasks[0].payload["code_prompt"]
    with pytest.raises(TypeError):
        env.write_file("a", "b", "c")


def test_dataset_rows_hold_the_opening_so_reset_adds_nothing(env_class, tasks):
    ds = env_class.dataset()  # the train tasks only
    assert ds["task_id"] == [tasks[0].id, tasks[1].id]
    prompt = ds[0]["prompt"]
    assert [m["role"] for m in prompt] == ["system", "user"]
    assert "solution.py" in prompt[0]["content"]
    assert prompt[1]["content"] == tasks[0].prompt[0].content
    env = env_class()
    assert env.reset(**ds[0]) is None
    # TRL's placeholder prompt (no dataset): the whole opening becomes the user message.
    text = env.reset(task_id=tasks[0].id, prompt=[{"role": "user", "content": ""}])
    assert text == prompt[0]["content"] + "\n\n" + prompt[1]["content"]


def test_tools_must_not_change_at_reset(runtime, tasks):
    # CodeEnv's single_turn=None shows tools before reset and none on a function task.
    cls = environment_class(lambda rt: CodeEnv(rt, single_turn=None), tasks, runtime=runtime)
    with pytest.raises(ConfigError, match="single_turn=False"):
        cls().reset(task_id=tasks[0].id)
    cls.shutdown()


# ---- infrastructure errors ----------------------------------------------------------------


class _Flaky:
    """A FunctionVerifier stand-in whose first ``failures`` verdicts are infrastructure errors."""

    def __init__(self, real: Any, failures: int) -> None:
        self.real, self.failures, self.sandbox = real, failures, real.sandbox

    def verify(self, task: Task, answer: str) -> Verdict:
        if self.failures > 0:
            self.failures -= 1
            return Verdict.infra(task.id, "the sandbox went away", "flaky")
        return self.real.verify(task, answer)


def _flaky_episode(verifier, tasks, failures, **kw):
    flaky = _Flaky(verifier, failures)
    rt = CodeRuntime(sandbox=verifier.sandbox, function_verifier=flaky)
    cls = environment_class(lambda r: CodeEnv(r, single_turn=False), tasks, runtime=rt, **kw)
    env = cls()
    env.reset(task_id=tasks[0].id)
    env.write_file(path="solution.py", content=_solution(tasks[0]))
    env.submit()
    try:
        return cls, env, env.get_reward()
    finally:
        cls.shutdown()
        rt.close()


def test_an_infra_error_is_retried_once_from_a_fresh_environment(verifier, tasks):
    # CodeEnv caches its verdict; the retry restores the episode's snapshot elsewhere.
    cls, env, reward = _flaky_episode(verifier, tasks, failures=1)
    assert reward == 1.0 and cls.infra_errors == 0 and env.infra_error == ""


def test_a_persistent_infra_error_drops_the_rollout_and_is_counted(verifier, tasks, caplog):
    with caplog.at_level(logging.WARNING, logger="referee.train.trl_env"):
        cls, env, reward = _flaky_episode(verifier, tasks, failures=2)
    assert reward is None  # NaN in TRL: left out of the group's baseline, advantage 0
    assert cls.infra_errors == 1 and env.verdict is None
    assert "sandbox went away" in env.infra_error
    assert any("infrastructure error" in r.getMessage() for r in caplog.records)
    cls, env, reward = _flaky_episode(verifier, tasks, failures=2, infra_reward=0.0)
    assert reward == 0.0 and cls.infra_errors == 1


# ---- any environment: JSON types, names ---------------------------------------------------


class _EchoEnv(Environment):
    """No sandbox: one tool of every JSON type, answering with its arguments."""

    name = "echo"
    schemas = [
        function_tool(
            "probe",
            "Echo the arguments.",
            {
                "x": {"type": "number", "description": "a number"},
                "flag": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "extra": {"type": "object"},
            },
            required=["x", "mode"],
        )
    ]

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.failures = 0
        self._done = False

    async def reset(self, task: Task) -> list[dict[str, Any]]:
        return [{"role": "system", "content": "Use probe."}, *(m.model_dump() for m in task.prompt)]

    def tools(self) -> list[dict[str, Any]]:
        return self.schemas

    async def step(self, message: dict[str, Any]) -> StepResult:
        call = message["tool_calls"][0]
        if call["function"]["arguments"].get("x") == -1:
            raise RuntimeError("the sandbox died")
        self.calls.append(call["function"]["arguments"])
        content = json.dumps(call["function"]["arguments"], sort_keys=True)
        return StepResult([{"role": "tool", "tool_call_id": call["id"], "content": content}], False)

    @property
    def done(self) -> bool:
        return self._done

    async def verify(self) -> Verdict:
        if _EchoEnv.fail_next:
            _EchoEnv.fail_next -= 1
            raise RuntimeError("the judge crashed")
        return Verdict(task_id="echo", reward=min(1.0, len(self.calls) / 2), passed=False)

    fail_next = 0


def test_json_types_round_trip_through_the_signature():
    from transformers.utils import get_json_schema

    task = Task.create(name="demo/echo-v1", prompt="Probe twice.", answer_format="text")
    cls = environment_class(lambda rt: _EchoEnv(), [task], name="EchoEnv")
    schema = get_json_schema(cls.probe)["function"]["parameters"]
    props = schema["properties"]
    assert schema["required"] == ["x", "mode"]
    assert props["x"]["type"] == "number" and props["flag"]["type"] == "boolean"
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["ids"] == {
        "type": "array",
        "items": {"type": "integer"},
        "nullable": True,
        "description": "the ids (optional)",
    }
    assert props["extra"]["type"] == "object"
    env = cls()
    assert env.reset(task_id=task.id) == "Use probe.\n\nProbe twice."  # no prompt: the opening
    assert json.loads(env.probe(x=1.5, mode="fast", ids=[1, 2])) == {
        "x": 1.5,
        "mode": "fast",
        "ids": [1, 2],
    }
    # No snapshots in this environment: the retry verifies the same one again.
    _EchoEnv.fail_next = 1
    assert env.get_reward() == 0.5 and cls.infra_errors == 0
    _EchoEnv.fail_next = 2
    assert env.get_reward() is None and cls.infra_errors == 1
    assert "the judge crashed" in env.infra_error
    # A step that raises: the episode is not judged, later calls do not run.
    env.reset(task_id=task.id)
    assert "environment failed" in env.probe(x=-1, mode="slow")
    assert env.probe(x=1, mode="slow").startswith("not run")
    assert env.get_reward() is None and cls.infra_errors == 2
    assert "the sandbox died" in env.infra_error
    cls.shutdown()


def test_tool_names_that_would_shadow_the_class_are_refused():
    class Clash(_EchoEnv):
        schemas = [function_tool("reset", "Start over.")]

    with pytest.raises(ConfigError, match="reserved"):
        environment_class(lambda rt: Clash(), [])

    class Keyword(_EchoEnv):
        schemas = [function_tool("pick", "Pick.", {"from": {"type": "string"}})]

    with pytest.raises(ConfigError, match="'from'"):
        environment_class(lambda rt: Keyword(), [])
    with pytest.raises(ConfigError, match="identifier"):
        environment_class(lambda rt: _EchoEnv(), [], name="my env")


# ---- inside TRL's GRPOTrainer -------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tasks):
    """A local tokenizer with Qwen2.5's chat template and tool tokens, and a tiny Llama."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local; never wait on the Hub
    pytest.importorskip("trl")
    import torch
    import trl
    from trl.chat_template_utils import add_response_schema, supports_tool_calling

    from referee.envs.code import FUNCTION_SYSTEM
    from referee.experiments.listops.tiny import TinyConfig, tiny_model, train_tokenizer

    torch.set_num_threads(1)
    template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    texts = [FUNCTION_SYSTEM, template, json.dumps(list(TOOL_SCHEMAS.values()))]
    texts += [t.prompt[0].content + _solution(t) for t in tasks]
    tok = train_tokenizer(texts * 4, vocab_size=600)
    # TRL's tool loop needs a template it knows (for its response parser) and these as tokens.
    tok.add_special_tokens(
        {
            "additional_special_tokens": [
                "<tool_call>",
                "</tool_call>",
                "<tool_response>",
                "</tool_response>",
            ]
        }
    )
    tok.chat_template = template
    add_response_schema(tok)
    assert supports_tool_calling(tok)

    def model():
        # The prompt (system, six tool schemas, task) is about 1,500 tokens of this vocabulary.
        return tiny_model(tok, TinyConfig(hidden=32, layers=2, heads=4, ffn=64, max_positions=4096))

    return tok, model


def _train(tiny, env_class, dataset, tmp_path, *, max_completion_length, generate=None):
    from trl import GRPOConfig, GRPOTrainer

    tok, make_model = tiny
    model = make_model()
    if generate is not None:
        model.generate = generate
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=max_completion_length,
        max_steps=2,
        max_tool_calling_iterations=3,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        args=args,
        processing_class=tok,
        train_dataset=dataset,
        environment_factory=env_class,
    )
    trainer.train()
    logs = [h for h in trainer.state.log_history if "rewards/RefereeEnv/mean" in h]
    changed = any(not p.detach().equal(before[n]) for n, p in model.named_parameters())
    return logs, changed


def test_grpo_trainer_runs_the_environment(tiny, env_class, tasks, tmp_path):
    # A random model calls no tool: the plumbing is what is checked, not learning.
    logs, _ = _train(
        tiny, env_class, _conversational(tasks[:2]), tmp_path, max_completion_length=24
    )
    assert len(logs) == 2
    assert env_class.episodes == 4 and env_class.reward_calls == 4
    assert env_class.infra_errors == 0
    assert all(h["tools/call_frequency"] == 0.0 for h in logs)
    assert all(h["rewards/RefereeEnv/mean"] == 0.0 for h in logs)  # the bare code prompt fails


def test_grpo_trainer_runs_tool_calls_through_the_sandbox(tiny, env_class, tasks, tmp_path):
    """Generation is scripted (write_file, submit, a last word), the rest is TRL's own loop:
    its response parser, the tool dispatch to the class, the tool results in the sequence."""
    import torch

    tok, _ = tiny
    eos = tok.convert_tokens_to_ids("<|im_end|>")

    def call(name: str, **arguments: Any) -> str:
        return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"

    def generate(input_ids, attention_mask=None, **kwargs):
        rows = []
        for i, ids in enumerate(input_ids):
            text = tok.decode(ids)
            task = next(t for t in tasks if t.payload["code_prompt"] in text)
            turn = text.count("<tool_response>")
            if turn == 0:  # of each group of two, the first is right and the second wrong
                body = None if i % 2 == 0 else WRONG_BODY
                script = call("write_file", path="solution.py", content=_solution(task, body))
            elif turn == 1:
                script = call("submit")
            else:
                script = "done"
            rows.append([*tok(script, add_special_tokens=False).input_ids, eos])
        width = max(map(len, rows))
        new = [r + [tok.pad_token_id] * (width - len(r)) for r in rows]
        return torch.cat([input_ids, torch.tensor(new, dtype=input_ids.dtype)], dim=1)

    logs, changed = _train(
        tiny, env_class, env_class.dataset(), tmp_path, max_completion_length=400, generate=generate
    )
    assert len(logs) == 2
    for h in logs:
        assert h["tools/call_frequency"] == 2.0 and h["tools/failure_frequency"] == 0.0
        assert h["rewards/RefereeEnv/mean"] == 0.5  # 1.0 and 0.0 in every group
    assert env_class.reward_calls == 4 and env_class.infra_errors == 0
    assert changed  # rewards that differ within a group give a gradient
