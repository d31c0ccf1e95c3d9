"""The ``Task``: one verifiable problem, as it is stored, sampled and verified.

A task is plain data (pydantic, frozen). What the policy may see is in ``prompt`` and ``payload``;
what only the verifier may see is in ``hidden`` (reference solution, recorded test inputs and
expected outputs). ``content_hash`` covers everything that decides the reward, so a task whose
tests change silently is detected when it is loaded.

``kind`` (:class:`~referee.tasks.kinds.TaskKind`) says what sort of task it is and so which
verifier judges it. Files of schema version 1 have no kind: it is inferred once, when such a
task is validated (:func:`~referee.tasks.kinds.infer_kind`), and their content hash, which did
not cover a kind, still verifies. From version 2 the hash covers the kind.

>>> t = Task.create(name="demo/add-v1", prompt="Write add(a, b).", kind="function",
...                 payload={"entry_point": "add"}, hidden={"reference": "return a + b"})
>>> t.id, t.kind.value, t.split, len(t.content_hash)
('demo/add-v1', 'function', 'train', 64)
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from referee.errors import TaskError
from referee.storage import atomic_writer, is_local, local_path, os_reason, read_bytes
from referee.tasks.content_hash import content_hash
from referee.tasks.kinds import TaskKind, infer_kind, parse_kind

__all__ = [
    "TASK_SCHEMA_VERSION",
    "Difficulty",
    "Message",
    "Provenance",
    "Task",
    "TaskKind",
    "iter_tasks",
    "read_tasks",
    "write_tasks",
]

#: 2: tasks carry an explicit ``kind`` (covered by the content hash). 1: no kind.
TASK_SCHEMA_VERSION = 2
AnswerFormat = Literal["code", "patch", "text", "tool-state"]
Split = Literal["train", "heldout"]


class Message(BaseModel):
    """One message of a task's prompt: a role and its text, validated and frozen.

    The one ``Message`` of referee. What environments, policies and trainers exchange during an
    episode (tool calls, tool results) is the wire form, :data:`referee.envs.base.ChatMessage`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    role: Literal["system", "user", "assistant", "tool"]
    content: str


class Difficulty(BaseModel):
    """An estimate in [0, 1] (None until known) and the features it was computed from."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    estimate: float | None = Field(default=None, ge=0.0, le=1.0)
    features: dict[str, float] = Field(default_factory=dict)


class Provenance(BaseModel):
    """Where a task came from, precisely enough to make it again."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    source: str
    generator: str | None = None
    seed: int | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    #: The source unit (``repo:path/module.py``) the task comes from; held-out splits are
    #: assigned per unit, so a unit never appears in both splits.
    unit: str | None = None


#: The id of an unnamed task while its content hash (and so its id) is being computed.
_DRAFT_ID = "pending"


class Task(BaseModel):
    """A verifiable task. See the module docstring; build new ones with :meth:`create`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = TASK_SCHEMA_VERSION
    id: str
    domain: str = "code"
    #: What sort of task this is; it decides the verifier. Given where a task is made; when it
    #: is absent (a version-1 file, or a caller that leaves it out) it is inferred once from
    #: the answer format, see :func:`~referee.tasks.kinds.infer_kind`.
    kind: TaskKind
    prompt: tuple[Message, ...]
    payload: dict[str, Any] = Field(default_factory=dict)
    hidden: dict[str, Any] = Field(default_factory=dict)
    answer_format: AnswerFormat = "code"
    difficulty: Difficulty = Field(default_factory=Difficulty)
    split: Split = "train"
    provenance: Provenance = Field(default_factory=lambda: Provenance(source="unknown"))
    content_hash: str = ""

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, v: int) -> int:
        if v > TASK_SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {v} is newer than this referee understands "
                f"({TASK_SCHEMA_VERSION}); upgrade referee"
            )
        return v

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        # The one place a missing kind is worked out (version-1 files had none).
        if isinstance(data, dict) and data.get("kind") is None:
            data = {**data, "kind": infer_kind(data)}
        return data

    @field_validator("kind", mode="before")
    @classmethod
    def _known_kind(cls, v: Any) -> TaskKind:
        return parse_kind(v)  # a TaskError naming the kinds, not pydantic's enum message

    @model_validator(mode="after")
    def _kind_fits_answer(self) -> Task:
        expected = self.kind.answer_format
        if expected is not None and self.answer_format != expected:
            which = "a new task" if self.id == _DRAFT_ID else f"task {self.id!r}"
            raise TaskError(
                f"{which}: a {self.kind.value!r} task answers with answer_format "
                f"{expected!r}, not {self.answer_format!r}; fix the kind or the answer format"
            )
        return self

    @staticmethod
    def compute_hash(
        domain: str,
        prompt: Iterable[Message],
        payload: dict[str, Any],
        hidden: dict[str, Any],
        answer_format: str,
        kind: str | None = None,
    ) -> str:
        """The content hash (:func:`~referee.tasks.content_hash.content_hash`). ``kind`` is
        covered from schema version 2; None (version 1) leaves it out, so the hashes of old
        files stay what they were."""
        return content_hash(
            domain, [m.model_dump() for m in prompt], payload, hidden, answer_format, kind
        )

    def _hash_now(self) -> str:
        kind = self.kind.value if self.schema_version >= 2 else None
        return self.compute_hash(
            self.domain, self.prompt, self.payload, self.hidden, self.answer_format, kind
        )

    @classmethod
    def create(
        cls,
        *,
        prompt: str | Iterable[Message | dict[str, str]],
        name: str | None = None,
        **fields: Any,
    ) -> Task:
        """A new task with its content hash filled in.

        ``name`` becomes the id (``ns/name-vN`` by convention; HumanEval keeps ``HumanEval/N``);
        unnamed tasks get ``sha256:<first 16 hex digits of the content hash>``.
        """
        messages: tuple[Message, ...]
        if isinstance(prompt, str):
            messages = (Message(role="user", content=prompt),)
        else:
            messages = tuple(
                m if isinstance(m, Message) else Message.model_validate(m) for m in prompt
            )
        draft = cls(id=name or _DRAFT_ID, prompt=messages, **fields)
        digest = draft._hash_now()
        return draft.model_copy(
            update={"id": name or f"sha256:{digest[:16]}", "content_hash": digest}
        )

    def revised(self, *, hidden: dict[str, Any] | None = None, prompt: str | None = None) -> Task:
        """The same task with new hidden data or prompt text, and its hash recomputed (as a
        task of the current schema version)."""
        return Task.create(
            name=self.id,
            prompt=self.prompt if prompt is None else prompt,
            domain=self.domain,
            kind=self.kind,
            payload=self.payload,
            hidden=self.hidden if hidden is None else hidden,
            answer_format=self.answer_format,
            difficulty=self.difficulty,
            split=self.split,
            provenance=self.provenance,
        )

    def verify_hash(self) -> None:
        """Raise :class:`TaskError` if the content no longer matches ``content_hash``."""
        actual = self._hash_now()
        if self.content_hash and actual != self.content_hash:
            raise TaskError(
                f"task {self.id!r}: its content changed since it was created (hash {actual[:12]} "
                f"!= {self.content_hash[:12]}); give a changed task a new version or id"
            )

    @property
    def user_prompt(self) -> str:
        """The text of the last user message (what a completion model is given)."""
        for m in reversed(self.prompt):
            if m.role == "user":
                return m.content
        return ""


def _describe(e: ValidationError) -> str:
    parts = []
    for err in e.errors()[:3]:
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        parts.append(f"field {loc!r}: {err['msg']}")
    return "; ".join(parts)


def iter_tasks(path: str | Path) -> Iterator[Task]:
    """Tasks of a JSONL file, one per line; blank lines are skipped.

    ``path`` is a local file or any fsspec URL (``s3://bucket/tasks.jsonl``; see
    :mod:`referee.storage`); a remote file is read whole first, a local one line by line. A
    missing or unreadable file, or a malformed line, raises :class:`TaskError` naming the file
    (and the line and the field).

    >>> n = write_tasks("memory://referee-doc/t.jsonl", [Task.create(name="d/a-v1", prompt="p")])
    >>> [t.id for t in iter_tasks("memory://referee-doc/t.jsonl")]
    ['d/a-v1']
    """
    f: IO[str]
    if is_local(path):
        path = local_path(path)
        try:
            f = path.open(encoding="utf-8")
        except OSError as e:
            raise TaskError(f"cannot read task file {str(path)!r}: {e.strerror}") from e
    else:
        try:
            data = read_bytes(path, option="task file")
        except OSError as e:
            raise TaskError(f"cannot read task file {str(path)!r}: {os_reason(e)}") from e
        try:
            f = io.StringIO(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise TaskError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from e
    with f:
        yield from _parse(path, f)


def _parse(path: str | Path, lines: Iterable[str]) -> Iterator[Task]:
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            raise TaskError(f"{path}:{n}: not valid JSON ({e.msg} at column {e.colno})") from e
        try:
            task = Task.model_validate(data)
        except ValidationError as e:
            raise TaskError(f"{path}:{n}: {_describe(e)}") from e
        except TaskError as e:  # an unknown kind, or a kind that does not fit the answer
            raise TaskError(f"{path}:{n}: {e}") from e
        try:
            task.verify_hash()
        except TaskError as e:
            raise TaskError(f"{path}:{n}: {e}") from e
        yield task


def read_tasks(path: str | Path) -> list[Task]:
    """All tasks of a JSONL file (a local path or an fsspec URL); duplicate ids are an error."""
    tasks = list(iter_tasks(path))
    seen: set[str] = set()
    for t in tasks:
        if t.id in seen:
            raise TaskError(f"{path}: task id {t.id!r} appears twice; ids must be unique")
        seen.add(t.id)
    return tasks


def write_tasks(path: str | Path, tasks: Iterable[Task]) -> int:
    """Write tasks as JSONL to a local path or an fsspec URL; returns the count.

    Atomically: readers see the old file or the whole new one, never a part (a temporary file
    renamed into place; an object uploaded whole). An error on the way, in ``tasks`` too,
    leaves the old file as it was. A failed write raises :class:`StoreError` naming ``path``.
    """
    n = 0
    with atomic_writer(path, "w", option="task file") as f:
        for t in tasks:
            f.write(t.model_dump_json() + "\n")
            n += 1
    return n
