"""The import source ``bfcl-multi-turn``: BFCL v4's multi-turn tasks, read from the installed
``bfcl-eval`` package, as ``bench-api`` tasks (``referee tasks import bfcl-multi-turn``).

bfcl-eval ships each category's questions (``data/BFCL_v4_multi_turn_*.json``), their ground
truth (``data/possible_answer/``), the function docs (``data/multi_turn_func_doc/``) and the
simulated APIs its judge executes (``eval_checker/multi_turn_eval/func_source_code``: a file
system, messaging, posting, tickets, trading, travel, a vehicle, maths). Four categories are
imported: ``base``, ``miss_func`` (a function is held out until a later turn), ``miss_param``
(a turn lacks a parameter: the right answer there is no call) and ``long_context``; 200 tasks
each. Only the data files are read on the host (:func:`importlib.metadata.distribution`): the
package's modules pull vLLM's and a dozen vendors' clients, which referee does not install
(``referee[bench-bfcl]`` installs it ``--no-deps``).

The judge is BFCL's ``multi_turn_checker``, on the same API classes run in the sandbox
(:mod:`.bench_api`): after every turn whose ground truth has calls,

* the answer made at least one call in that turn;
* every involved class's public attributes equal the ground truth's after that turn (BFCL's
  ``state_checker``; here each attribute is compared by a hash of its canonical JSON);
* every result the ground truth's calls of that turn returned is among the results of the
  answer's calls so far (``response_checker``, a multiset inclusion);

and a turn whose ground truth is empty (the question cannot be done yet) is not checked:
bfcl-eval 2026.3.23's runner imports ``multi_turn_irrelevance_checker`` but never calls it, so
a call made there counts only through the state it leaves for the later turns. The
answer has one list of calls per turn, as many turns as the task has (BFCL fails an answer
whose turn count differs: "force-terminated").

A call is executed as BFCL's ``execute_multi_turn_func_call`` executes it, without its
``eval``: the method of that name of the involved instances (the last class's wins, as in
BFCL's mapping), called with the arguments; its result is kept as a string (dicts as JSON), an
exception as ``"Error during execution: ..."``; a name no class has answers as BFCL's
``eval`` does (``name 'x' is not defined``). BFCL refuses ``kill``, ``exit``, ``quit``,
``remove``, ``unlink``, ``popen``, ``Popen``, ``run``: so does the runner.

The gold answer is the ground truth, its calls read with :mod:`ast` (positional arguments named
from the function docs); at import it is run once and the results and state hashes it leaves
after each turn are stored (``hidden["expected"]``). A task whose gold does not reproduce is
refused.
"""

from __future__ import annotations

import ast
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

__all__ = ["CATEGORIES", "RUNNER", "bfcl_tasks", "ground_truth_calls", "load_category"]

CATEGORIES = ("base", "miss_func", "miss_param", "long_context")
_PACKAGE = "bfcl-eval"
#: What the runner imports in the sandbox: the package (its API modules need only mpmath).
PACKAGES = ("bfcl_eval", "mpmath")
#: BFCL's message in a turn that only adds the held-out functions (DEFAULT_USER_PROMPT_FOR_
#: ADDITIONAL_FUNCTION_FC in bfcl_eval.constants.default_prompts).
ADDED_FUNCTIONS = "I have updated some more functions you can choose from. What about now?"
_SYSTEM = (
    "You are an expert in composing functions. You are given a question and a set of possible "
    "functions. Based on the question, you will need to make one or more function/tool calls "
    "to achieve the purpose. If none of the functions can be used, point it out. If the given "
    "question lacks the parameters required by the function, also point it out. At each turn, "
    "try your best to complete the tasks requested by the user within the current turn; once "
    "you have no more functions to call, the turn is complete."
)

RUNNER = r"""
import copy, hashlib, importlib, inspect, json, math, sys
sys.path.insert(0, "/opt/packages")
from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES

spec = json.load(open("spec.json"))
task = spec["task"]
FORBIDDEN = {"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"}

def canon(v, depth=0):
    # BFCL compares attributes with ==: equal values must give equal JSON, so containers are
    # typed, dicts are ordered by key, numbers are compared as numbers (1 == 1.0 == True).
    if depth > 60:
        return repr(v)
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, int, float)):
        f = float(v)
        if math.isnan(f):
            return ["nan"]
        return ["n", f if abs(f) < 2 ** 53 else repr(v)]
    if isinstance(v, dict):
        items = sorted(((json.dumps(canon(k, depth + 1), sort_keys=True), canon(x, depth + 1))
                        for k, x in v.items()), key=lambda kv: kv[0])
        return ["dict", items]
    if isinstance(v, (list, tuple)):
        return [type(v).__name__, [canon(x, depth + 1) for x in v]]
    if isinstance(v, (set, frozenset)):
        return ["set", sorted(json.dumps(canon(x, depth + 1), sort_keys=True) for x in v)]
    name = type(v).__name__
    if name == "File":  # gorilla_file_system.File.__eq__: name and content
        return ["File", v.name, v.content]
    if name == "Directory":  # Directory.__eq__: name and contents (not the parent)
        return ["Directory", v.name, canon(v.contents, depth + 1)]
    if hasattr(v, "__dict__"):
        return [name, canon({k: x for k, x in vars(v).items() if not k.startswith("_")}, depth + 1)]
    return [name, repr(v)]

def digest(v):
    return hashlib.sha256(json.dumps(canon(v), sort_keys=True).encode()).hexdigest()[:32]

def load():
    instances, methods = {}, {}
    for cls_name in task["classes"]:
        module = importlib.import_module(CLASS_FILE_PATH_MAPPING[cls_name])
        inst = getattr(module, cls_name)()
        if cls_name not in STATELESS_CLASSES:
            inst._load_scenario(copy.deepcopy(task["initial_config"].get(cls_name, {})),
                                long_context=task["long_context"])
        instances[cls_name] = inst
        for name, _ in inspect.getmembers(inst, predicate=inspect.ismethod):
            if not name.startswith("_"):
                methods[name] = inst
    return instances, methods

def call(methods, c):
    name, args = c["name"], c["arguments"]
    if name in FORBIDDEN:
        return "Error during execution: Function call %s is not allowed." % name
    if name not in methods:
        return "Error during execution: name '%s' is not defined" % name
    try:
        r = getattr(methods[name], name)(**args)
    except Exception as e:
        return "Error during execution: %s" % e
    if type(r) == str:
        return r
    if type(r) == dict:
        try:
            return json.dumps(r)
        except Exception:
            return str(r)
    return str(r)

def episode(turns):
    instances, methods = load()  # fresh instances for each answer
    out = []
    for turn in turns:
        results = [call(methods, c) for c in turn]
        state = {n: {k: digest(v) for k, v in vars(i).items() if not k.startswith("_")}
                 for n, i in instances.items()}
        out.append({"results": results, "state": state})
    return {"turns": out}

if "answers" in spec:  # several answers, each from the initial state
    json.dump({"answers": [episode(t) for t in spec["answers"]]}, open("out.json", "w"))
else:
    json.dump(episode(spec["turns"]), open("out.json", "w"))
"""


def _dist() -> Any:
    try:
        return distribution(_PACKAGE)
    except PackageNotFoundError:
        raise ConfigError(
            "bfcl-multi-turn reads bfcl-eval's data: pip install 'referee[bench-bfcl]' (it "
            "installs bfcl-eval without its dependencies)"
        ) from None


def _data() -> Path:
    return Path(str(_dist().locate_file("bfcl_eval/data")))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load_category(category: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(entry, ground truth)`` of each task of one category, as bfcl-eval ships them."""
    if category not in CATEGORIES:
        raise ConfigError(
            f"bfcl-multi-turn subset must be one of {', '.join(CATEGORIES)}, got {category!r}"
        )
    data = _data()
    entries = _jsonl(data / f"BFCL_v4_multi_turn_{category}.json")
    answers = {
        a["id"]: a
        for a in _jsonl(data / "possible_answer" / (f"BFCL_v4_multi_turn_{category}.json"))
    }
    return [(e, answers.get(e["id"], {})) for e in entries]


def _docs(classes: list[str]) -> list[dict[str, Any]]:
    """The function docs of ``classes``, in BFCL's order (its populate_test_cases...)."""
    from_file = {
        "GorillaFileSystem": "gorilla_file_system.json",
        "MathAPI": "math_api.json",
        "MessageAPI": "message_api.json",
        "TwitterAPI": "posting_api.json",
        "TicketAPI": "ticket_api.json",
        "TradingBot": "trading_bot.json",
        "TravelAPI": "travel_booking.json",
        "VehicleControlAPI": "vehicle_control.json",
    }
    docs = []
    for cls in classes:
        if cls not in from_file:
            raise KeyError(cls)
        docs += _jsonl(_data() / "multi_turn_func_doc" / from_file[cls])
    return docs


def _schema(doc: dict[str, Any]) -> dict[str, Any]:
    """A BFCL function doc as an OpenAI tool (its ``dict`` types are JSON Schema's objects)."""

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: fix(v) for k, v in node.items()}
            if out.get("type") == "dict":
                out["type"] = "object"
            if out.get("type") == "float":
                out["type"] = "number"
            if out.get("type") == "tuple":
                out["type"] = "array"
            return out
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    return {
        "type": "function",
        "function": {
            "name": doc["name"],
            "description": doc.get("description", ""),
            "parameters": fix(doc.get("parameters", {"type": "dict", "properties": {}})),
        },
    }


def ground_truth_calls(calls: list[str], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """BFCL's ground-truth call strings (``"cd(folder='x')"``) as calls, read with :mod:`ast`
    (literals only); positional arguments are named in the order of the function's doc.

    >>> ground_truth_calls(["sort('a.txt')"], [{"name": "sort", "parameters":
    ...     {"properties": {"file_name": {}}}}])
    [{'name': 'sort', 'arguments': {'file_name': 'a.txt'}}]
    """
    order = {d["name"]: list(d.get("parameters", {}).get("properties", {})) for d in docs}
    out = []
    for text in calls:
        node = ast.parse(text.strip(), mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError(f"not a call: {text!r}")
        name = node.func.id
        args: dict[str, Any] = {}
        names = order.get(name, [])
        for i, arg in enumerate(node.args):
            if i >= len(names):
                raise ValueError(f"{text!r}: more positional arguments than {name} has")
            args[names[i]] = ast.literal_eval(arg)
        for kw in node.keywords:
            if kw.arg is None:
                raise ValueError(f"{text!r}: **kwargs")
            args[kw.arg] = ast.literal_eval(kw.value)
        out.append({"name": name, "arguments": args})
    return out


def _turn_messages(entry: dict[str, Any], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each turn's user message, and the tools added in it (miss_func's held-out ones)."""
    held = entry.get("missed_function") or {}
    turns = []
    for i, messages in enumerate(entry["question"]):
        added = [_schema(d) for d in docs if d["name"] in held.get(str(i), [])]
        text = "\n\n".join(m["content"] for m in messages if m.get("role") == "user")
        if added and not text:
            text = ADDED_FUNCTIONS
        turns.append({"user": text, "added_tools": added})
    return turns


def _judge(task: Task, answer: Answer, out: Any) -> list[TestOutcome]:
    expected = task.hidden["expected"]
    n = len(expected)
    tests = [
        TestOutcome(
            name="one list of calls per turn",
            status="passed" if len(answer.turns) == n else "failed",
            detail=f"{len(answer.turns)} turns answered, the task has {n}",
        )
    ]
    if len(answer.turns) != n:
        return tests
    got = out["turns"]
    so_far: list[str] = []
    failed = False
    for i, (want, turn, have) in enumerate(zip(expected, answer.turns, got, strict=True)):
        so_far += have["results"]
        name = f"turn {i}"
        if failed:
            tests.append(TestOutcome(name=name, status="skipped", detail="an earlier turn failed"))
            continue
        detail = ""
        if not want["calls"]:
            pass  # BFCL's runner checks nothing here (its irrelevance checker is not called)
        elif not turn:
            detail = "no call in a turn that needs some"
        else:
            for cls, attrs in want["state"].items():
                diff = [a for a, h in attrs.items() if have["state"].get(cls, {}).get(a) != h]
                if diff:
                    detail = f"state of {cls} differs from the ground truth's: {', '.join(diff)}"
                    break
            if not detail:
                pool = list(so_far)
                missing = []
                for r in want["results"]:
                    if r in pool:
                        pool.remove(r)
                    else:
                        missing.append(r)
                if missing:
                    detail = f"results of the ground truth missing: {str(missing)[:200]}"
        failed = bool(detail)
        tests.append(TestOutcome(name=name, status="failed" if failed else "passed", detail=detail))
    return tests


def _count(task: Task) -> int:
    return 1 + len(task.hidden.get("expected", []))


register_bench(
    "bfcl",
    lambda: Bench(name="bfcl", packages=PACKAGES, runner=RUNNER, judge=_judge, count=_count),
)


def _task(
    category: str,
    entry: dict[str, Any],
    truth: dict[str, Any],
    split: str,
    row: Row,
    version: str,
    expected: list[dict[str, Any]] | None = None,
) -> Task:
    classes = entry["involved_classes"]
    try:
        docs = _docs(classes)
    except KeyError as e:
        raise row.error("involved_classes", f"no function docs for class {e}") from None
    gt = truth.get("ground_truth")
    if not isinstance(gt, list) or len(gt) != len(entry["question"]):
        raise row.error("ground_truth", "missing, or not one list of calls per turn")
    try:
        reference = [ground_truth_calls(turn, docs) for turn in gt]
    except (ValueError, SyntaxError) as e:
        raise row.error("ground_truth", f"a call cannot be read: {e}") from None
    held = {n for names in (entry.get("missed_function") or {}).values() for n in names}
    turns = _turn_messages(entry, docs)
    tools = [_schema(d) for d in docs if d["name"] not in held]
    names = ", ".join(t["function"]["name"] for t in tools)
    return Task.create(
        name=f"bfcl/{entry['id']}",
        prompt=[
            {"role": "system", "content": f"{_SYSTEM}\nThe functions: {names}."},
            {"role": "user", "content": turns[0]["user"]},
        ],
        domain="toolworld",
        kind=KIND,
        answer_format="tool-state",
        split=split,
        payload={
            "bench": "bfcl",
            "category": category,
            "tools": tools,
            "turns": turns,
            "setup": {
                "classes": classes,
                "initial_config": entry.get("initial_config", {}),
                "long_context": category == "long_context",
            },
        },
        hidden={
            "reference": json.dumps({"turns": reference}),
            "ground_truth": gt,
            "expected": expected or [],
        },
        provenance=Provenance(
            source="bfcl-multi-turn",
            generator="referee.domains.toolworld.bfcl",
            unit=f"bfcl:{entry['id']}",
            versions={_PACKAGE: version},
        ),
    )


def bfcl_tasks(
    split: str = "heldout",
    subset: str | None = None,
    on_bad_row: OnBadRow | None = None,
    *,
    ids: Collection[str] | None = None,
) -> Iterator[Task]:
    """BFCL multi-turn tasks (every category, or ``subset``; only ``ids``, BFCL's, if given),
    each one's gold run in the sandbox and its results and states stored as what the judge
    expects; a task that cannot be reproduced is a
    :class:`~referee.tasks.imports.rows.RowError` (to ``on_bad_row``)."""
    from referee.sandbox import Sandbox

    version = _dist().version
    with Sandbox(python_workers=1, python_packages=PACKAGES) as sandbox:
        for category in [subset] if subset else list(CATEGORIES):
            where = f"bfcl-eval {version} BFCL_v4_multi_turn_{category}.json"
            for number, (entry, truth) in enumerate(load_category(category)):
                if ids is not None and entry["id"] not in ids:
                    continue
                row = Row(where, number, entry, by_line=False)
                with skipping(on_bad_row):
                    draft = _task(category, entry, truth, split, row, version)
                    reference = json.loads(draft.hidden["reference"])["turns"]
                    try:
                        out = run_runner(
                            sandbox, RUNNER, {"task": draft.payload["setup"], "turns": reference}
                        )
                    except SandboxError as e:
                        raise row.error("ground_truth", f"the gold does not run: {e}") from None
                    expected = [
                        {"calls": len(calls), "results": have["results"], "state": have["state"]}
                        for calls, have in zip(reference, out["turns"], strict=True)
                    ]
                    yield _task(category, entry, truth, split, row, version, expected)
