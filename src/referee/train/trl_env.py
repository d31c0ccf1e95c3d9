"""referee inside TRL, multi-turn: an ``environment_factory`` class over referee's environments.

TRL's ``GRPOTrainer(environment_factory=Cls)`` runs the tool loop itself: it makes instances of
``Cls`` with no arguments, pools them, calls ``reset(**row)`` before each rollout, exposes every
public method as a tool to the model, and calls ``get_reward()`` once the rollout is over.
:func:`environment_class` builds such a class around a referee
:class:`~referee.envs.base.Environment`, so the tools, the sandbox and the verdict are referee's::

    from trl import GRPOConfig, GRPOTrainer
    from referee.envs import CodeEnv
    from referee.train.trl_env import environment_class

    Env = environment_class(lambda rt: CodeEnv(rt, single_turn=False), tasks)
    trainer = GRPOTrainer(model, args=GRPOConfig(...), processing_class=tok,
                          train_dataset=Env.dataset(), environment_factory=Env)
    trainer.train()
    Env.shutdown()  # the episodes still open, and the sandboxes the class made

What TRL 1.16 does with each part (``trl/trainer/grpo_trainer.py``), and what follows here:

* **Tools** are found with ``inspect.getmembers(type(instance), inspect.isfunction)``: real
  functions on the class, their schema read by ``transformers.utils.get_json_schema`` from type
  hints and a Google-style docstring. So the class gets one generated method per schema of the
  environment's ``tools()``, and every other public member is a classmethod or an attribute
  (a public function would become a tool).
* **reset** gets the whole dataset row (``prompt`` included) and its string return value is
  *concatenated* to the content of the prompt's last message (the user message); with no
  dataset, TRL's placeholder prompt is one empty user message, so the string is the prompt.
  Here it returns what the environment's opening messages add to the row's prompt: ``None``
  when the row already holds them (as :meth:`TRLEnvironment.dataset` writes it, the system
  message included, which the chat template then renders as a system message), else their
  missing contents after a blank line. The only place TRL can put text is a user message, so a
  system message that the dataset lacks arrives there.
* **Instances are pooled and reused**: ``__init__`` does nothing costly; each ``reset``
  closes the previous episode and starts a fresh environment (through
  :class:`~referee.envs.base.SyncEnvironment`), all of them drawing on one
  :class:`~referee.envs.runtime.CodeRuntime`, made once per class.
* **get_reward** is TRL's reward source for the class, logged as ``rewards/<class name>/mean``
  with weight 1; its ``None`` becomes NaN, and a rollout for which every reward source gives
  NaN is "unscorable": left out of its group's baseline, advantage 0. An infrastructure error
  (verifier or sandbox), after one retry, returns ``infra_reward`` (default ``None``, so the
  rollout is dropped, not trained on as a failure) and is counted on the class.

Limits that come from TRL's side of the contract: the model's last message (the one without a
tool call) never reaches the environment, so an answer given as text instead of ``submit`` is
not judged, the workspace as it stands is (``CodeEnv``'s ``autosubmit``); each tool call is one
``step`` of its own, so the environment's ``max_turns`` counts calls, not assistant turns; and
the environment's clock (``episode_timeout_s``) runs from ``reset`` on, through generation.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import re
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal, Union

from referee.envs.base import ChatMessage, Environment, SyncEnvironment
from referee.envs.runtime import CodeRuntime
from referee.errors import ConfigError, SandboxError
from referee.sandbox.metering import SandboxUsage, metering
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["TRLEnvironment", "environment_class"]

_log = logging.getLogger(__name__)

#: Makes one environment on the class's shared runtime, e.g. ``lambda rt: CodeEnv(rt)``.
EnvFactory = Callable[[CodeRuntime], Environment]

_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "null": type(None),
}
_RETURNS = "What the environment answers: the tool's output, or what went wrong."


class TRLEnvironment:
    """Base of the classes :func:`environment_class` builds; TRL's ``environment_factory`` contract.

    The generated subclass adds one method per tool and the class attributes below. Every
    public member here is a classmethod or an attribute on purpose: TRL turns each public
    *function* of the class into a tool.

    Per instance, after an episode: ``task`` (its task), ``verdict`` (what ``get_reward``
    judged; ``None`` before, or after an infrastructure error), ``metrics`` (the environment's
    step metrics, summed over the episode), ``infra_error`` (why the episode could not be
    judged, "" when it could). Per class: ``episodes``, ``reward_calls`` and ``infra_errors``
    count resets, ``get_reward`` calls and infrastructure errors over all instances.
    """

    runtime: ClassVar[CodeRuntime]
    tool_names: ClassVar[tuple[str, ...]]
    tasks: ClassVar[Mapping[str, Task]]
    infra_reward: ClassVar[float | None]
    episodes: ClassVar[int]
    reward_calls: ClassVar[int]
    infra_errors: ClassVar[int]
    _factory: ClassVar[EnvFactory]
    _own_runtime: ClassVar[bool]
    _lock: ClassVar[threading.Lock]
    _live: ClassVar[weakref.WeakSet[TRLEnvironment]]

    def __init__(self) -> None:
        # TRL makes these with no arguments, one per concurrent rollout, and pools them; nothing
        # costly happens before the first reset.
        self.task: Task | None = None
        self.verdict: Verdict | None = None
        self.metrics: dict[str, float] = {}
        #: What the episode's sandbox runs cost so far (its tool calls and its verification).
        self.sandbox = SandboxUsage()
        self.infra_error = ""
        self._sync: SyncEnvironment | None = None
        self._closer: weakref.finalize[Any, Any] | None = None
        self._reason = ""
        self._calls = 0
        type(self)._live.add(self)

    # ---- TRL's contract -------------------------------------------------------------------
    def reset(self, **row: Any) -> str | None:
        """Start an episode on the row's ``task_id``; returns what TRL adds to the user message.

        Closes the previous episode of this instance first (TRL reuses instances). Raises
        :class:`~referee.errors.ConfigError` for a row without ``task_id``, an unknown task, or
        a held-out one (it must never reach training). See the module docstring for the value.

        >>> Env = environment_class(lambda rt: CodeEnv(rt), tasks)          # doctest: +SKIP
        >>> env = Env()                                                     # doctest: +SKIP
        >>> env.reset(**Env.dataset()[0]) is None  # the row holds the opening  # doctest: +SKIP
        True
        """
        cls = type(self)
        task = cls._task_for(row)
        self._close_episode()
        self.task, self.verdict, self.metrics, self.infra_error = None, None, {}, ""
        self._reason, self._calls, self.sandbox = "", 0, SandboxUsage()
        with metering() as meter:
            sync, opening = cls._start(task)
        self.sandbox = meter.usage()
        self._sync = sync
        # Closes the episode if TRL drops the instance without another reset (end of training).
        self._closer = weakref.finalize(self, _close_quietly, sync)
        self.task = task
        cls._count("episodes")
        return _prompt_addition(opening, row.get("prompt"))

    def get_reward(self) -> float | None:
        """The verifier's reward for the episode (``env.verify()``), in [0, 1].

        An infrastructure error of the verification (the verifier failed, the sandbox died) is
        retried once, from a fresh environment restored to the episode's snapshot where the
        environment supports snapshots (a retry on the same ``CodeEnv`` would return its cached
        verdict). An episode in which a tool step raised is not judged at all: its state is
        unknown. Either way the class's ``infra_errors`` goes up, a warning is logged and
        ``infra_reward`` comes back: by default ``None``, which TRL turns into NaN. TRL can drop
        a rollout only that way, when every reward source gives NaN for it (it is then left out
        of its group's baseline and its advantage is 0); with other ``reward_funcs`` that score
        it, only they do. ``infra_reward=0.0`` instead trains on the error as a failure, which
        teaches the model that whatever it did was wrong.

        >>> env.reset(task_id=task.id); env.submit(); env.get_reward()      # doctest: +SKIP
        1.0
        """
        cls = type(self)
        sync = self._episode()
        cls._count("reward_calls")
        if self.infra_error:
            return self._infra(self.infra_error)
        with metering() as meter:
            verdict, error = _verify(sync)
            if error:
                _log.info("verification of %s failed (%s); retrying once", self._task_id, error)
                verdict, error = self._verify_again(sync)
        self.sandbox = self.sandbox + meter.usage()
        if error or verdict is None:
            return self._infra(error or "no verdict")
        self.verdict = verdict
        return verdict.reward

    # ---- tools ----------------------------------------------------------------------------
    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """One tool call as one assistant message to ``env.step``; the observations' text."""
        sync = self._episode()
        if self.infra_error:
            return "not run: the environment failed earlier in this episode (not your doing)"
        if sync.done:
            return f"not run: the episode is over ({self._reason or 'done'}); no tool runs now"
        self._calls += 1
        message: ChatMessage = {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"call_{self._calls}",
                    "type": "function",
                    # A decoded object, as TRL parses it; the environment takes either form.
                    "function": {"name": name, "arguments": arguments},
                }
            ],
        }
        try:
            # The step's coroutine runs on the environment's loop thread, in a copy of this
            # context: the meter goes with it.
            with metering() as meter:
                try:
                    result = sync.step(message)
                finally:
                    self.sandbox = self.sandbox + meter.usage()
        except Exception as e:  # the environment's own failure: the episode cannot be judged
            self.infra_error = f"step {name}: {type(e).__name__}: {e}"
            _log.warning("environment failed on %s: %s", self._task_id, self.infra_error)
            return "error: the environment failed while running this tool (not your doing)"
        for key, value in result.metrics.items():
            self.metrics[key] = self.metrics.get(key, 0.0) + value
        self._reason = result.reason
        text = "\n".join(str(o.get("content") or "") for o in result.observations)
        if result.done and result.reason != "submitted":
            # The model is not told otherwise that later calls will not run.
            text += f"\n[the episode has ended: {result.reason}]"
        return text

    # ---- the class's own ------------------------------------------------------------------
    @classmethod
    def dataset(cls, tasks: Sequence[Task] | None = None) -> Any:
        """A ``datasets.Dataset`` of ``prompt`` (the environment's opening messages) and
        ``task_id`` for ``tasks`` (default: the class's train tasks); refuses held-out tasks.

        Each task's opening comes from a reset of a throwaway environment, so the dataset's
        prompt is exactly what the environment would show, system message included, and
        ``reset`` then adds nothing (for an environment whose opening is deterministic).

        >>> Env.dataset()[0]["prompt"][0]["role"]                         # doctest: +SKIP
        'system'
        """
        # Imported by name: datasets ships no type information, and this keeps the module
        # importable (and type-checked) without it.
        dataset_type: Any = importlib.import_module("datasets").Dataset
        chosen = list(tasks) if tasks is not None else [t for t in cls.tasks.values()]
        heldout = [t.id for t in chosen if t.split != "train"]
        if heldout and tasks is not None:
            raise ConfigError(
                f"{len(heldout)} held-out task(s) given for training (first: {heldout[0]}); "
                "train on tasks with split 'train' only and keep the held-out ones for evaluation"
            )
        rows = []
        for task in chosen:
            if task.split != "train":
                continue
            sync, opening = cls._start(task)
            _close_quietly(sync)
            prompt = [{"role": m["role"], "content": str(m.get("content") or "")} for m in opening]
            rows.append({"prompt": prompt, "task_id": task.id})
        return dataset_type.from_list(rows)

    @classmethod
    def shutdown(cls) -> None:
        """Close every open episode of this class, and the runtime if the class made it."""
        for instance in list(cls._live):
            instance._close_episode()
        if cls._own_runtime:
            cls.runtime.close()

    # ---- helpers --------------------------------------------------------------------------
    @classmethod
    def _count(cls, counter: str) -> None:
        with cls._lock:
            setattr(cls, counter, getattr(cls, counter) + 1)

    @classmethod
    def _task_for(cls, row: Mapping[str, Any]) -> Task:
        task_id = row.get("task_id")
        if not isinstance(task_id, str):
            raise ConfigError(
                "the dataset row has no 'task_id' column; build the dataset with "
                f"{cls.__name__}.dataset() or referee.train.trl_adapter.tasks_dataset()"
            )
        task = cls.tasks.get(task_id)
        if task is None:
            raise ConfigError(f"{cls.__name__} was not given task {task_id!r}")
        if task.split != "train":
            raise ConfigError(f"task {task_id!r} is held out and must never reach training")
        return task

    @classmethod
    def _start(cls, task: Task) -> tuple[SyncEnvironment, list[ChatMessage]]:
        """A fresh environment reset on ``task``; a sandbox failure is retried once."""
        for attempt in (1, 2):
            sync = SyncEnvironment(cls._factory(cls.runtime))
            try:
                opening = sync.reset(task)
            except SandboxError as e:
                _close_quietly(sync)
                if attempt == 2:
                    raise
                _log.warning("reset on %s failed (%s); retrying once", task.id, e)
                continue
            except BaseException:
                _close_quietly(sync)
                raise
            names = tuple(_tool_name(s) for s in sync.tools())
            if set(names) != set(cls.tool_names):
                _close_quietly(sync)
                raise ConfigError(
                    f"on task {task.id!r} the environment offers the tools {list(names)}, but "
                    f"{cls.__name__} was built with {list(cls.tool_names)}: TRL fixes a class's "
                    "tools up front (for CodeEnv, pass single_turn=False)"
                )
            return sync, opening
        raise AssertionError("unreachable")

    def _episode(self) -> SyncEnvironment:
        if self._sync is None:
            raise ConfigError("no episode is running; call reset(task_id=...) first")
        return self._sync

    @property
    def _task_id(self) -> str:
        return self.task.id if self.task is not None else "?"

    def _verify_again(self, sync: SyncEnvironment) -> tuple[Verdict | None, str]:
        try:
            snapshot = sync.snapshot()
        except NotImplementedError:
            return _verify(sync)
        except Exception as e:
            return None, f"snapshot for the retry: {type(e).__name__}: {e}"
        fresh = SyncEnvironment(type(self)._factory(type(self).runtime))
        try:
            fresh.restore(snapshot)
            return _verify(fresh)
        except Exception as e:
            return None, f"restore for the retry: {type(e).__name__}: {e}"
        finally:
            _close_quietly(fresh)

    def _infra(self, error: str) -> float | None:
        cls = type(self)
        cls._count("infra_errors")
        self.infra_error, self.verdict = error, None
        _log.warning(
            "no reward for %s: infrastructure error (%s); returning %r (%d so far)",
            self._task_id,
            error,
            cls.infra_reward,
            cls.infra_errors,
        )
        return cls.infra_reward

    def _close_episode(self) -> None:
        closer, self._closer, self._sync = self._closer, None, None
        if closer is not None:
            closer()  # runs SyncEnvironment.close once, and detaches the finalizer


def _close_quietly(sync: SyncEnvironment) -> None:
    # Closing frees a workspace; if that fails the next episode must still start.
    try:
        sync.close()
    except Exception as e:
        _log.warning("closing an episode failed: %s: %s", type(e).__name__, e)


def _verify(sync: SyncEnvironment) -> tuple[Verdict | None, str]:
    """(verdict, "") or (verdict or None, why it is an infrastructure error)."""
    try:
        verdict = sync.verify()
    except Exception as e:
        return None, f"verify: {type(e).__name__}: {e}"
    return verdict, verdict.infra_error or ""


def _prompt_addition(opening: list[ChatMessage], prompt: Any) -> str | None:
    """What TRL should append to the row's last user message for the opening to be complete."""
    contents = [str(m.get("content") or "") for m in opening]
    given: set[str] = set()
    if isinstance(prompt, list):
        given = {str(m.get("content") or "") for m in prompt if isinstance(m, dict)}
    given.discard("")
    if not given:
        # No prompt, or TRL's placeholder (one empty user message): the opening is the prompt.
        return "\n\n".join(c for c in contents if c) or None
    missing = [c for c in contents if c and c not in given]
    return "\n\n" + "\n\n".join(missing) if missing else None


# ---- tools as functions -------------------------------------------------------------------
def _tool_name(schema: Mapping[str, Any]) -> str:
    name = schema.get("function", {}).get("name")
    if not isinstance(name, str):
        raise ConfigError(f"a tool schema without a name: {schema!r}")
    return name


def _py_type(prop: Mapping[str, Any]) -> Any:
    """The Python type hint that ``get_json_schema`` turns back into ``prop``'s JSON type."""
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and all(type(v) in (str, int, float, bool) for v in enum):
        return Literal.__getitem__(tuple(enum))
    kind = prop.get("type")
    if isinstance(kind, list):
        hints = tuple(_py_type({**prop, "type": k}) for k in kind if isinstance(k, str))
        return Union.__getitem__(hints) if len(hints) > 1 else (hints[0] if hints else Any)
    if kind == "array":
        items = prop.get("items")
        return list[_py_type(items) if isinstance(items, Mapping) else Any]  # type: ignore[misc]
    if kind == "object":
        return dict[str, Any]
    return _JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any


def _one_line(text: str) -> str:
    # get_json_schema reads an argument's description up to the next "name:" line: keep each on
    # one line.
    return re.sub(r"\s+", " ", text).strip()


def _make_tool(class_name: str, schema: Mapping[str, Any]) -> Callable[..., str]:
    """A real function for one tool schema: typed parameters, a Google-style docstring."""
    fn = schema["function"]
    name = _tool_name(schema)
    params = fn.get("parameters") or {}
    props: Mapping[str, Mapping[str, Any]] = params.get("properties") or {}
    required = set(params.get("required") or [])
    ordered = [p for p in props if p in required] + [p for p in props if p not in required]
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    docs = []
    for pname in ordered:
        if not pname.isidentifier() or pname == "self" or pname.startswith("_"):
            raise ConfigError(f"tool {name!r}: argument {pname!r} cannot be a Python parameter")
        hint = _py_type(props[pname])
        default: Any = inspect.Parameter.empty
        if pname not in required:
            hint, default = hint | None, None
        try:
            parameters.append(
                inspect.Parameter(
                    pname, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=hint
                )
            )
        except ValueError as e:  # a keyword such as "from"
            raise ConfigError(f"tool {name!r}: argument {pname!r}: {e}") from None
        annotations[pname] = hint
        what = _one_line(str(props[pname].get("description") or ""))
        what = what or f"the {pname.replace('_', ' ')}"
        docs.append(f"    {pname}: {what}{'' if pname in required else ' (optional)'}")
    annotations["return"] = str
    names = [p.name for p in parameters[1:]]

    def tool(self: TRLEnvironment, *args: Any, **kwargs: Any) -> str:
        if len(args) > len(names):
            raise TypeError(f"{name}() takes {len(names)} arguments, {len(args)} given")
        arguments = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key in arguments:
                raise TypeError(f"{name}() got two values for {key!r}")
            arguments[key] = value
        # None is "not given" (the optional parameters' default); the environment checks the
        # rest, and its messages about wrong arguments are written for the model.
        return self._call_tool(name, {k: v for k, v in arguments.items() if v is not None})

    description = _one_line(str(fn.get("description") or "")) or f"The {name} tool."
    doc = description + ("\n\nArgs:\n" + "\n".join(docs) if docs else "")
    tool.__name__ = name
    tool.__qualname__ = f"{class_name}.{name}"
    tool.__doc__ = f"{doc}\n\nReturns:\n    {_RETURNS}\n"
    tool.__annotations__ = annotations
    tool.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    return tool


# Tool names that would shadow the class's own members (methods, class and instance attributes).
_RESERVED = (
    {n for n in dir(TRLEnvironment) if not n.startswith("_")}
    | {n for n in TRLEnvironment.__annotations__ if not n.startswith("_")}
    | {"task", "verdict", "metrics", "infra_error"}
)


def environment_class(
    env_factory: EnvFactory,
    tasks: Sequence[Task],
    *,
    runtime: CodeRuntime | None = None,
    name: str = "RefereeEnv",
    infra_reward: float | None = None,
) -> type[TRLEnvironment]:
    """A class for ``GRPOTrainer(environment_factory=...)``: ``env_factory``'s env on ``tasks``.

    ``env_factory(runtime)`` makes one environment; every instance of the class shares
    ``runtime`` (default: a :class:`CodeRuntime` made here, whose sandboxes start on first use
    and which :meth:`TRLEnvironment.shutdown` closes; a given one is its owner's to close).
    One environment is made here, and closed, to read its ``tools()``: TRL fixes a class's
    tools up front, so every reset must offer the same ones. An environment that offers no
    tools before a reset (a domain's whose tools depend on the task, ``make_env("toolworld")``)
    is reset on the first train task to read them; give such a class tasks of one world.
    ``tasks`` are the tasks rows may name (``task_id``); held-out ones are refused at
    ``reset``. ``name`` is the class's name, under which TRL logs the reward
    (``rewards/<name>/mean``). ``infra_reward``: see :meth:`TRLEnvironment.get_reward`.

    >>> from referee.envs import CodeEnv
    >>> Env = environment_class(lambda rt: CodeEnv(rt, single_turn=False), [])
    >>> Env.tool_names
    ('list_files', 'read_file', 'write_file', 'run_python', 'run_tests', 'submit')
    >>> import inspect; str(inspect.signature(Env.read_file))
    '(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str'
    >>> Env.shutdown()
    """
    if not name.isidentifier():
        raise ConfigError(f"the class name must be a Python identifier, got {name!r}")
    by_id: dict[str, Task] = {}
    for task in tasks:
        if by_id.setdefault(task.id, task) != task:
            raise ConfigError(f"two different tasks share the id {task.id!r}")
    own = runtime is None
    rt = runtime if runtime is not None else CodeRuntime()
    try:
        return _build(name, env_factory, by_id, rt, own, infra_reward)
    except BaseException:
        if own:
            rt.close()
        raise


def _build(
    name: str,
    env_factory: EnvFactory,
    by_id: dict[str, Task],
    rt: CodeRuntime,
    own: bool,
    infra_reward: float | None,
) -> type[TRLEnvironment]:
    probe = SyncEnvironment(env_factory(rt))
    try:
        schemas = probe.tools()
        first = next((t for t in by_id.values() if t.split == "train"), None)
        if not schemas and first is not None:
            # An environment whose tools are its task's (a tool world's are its world's:
            # make_env("toolworld")) offers none before a reset; read them from an episode on
            # the first task. Every reset must then offer the same ones (checked in _start).
            probe.reset(first)
            schemas = probe.tools()
    finally:
        _close_quietly(probe)
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__doc__": f"TRL environment_factory class over referee's environment; {len(by_id)} "
        f"tasks; tools: {', '.join(_tool_name(s) for s in schemas) or 'none'}.",
        "runtime": rt,
        "tasks": by_id,
        "infra_reward": infra_reward,
        "episodes": 0,
        "reward_calls": 0,
        "infra_errors": 0,
        "_factory": staticmethod(env_factory),
        "_own_runtime": own,
        "_lock": threading.Lock(),
        "_live": weakref.WeakSet(),
    }
    names = []
    for schema in schemas:
        tool_name = _tool_name(schema)
        if not tool_name.isidentifier() or tool_name.startswith("_") or tool_name in _RESERVED:
            raise ConfigError(
                f"the environment's tool {tool_name!r} cannot be a method of the TRL class "
                f"(reserved or not an identifier; reserved: {', '.join(sorted(_RESERVED))})"
            )
        if tool_name in namespace:
            raise ConfigError(f"the environment offers two tools named {tool_name!r}")
        namespace[tool_name] = _make_tool(name, schema)
        names.append(tool_name)
    namespace["tool_names"] = tuple(names)
    return type(name, (TRLEnvironment,), namespace)
