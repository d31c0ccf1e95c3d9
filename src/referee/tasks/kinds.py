"""The kind of a task: what shape its data has and which verifier judges it.

Every :class:`~referee.tasks.model.Task` carries its kind in an explicit field (schema version
2). The kind decides the verifier (:mod:`referee.verify.dispatch`), how an environment sets the
task up, and what its tests are; nothing else may guess it from the keys of ``payload`` or
``hidden``.

Task files of schema version 1 have no kind. :func:`infer_kind` works it out for them, once,
when the task is validated; the task then carries it, and a file written from it has it.

>>> TaskKind("repo-patch").answer_format
'patch'
>>> infer_kind({"answer_format": "patch", "hidden": {"kind": "testgen"}})
<TaskKind.TEST_WRITING: 'test-writing'>

The enum lists referee's own kinds. A domain from another package adds its kind with
:func:`register_task_kind`: ``TaskKind("its-name")`` is then a member of the enum like the
others (a ``str``, equal to its value, the same object each time), so a task file of that kind
reads, validates, hashes and writes as any other; an unknown value first discovers the domains
(:func:`referee.discovery.discover_domains`), whose ``register`` adds their kinds.

>>> kind = register_task_kind("doc-demo", answer_format="code")
>>> TaskKind("doc-demo") is kind, kind.value, kind.answer_format, kind in list(TaskKind)
(True, 'doc-demo', 'code', False)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from referee.discovery import broken_note, discover_domains
from referee.errors import ConfigError, TaskError

__all__ = ["TaskKind", "infer_kind", "parse_kind", "register_task_kind", "registered_task_kinds"]


class TaskKind(StrEnum):
    """The kinds of task referee knows, and those domains registered
    (:func:`register_task_kind`); a kind's verifier is registered with
    :func:`referee.verify.dispatch.register_kind`."""

    #: A Python function to complete (procedural families, HumanEval): the answer is the code
    #: that continues ``payload["code_prompt"]``; ``hidden`` holds the recorded inputs and the
    #: reference's outcomes. Judged by :class:`~referee.verify.function.FunctionVerifier`.
    FUNCTION = "function"
    #: A change to a repository (bug fixing, implementation, refactoring): the answer is a
    #: unified diff that makes ``hidden["fail_to_pass"]`` pass and keeps
    #: ``hidden["pass_to_pass"]`` passing; a refactoring task has no FAIL_TO_PASS and a
    #: structural predicate in ``hidden["structure"]`` (:mod:`referee.verify.structure`).
    #: Judged by :class:`~referee.verify.pytest_verifier.PytestVerifier`.
    REPO_PATCH = "repo-patch"
    #: Tests to write for a repository's function: the answer is a diff adding tests, worth the
    #: share of ``hidden["mutants"]`` they kill. Judged by
    #: :class:`~referee.verify.testgen_verifier.TestgenVerifier`.
    TEST_WRITING = "test-writing"
    #: A whole program reading stdin and writing stdout (or, ``payload["io"] == "function"``, a
    #: Python function) in one of seven languages: the answer is the model's text with a fenced
    #: code block; ``hidden["cases"]`` are the inputs and expected outputs, compared by
    #: ``hidden["compare"]`` (tokens, exact, float, a checker program). Judged by
    #: :class:`~referee.verify.program.ProgramVerifier`; the schema is in its ``spec`` module.
    PROGRAM = "program"
    #: A SQL query over a generated relational database (:mod:`referee.domains.sql`): the answer
    #: is the query (or text with a fenced ``sql`` block), judged on hidden database instances.
    SQL = "sql"
    #: A dataframe pipeline over input tables (:mod:`referee.domains.dataframe`): the answer is a
    #: Python program, judged on hidden inputs of the same schema.
    DATAFRAME = "dataframe"
    #: Numerical work (:mod:`referee.domains.numeric`): the answer is a Python program, judged on
    #: hidden parameter sets by tolerance and invariants.
    NUMERIC = "numeric"
    #: Operations on a small Linux system (:mod:`referee.domains.shell`): judged by checks of the
    #: final system state after the episode.
    SHELL = "shell"
    #: A simulated application with typed tools (:mod:`referee.domains.toolworld`): judged by the
    #: final state of its store and the policy violations in its action log.
    TOOLWORLD = "toolworld"
    #: A hardware module (:mod:`referee.domains.verilog`): the answer is Verilog, simulated
    #: against the reference under the grader's testbench.
    VERILOG = "verilog"
    #: Anything else (``text`` or ``tool-state`` answers): judged by the environment made for
    #: it, which has no verifier registered here (``examples/custom_env.py``).
    CUSTOM = "custom"

    @classmethod
    def _missing_(cls, value: object) -> TaskKind | None:
        # A registered domain's kind; an unknown value loads the domains first (once).
        if not isinstance(value, str):
            return None
        if value not in _REGISTERED:
            discover_domains()
        return _REGISTERED.get(value)

    @property
    def answer_format(self) -> str | None:
        """The answer format tasks of this kind have (None: any)."""
        return _ANSWER_FORMATS.get(self)

    @property
    def is_repository(self) -> bool:
        """Whether tasks of this kind are set in a repository (their tests are pytest ids)."""
        return self in (TaskKind.REPO_PATCH, TaskKind.TEST_WRITING)


_ANSWER_FORMATS: dict[TaskKind, str] = {
    TaskKind.FUNCTION: "code",
    TaskKind.REPO_PATCH: "patch",
    TaskKind.TEST_WRITING: "patch",
    TaskKind.PROGRAM: "code",
    TaskKind.SQL: "code",
    TaskKind.DATAFRAME: "code",
    TaskKind.NUMERIC: "code",
    TaskKind.SHELL: "tool-state",
    TaskKind.TOOLWORLD: "tool-state",
    TaskKind.VERILOG: "code",
}


_REGISTERED: dict[str, TaskKind] = {}
_KIND_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def register_task_kind(value: str, *, answer_format: str | None) -> TaskKind:
    """Add the task kind ``value`` (lower-case words joined by ``-``), whose tasks answer with
    ``answer_format`` (``"code"``, ``"patch"``, ``"text"``, ``"tool-state"``; None: any), and
    return it. Registering the same kind again with the same format returns it again; a
    built-in kind's name, or another format, is a :class:`ConfigError`."""
    if not isinstance(value, str) or not _KIND_NAME.fullmatch(value):
        raise ConfigError(f"a task kind is lower-case words joined by '-', got {value!r}")
    if value in {k.value for k in TaskKind}:
        raise ConfigError(f"task kind {value!r} is one of referee's own; choose another name")
    kind = _REGISTERED.get(value)
    if kind is not None:
        if kind.answer_format != answer_format:
            raise ConfigError(
                f"task kind {value!r} is registered already, with answer format "
                f"{kind.answer_format!r}"
            )
        return kind
    kind = str.__new__(TaskKind, value)
    kind._name_ = value.upper().replace("-", "_")
    kind._value_ = value
    if answer_format is not None:
        _ANSWER_FORMATS[kind] = answer_format
    _REGISTERED[value] = kind
    return kind


def registered_task_kinds() -> list[TaskKind]:
    """The kinds domains registered (:func:`register_task_kind`), beyond the enum's own."""
    discover_domains()
    return [_REGISTERED[v] for v in sorted(_REGISTERED)]


def parse_kind(value: object) -> TaskKind:
    """``value`` as a :class:`TaskKind`; anything else is a :class:`TaskError` naming the kinds."""
    if isinstance(value, str):  # a TaskKind is a str too
        try:
            return TaskKind(value)
        except ValueError:
            pass
    kinds = ", ".join(repr(k.value) for k in [*TaskKind, *registered_task_kinds()])
    raise TaskError(
        f"unknown task kind {value!r}; the kinds are {kinds} (a domain adds its own with "
        f"referee.tasks.kinds.register_task_kind){broken_note()}"
    )


def infer_kind(data: Mapping[str, Any]) -> TaskKind:
    """The kind of a task written before tasks carried one (schema version 1), from its data.

    This is the only place a kind is worked out from a task's contents: a function task
    answers with code; a repository task answers with a patch and is a test-writing task when
    its ``hidden`` data says so (as ``referee synth`` marked them); the rest are custom.
    """
    answer_format = data.get("answer_format", "code")
    if answer_format == "code":
        return TaskKind.FUNCTION
    if answer_format == "patch":
        hidden = data.get("hidden")
        if isinstance(hidden, Mapping) and hidden.get("kind") == "testgen":
            return TaskKind.TEST_WRITING
        return TaskKind.REPO_PATCH
    return TaskKind.CUSTOM
