"""Exports of a track store: raw trajectories, and the dataset rows trainers read.

* :func:`export_jsonl` / :func:`export_parquet`: every trajectory, as JSONL (the format of
  :class:`~referee.rollout.sink.JsonlSink`, which :meth:`TrackStore.import_jsonl` reads back)
  or as a flat Parquet table (the indexed columns and the whole record in ``json``);
* :func:`sft_rows`: successful trajectories as TRL SFT data, ``{"messages": [...]}`` or, for
  single-turn episodes, ``{"prompt": [...], "completion": [...]}``;
* :func:`rl_prompt_rows` (TRL), :func:`verl_rows` (veRL), :func:`skyrl_rows` (SkyRL): task
  prompts as RL datasets (see ``reference/trainers.md`` sections 1, 2.1, 4.1 and 9.2);
* :func:`write_dataset`: rows to ``.parquet`` or ``.jsonl`` by the path's suffix.

Every export goes to a local path or any fsspec URL (``s3://bucket/verl-train.parquet``; see
:mod:`referee.storage`), written whole or not at all: a failed export leaves no half file and
no half object.

>>> with TrackStore("runs/r1", create=False) as store:                # doctest: +SKIP
...     write_dataset(sft_rows(store, run_id="r1"), "sft.jsonl")
...     write_dataset(verl_rows(store), "verl-train.parquet")
...     write_dataset(verl_rows(store, split="heldout"), "verl-val.parquet")

The rows carry a task's hidden data in one place only: a veRL training row holds its task (with
its tests) in ``extra_info.referee_task``, which veRL hands to the reward function and never
shows the model (see :mod:`referee.tasks.trainer_rows`); every other row, and every held-out
row, names its task by id, which referee's reward adapters resolve to the task and its verifier.
Training exports take the ``train`` split only unless asked for ``heldout`` by name (for
evaluation files), so held-out tasks do not reach a training set by accident; quarantined tasks
(an audit label, or a quarantined verifier that judged them) and canary tasks (impossible on
purpose) never do.
:func:`export_run` says how many it left out, and why (:class:`ExportReport`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from referee.errors import ConfigError, NotFoundError
from referee.optional import require_extra
from referee.rollout.trajectory import Trajectory
from referee.storage import atomic_writer
from referee.tasks.canary_mark import is_canary
from referee.tasks.model import Task
from referee.tasks.rows_file import write_dataset
from referee.tasks.selection import TaskSelection, check_split_name, select_split
from referee.track.layout import RunLayout
from referee.track.store import TrackStore

__all__ = [
    "EXPORT_FORMATS",
    "ExportReport",
    "TaskSelection",
    "check_export_path",
    "export_jsonl",
    "export_parquet",
    "export_run",
    "rl_prompt_rows",
    "select_tasks",
    "sft_rows",
    "skyrl_rows",
    "verl_rows",
    "write_dataset",
]

#: The formats ``referee export --format`` (and :func:`export_run`) accept.
EXPORT_FORMATS = ("jsonl", "parquet", "trl-sft", "trl-rl", "verl", "skyrl")
Row = dict[str, Any]
TaskSource = TrackStore | Iterable[Task]

# Parquet columns of export_parquet, one row per trajectory.
_COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "string"), ("run_id", "string"), ("task_id", "string"), ("split", "string"),
    ("policy", "string"), ("env", "string"), ("group_id", "string"), ("sample_index", "int64"),
    ("step", "int64"), ("reward", "float64"), ("passed", "bool"), ("error_kind", "string"),
    ("end_reason", "string"), ("n_turns", "int64"), ("completion_tokens", "int64"),
    ("tool_calls", "int64"), ("started_at", "float64"), ("finished_at", "float64"),
    ("json", "string"),
)  # fmt: skip


# --- trajectories ---------------------------------------------------------------------------


def export_jsonl(store: TrackStore, path: str | os.PathLike[str], run_id: str | None = None) -> int:
    """Every trajectory (of one run when given), one JSON record a line. Returns the count."""
    _known_run(store, run_id)
    n = 0
    with _atomic(path, "w") as f:
        for t in store.iter_trajectories(run_id=run_id):
            f.write(t.model_dump_json() + "\n")
            n += 1
    return n


def export_parquet(
    store: TrackStore, path: str | os.PathLike[str], run_id: str | None = None
) -> int:
    """Every trajectory as one flat Parquet row (artifacts inlined in ``json``)."""
    require_extra("parquet", needed_for="writing Parquet")
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    _known_run(store, run_id)
    schema = pa.schema([(name, pa.type_for_alias(kind)) for name, kind in _COLUMNS])
    n = 0
    with _atomic(path, "wb") as f, pq.ParquetWriter(f, schema) as writer:
        page: list[Row] = []
        for t in store.iter_trajectories(run_id=run_id):
            page.append(_flat(t))
            if len(page) == 500:  # bounded memory for big stores
                writer.write_table(pa.Table.from_pylist(page, schema=schema))
                n, page = n + len(page), []
        if page or not n:
            writer.write_table(pa.Table.from_pylist(page, schema=schema))
            n += len(page)
    return n


def _atomic(
    path: str | os.PathLike[str], mode: Literal["w", "wb"]
) -> AbstractContextManager[IO[Any]]:
    """The file an export writes through: published whole when it succeeds, never in part (a
    local temporary file renamed, or one upload to an object store; :mod:`referee.storage`),
    and the export's missing folders made."""
    return atomic_writer(path, mode, option="export", parents=True)


def _known_run(store: TrackStore, run_id: str | None) -> None:
    """Refuse a ``run_id`` the store has no run of (a :class:`NotFoundError` naming the known
    ones, exit 2), rather than export nothing from it as if it were empty. A run is known by
    its record (``start_run``) or by trajectories logged under its id."""
    if run_id is not None and not store.trajectories(run_id=run_id, limit=1):
        store.run(run_id)


def _flat(t: Trajectory) -> Row:
    return {
        "id": t.id, "run_id": t.run_id, "task_id": t.task_id, "split": t.split,
        "policy": t.policy, "env": t.env, "group_id": t.group_id,
        "sample_index": t.sample_index, "step": t.step, "reward": t.reward,
        "passed": t.passed, "error_kind": t.error.kind if t.error else None,
        "end_reason": t.end_reason, "n_turns": len(t.turns),
        "completion_tokens": t.completion_tokens, "tool_calls": t.tool_calls,
        "started_at": t.started_at, "finished_at": t.finished_at, "json": t.model_dump_json(),
    }  # fmt: skip


# --- SFT --------------------------------------------------------------------------------------


def sft_rows(
    store: TrackStore,
    run_id: str | None = None,
    min_reward: float = 1.0,
    format: Literal["messages", "prompt-completion"] = "messages",
    include_flagged: bool = False,
) -> list[Row]:
    """Successful training-split trajectories as TRL SFT rows (conversational format).

    Kept: reward at least ``min_reward``, no error, a train-split trajectory and task, not a
    canary, no hacking flag on the verdict (unless ``include_flagged``), and neither the task
    nor the verifier quarantined by an audit: demonstrations teach whatever they contain.

    ``format="messages"``: ``{"messages": prompt + assistant turns + tool observations,
    "task_id", "trajectory_id"}``; the environment's feedback after the last assistant turn is
    left out (nothing to imitate). Tool-call arguments become dicts, as Hugging Face chat
    templates and TRL expect. ``"prompt-completion"``: ``{"prompt": [...], "completion":
    [assistant message], ...}``, for single-turn episodes without tool calls only.

    >>> rows = sft_rows(store, run_id="r1")                          # doctest: +SKIP
    >>> rows[0]["messages"][-1]["role"]                              # doctest: +SKIP
    'assistant'
    """
    if format not in ("messages", "prompt-completion"):
        raise ConfigError(f"format must be 'messages' or 'prompt-completion', got {format!r}")
    _known_run(store, run_id)
    bad_tasks, bad_verifiers = store.quarantined("task"), store.quarantined("verifier")
    # Held-out by the task's own record too, in case a trajectory was logged without its split;
    # canaries are impossible: a success on one is a hack, never a demonstration.
    bad_tasks |= {t.id for t in store.tasks() if t.split == "heldout" or is_canary(t)}
    prompts: dict[str, list[Row]] = {}
    rows = []
    for t in store.iter_trajectories(run_id=run_id, split="train"):
        v = t.verdict
        if t.reward is None or t.reward < min_reward or v is None or t.error is not None:
            continue
        if (
            (v.flags and not include_flagged)
            or t.task_id in bad_tasks
            or v.verifier in bad_verifiers
        ):
            continue
        prompt = [_message(m) for m in t.messages] or _task_prompt(store, t.task_id, prompts)
        ids = {"task_id": t.task_id, "trajectory_id": t.id}
        if format == "messages":
            rows.append({"messages": _conversation(prompt, t), **ids})
            continue
        if len(t.turns) != 1 or t.tool_calls:
            raise ConfigError(
                f"trajectory {t.id} ({t.task_id}) has {len(t.turns)} turns and {t.tool_calls} "
                "tool calls: prompt-completion rows are for single-turn episodes; "
                "use format='messages' (referee export --format trl-sft does)"
            )
        completion = [{"role": "assistant", "content": t.final_text()}]
        rows.append({"prompt": prompt, "completion": completion, **ids})
    return rows


def _task_prompt(store: TrackStore, task_id: str, cache: dict[str, list[Row]]) -> list[Row]:
    # Trajectories logged without their first messages (the embedded trainer's) take the
    # task's prompt from the store.
    if task_id not in cache:
        cache[task_id] = [m.model_dump() for m in store.task(task_id).prompt]
    return cache[task_id]


def _conversation(prompt: list[Row], t: Trajectory) -> list[Row]:
    messages = list(prompt)
    for turn in t.turns:
        messages.append(_message(turn.assistant))
        messages.extend(_message(o) for o in turn.observations)
    while messages and messages[-1]["role"] != "assistant":
        messages.pop()
    return messages


def _message(m: Mapping[str, Any]) -> Row:
    """A chat message in the Hugging Face form: a fixed set of keys, tool arguments as dicts."""
    out: Row = {"role": m.get("role", "assistant"), "content": m.get("content") or ""}
    if m.get("tool_calls"):
        out["tool_calls"] = [_tool_call(c) for c in m["tool_calls"]]
    if out["role"] == "tool":
        out["name"] = m.get("name", "")
        if "tool_call_id" in m:
            out["tool_call_id"] = m["tool_call_id"]
    return out


def _tool_call(call: Mapping[str, Any]) -> Row:
    fn = call.get("function") or {}
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            pass  # not JSON: kept as the model wrote it
    return {"id": call.get("id", ""), "type": "function",
            "function": {"name": fn.get("name", ""), "arguments": args}}  # fmt: skip


# --- RL prompts ---------------------------------------------------------------------------------


def rl_prompt_rows(
    source: TaskSource, split: str = "train", run_id: str | None = None
) -> list[Row]:
    """Task prompts as TRL RL rows: ``{"prompt": [messages], "task_id"}``.

    ``source`` is a store (its recorded tasks; only those run ``run_id`` used, when given) or
    tasks; quarantined and canary tasks are left out (:func:`select_tasks`). ``task_id``
    reaches TRL reward functions as a column (see
    :func:`referee.train.trl_adapter.reward_function`).
    """
    return [{"prompt": _prompt(t), "task_id": t.id} for t in _tasks(source, split, run_id)]


def verl_rows(
    source: TaskSource,
    split: str = "train",
    run_id: str | None = None,
    data_source: str | None = None,
    agent_name: str | None = None,
) -> list[Row]:
    """Task prompts as veRL rows (trainers.md 2.1), as :func:`referee.tasks.trainer_rows.verl_row`
    makes them: ``reward_model.ground_truth`` is the task id; a training row carries its task
    for :func:`referee.train.verl.compute_score` (``extra_info.referee_task``); ``data_source``
    defaults to ``referee/<domain>``; ``agent_name`` selects an agent loop."""
    from referee.tasks.trainer_rows import verl_row

    return [
        verl_row(t, i, agent_name=agent_name, data_source=data_source)
        for i, t in enumerate(_tasks(source, split, run_id))
    ]


def skyrl_rows(
    source: TaskSource,
    split: str = "train",
    run_id: str | None = None,
    env_class: str = "referee",
    data_source: str | None = None,
) -> list[Row]:
    """Task prompts as SkyRL rows (trainers.md 4.1): every column but ``prompt`` and
    ``env_class`` reaches the environment as ``extras``, so it finds the task id in
    ``extra_info`` and ``reward_spec.ground_truth``."""
    return [
        {
            "data_source": data_source or f"referee/{t.domain}",
            "prompt": _prompt(t),
            "env_class": env_class,
            "reward_spec": {"method": "rule", "ground_truth": t.id},
            "extra_info": {"index": i, "task_id": t.id, "split": t.split},
        }
        for i, t in enumerate(_tasks(source, split, run_id))
    ]


def _prompt(t: Task) -> list[Row]:
    return [m.model_dump() for m in t.prompt]


def _no_tasks(store: TrackStore) -> str:
    """Why a store has no tasks and what to do, for the way its run folder was made."""
    if RunLayout(store.run_dir).made_by_train:
        return (
            f"{store.path} has no tasks recorded, and RL rows are built from tasks: this "
            "`referee train` run was cancelled before it recorded them; re-run it (into a new "
            "--run-dir) and export that run"
        )
    return (
        f"{store.path} has no tasks recorded, and RL rows are built from tasks: record them "
        "with store.add_tasks(tasks) (or Tracker(store, tasks=...)) when the run starts, or "
        "build the rows from the tasks themselves"
    )


def select_tasks(
    source: TaskSource, split: str = "train", run_id: str | None = None
) -> TaskSelection:
    """The tasks of ``split`` fit for a dataset: ``source`` is a store (its recorded tasks, only
    those run ``run_id`` used when given; its audit's quarantine applies) or tasks.

    >>> select_tasks(store).left_out                                  # doctest: +SKIP
    {'heldout': 40, 'quarantined': 1, 'canary': 2}
    """
    check_split_name(split)
    if not isinstance(source, TrackStore):
        return select_split(source, split)
    from referee.track.audit import quarantined_task_ids

    _known_run(source, run_id)
    tasks = source.tasks(run_id=run_id)
    if not tasks and not source.tasks():
        raise NotFoundError(_no_tasks(source))
    return select_split(tasks, split, quarantined_task_ids(source))


def _tasks(source: TaskSource, split: str, run_id: str | None) -> list[Task]:
    return select_tasks(source, split, run_id).tasks


# --- writing ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportReport:
    """What :func:`export_run` wrote: ``rows``, and the tasks it ``left_out`` by reason (RL
    formats; see :class:`TaskSelection`)."""

    rows: int
    left_out: dict[str, int] = field(default_factory=dict)


def check_export_path(fmt: str, out: str | os.PathLike[str]) -> None:
    """Raise :class:`ConfigError` for an unknown format, or a file name that says another
    format than ``fmt`` writes (``--format parquet --out x.jsonl``)."""
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(
            f"unknown export format {fmt!r}; choose one of: {', '.join(EXPORT_FORMATS)}"
        )
    suffix = Path(out).suffix.lower()
    wanted = {"jsonl": (".jsonl", ".json"), "parquet": (".parquet",)}.get(
        fmt, (".parquet", ".jsonl", ".json")
    )
    if suffix not in wanted:
        hint = f"name it {Path(out).with_suffix(wanted[0]).name}"
        if fmt in ("jsonl", "parquet") and suffix in (".parquet", ".jsonl", ".json"):
            hint += f", or use --format {'parquet' if suffix == '.parquet' else 'jsonl'}"
        kinds = " or ".join(w[1:] for w in wanted)
        raise ConfigError(f"--format {fmt} writes {kinds} files, not {Path(out).name}: {hint}")
    if suffix == ".parquet":  # before the store is opened
        require_extra("parquet", needed_for=f"--format {fmt} to {Path(out).name}")


def export_run(
    store: TrackStore,
    fmt: str,
    out: str | os.PathLike[str],
    *,
    run_id: str | None = None,
    split: str = "train",
    min_reward: float = 1.0,
) -> ExportReport:
    """Write one of :data:`EXPORT_FORMATS` to ``out`` (what ``referee export`` does).

    The file's name must fit the format (:func:`check_export_path`), checked before anything
    is written. RL formats leave out the other split, quarantined and canary tasks and count
    them in the report.
    """
    check_export_path(fmt, out)
    if fmt == "jsonl":
        return ExportReport(export_jsonl(store, out, run_id))
    if fmt == "parquet":
        return ExportReport(export_parquet(store, out, run_id))
    if fmt == "trl-sft":
        return ExportReport(write_dataset(sft_rows(store, run_id, min_reward=min_reward), out))
    builders = {"trl-rl": rl_prompt_rows, "verl": verl_rows, "skyrl": skyrl_rows}
    chosen = select_tasks(store, split, run_id)
    rows = builders[fmt](chosen.tasks, split=split)
    return ExportReport(write_dataset(rows, out), chosen.left_out)
