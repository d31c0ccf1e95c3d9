"""``CodeEnv``: function, program and repository tasks, in one turn or in a plan-execute-observe
loop.

Multi-turn (the default of the class): the model gets the task, a workspace and six tools
(:mod:`referee.envs.code_tools`); each assistant message's tool calls run in the sandbox and come
back as tool messages; the episode ends when the model calls ``submit``, answers in plain text
with a final answer (a ```python block for a function task, a unified diff for a repository
task), or runs into a limit of :class:`~referee.envs.base.EpisodeLimits`. When a limit ends it,
the workspace as it stands is judged (``autosubmit=True``, as SWE-agent does) or nothing is
(``autosubmit=False``: reward 0).

Single-turn (``single_turn=True``): no tools, no workspace; the first assistant message is the
answer (the code of its ```python block, or the raw text; for a repository task its diff), and
the episode is done at once. ``single_turn=None`` picks single-turn for function tasks and
multi-turn for repository tasks, as :func:`referee.envs.make_env` does for ``"code"``.

Program tasks (``TaskKind.PROGRAM``: stdin/stdout programs in seven languages) run in the
runtime's program sandbox (made when the first one comes), judged by the program verifier.
Single-turn (``single_turn`` True or None), the answer is the last fenced block tagged with a
language (```` ```cpp ````, ```` ```python ````, ...). Multi-turn, the model gets the program
tools (:mod:`referee.envs.program_tools`: write ``solution.<ext>``, build and run it on an
input or on the problem's visible examples) and submits the solution file, or answers with a
tagged block.

>>> import asyncio
>>> from referee.envs import CodeEnv, CodeRuntime                     # doctest: +SKIP
>>> async def episode(task):                                          # doctest: +SKIP
...     with CodeRuntime() as rt:
...         env = CodeEnv(rt, single_turn=True)
...         await env.reset(task)
...         await env.step({"role": "assistant",
...                         "content": "```python\\n    return sum(xs)\\n```"})
...         verdict = await env.verify()
...         await env.close()
...         return verdict.reward

Sharing: sandboxes and verifiers live in a :class:`~referee.envs.runtime.CodeRuntime`. Pass
one runtime to many environments; ``close()`` of an environment frees only its episode's
workspace, and whoever made the runtime closes it. An environment made without one makes its
own and closes it in :meth:`CodeEnv.shutdown` (or ``async with CodeEnv() as env``).

One environment runs one episode at a time; run episodes concurrently with one environment
each (they may share a runtime). Sandbox runs happen in worker threads, so the event loop stays
free while they run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.envs.answers import message_text, text_answer, to_completion
from referee.envs.base import ChatMessage, Environment, EpisodeLimits, StepResult
from referee.envs.budget import Budget, BudgetState
from referee.envs.code_tasks import SOLUTION_FILE, PreparedTask, prepare_task
from referee.envs.code_tools import TOOL_SCHEMAS, CodeTools
from referee.envs.patch import files_diff
from referee.envs.program_tools import PROGRAM_TOOL_SCHEMAS, ProgramTools, solution_answer
from referee.envs.runtime import CodeRuntime
from referee.envs.tools import ToolCall, check_arguments, parse_tool_calls, tool_message
from referee.errors import ConfigError, UnsafePathError
from referee.sandbox import Limits, Sandbox, Snapshot, Workspace
from referee.tasks.model import Task, TaskKind
from referee.verify.verdict import Verdict

__all__ = ["CodeEnv", "CodeSnapshot"]

FUNCTION_SYSTEM = (
    "You solve a programming task in a sandboxed workspace, using the tools. {solution} holds "
    "the function's signature and docstring: write the whole function there with write_file, "
    "try it with run_python (run_tests runs the task's visible tests, where it has any), and "
    "call submit when it is right; hidden tests then judge {solution}. Instead of submit you "
    "may give the final code in a ```python block. You have {turns} turns."
)
PROGRAM_SYSTEM = (
    "You solve a programming problem in a sandboxed workspace, using the tools. Write your "
    "program, which reads stdin and writes stdout, to {solution_program} (the extension "
    "chooses the language: .py .c .cpp .java .js .go .rs) with write_file; run_program builds "
    "and runs a file on an input you give, run_tests runs {solution_program} on the problem's "
    "examples. Call submit when it is right; hidden cases then judge it. Instead of submit you "
    "may give the final program in a fenced block tagged with its language. You have {turns} "
    "turns."
)
REPO_SYSTEM = (
    "You work on a repository in a sandboxed workspace, using the tools. Look around "
    "(list_files, read_file), change files (write_file), run code (run_python) and the tests "
    "the task names (run_tests), then call submit: your changes to the workspace, as a diff "
    "against the starting state, are the answer (test files are restored before grading). "
    "Instead of submit you may answer with a unified diff. You have {turns} turns."
)
#: A sandbox run is not started with less time than this left in its turn or episode.
_MIN_RUN_S = 0.05
_RUNS = {"run_python", "run_tests", "run_program"}
NUDGE = (
    "No tool call and no final answer found. Use the tools, call submit when you are done, "
    "or answer with {what}."
)


@dataclass(frozen=True)
class CodeSnapshot:
    """A whole episode state: the task, the workspace's files and the counters."""

    task: Task
    files: Snapshot | None  # None in single-turn mode (no workspace)
    budget: BudgetState
    done: bool
    reason: str
    answer: str | None


class CodeEnv(Environment):
    """Function and repository tasks with tools in a sandbox; see the module docstring.

    ``limits`` bound the episode; ``exec_limits`` are the sandbox limits of one tool run (its
    timeout is replaced by the step timeout, or what is left of the episode). ``max_output_chars``
    caps each program output shown to the model. ``system_prompt`` replaces the default one
    of multi-turn episodes (``{turns}`` and ``{solution}`` are filled in; "" for none).
    ``tools`` offers only the named tools (default: all six), e.g. ``("write_file", "submit")``
    for a small model whose prompt must stay short; a call to another one is answered as a call
    to an unknown tool.

    >>> CodeEnv(tools=("write_file", "submit")).tools()[0]["function"]["name"]  # doctest: +SKIP
    'write_file'
    """

    name = "code"

    def __init__(
        self,
        runtime: CodeRuntime | None = None,
        *,
        single_turn: bool | None = False,
        limits: EpisodeLimits | None = None,
        exec_limits: Limits | None = None,
        autosubmit: bool = True,
        max_output_chars: int = 4000,
        system_prompt: str | None = None,
        tools: Sequence[str] | None = None,
    ) -> None:
        if max_output_chars < 100:
            raise ConfigError(f"max_output_chars must be 100 or more, got {max_output_chars}")
        known = {**TOOL_SCHEMAS, **PROGRAM_TOOL_SCHEMAS}
        unknown = [t for t in tools or () if t not in known]
        if unknown or (tools is not None and not tools):
            raise ConfigError(
                f"tools must name some of {', '.join(known)}; got {list(tools or ())}"
            )
        self._tool_names = None if tools is None else frozenset(tools)
        # In TOOL_SCHEMAS' order whatever the order given: the schemas a model sees stay the same.
        self._schemas = self._offered(TOOL_SCHEMAS)
        self._own_runtime = runtime is None
        self.runtime = runtime or CodeRuntime()
        self.single_turn = single_turn
        self.limits = limits or EpisodeLimits()
        self.exec_limits = exec_limits or Limits(timeout_s=self.limits.step_timeout_s)
        self.autosubmit = autosubmit
        self.max_output_chars = max_output_chars
        self.system_prompt = system_prompt
        self.budget = Budget(self.limits)
        self._prepared: PreparedTask | None = None
        self._ws: Workspace | None = None
        self._ws_box: Sandbox | None = None
        self._tools: CodeTools | None = None
        self._single = bool(single_turn)
        self._done = False
        self._reason = ""
        self._answer: str | None = None
        self._verdict: tuple[str, Verdict] | None = None

    # ---- the episode --------------------------------------------------------------------
    async def reset(self, task: Task) -> list[ChatMessage]:
        """Start an episode on ``task``: the task's prompt, after a system message on the tools
        in multi-turn mode. Raises :class:`~referee.errors.TaskError` for a task it cannot run.
        """
        await self._begin(task)
        assert self._prepared is not None
        if self._single:
            return [m.model_dump() for m in task.prompt]
        await asyncio.to_thread(self._write_start)
        return self._first_messages(task)

    async def _begin(self, task: Task) -> None:
        prepared = await asyncio.to_thread(prepare_task, task, self.runtime)
        self._prepared = prepared
        if self.single_turn is None:
            self._single = prepared.kind in (TaskKind.FUNCTION, TaskKind.PROGRAM)
        else:
            self._single = self.single_turn
        program = prepared.kind == TaskKind.PROGRAM
        self._schemas = self._offered(PROGRAM_TOOL_SCHEMAS if program else TOOL_SCHEMAS)
        self._done, self._reason, self._answer, self._verdict = False, "", None, None
        self.budget.start()
        if not self._single:
            await asyncio.to_thread(self._workspace_for, prepared.sandbox)
            assert self._ws is not None
            tools = ProgramTools if program else CodeTools
            self._tools = tools(
                prepared, self._ws, limits=self.exec_limits, max_chars=self.max_output_chars
            )

    def _offered(self, schemas: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        names = self._tool_names
        return {n: s for n, s in schemas.items() if names is None or n in names}

    def _workspace_for(self, sandbox: Sandbox) -> None:
        # The previous episode's workspace is reused when it belongs to the same sandbox: a new
        # one costs a sandbox uid and a directory on the scratch file system.
        if self._ws is not None and self._ws_box is sandbox:
            self._ws.clear()
            return
        self._release_workspace()
        self._ws, self._ws_box = sandbox.workspace(), sandbox

    def _write_start(self) -> None:
        assert self._ws is not None and self._prepared is not None
        self._ws.clear()
        self._ws.write(self._prepared.start_files)

    def _first_messages(self, task: Task) -> list[ChatMessage]:
        assert self._prepared is not None
        template = self.system_prompt
        if template is None:
            template = {
                TaskKind.FUNCTION: FUNCTION_SYSTEM,
                TaskKind.PROGRAM: PROGRAM_SYSTEM,
            }.get(self._prepared.kind, REPO_SYSTEM)
        messages = [m.model_dump() for m in task.prompt]
        if not template:
            return messages
        system = template.format(
            turns=self.limits.max_turns,
            solution=SOLUTION_FILE,
            solution_program="solution.<ext>",
        )
        if messages and messages[0]["role"] == "system":
            messages[0] = {"role": "system", "content": system + "\n\n" + messages[0]["content"]}
            return messages
        return [{"role": "system", "content": system}, *messages]

    def tools(self) -> list[dict[str, Any]]:
        """The tool schemas; none in single-turn mode (decided per task at ``reset``)."""
        return [] if self._single else list(self._schemas.values())

    @property
    def done(self) -> bool:
        return self._done

    @property
    def reason(self) -> str:
        """Why the episode ended ("" while it runs)."""
        return self._reason

    async def step(self, message: ChatMessage) -> StepResult:
        """Act on one assistant message; see the module docstring for what ends the episode.

        Metrics: ``tool_calls``, ``tool_errors``, ``exec_s`` (sandboxed programs), ``env_s`` (the
        whole step), ``env_overhead_s`` (``env_s - exec_s``), ``turn``, ``tokens`` (this message).
        """
        prepared = self._require_episode()
        if self._done:
            raise ConfigError(
                f"the episode on {prepared.task.id!r} is over ({self._reason}); "
                "call reset(task) to start another"
            )
        t0 = time.perf_counter()
        tokens = self.budget.charge(message)
        text = message_text(message)
        observations: list[ChatMessage] = []
        exec_s, errors, calls = 0.0, 0, parse_tool_calls(message)
        if self._single:
            self._answer = self._text_answer(text, final_only=False) or ""
            self._finish("answered")
        elif not calls:
            answer = self._text_answer(text, final_only=True)
            if answer is not None:
                self._answer = answer
                self._finish("answered")
            else:
                what = {
                    TaskKind.FUNCTION: "a ```python block",
                    TaskKind.PROGRAM: "a fenced block tagged with its language",
                }.get(prepared.kind, "a unified diff")
                observations.append({"role": "user", "content": NUDGE.format(what=what)})
        else:
            for call in calls:
                content, spent, failed = await self._one_call(call, t0)
                observations.append(tool_message(call, content))
                exec_s += spent
                errors += failed
        if not self._done:
            limit = self.budget.exceeded()
            if limit:
                self._finish(limit)
        env_s = time.perf_counter() - t0
        return StepResult(
            observations=observations,
            done=self._done,
            metrics={
                "tool_calls": float(0 if self._single else len(calls)),
                "tool_errors": float(errors),
                "exec_s": exec_s,
                "env_s": env_s,
                "env_overhead_s": max(0.0, env_s - exec_s),
                "turn": float(self.budget.turns),
                "tokens": float(tokens),
            },
            reason=self._reason,
        )

    async def _one_call(self, call: ToolCall, step_started: float) -> tuple[str, float, bool]:
        """One tool call: (what the model is told, seconds in sandboxed programs, was it an
        error). Calls after the end of the episode, or past its time, are not run."""
        if self._done:
            return f"not run: the episode ended ({self._reason})", 0.0, False
        if self.budget.remaining_s < _MIN_RUN_S:
            self._finish("timeout")
            return "not run: the episode's time is up", 0.0, False
        schema = self._schemas.get(call.name)
        problem = call.error or (
            f"unknown tool {call.name!r}; the tools are {', '.join(self._schemas)}"
            if schema is None
            else check_arguments(call, schema)
        )
        if problem:
            return f"error: {problem}", 0.0, True
        if call.name == "submit":
            self._answer = await asyncio.to_thread(self._workspace_answer)
            self._finish("submitted")
            return "submitted", 0.0, False
        timeout_s = self.budget.call_timeout_s(step_started)
        if call.name in _RUNS and timeout_s < _MIN_RUN_S:
            return "not run: this turn's time is up; call it again", 0.0, False
        assert self._tools is not None
        outcome = await asyncio.to_thread(self._tools.call, call, max(timeout_s, 0.01))
        return outcome.content, outcome.exec_s, outcome.error

    def _finish(self, reason: str) -> None:
        self._done, self._reason = True, reason

    def _require_episode(self) -> PreparedTask:
        if self._prepared is None:
            raise ConfigError("no episode is running; call reset(task) first")
        return self._prepared

    # ---- answers ------------------------------------------------------------------------
    def _text_answer(self, text: str, *, final_only: bool) -> str | None:
        """The answer a plain-text message gives, or None (:func:`text_answer`'s rule)."""
        p = self._require_episode()
        return text_answer(
            text,
            kind=p.kind.value,
            code_prompt=p.code_prompt,
            entry_point=p.entry_point,
            final_only=final_only,
        )

    def _workspace_answer(self) -> str:
        """The workspace as an answer: solution.py as a completion, or the diff of the repo."""
        p = self._require_episode()
        assert self._ws is not None
        if p.kind == TaskKind.PROGRAM:
            return solution_answer(self._ws)
        if p.kind == TaskKind.FUNCTION:
            try:
                code = self._ws.read(SOLUTION_FILE).decode("utf-8", "replace")
            except (OSError, UnsafePathError):
                return ""  # removed or replaced by a link: no solution
            return to_completion(p.code_prompt, code, p.entry_point)
        try:
            files = self._ws.read_all()
        except ConfigError:
            return ""  # the model filled its workspace past what can be read back
        patch, _binary = files_diff(p.start_files, files)
        return patch

    def _final_answer(self) -> str:
        if self._answer is not None:
            return self._answer
        if self.autosubmit and not self._single and self._ws is not None:
            return self._workspace_answer()
        return ""

    async def answer(self) -> str:
        """What :meth:`verify` judges: the submitted answer, or (with ``autosubmit``) the
        workspace as it stands; "" when there is none."""
        self._require_episode()
        return await asyncio.to_thread(self._final_answer)

    async def verify(self) -> Verdict:
        """The task verifier's verdict on :meth:`answer` (cached for an unchanged answer, unless
        it was an infrastructure failure)."""
        p = self._require_episode()
        answer = await self.answer()
        if self._verdict is not None and self._verdict[0] == answer:
            return self._verdict[1]
        # The runtime picks the verifier by the task's kind (referee.verify.dispatch).
        verdict = await asyncio.to_thread(self.runtime.verify, p.task, answer)
        # An infrastructure failure is not a judgement of the answer: a retry must judge again.
        self._verdict = None if verdict.infra_error else (answer, verdict)
        return verdict

    # ---- branching ----------------------------------------------------------------------
    async def snapshot(self) -> CodeSnapshot:
        """The episode state: workspace files, turns, tokens, elapsed time, answer."""
        p = self._require_episode()
        files = (
            None if self._ws is None or self._single else await asyncio.to_thread(self._ws.snapshot)
        )
        return CodeSnapshot(
            task=p.task,
            files=files,
            budget=self.budget.state(),
            done=self._done,
            reason=self._reason,
            answer=self._answer,
        )

    async def restore(self, snapshot: Any) -> None:
        """Return to ``snapshot``. Any CodeEnv may take it (sharing the runtime, or not): one
        that runs another task, or none, starts the snapshot's task first, so branches can run
        side by side in environments of their own."""
        if not isinstance(snapshot, CodeSnapshot):
            raise ConfigError(
                f"CodeEnv.restore takes what CodeEnv.snapshot returned, not {type(snapshot)!r}"
            )
        p = self._prepared
        if (
            p is None
            or p.task.content_hash != snapshot.task.content_hash
            or p.task.id != (snapshot.task.id)
        ):
            await self._begin(snapshot.task)
        if snapshot.files is not None and not self._single:
            assert self._ws is not None
            await asyncio.to_thread(self._ws.restore, snapshot.files)
        self.budget.restore(snapshot.budget)
        self._done, self._reason = snapshot.done, snapshot.reason
        self._answer, self._verdict = snapshot.answer, None

    # ---- lifecycle ----------------------------------------------------------------------
    def _release_workspace(self) -> None:
        ws, box = self._ws, self._ws_box
        self._ws = self._ws_box = None
        self._tools = None
        if ws is None:
            return
        ws.close()
        # A session workspace holds a sandbox uid; give it back, or a long run of episodes
        # would use up the pool (Workspace.close does not know about uids).
        if box is not None and ws.owner is not None and getattr(box, "uids", None) is not None:
            box.uids.release(ws.owner)

    async def close(self) -> None:
        """Free this episode's workspace. Shared sandboxes and verifiers stay (see
        :meth:`shutdown`). Safe to call twice; ``reset`` may follow."""
        await asyncio.to_thread(self._release_workspace)

    async def shutdown(self) -> None:
        """:meth:`close`, then close the runtime if this environment made it."""
        await self.close()
        if self._own_runtime:
            await asyncio.to_thread(self.runtime.close)

    async def __aenter__(self) -> CodeEnv:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()
