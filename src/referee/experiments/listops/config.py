"""The experiment's configuration: one frozen config made of small frozen per-stage parts.

Each stage receives only its part (:class:`TasksConfig` for the task set, :class:`SFTConfig`
for fine-tuning and the control, :class:`GRPOConfig` for GRPO, ...). The flat *options* (the
names ``referee train`` and ``config.json`` use: ``rl_steps``, ``canary_share``, ...) map onto
the parts one to one (:data:`OPTIONS`); :func:`experiment_config` builds a config from the
options a caller gave, with the defaults of the mode (``env``), and validates it before any
work starts, so the CLI and the coming HTTP service refuse bad input the same way.

>>> cfg = experiment_config({"rl_steps": 5}, env="code")
>>> cfg.grpo.steps, cfg.sft.steps, cfg.run_dir
(5, 300, 'runs/train-code')
>>> try:
...     experiment_config({"rl_steps": -1})
... except ConfigError as e:
...     print(e)
--steps must be a whole number of at least 1, got -1: the GRPO steps to run
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import ConfigError
from referee.experiments.listops.tiny import TinyConfig
from referee.rollout.cost import RunBudget
from referee.storage import is_url

__all__ = [
    "CLOCKS",
    "ENVS",
    "MULTI_TURN_DEFAULTS",
    "OPTIONS",
    "EvalConfig",
    "ExperimentConfig",
    "GRPOConfig",
    "ModelConfig",
    "SFTConfig",
    "TasksConfig",
    "TrackingConfig",
    "experiment_config",
]

#: The modes of ``referee train``: one completion per task, or multi-turn tool episodes.
ENVS = ("code-single", "code")
SAMPLERS = ("curriculum", "uniform")
PROMPTS = ("compact", "code")
REWARDS = ("pass", "partial")
REPORT_TO = ("none", "tensorboard", "wandb")
#: How a stage's time is counted (the control gets GRPO's): seconds of the wall clock, or CPU
#: seconds (the process's, every thread's: :func:`time.process_time`; and its sandbox's runs),
#: which other work on a shared machine does not inflate.
CLOCKS = ("wall", "cpu")


@dataclass(frozen=True)
class TasksConfig:
    """The task set: generated ``list-ops`` tasks, or a file of function tasks (its splits)."""

    task_file: str | None = None
    #: "compact": the task's description only (the tiny model's format); "code": the whole
    #: code prompt (signature and docstring), for a real model.
    prompt: str = "compact"
    count: int = 3000
    difficulties: tuple[float, ...] = (0.0, 0.5, 1.0)  # list-ops: 1, 2 or 3 steps, in turn
    heldout_fraction: float = 0.2
    #: of the training structures, kept out of training (see tasks.prepare_tasks)
    dev_fraction: float = 0.1
    dev_tasks: int = 128
    eval_tasks: int = 256


@dataclass(frozen=True)
class ModelConfig:
    """The model: None builds the tiny model here (sized by ``tiny``); else a path or hub id."""

    model: str | None = None
    tiny: TinyConfig = field(default_factory=TinyConfig)
    #: a fine-tuned model folder (a previous run's model-sft): fine-tuning is skipped and GRPO
    #: and the control start from it
    sft_checkpoint: str | None = None
    #: where the model trains and generates: auto (CUDA where torch sees a GPU, in bf16 where
    #: supported; else the CPU), cpu or cuda (referee.policy.device.pick_device)
    device: str = "auto"


@dataclass(frozen=True)
class SFTConfig:
    """Supervised fine-tuning on the demonstrator's solutions, and the SFT-only control."""

    # ``demo_draws`` draws of the demonstrator per training task (each acts on a misconception
    # with probability ``demo_share``), so the same prompt is seen demonstrated both ways and
    # imitation learns the demonstrator's proportions
    demo_share: float = 0.65
    demo_draws: int = 16
    steps: int = 600
    batch: int = 32
    lr: float = 3e-3
    #: dev pass@1 every N fine-tuning steps (0: never): the imitation curve, on dev only
    eval_every: int = 0
    #: run the control: fine-tuning continued for GRPO's wall time
    control: bool = True
    #: the control's peak learning rate (chosen on dev: bench/control_lr.py)
    control_lr: float = 3e-4
    #: how GRPO's time, which the control gets, is counted: "wall" seconds, or "cpu" seconds
    #: (the process's, all threads, and the sandbox's), which other work on a shared machine
    #: does not inflate for one stage and not the other
    control_clock: str = "wall"
    #: the longest sequence fine-tuned on (tokens)
    max_length: int = 192


@dataclass(frozen=True)
class GRPOConfig:
    """The GRPO stage: sampling, rewards, canaries, quarantine and the held-out curve."""

    steps: int = 50
    prompts: int = 8  # tasks per step
    group_size: int = 8
    lr: float = 2e-4
    kl_beta: float = 0.04  # KL penalty towards the fine-tuned model (TRL's beta)
    temperature: float = 1.0
    max_completion_tokens: int = 72
    sampler: str = "curriculum"  # or "uniform"
    #: "pass": 1 when every test passes, else 0 (what pass@1 measures); "partial": the share
    #: of tests passed (the verifier's reward)
    reward: str = "pass"
    #: share of canary tasks (impossible by construction: referee.track.canary) mixed into the
    #: GRPO pool; any pass on one is an alert. Never in the fine-tuning data.
    canary_share: float = 0.01
    #: run folders whose audit labels quarantine tasks from this run's GRPO sampling
    quarantine_from: tuple[str, ...] = ()
    eval_every: int = 0  # held-out pass@1 every N GRPO steps (0: only at the end)
    #: the run's budget (None: no limit): sandbox CPU-hours, tokens (prompt + completion) and
    #: wall seconds of GRPO; when one is spent, GRPO stops after the step and the run records
    #: why (referee.rollout.cost.RunBudget)
    budget_cpu_hours: float | None = None
    budget_tokens: int | None = None
    budget_wall_s: float | None = None

    @property
    def budget(self) -> RunBudget | None:
        """The run's budget, or None when no limit is set."""
        b = RunBudget(
            cpu_hours=self.budget_cpu_hours, tokens=self.budget_tokens, wall_s=self.budget_wall_s
        )
        return None if b.unlimited else b


@dataclass(frozen=True)
class EvalConfig:
    """Held-out (and dev) evaluation: greedy pass@1, and pass@k from sampled completions."""

    pass_k_samples: int = 4  # sampled completions per held-out task for pass@k (0: none)
    max_completion_tokens: int = 72
    temperature: float = 1.0


@dataclass(frozen=True)
class TrackingConfig:
    """Where the step metrics go besides the run's store."""

    #: the trainer's own loggers for referee's step metrics too: "none", "tensorboard", "wandb"
    report_to: str = "none"
    #: serve the step metrics for Prometheus on 127.0.0.1:PORT while GRPO runs (None: off;
    #: 0: a free port, told in the log)
    metrics_port: int | None = None


@dataclass(frozen=True)
class ExperimentConfig:
    """The whole experiment; validated on construction (a :class:`ConfigError` names the option
    and the fix)."""

    seed: int = 0
    run_dir: str = "runs/train"
    env: str = "code-single"
    tasks: TasksConfig = field(default_factory=TasksConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    sft: SFTConfig = field(default_factory=SFTConfig)
    grpo: GRPOConfig = field(default_factory=GRPOConfig)
    evaluation: EvalConfig = field(default_factory=EvalConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def multi_turn(self) -> bool:
        """Whether the run is multi-turn (tool episodes in ``CodeEnv``)."""
        return self.env == "code"

    def options(self) -> dict[str, Any]:
        """The flat options (``config.json``'s keys, as before the parts existed)."""
        out: dict[str, Any] = {}
        for name, (part, attr) in OPTIONS.items():
            value = getattr(getattr(self, part) if part else self, attr)
            out[name] = asdict(value) if isinstance(value, TinyConfig) else value
        return out


#: Option name -> (part of :class:`ExperimentConfig`, field). ``max_completion_tokens`` and
#: ``temperature`` set GRPO's sampling and the evaluation's alike.
OPTIONS: dict[str, tuple[str, str]] = {
    "seed": ("", "seed"),
    "run_dir": ("", "run_dir"),
    "env": ("", "env"),
    "task_file": ("tasks", "task_file"),
    "prompt": ("tasks", "prompt"),
    "tasks": ("tasks", "count"),
    "difficulties": ("tasks", "difficulties"),
    "heldout_fraction": ("tasks", "heldout_fraction"),
    "dev_fraction": ("tasks", "dev_fraction"),
    "dev_tasks": ("tasks", "dev_tasks"),
    "eval_tasks": ("tasks", "eval_tasks"),
    "demo_share": ("sft", "demo_share"),
    "demo_draws": ("sft", "demo_draws"),
    "model": ("model", "model"),
    "tiny": ("model", "tiny"),
    "sft_checkpoint": ("model", "sft_checkpoint"),
    "device": ("model", "device"),
    "sft_steps": ("sft", "steps"),
    "sft_batch": ("sft", "batch"),
    "sft_lr": ("sft", "lr"),
    "sft_eval_every": ("sft", "eval_every"),
    "control_lr": ("sft", "control_lr"),
    "control": ("sft", "control"),
    "control_clock": ("sft", "control_clock"),
    "rl_steps": ("grpo", "steps"),
    "rl_prompts": ("grpo", "prompts"),
    "group_size": ("grpo", "group_size"),
    "rl_lr": ("grpo", "lr"),
    "kl_beta": ("grpo", "kl_beta"),
    "temperature": ("grpo", "temperature"),
    "max_completion_tokens": ("grpo", "max_completion_tokens"),
    "sampler": ("grpo", "sampler"),
    "reward": ("grpo", "reward"),
    "canary_share": ("grpo", "canary_share"),
    "quarantine_from": ("grpo", "quarantine_from"),
    "eval_every": ("grpo", "eval_every"),
    "budget_cpu_hours": ("grpo", "budget_cpu_hours"),
    "budget_tokens": ("grpo", "budget_tokens"),
    "budget_wall": ("grpo", "budget_wall_s"),
    "pass_k_samples": ("evaluation", "pass_k_samples"),
    "report_to": ("tracking", "report_to"),
    "metrics_port": ("tracking", "metrics_port"),
}
#: Options whose value also goes to a second part.
_ALSO = {"max_completion_tokens": "evaluation", "temperature": "evaluation"}
#: The CLI's flag where it is not ``--`` + the option with dashes.
_FLAGS = {"rl_steps": "--steps", "rl_prompts": "--prompts", "control": "--control"}

#: What ``referee train --env code`` changes from the single-turn defaults: sized for about
#: ten to fifteen minutes on two shared cores, the fine-tuning steps from the dev split's
#: imitation curve (dev pass@1 every 50 steps), never from held-out numbers. The control gets
#: GRPO's CPU seconds, not its wall seconds: on a shared machine the load differs between the
#: two stages (issue 27). At 300 (or 800) fine-tuning steps imitation is still climbing and the
#: control beats GRPO; with ``sft_steps=1200, rl_steps=20, rl_prompts=8`` fine-tuning reaches
#: the imitation ceiling and GRPO beats the control by 20-33 points (bench/RESULTS.md, "Multi-
#: turn GRPO against its control"), at about 15 minutes a run.
MULTI_TURN_DEFAULTS: dict[str, Any] = {
    "run_dir": "runs/train-code",
    "tasks": 1500,
    "eval_tasks": 128,
    "dev_tasks": 64,
    "demo_draws": 8,
    "sft_steps": 300,
    "sft_batch": 32,
    "rl_steps": 30,
    "rl_prompts": 4,
    "group_size": 8,
    "max_completion_tokens": 160,
    "pass_k_samples": 0,
    "control_clock": "cpu",
    "tiny": TinyConfig(max_positions=512),
}


def experiment_config(
    options: Mapping[str, Any] = {}, *, env: str = "code-single"
) -> ExperimentConfig:
    """The config of the options given (names of :data:`OPTIONS`); every option left out takes
    the default of ``env`` (multi-turn's are :data:`MULTI_TURN_DEFAULTS`). Raises
    :class:`ConfigError` for an unknown option or a bad value."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ConfigError(
            f"unknown experiment option(s) {', '.join(unknown)}; the options are "
            f"{', '.join(sorted(OPTIONS))}"
        )
    env = str(options.get("env", env))
    _check_env(env)
    _check_task_file_options(options)
    defaults = MULTI_TURN_DEFAULTS if env == "code" else {}
    values = {**defaults, **options, "env": env}
    parts: dict[str, dict[str, Any]] = {}
    top: dict[str, Any] = {}
    for name, value in values.items():
        part, attr = OPTIONS[name]
        if name in ("difficulties", "quarantine_from") and value is not None:
            value = tuple(value)
        if name == "tiny" and isinstance(value, Mapping):
            value = TinyConfig(**value)
        (parts.setdefault(part, {}) if part else top)[attr] = value
        if name in _ALSO:
            parts.setdefault(_ALSO[name], {})[attr] = value
    built = {
        "tasks": TasksConfig,
        "model": ModelConfig,
        "sft": SFTConfig,
        "grpo": GRPOConfig,
        "evaluation": EvalConfig,
        "tracking": TrackingConfig,
    }
    return ExperimentConfig(**top, **{p: built[p](**kw) for p, kw in parts.items()})


#: Options a task file overrides: its tasks, with their splits, replace the generated ones.
TASK_FILE_OVERRIDES = ("tasks", "difficulties", "heldout_fraction")


def _check_task_file_options(options: Mapping[str, Any]) -> None:
    """Refuse options given with ``task_file`` that it makes moot: silently ignored, they would
    look as if they had applied."""
    if options.get("task_file") is None:
        return
    moot = [_flag(name) for name in TASK_FILE_OVERRIDES if name in options]
    if moot:
        raise ConfigError(
            f"{', '.join(moot)} cannot apply with --task-file (its tasks and their splits are "
            "used as they are); leave it out, or leave out --task-file to generate tasks"
        )


# ---- validation --------------------------------------------------------------------------------


def _flag(option: str) -> str:
    """The option as ``referee train`` spells it (``rl_steps``: ``--steps``); the internal name,
    which config.json also uses, is not a flag a user can type."""
    return _FLAGS.get(option, "--" + option.replace("_", "-"))


def _whole(option: str, value: Any, low: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(
            f"{_flag(option)} must be a whole number of at least {low}, got {value!r}: {what}"
        )


def _share(option: str, value: Any, what: str, *, open_top: bool = False) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not (0.0 <= value < 1.0 if open_top else 0.0 <= value <= 1.0):
        span = "[0, 1)" if open_top else "[0, 1]"
        raise ConfigError(f"{_flag(option)} must be a share in {span}, got {value!r}: {what}")


def _positive(option: str, value: Any, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"{_flag(option)} must be more than 0, got {value!r}: {what}")


def _choice(option: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        words = " or ".join([", ".join(allowed[:-1]), allowed[-1]])
        raise ConfigError(f"{_flag(option)} must be {words}, got {value!r}")


def _local(option: str, value: str | None, what: str, *, hub: bool = False) -> None:
    """A path that must exist; with ``hub``, a name that is not path-like may be a hub id."""
    if value is None or Path(value).expanduser().exists():
        return
    path_like = value.startswith(("/", ".", "~")) or value.count("/") != 1 or value.endswith("/")
    if hub and not path_like:
        return
    raise ConfigError(f"{_flag(option)}: {value} does not exist; {what}")


def _check_env(env: str) -> None:
    if env not in ENVS:
        raise ConfigError(
            f"--env {env!r}: referee train runs code-single (one completion per task) or code "
            "(multi-turn episodes with tools)"
        )


def _validate(cfg: ExperimentConfig) -> None:
    _check_env(cfg.env)
    t, m, s, g, e, k = cfg.tasks, cfg.model, cfg.sft, cfg.grpo, cfg.evaluation, cfg.tracking
    _whole("seed", cfg.seed, 0, "any whole number picks the run's randomness")
    if not cfg.run_dir:
        raise ConfigError("--run-dir is empty: name the run's folder")
    _choice("prompt", t.prompt, PROMPTS)
    if t.task_file and not is_url(t.task_file):  # a URL is checked by reading it, below
        _local("task_file", t.task_file, "give a JSONL file of function tasks")
    if t.task_file:  # a pool that cannot train is refused before any work
        from referee.experiments.listops.task_file import read_task_file

        read_task_file(t.task_file)
    _whole("tasks", t.count, 1, "the number of list-ops tasks to generate")
    if not t.difficulties or not all(0.0 <= d <= 1.0 for d in t.difficulties):
        raise ConfigError(
            f"difficulties must be one or more values in [0, 1], got {t.difficulties!r}"
        )
    _share(
        "heldout_fraction", t.heldout_fraction, "the share of structures held out", open_top=True
    )
    if t.heldout_fraction == 0.0:
        raise ConfigError("heldout_fraction must be more than 0: nothing would measure the run")
    _share(
        "dev_fraction",
        t.dev_fraction,
        "the share of training structures kept for dev",
        open_top=True,
    )
    _whole("dev_tasks", t.dev_tasks, 0, "the number of dev tasks evaluated (0: none)")
    _whole("eval_tasks", t.eval_tasks, 1, "the number of held-out tasks evaluated")
    _local("model", m.model, "give a model folder or a hub id", hub=True)
    _local("sft_checkpoint", m.sft_checkpoint, "give a fine-tuned model folder (a run's model-sft)")
    _share("demo_share", s.demo_share, "the share of demonstrations acting on a misconception")
    _whole("demo_draws", s.demo_draws, 1, "demonstrations drawn per training task")
    _whole("sft_steps", s.steps, 0 if m.sft_checkpoint else 1, "the supervised fine-tuning steps")
    _whole("sft_batch", s.batch, 1, "the fine-tuning batch size")
    _positive("sft_lr", s.lr, "the fine-tuning learning rate")
    _whole("sft_eval_every", s.eval_every, 0, "dev pass@1 every N fine-tuning steps (0: never)")
    _positive("control_lr", s.control_lr, "the control's learning rate")
    _choice("control_clock", s.control_clock, CLOCKS)
    _whole("rl_steps", g.steps, 1, "the GRPO steps to run")
    _whole("rl_prompts", g.prompts, 1, "the tasks per GRPO step")
    _whole("group_size", g.group_size, 2, "GRPO compares completions within a group")
    _positive("rl_lr", g.lr, "the GRPO learning rate")
    if isinstance(g.kl_beta, bool) or not isinstance(g.kl_beta, int | float) or g.kl_beta < 0:
        raise ConfigError(f"kl_beta must be 0 or more, got {g.kl_beta!r}")
    _positive("temperature", g.temperature, "GRPO samples its groups")
    _whole("max_completion_tokens", g.max_completion_tokens, 1, "tokens a completion may have")
    _choice("sampler", g.sampler, SAMPLERS)
    _choice("reward", g.reward, REWARDS)
    _share("canary_share", g.canary_share, "the share of canary tasks in the GRPO pool")
    for folder in g.quarantine_from:
        _local("quarantine_from", folder, "give an earlier run's folder")
    _whole("eval_every", g.eval_every, 0, "held-out pass@1 every N GRPO steps (0: at the end)")
    if g.budget_cpu_hours is not None:
        _positive("budget_cpu_hours", g.budget_cpu_hours, "sandbox CPU-hours GRPO may spend")
    if g.budget_tokens is not None:
        _whole("budget_tokens", g.budget_tokens, 1, "prompt and completion tokens GRPO may use")
    if g.budget_wall_s is not None:
        _positive("budget_wall", g.budget_wall_s, "seconds GRPO may sample for")
    _whole("pass_k_samples", e.pass_k_samples, 0, "sampled completions per task (0: none)")
    if cfg.multi_turn and e.pass_k_samples:
        raise ConfigError(
            "pass_k_samples applies to single-turn runs only (multi-turn evaluates greedy "
            "episodes); set it to 0 with --env code"
        )
    _choice("report_to", k.report_to, REPORT_TO)
    port = k.metrics_port
    if port is not None and (
        isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535
    ):
        raise ConfigError(
            f"--metrics-port must be a port in 1..65535 (0: any free port), got {port!r}"
        )
