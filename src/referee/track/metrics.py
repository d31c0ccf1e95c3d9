"""``StepMetrics``: what one training step's trajectories say, as numbers.

One value per name and step, computed from the trajectories of the step alone (no state), so a
sink (Prometheus, the store, the trainer's own loggers) can take them as they come. Rates are
shares of the trajectories they apply to; a value that nothing in the step applies to (no scored
trajectory, no known visible tests) is ``None`` and is left out of :meth:`StepMetrics.as_dict`.

Definitions that are easy to get wrong:

* **scored**: a trajectory with a usable reward (``Trajectory.reward`` is not None: a verdict
  was reached, it is not an infrastructure error, the episode did not fail). Reward and pass
  rates are over scored trajectories only; infrastructure failures are counted apart.
* **visible and hidden tests**: the tests a policy can see (and run: CodeEnv's ``run_tests``)
  and those only the verifier runs. For a trajectory whose task is known, the verdict's tests
  are split by :func:`visible_test_names`; the trajectory *passes visible* when every visible
  test passed and *passes hidden* when every other test passed. Where the task does not say
  which tests are visible, the last ``run_tests`` report in the trajectory's tool messages ("N of
  M visible tests passed") stands for the visible side and the verdict for the hidden one.
  ``visible_hidden_gap = visible_pass_rate - hidden_pass_rate`` over the trajectories where both
  sides are known; ``visible_only_rate`` is the share of them that pass visible and fail hidden
  (special-casing the tests one can see does exactly that).
* **length**: a trajectory's completion tokens where the policy reported them, else the
  characters of its completion text (:func:`completion_text`).
* **identical_share** of a group (the rollouts of one task sampled together; ``group_id``, else
  the task id): ``(size - distinct) / (size - 1)`` over completions compared after dropping
  trailing whitespace and blank lines, 0 when all differ and 1 when all are the same; the metric
  is its mean over groups of two or more.

>>> from referee.rollout.trajectory import Trajectory, Turn
>>> from referee.verify.verdict import Verdict
>>> t = Trajectory(task_id="t", policy="p", env="code",
...                turns=[Turn(index=0, assistant={"content": "return 1"})],
...                verdict=Verdict(task_id="t", reward=1.0, passed=True))
>>> m = step_metrics([t, t.model_copy(update={"id": "b"})], step=3)
>>> m.pass_rate, m.identical_share, m.as_dict()["step"]
(1.0, 1.0, 3.0)
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields

from referee.rollout.cost import Cost
from referee.rollout.trajectory import Trajectory
from referee.tasks.model import Task
from referee.verify import harness as H  # the grader's codec, used here to decode only

__all__ = [
    "StepMetrics",
    "completion_length",
    "completion_text",
    "group_key",
    "identical_share",
    "normalized_completion",
    "step_metrics",
    "visible_outcome",
    "visible_test_names",
]

_RUN_TESTS = re.compile(r"^(\d+) of (\d+) visible tests passed", re.MULTILINE)


@dataclass(frozen=True)
class StepMetrics:
    """The numbers of one step (see the module docstring for the definitions)."""

    step: int
    trajectories: int
    scored: int
    reward_mean: float | None = None
    reward_std: float | None = None
    pass_rate: float | None = None
    heldout_pass_rate: float | None = None
    #: How many held-out verdicts ``heldout_pass_rate`` is over, where the caller said.
    heldout_n: int | None = None
    visible_known: int = 0
    visible_pass_rate: float | None = None
    hidden_pass_rate: float | None = None
    visible_hidden_gap: float | None = None
    visible_only_rate: float | None = None
    length_mean: float | None = None
    length_median: float | None = None
    length_min: float | None = None
    tool_calls_mean: float | None = None
    exec_s_mean: float | None = None
    env_s_mean: float | None = None
    policy_s_mean: float | None = None
    verify_s_mean: float | None = None
    infra_error_rate: float = 0.0
    model_error_rate: float = 0.0
    verdict_infra_rate: float = 0.0
    flag_rate: float | None = None
    #: Per flag kind: the share of scored trajectories carrying at least one flag of it.
    flag_rates: Mapping[str, float] = field(default_factory=dict)
    groups: int = 0
    identical_share: float | None = None
    canaries: int = 0
    canary_passes: int = 0
    #: What the step's rollouts cost, summed (``Trajectory.cost``; peak memory: the highest).
    sandbox_cpu_s: float = 0.0
    sandbox_wall_s: float = 0.0
    sandbox_runs: int = 0
    peak_memory_mb: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, float]:
        """Flat ``{name: float}`` for sinks; per-kind flag rates as ``flag_rate.<kind>``.

        Values that are ``None`` are left out (nothing in the step to compute them from).
        """
        out: dict[str, float] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "flag_rates":
                out.update({f"flag_rate.{k}": float(v) for k, v in sorted(value.items())})
            elif value is not None:
                out[f.name] = float(value)
        return out


# ---- per trajectory ------------------------------------------------------------------------
def completion_text(t: Trajectory) -> str:
    """Everything the policy wrote: each assistant message's text and its tool calls'
    arguments (a multi-turn episode's code is often in a ``write_file`` call, not in text)."""
    parts: list[str] = []
    for turn in t.turns:
        content = turn.assistant.get("content")
        if isinstance(content, str) and content:
            parts.append(content)
        for call in turn.assistant.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                parts.append(fn["arguments"])
    return "\n".join(parts)


def normalized_completion(t: Trajectory) -> str:
    """The completion with trailing whitespace and blank lines dropped: whitespace alone does
    not make two programs different."""
    lines = (ln.rstrip() for ln in completion_text(t).splitlines())
    return "\n".join(ln for ln in lines if ln)


def completion_length(t: Trajectory) -> int:
    """Completion tokens where the policy reported them, else characters of the completion."""
    tokens = t.completion_tokens
    return tokens if tokens > 0 else len(completion_text(t))


def group_key(t: Trajectory) -> str:
    """The group a trajectory was sampled in: its ``group_id``, else its task."""
    return t.group_id or f"task:{t.task_id}"


def visible_test_names(task: Task) -> frozenset[str] | None:
    """The names, among a verdict's tests, of the tests the policy can see; None if unknown.

    In order: ``hidden["visible_calls"]`` (indices of the recorded calls that are visible, for
    function tasks that state it); ``payload["visible_tests"]`` of a repository task (pytest
    node ids or files: a test is visible when its id equals one or lies under it); the
    ``Examples:`` lines that :func:`referee.verify.record.record_generated_task` writes into a
    procedural task's prompt, matched to the recorded calls they show.
    """
    calls = task.hidden.get("visible_calls")
    if isinstance(calls, list) and all(isinstance(i, int) for i in calls):
        return frozenset(f"call {i}" for i in calls)
    given = task.payload.get("visible_tests")
    if task.kind.is_repository and isinstance(given, list) and given:
        return frozenset(str(g) for g in given)
    return _example_calls(task)


def _example_calls(task: Task) -> frozenset[str] | None:
    text = task.user_prompt
    entry = task.payload.get("entry_point")
    inputs = task.hidden.get("inputs")
    if "\nExamples:\n" not in text or not isinstance(entry, str) or not isinstance(inputs, list):
        return None
    lines = [
        ln for ln in text.split("\nExamples:\n", 1)[1].splitlines() if ln.startswith(entry + "(")
    ]
    found = set()
    for i, item in enumerate(inputs):
        try:
            args = H.decode(item[0])
        except (ValueError, TypeError, IndexError, KeyError, RecursionError):
            continue
        if not isinstance(args, list):
            continue
        # Written the way record_generated_task writes it, so equal text is the same call.
        call = f"{entry}({', '.join(repr(a) for a in args)}) == "
        if any(ln.startswith(call) for ln in lines):
            found.add(f"call {i}")
    return frozenset(found) or None


def _is_visible(name: str, visible: frozenset[str]) -> bool:
    return name in visible or any(name.startswith(v.rstrip("/") + "::") for v in visible)


def visible_outcome(t: Trajectory, task: Task | None) -> tuple[bool, bool] | None:
    """``(passes visible, passes hidden)`` for a scored trajectory, None where unknown."""
    if t.reward is None or t.verdict is None:
        return None
    names = visible_test_names(task) if task is not None else None
    if names and t.verdict.tests:
        vis = [x.status == "passed" for x in t.verdict.tests if _is_visible(x.name, names)]
        hid = [x.status == "passed" for x in t.verdict.tests if not _is_visible(x.name, names)]
        if vis and hid:
            return all(vis), all(hid)
    report = _last_run_tests(t)
    if report is not None:
        passed, total = report
        return passed == total, t.verdict.passed
    return None


def _last_run_tests(t: Trajectory) -> tuple[int, int] | None:
    last = None
    for turn in t.turns:
        for obs in turn.observations:
            content = obs.get("content")
            if obs.get("role") == "tool" and isinstance(content, str):
                m = _RUN_TESTS.match(content)
                if m and int(m.group(2)) > 0:
                    last = int(m.group(1)), int(m.group(2))
    return last


# ---- per step ------------------------------------------------------------------------------
def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _share(flags: Iterable[bool]) -> float | None:
    items = list(flags)
    return sum(items) / len(items) if items else None


def identical_share(completions: Sequence[str]) -> float:
    """``(size - distinct) / (size - 1)`` of one group's completions (2 or more)."""
    n = len(completions)
    return (n - len(set(completions))) / (n - 1) if n > 1 else 0.0


def step_metrics(
    trajectories: Sequence[Trajectory],
    *,
    step: int,
    tasks: Mapping[str, Task] | None = None,
    heldout_pass_rate: float | None = None,
    heldout_n: int | None = None,
    canaries: frozenset[str] = frozenset(),
) -> StepMetrics:
    """The :class:`StepMetrics` of one step's trajectories.

    ``tasks`` (by id) tell visible tests apart and count canaries; ``canaries`` is the set of
    canary task ids (:func:`referee.track.canary.is_canary` decides which tasks are).
    """
    tasks = tasks or {}
    ts = list(trajectories)
    scored = [t for t in ts if t.reward is not None]
    rewards = [float(t.reward) for t in scored if t.reward is not None]
    outcomes = [o for t in scored if (o := visible_outcome(t, tasks.get(t.task_id))) is not None]
    vis_rate = _share(v for v, _ in outcomes)
    hid_rate = _share(h for _, h in outcomes)
    lengths = [completion_length(t) for t in ts if t.turns]
    flag_kinds: Counter[str] = Counter()
    for t in scored:
        assert t.verdict is not None
        flag_kinds.update({f.kind for f in t.verdict.flags})
    groups: dict[str, list[str]] = defaultdict(list)
    for t in ts:
        if t.turns:
            groups[group_key(t)].append(normalized_completion(t))
    sized = [g for g in groups.values() if len(g) > 1]
    on_canary = [t for t in ts if t.task_id in canaries]

    def timing(key: str) -> float | None:
        return _mean([t.timings[key] for t in ts if key in t.timings])

    spent = Cost.total(t.cost for t in ts)
    return StepMetrics(
        step=step,
        trajectories=len(ts),
        scored=len(scored),
        reward_mean=_mean(rewards),
        reward_std=statistics.pstdev(rewards) if rewards else None,
        pass_rate=_share(t.passed for t in scored),
        heldout_pass_rate=heldout_pass_rate,
        heldout_n=heldout_n if heldout_pass_rate is not None else None,
        visible_known=len(outcomes),
        visible_pass_rate=vis_rate,
        hidden_pass_rate=hid_rate,
        visible_hidden_gap=None if vis_rate is None or hid_rate is None else vis_rate - hid_rate,
        visible_only_rate=_share(v and not h for v, h in outcomes),
        length_mean=_mean([float(x) for x in lengths]),
        length_median=float(statistics.median(lengths)) if lengths else None,
        length_min=float(min(lengths)) if lengths else None,
        tool_calls_mean=_mean([float(t.tool_calls) for t in ts]),
        exec_s_mean=_mean(
            [sum(turn.metrics.get("exec_s", 0.0) for turn in t.turns) for t in ts if t.turns]
        ),
        env_s_mean=timing("env_s"),
        policy_s_mean=timing("policy_s"),
        verify_s_mean=timing("verify_s"),
        infra_error_rate=_share(t.error is not None and t.error.kind == "infra" for t in ts) or 0.0,
        model_error_rate=_share(t.error is not None and t.error.kind == "model" for t in ts) or 0.0,
        verdict_infra_rate=_share(
            t.verdict is not None and t.verdict.infra_error is not None for t in ts
        )
        or 0.0,
        flag_rate=_share(bool(t.verdict and t.verdict.flags) for t in scored),
        flag_rates={k: n / len(scored) for k, n in flag_kinds.items()},
        groups=len(sized),
        identical_share=_mean([identical_share(g) for g in sized]),
        canaries=len(on_canary),
        canary_passes=sum(t.passed for t in on_canary),
        sandbox_cpu_s=round(spent.sandbox_cpu_s, 6),
        sandbox_wall_s=round(spent.sandbox_wall_s, 6),
        sandbox_runs=spent.sandbox_runs,
        peak_memory_mb=spent.peak_memory_mb,
        prompt_tokens=spent.prompt_tokens,
        completion_tokens=spent.completion_tokens,
    )
