"""The domains' tasks reach the trainers and the service: one generated task of each domain
kind (sql, dataframe, numeric, shell, toolworld, verilog), judged through TRL's reward function, veRL's
``compute_score``, a real ``referee serve`` on loopback (``/v1/verify`` and multi-turn sessions
of the ``toolworld`` and ``sql`` environments), TRL's ``environment_factory`` class over
``make_env("toolworld")``, and the environment veRL's agent loop and AReaL's workflow run a
domain's episode in (``lookup.task_env``; AReaL's workflow end to end on sql and shell).

Gold answers come from ``gold_samples`` and are written as a model would write them: a fenced
block with prose around it for the code kinds, a ``bash`` block for shell, hermes
``<tool_call>`` blocks for toolworld. One :class:`VerifierSet` serves the in-process checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from referee.domains import generate_family
from referee.tasks.model import Task, write_tasks
from referee.verify.dispatch import VerifierSet
from referee.verify.samples import gold_samples

#: One small family per domain kind.
FAMILIES = {
    "sql": "sql-filter",
    "dataframe": "df-clean",
    "numeric": "num-root",
    "shell": "ops-permissions",
    "toolworld": "shop-refund",
    "verilog": "v-comb",
    "lab": "lab-population",
}
KINDS = list(FAMILIES)
_FENCE = {
    "sql": "sql",
    "dataframe": "python",
    "numeric": "python",
    "verilog": "verilog",
    "shell": "bash",
    "lab": "json",
}
WRONG = ["", "I am not sure how to do this; sorry."]


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    out = {}
    for kind, family in FAMILIES.items():
        [task] = generate_family(family, count=1, seed=0)
        assert task.kind.value == kind and task.split == "train"
        out[kind] = task
    return out


@pytest.fixture(scope="module")
def gold(tasks: dict[str, Task]) -> dict[str, str]:
    by_id = {s["task_id"]: s["completion"] for s in gold_samples(tasks.values())}
    return {kind: by_id[t.id] for kind, t in tasks.items()}


def written(kind: str, answer: str) -> str:
    """``answer`` as a model writes it: prose, the block (or the tool calls), prose."""
    if kind == "toolworld":
        calls = "".join(f"<tool_call>{json.dumps(c)}</tool_call>\n" for c in json.loads(answer))
        return f"I'll look the order up and refund it.\n{calls}"
    body = answer if answer.endswith("\n") else answer + "\n"
    return f"Here is my answer.\n\n```{_FENCE[kind]}\n{body}```\n\nThat should do it."


@pytest.fixture(scope="module")
def verifiers() -> Iterator[VerifierSet]:
    with VerifierSet() as v:
        yield v


# ---- TRL: the reward function --------------------------------------------------------------
def test_trl_reward_scores_gold_one_and_wrong_zero(tasks, gold, verifiers):
    from referee.train.trl_adapter import reward_function, tasks_dataset

    reward = reward_function(verifiers, list(tasks.values()))
    ids, texts, expected = [], [], []
    for kind, task in tasks.items():
        for text, want in [(written(kind, gold[kind]), 1.0)] + [(w, 0.0) for w in WRONG]:
            ids.append(task.id)
            texts.append(text)
            expected.append(want)
    # Conversational completions, as TRL gives them for a chat dataset.
    completions = [[{"role": "assistant", "content": t}] for t in texts]
    got = reward(prompts=[None] * len(ids), completions=completions, task_id=ids)
    assert got == expected, list(zip(ids, got, expected, strict=True))
    # The raw gold (a plain-text completion) scores too, with the end-of-turn token a decode
    # without skip_special_tokens leaves.
    raw = reward(
        prompts=[None] * len(KINDS),
        completions=[gold[k] + "<|im_end|>" for k in KINDS],
        task_id=[tasks[k].id for k in KINDS],
    )
    assert raw == [1.0] * len(KINDS)
    # The dataset's rows: the tasks' chat messages (a domain task has no code prompt).
    rows = tasks_dataset(list(tasks.values()))
    assert [r["task_id"] for r in rows] == [t.id for t in tasks.values()]
    assert all(r["prompt"][-1]["role"] == "user" for r in rows)


# ---- veRL: compute_score on exported rows ----------------------------------------------------
@pytest.fixture
def verl_verifiers(verifiers: VerifierSet) -> Iterator[VerifierSet]:
    from referee.train import verl

    verl.set_verifiers(verifiers)
    yield verifiers
    verl.set_verifiers(None)


def test_verl_compute_score_scores_gold_one_and_empty_zero(tasks, gold, verl_verifiers):
    from referee.tasks.trainer_rows import verl_row
    from referee.train.verl import compute_score, compute_score_batch

    rows = {kind: verl_row(task, i) for i, (kind, task) in enumerate(tasks.items())}
    for kind, row in rows.items():
        args = (row["data_source"], written(kind, gold[kind]))
        truth, extra = row["reward_model"]["ground_truth"], row["extra_info"]
        scores = compute_score(*args, truth, extra)
        assert scores["score"] == 1.0 and scores["passed"] == 1.0, (kind, scores)
        assert compute_score(row["data_source"], "", truth, extra)["score"] == 0.0, kind
    # The batch form, one wrong answer per kind.
    batch = compute_score_batch(
        [r["data_source"] for r in rows.values()],
        [WRONG[1]] * len(rows),
        [r["reward_model"]["ground_truth"] for r in rows.values()],
        [r["extra_info"] for r in rows.values()],
    )
    assert [s["score"] for s in batch] == [0.0] * len(rows)


# ---- the service: /v1/verify and sessions over HTTP -----------------------------------------
@pytest.fixture(scope="module")
def task_file(tasks: dict[str, Task], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path: Path = tmp_path_factory.mktemp("domains") / "tasks.jsonl"
    write_tasks(path, list(tasks.values()))
    return path


@pytest.fixture(scope="module")
def served(task_file: Path) -> Iterator[str]:
    from referee.service import ServeConfig, Service, running

    config = ServeConfig(
        tasks=(str(task_file),), workers=2, no_auth=True, compat=("openrlhf", "nemo-gym")
    )
    with running(Service.start(config)) as url:
        yield url


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def test_service_judges_each_domain_kind(tasks, gold, served):
    from referee.service.client import Client

    samples = []
    for kind, task in tasks.items():
        samples.append({"task_id": task.id, "completion": written(kind, gold[kind])})
        samples.append({"task_id": task.id, "completion": ""})
    with Client(served) as client:
        listed = {t["id"]: t["kind"] for t in client.tasks()}
        assert listed == {t.id: kind for kind, t in tasks.items()}
        verdicts = client.verify(samples)
    got = [(v.task_id, v.passed, v.reward) for v in verdicts]
    want = [(s["task_id"], bool(s["completion"]), float(bool(s["completion"]))) for s in samples]
    assert got == want
    assert not any(v.infra_error for v in verdicts)
    # A reward protocol (OpenRLHF's remote reward): the decoded prompt and response, end
    # tokens kept; the server reads the answer out of it as veRL's route does.
    prompt = "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n"
    for kind in ("sql", "toolworld"):
        for text, want_reward in [(written(kind, gold[kind]), 1.0), ("", 0.0)]:
            body = {
                "query": [prompt + text + "<|im_end|>"],
                "prompts": [prompt],
                "labels": [tasks[kind].id],
            }
            reply = httpx.post(f"{served}/openrlhf/reward", json=body, timeout=60)
            assert reply.status_code == 200, reply.text
            assert reply.json()["rewards"] == [want_reward], (kind, reply.json())


def test_service_runs_a_toolworld_episode(tasks, gold, served):
    from referee.service.client import Client

    task = tasks["toolworld"]
    with Client(served) as client:
        opened = client.open_session("toolworld", task.id)
        names = {t["function"]["name"] for t in opened.tools}
        calls = json.loads(gold["toolworld"])
        assert {c["name"] for c in calls} <= names
        for i, call in enumerate(calls):
            step = client.step(opened.session_id, _call(f"c{i}", call["name"], call["arguments"]))
            assert not step.done and "error" not in str(step.observations[0]["content"])[:6]
        # A message without a tool call ends the episode; the store is judged, not the words.
        final = client.step(opened.session_id, {"role": "assistant", "content": "Refunded."})
        assert final.done and final.reason == "answered"
        assert final.verdict is not None and final.verdict.reward == 1.0
        client.close_session(opened.session_id)
        # Doing nothing earns nothing.
        idle = client.open_session("toolworld", task.id)
        step = client.step(idle.session_id, {"role": "assistant", "content": "All done!"})
        assert step.done and step.verdict is not None and step.verdict.reward == 0.0
        client.close_session(idle.session_id)


def test_service_runs_a_sql_episode(tasks, gold, served):
    from referee.service.client import Client

    task = tasks["sql"]
    with Client(served) as client:
        opened = client.open_session("sql", task.id, {"max_turns": 4})
        assert {t["function"]["name"] for t in opened.tools} >= {"run_query", "submit"}
        step = client.step(opened.session_id, _call("c1", "run_query", {"query": gold["sql"]}))
        assert not step.done and "error" not in str(step.observations[0]["content"])[:6]
        step = client.step(opened.session_id, _call("c2", "submit", {"query": gold["sql"]}))
        assert step.done and step.reason == "submitted"
        assert step.verdict is not None and step.verdict.reward == 1.0
        client.close_session(opened.session_id)


def test_service_runs_a_shell_episode_and_refuses_options_an_env_lacks(tasks, gold, served):
    from referee.service.client import Client
    from referee.service.errors import InvalidRequest

    task = tasks["shell"]
    with Client(served) as client:
        opened = client.open_session("shell", task.id)
        lines = [ln for ln in gold["shell"].splitlines() if ln.strip()]
        for i, line in enumerate(lines):
            step = client.step(opened.session_id, _call(f"c{i}", "run", {"command": line}))
            assert not step.done, step.observations
        step = client.step(opened.session_id, _call("end", "submit", {}))
        assert step.done and step.verdict is not None and step.verdict.reward == 1.0
        client.close_session(opened.session_id)
        # CodeEnv's options are not every environment's: a clear refusal, not a TypeError.
        with pytest.raises(InvalidRequest, match="takes no option 'tools'"):
            client.open_session("sql", tasks["sql"].id, {"tools": ["submit"]})


# ---- TRL: environment_factory over a domain environment -------------------------------------
def test_trl_environment_class_drives_a_toolworld_episode(tasks, gold):
    from referee.envs import make_env
    from referee.train.trl_env import environment_class

    task = tasks["toolworld"]
    Env = environment_class(lambda rt: make_env("toolworld"), [task], name="ToolworldEnv")
    try:
        calls = json.loads(gold["toolworld"])
        assert {c["name"] for c in calls} <= set(Env.tool_names)
        [row] = Env.dataset()
        env = Env()
        assert env.reset(**row) is None  # the row holds the opening
        for call in calls:
            out = getattr(env, call["name"])(**call["arguments"])
            assert not out.startswith("error"), out
        assert env.get_reward() == 1.0
        env.reset(**row)  # a fresh episode: nothing done, nothing earned
        assert env.get_reward() == 0.0
    finally:
        Env.shutdown()


# ---- SkyRL: the text episode, single-turn and multi-turn ------------------------------------
def _hermes(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>\n"


def test_skyrl_text_episode_single_and_multi_turn(tasks, gold, task_file):
    from referee.train.skyrl import TextEpisode, skyrl_row

    for kind, task in tasks.items():
        row = skyrl_row(task)
        extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
        single = TextEpisode(extras, tasks=str(task_file), multi_turn=False)
        single.init(row["prompt"])
        assert single.step(written(kind, gold[kind]))[1:3] == (1.0, True), kind
        empty = TextEpisode(extras, tasks=str(task_file), multi_turn=False)
        empty.init(row["prompt"])
        assert empty.step("")[1:3] == (0.0, True), kind
    # Multi-turn (the default for a domain's task): the domain's environment, with the model's
    # tool calls in its text. A sql answer in one turn; a toolworld plan, then a final word.
    commands = "".join(_hermes("run", {"command": c}) for c in gold["shell"].splitlines())
    for kind, turns in [
        ("sql", [written("sql", gold["sql"])]),
        ("toolworld", [written("toolworld", gold["toolworld"]), "Refunded."]),
        ("shell", [commands, _hermes("submit", {})]),
    ]:
        row = skyrl_row(tasks[kind])
        extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
        episode = TextEpisode({**extras, "max_turns": 4}, tasks=str(task_file))
        try:
            assert episode.multi_turn
            episode.init(row["prompt"])
            rewards = [episode.step(text)[1:3] for text in turns]
        finally:
            episode.close()
        assert rewards[-1] == (1.0, True) and all(not d for _, d in rewards[:-1]), (kind, rewards)


def test_openrlhf_rows_offer_the_domain_environments_tools(tasks):
    from referee.train.openrlhf import openrlhf_row

    for kind, tool in [("sql", "run_query"), ("toolworld", "refund_order"), ("shell", "run")]:
        row = openrlhf_row(tasks[kind], multi_turn=True)
        offer = row["input"][0]["content"]
        assert row["input"][0]["role"] == "system" and f'"{tool}"' in offer, (kind, offer[:300])
        assert '"run_tests"' not in offer  # CodeEnv's tools are not this episode's


def test_trl_environment_class_drives_a_sql_episode_on_a_shared_verifier(tasks, gold, verifiers):
    from referee.envs import make_env
    from referee.tasks.kinds import TaskKind
    from referee.train.trl_env import environment_class

    # TRL makes an environment per episode: one verifier (one sandbox) serves them all.
    shared = verifiers.verifier(TaskKind.SQL)
    Env = environment_class(lambda rt: make_env("sql", verifier=shared), [tasks["sql"]])
    try:
        assert set(Env.tool_names) == {"run_query", "show_schema", "submit"}
        [row] = Env.dataset()
        env = Env()
        env.reset(**row)
        assert "error" not in env.run_query(query=gold["sql"])[:6]
        assert env.submit(query=gold["sql"]) == "submitted"
        assert env.get_reward() == 1.0
    finally:
        Env.shutdown()


def test_areal_reward_takes_raw_answers_with_end_tokens(tasks, gold, task_file, monkeypatch):
    from referee.train.areal import areal_row, reward_fn

    monkeypatch.setenv("REFEREE_TASKS", str(task_file))
    for kind, task in tasks.items():
        row = areal_row(task)
        assert reward_fn("p", gold[kind] + "<|im_end|>", [1], [2], **row) == 1.0, kind
        assert reward_fn("p", "<|im_end|>", [1], [2], **row) == 0.0, kind


# ---- veRL's agent loop and AReaL's workflow: the environment a task's kind calls for ----------
def test_task_env_makes_the_environment_of_the_tasks_kind(tasks):
    """``lookup.task_env``, what veRL's agent loop, AReaL's workflow and SkyRL's TextEpisode
    make their episodes in (veRL's loop itself runs only in the verl venv, which has no duckdb
    for sql: tests/trainers/test_verl_contract.py runs a toolworld episode there)."""
    import asyncio

    from referee.envs.base import EpisodeLimits
    from referee.envs.runtime import CodeRuntime
    from referee.tasks.kinds import TaskKind
    from referee.train.lookup import task_env

    code = read_tasks_he()[0]
    with CodeRuntime() as rt:
        limits = EpisodeLimits(max_turns=3)
        env = task_env(code, runtime=rt, limits=limits, tools=["write_file", "submit"])
        assert env.name == "code" and {t["function"]["name"] for t in env.tools()} == {
            "write_file",
            "submit",
        }
        sql = task_env(tasks["sql"], runtime=rt, limits=limits, tools=["write_file"])
        # The sql environment's own tools, and the runtime's verifier, shared by its episodes.
        assert sql.name == "sql" and sql.limits is limits
        assert {t["function"]["name"] for t in sql.tools()} == {
            "run_query",
            "show_schema",
            "submit",
        }
        assert sql.verifier is rt.verifiers.verifier(TaskKind.SQL)
        world = task_env(tasks["toolworld"], runtime=rt, limits=limits)
        assert world.name == "toolworld" and world.tools() == []  # known after the reset
        asyncio.run(world.reset(tasks["toolworld"]))
        assert "refund_order" in {t["function"]["name"] for t in world.tools()}
        asyncio.run(world.close())
        shell = task_env(tasks["shell"], runtime=rt, single_turn=True)  # shell takes it
        assert shell.name == "shell" and shell.tools() == []
        for made in (env, sql, shell):
            asyncio.run(made.close())


def read_tasks_he() -> list[Task]:
    from referee.tasks.model import read_tasks

    return read_tasks(Path(__file__).parents[1] / "trainers" / "fixtures" / "he3.jsonl")


def test_areal_workflow_runs_sql_and_shell_episodes_in_their_environments(tasks, gold):
    """AReaL's RefereeWorkflow (it imports no AReaL) through an OpenAI-compatible fake: a sql
    and a shell task, the gold plan 1, an answer without a tool call 0. The areal venv has no
    duckdb, so sql is checked here; tests/trainers/test_areal_contract.py runs a toolworld
    episode in that venv."""
    import asyncio

    from referee.train.areal import RefereeWorkflow, areal_row
    from tests.policy.fake_openai import FakeOpenAI

    plans = {
        "sql": [
            {"name": "run_query", "arguments": {"query": gold["sql"]}},
            {"name": "submit", "arguments": {"query": gold["sql"]}},
        ],
        "shell": [
            *({"name": "run", "arguments": {"command": c}} for c in gold["shell"].splitlines()),
            {"name": "submit", "arguments": {}},
        ],
    }
    with FakeOpenAI() as fake:
        for kind, plan in plans.items():
            task = tasks[kind]
            fake.plans[task.prompt[-1].content] = plan
            for model, reward in [("plan-agent", 1.0), ("echo", 0.0)]:
                wf = RefereeWorkflow([task], model=model, max_turns=len(plan) + 2)
                got = asyncio.run(wf.run(areal_row(task), base_url=fake.url, api_key="k"))
                assert got == reward, (kind, model, got)
            offered = {t["function"]["name"] for t in fake.requests[-2]["tools"]}
            own = {"sql": "run_query", "shell": "run"}[kind]
            assert own in offered and "run_python" not in offered, (kind, offered)


# ---- NeMo Gym's resources server (--compat nemo-gym): a domain's task in its environment -------
def test_nemo_gym_runs_toolworld_and_sql_rollouts(tasks, gold, served):
    """NeMo Gym's agent as the resources server sees it (tests/service/compat/test_nemo_gym.py
    has the protocol in full): seed with the row, one POST per tool call with the cookie of the
    previous reply, then /verify with the final message."""
    from referee.service.compat.nemo_gym import COOKIE, nemo_gym_row

    def rollout(row: dict[str, Any], calls: list[dict[str, Any]], final: str) -> dict[str, Any]:
        with httpx.Client(base_url=served, timeout=60) as http:
            seeded = http.post("/seed_session", json=row)
            assert seeded.status_code == 200, seeded.text
            # The agent keeps no cookie jar: it sends the previous reply's cookie by hand.
            cookie = {"Cookie": f"{COOKIE}={seeded.cookies[COOKIE]}"}
            tools = set(seeded.json()["tools"])
            for call in calls:
                http.cookies.clear()
                r = http.post(f"/{call['name']}", json=call["arguments"], headers=cookie)
                assert r.status_code == 200 and not r.text.startswith("error"), r.text
            message = {"type": "message", "role": "assistant", "content": final}
            http.cookies.clear()
            r = http.post(
                "/verify", json={**row, "response": {"output": [message]}}, headers=cookie
            )
            assert r.status_code == 200, r.text
            return {**r.json(), "offered": tools}

    world = nemo_gym_row(tasks["toolworld"])
    assert world["verifier_metadata"]["env"] == "toolworld"
    offered = {t["name"] for t in world["responses_create_params"]["tools"]}
    assert "refund_order" in offered and "write_file" not in offered
    plan = json.loads(gold["toolworld"])
    done = rollout(world, plan, "Your refund is on its way.")
    assert done["reward"] == 1.0 and done["offered"] == offered
    assert rollout(world, [], "I cannot help with that.")["reward"] == 0.0
    sql = nemo_gym_row(tasks["sql"])
    submit = [{"name": "submit", "arguments": {"query": gold["sql"]}}]
    assert rollout(sql, submit, "Submitted.")["reward"] == 1.0
    assert rollout(sql, [], "SELECT 1")["reward"] == 0.0
