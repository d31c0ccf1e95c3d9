"""What a code episode needs to know about its task, worked out once at ``reset``.

The task's :class:`~referee.tasks.kinds.TaskKind` decides how:

* ``function``, a **function task** (procedural families, HumanEval): the workspace starts with
  ``solution.py`` holding the code prompt (signature and docstring); the answer is the
  completion :class:`~referee.verify.function.FunctionVerifier` takes. Visible tests exist only
  where the payload gives them (``payload["visible_tests"]``: a list of Python statements such
  as ``"assert solve([1]) == 1"``, or one test program); the verifier's recorded inputs and
  outcomes stay in ``hidden`` and never reach the workspace.
* ``repo-patch`` and ``test-writing``, **repository tasks** (``referee synth``, or files
  inline): the workspace starts as the repository's starting state, rebuilt exactly as the
  pytest verifier rebuilds it (:func:`referee.verify.pytest_verifier.repo_state`: the snapshot
  from the artifact store, then ``payload["overrides"]``); the answer is the diff of the
  workspace against that state. The visible tests are the FAIL_TO_PASS tests the prompt names
  (a test-writing task: the test file the prompt names), or ``payload["visible_tests"]`` where
  given.
* ``program``, a **program task** (imported competitive problems): no workspace and no tools
  (its episodes are single-turn); the answer is the model's program in a fenced block tagged
  with its language, judged by :class:`~referee.verify.program.ProgramVerifier` in the
  runtime's program sandbox (which has the toolchains). The visible examples are in the prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from referee.envs.runtime import CodeRuntime
from referee.errors import ConfigError, StoreError, TaskError, VerifierError
from referee.sandbox import Sandbox
from referee.tasks.model import Task, TaskKind
from referee.verify.pytest_verifier import repo_state

__all__ = ["SOLUTION_FILE", "PreparedTask", "prepare_task"]

#: The file that holds a function task's solution in the workspace.
SOLUTION_FILE = "solution.py"


@dataclass(frozen=True)
class PreparedTask:
    """A task ready for an episode: its kind, sandbox, starting files and visible tests."""

    task: Task
    kind: TaskKind
    sandbox: Sandbox
    start_files: dict[str, bytes | str]
    #: Function tasks: statements or a program; repository tasks: pytest node ids or files.
    visible_tests: list[str] | str = field(default_factory=list)
    #: Extra ``sys.path`` entries (inside the sandbox) for ``run_python``.
    python_paths: tuple[str, ...] = ()
    source_roots: tuple[str, ...] = ("",)
    conftests: list[str] | None = None

    @property
    def code_prompt(self) -> str:
        return str(self.task.payload.get("code_prompt", ""))

    @property
    def entry_point(self) -> str:
        return str(self.task.payload.get("entry_point", ""))


def prepare_task(task: Task, runtime: CodeRuntime) -> PreparedTask:
    """Check ``task`` and prepare its episode. Blocking (it may read the artifact store or
    build a repository's virtual environment): call it off the event loop."""
    if task.kind == TaskKind.FUNCTION:
        return _function_task(task, runtime)
    if task.kind.is_repository:
        return _repo_task(task, runtime)
    if task.kind == TaskKind.PROGRAM:
        return _program_task(task, runtime)
    raise TaskError(
        f"task {task.id!r} is a {task.kind.value!r} task (answer_format "
        f"{task.answer_format!r}); CodeEnv runs 'function' and 'program' tasks (answer_format "
        "'code') and 'repo-patch' and 'test-writing' tasks (answer_format 'patch'); use an "
        "environment made for the others"
    )


def _visible(task: Task) -> list[str] | str | None:
    given = task.payload.get("visible_tests")
    if given is None:
        return None
    if isinstance(given, str) or (
        isinstance(given, list) and all(isinstance(t, str) for t in given)
    ):
        return given
    raise TaskError(
        f"task {task.id!r}: payload.visible_tests must be a string (a test program) or a list "
        "of strings (statements, or pytest node ids for repository tasks)"
    )


def _function_task(task: Task, runtime: CodeRuntime) -> PreparedTask:
    missing = [k for k in ("entry_point", "code_prompt") if k not in task.payload]
    if missing:
        raise TaskError(f"task {task.id!r} is not a function task: payload lacks {missing}")
    if "inputs" not in task.hidden or "expected" not in task.hidden:
        raise TaskError(
            f"task {task.id!r} has no recorded tests (hidden.inputs/expected), so it cannot be "
            "verified; record it first with referee.verify.record.record_function_tasks "
            "(`referee tasks generate` and `referee tasks import` do this)"
        )
    code_prompt = str(task.payload["code_prompt"])
    return PreparedTask(
        task=task,
        kind=task.kind,
        sandbox=runtime.sandbox,
        start_files={SOLUTION_FILE: code_prompt},
        visible_tests=_visible(task) or [],
    )


def _program_task(task: Task, runtime: CodeRuntime) -> PreparedTask:
    from referee.verify.program.spec import program_spec

    try:
        program_spec(task)  # a malformed task is refused now, not judged as an infra error
    except VerifierError as e:
        raise TaskError(str(e)) from e
    return PreparedTask(task=task, kind=task.kind, sandbox=runtime.program_sandbox, start_files={})


def _repo_task(task: Task, runtime: CodeRuntime) -> PreparedTask:
    # repo_state insists on FAIL_TO_PASS/PASS_TO_PASS lists, which a test-writing task has
    # none of; the rebuild of the files is otherwise the same, so give it a stand-in list
    # rather than copy the rebuild (its test lists are not used here).
    probe = task
    if task.kind == TaskKind.TEST_WRITING:
        probe = task.model_copy(update={"hidden": {**task.hidden, "pass_to_pass": ["-"]}})
    try:
        state = repo_state(probe, runtime.store)
    except (VerifierError, StoreError) as e:
        raise TaskError(f"cannot rebuild the workspace of task {task.id!r}: {e}") from e
    try:
        sandbox = runtime.repo_sandbox(state.environment)
    except ConfigError as e:
        raise TaskError(f"task {task.id!r}: {e}") from e
    visible = _visible(task)
    if visible is None:
        visible = _named_in_prompt(task)
    extra = tuple(f"/workspace/{r}" for r in state.source_roots if r)
    return PreparedTask(
        task=task,
        kind=task.kind,
        sandbox=sandbox,
        start_files=dict(state.files),
        visible_tests=visible,
        python_paths=extra + tuple(sandbox.python_paths),
        source_roots=state.source_roots,
        conftests=state.conftests,
    )


def _named_in_prompt(task: Task) -> list[str]:
    """The tests the prompt already shows: naming them again in a tool result leaks nothing."""
    text = "\n".join(m.content for m in task.prompt)
    if task.kind == TaskKind.TEST_WRITING:
        target = str(task.hidden.get("target_test_file", ""))
        return [target] if target and target in text else []
    return [
        t
        for t in task.hidden.get("fail_to_pass", [])
        # A whole id, not the prefix of a longer one (test_a inside test_ab).
        if isinstance(t, str) and re.search(re.escape(t) + r"(?![\w\[])", text)
    ]
