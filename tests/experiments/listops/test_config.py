"""The experiment's config: per-stage parts, the modes' defaults, and validation before any work."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ConfigError
from referee.experiments.listops.config import (
    MULTI_TURN_DEFAULTS,
    OPTIONS,
    ExperimentConfig,
    GRPOConfig,
    experiment_config,
)


def test_options_map_onto_the_parts_and_back():
    cfg = experiment_config({"rl_steps": 7, "canary_share": 0.2, "sft_lr": 1e-3, "tasks": 10})
    assert cfg.grpo.steps == 7 and cfg.grpo.canary_share == 0.2
    assert cfg.sft.lr == 1e-3 and cfg.tasks.count == 10
    options = cfg.options()
    assert set(options) == set(OPTIONS)
    assert options["rl_steps"] == 7 and options["tasks"] == 10
    # config.json's flat keys read back into the same config
    again = experiment_config(json.loads(json.dumps(options)))
    assert again == cfg


def test_max_completion_tokens_sets_grpo_and_the_evaluation_alike():
    cfg = experiment_config({"max_completion_tokens": 33, "temperature": 0.5})
    assert cfg.grpo.max_completion_tokens == cfg.evaluation.max_completion_tokens == 33
    assert cfg.grpo.temperature == cfg.evaluation.temperature == 0.5


def test_multi_turn_defaults_apply_to_the_options_left_out():
    cfg = experiment_config({"rl_steps": 5, "run_dir": "runs/x"}, env="code")
    assert cfg.multi_turn and cfg.grpo.steps == 5 and cfg.run_dir == "runs/x"
    assert cfg.sft.steps == MULTI_TURN_DEFAULTS["sft_steps"]
    assert cfg.tasks.count == MULTI_TURN_DEFAULTS["tasks"]
    assert cfg.model.tiny == MULTI_TURN_DEFAULTS["tiny"]
    single = experiment_config({"rl_steps": 5})
    assert single.sft.steps == 600 and single.run_dir == "runs/train"


def test_the_control_gets_grpo_s_cpu_time_in_multi_turn_and_its_wall_time_in_single_turn():
    # issue 27: multi-turn's control is sized by CPU seconds (load on a shared machine differs
    # between the GRPO stage and the control's); single-turn keeps the wall clock, so that
    # `make demo` runs as it always did.
    assert experiment_config({}, env="code").sft.control_clock == "cpu"
    assert experiment_config({}).sft.control_clock == "wall"
    assert experiment_config({"control_clock": "wall"}, env="code").sft.control_clock == "wall"
    assert experiment_config({"control_clock": "cpu"}).options()["control_clock"] == "cpu"


def test_the_command_passes_the_control_clock(monkeypatch, tmp_path):
    import referee.experiments.listops as listops

    seen = {}

    def fake(cfg, log):
        seen["cfg"] = cfg
        return SimpleNamespace(to_json=lambda: {"run_dir": cfg.run_dir, "heldout_tasks": 0})

    monkeypatch.setattr(listops, "run_experiment", fake)
    args = ["train", "--control-clock", "cpu", "--run-dir", str(tmp_path / "r"), "--json"]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert seen["cfg"].sft.control_clock == "cpu" and seen["cfg"].env == "code-single"
    refused = CliRunner().invoke(app, ["train", "--control-clock", "cpu-time"])
    assert refused.exit_code == 2 and "--control-clock must be wall or cpu" in refused.output


def test_the_parts_are_frozen():
    cfg = ExperimentConfig()
    with pytest.raises(AttributeError):
        cfg.grpo.steps = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("options", "words"),
    [
        # QA finding 14: the flag only, not the internal name (was "--steps (rl_steps) must")
        ({"rl_steps": -1}, "--steps must be a whole number of at least 1"),
        ({"rl_steps": 0}, "--steps"),
        ({"sft_steps": 0}, "--sft-steps"),
        ({"group_size": 1}, "--group-size must be a whole number of at least 2"),
        ({"rl_prompts": 0}, "--prompts must"),
        ({"canary_share": 1.5}, "--canary-share must be a share in [0, 1]"),
        ({"canary_share": -0.1}, "--canary-share"),
        ({"demo_share": 2}, "--demo-share"),
        ({"metrics_port": 70000}, "--metrics-port must be a port in 1..65535"),
        ({"metrics_port": -1}, "--metrics-port"),
        ({"eval_tasks": 0}, "--eval-tasks"),
        ({"demo_draws": 0}, "--demo-draws"),
        ({"eval_every": -1}, "--eval-every"),
        ({"sft_eval_every": -2}, "--sft-eval-every"),
        ({"tasks": 0}, "--tasks"),
        ({"sampler": "random"}, "--sampler must be curriculum or uniform"),
        ({"prompt": "chat"}, "--prompt must be compact or code"),
        ({"report_to": "mlflow"}, "--report-to must be none, tensorboard or wandb"),
        ({"reward": "binary"}, "--reward must be pass or partial"),
        ({"model": "./no/such/model"}, "--model: ./no/such/model does not exist"),
        ({"sft_checkpoint": "/no/such/ckpt"}, "--sft-checkpoint: /no/such/ckpt does not exist"),
        ({"task_file": "/no/such.jsonl"}, "--task-file: /no/such.jsonl does not exist"),
        ({"quarantine_from": ["/no/such/run"]}, "--quarantine-from: /no/such/run does not exist"),
        ({"env": "code-agent"}, "referee train runs code-single"),
        ({"steps": 3}, "unknown experiment option(s) steps"),
        ({"budget_tokens": 0}, "--budget-tokens must be a whole number of at least 1"),
        ({"budget_cpu_hours": -1.0}, "--budget-cpu-hours must be more than 0"),
        ({"budget_wall": 0}, "--budget-wall must be more than 0"),
        ({"control_clock": "process"}, "--control-clock must be wall or cpu"),
    ],
)
def test_bad_options_are_refused_with_the_option_named(options, words):
    with pytest.raises(ConfigError) as e:
        experiment_config(options)
    assert words in str(e.value)


def test_pass_at_k_samples_are_refused_in_multi_turn():
    with pytest.raises(ConfigError, match="pass_k_samples applies to single-turn runs only"):
        experiment_config({"pass_k_samples": 4}, env="code")


def test_a_checkpoint_allows_zero_fine_tuning_steps(tmp_path):
    cfg = experiment_config({"sft_checkpoint": str(tmp_path), "sft_steps": 0})
    assert cfg.model.sft_checkpoint == str(tmp_path)


def test_the_parts_validate_when_built_directly():
    with pytest.raises(ConfigError, match="--group-size"):
        ExperimentConfig(grpo=GRPOConfig(group_size=1))


@pytest.mark.parametrize(
    "args",
    [
        ["--steps", "-1"],
        ["--steps", "0"],
        ["--group-size", "1"],
        ["--canary-share", "1.5"],
        ["--metrics-port", "70000"],
        ["--eval-tasks", "0"],
        ["--env", "code", "--demo-draws", "0"],
        ["--env", "code", "--steps", "-1"],
        ["--report-to", "nope"],
        ["--budget-tokens", "0"],
        ["--budget-wall", "-5"],
    ],
)
def test_the_command_refuses_bad_options_before_any_work(args, tmp_path, monkeypatch):
    import referee.experiments.listops as listops

    def never(cfg, log):  # pragma: no cover - reached only if validation failed to refuse
        raise AssertionError("the experiment started")

    monkeypatch.setattr(listops, "run_experiment", never)
    run = tmp_path / "r"
    result = CliRunner().invoke(app, ["train", *args, "--run-dir", str(run)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("referee: "), result.output
    assert not Path(run).exists()


def test_a_quarantine_folder_without_a_store_fails_before_any_work(tmp_path):
    from referee.errors import StoreError
    from referee.experiments.listops import run_experiment

    run = tmp_path / "run"
    cfg = experiment_config({"quarantine_from": [str(tmp_path)], "run_dir": str(run)})
    with pytest.raises(StoreError):
        run_experiment(cfg, log=lambda m: None)
    assert not run.exists()


def test_the_module_examples_run():
    import doctest

    import referee.experiments.listops.config as config_module
    import referee.experiments.listops.results as results_module

    for module in (config_module, results_module):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_a_task_file_whose_few_training_units_all_fall_in_dev_still_trains(tmp_path, monkeypatch):
    import referee.verify.record as record
    from referee.experiments.listops.tasks import prepare_tasks
    from referee.tasks.model import write_tasks
    from referee.tasks.procedural import generate

    monkeypatch.setattr(record, "record_function_tasks", lambda sandbox, tasks: list(tasks))
    tasks = [generate("recurrence", difficulty=0.5, seed=i) for i in range(4)]
    tasks = [
        t.model_copy(update={"split": "heldout" if i else "train"}) for i, t in enumerate(tasks)
    ]
    path = tmp_path / "t.jsonl"
    write_tasks(path, tasks)
    cfg = experiment_config({"task_file": str(path), "dev_fraction": 0.999})  # dev takes all
    train, dev, heldout = prepare_tasks(cfg.tasks, sandbox=None)
    assert [t.id for t in train] == [tasks[0].id] and dev == [] and len(heldout) == 3


def test_a_task_file_may_be_a_url(monkeypatch):
    import referee.verify.record as record
    from referee.errors import TaskError
    from referee.experiments.listops.tasks import prepare_tasks
    from referee.tasks.model import write_tasks
    from referee.tasks.procedural import generate

    monkeypatch.setattr(record, "record_function_tasks", lambda sandbox, tasks: list(tasks))
    tasks = [generate("recurrence", difficulty=0.5, seed=i) for i in range(4)]
    tasks = [
        t.model_copy(update={"split": "heldout" if i else "train"}) for i, t in enumerate(tasks)
    ]
    url = f"memory://referee-config-{id(tasks)}/pool.jsonl"
    write_tasks(url, tasks)
    train, _, heldout = prepare_tasks(experiment_config({"task_file": url}).tasks, sandbox=None)
    assert len(train) == 1 and len(heldout) == 3
    with pytest.raises(TaskError, match=r"cannot read task file 'memory://.*/nope.jsonl'"):
        experiment_config({"task_file": url.replace("pool", "nope")})


def test_the_training_guide_says_how_many_demonstrations_the_code_draws():
    # issue 20: the README said 8 per task while --demo-draws defaulted to 16 (8 with --env code);
    # the text moved from the README to the training guide (issue 31's documentation site).
    import re

    from referee.experiments.listops.config import MULTI_TURN_DEFAULTS, SFTConfig

    guide = Path(__file__).parents[3] / "docs" / "guides" / "training.md"
    readme = " ".join(guide.read_text().split())
    said = re.search(
        r"for each of (\d+) demonstrations per task \(`--demo-draws`; (\d+) with", readme
    )
    assert said, "the training guide no longer says how many demonstrations are drawn per task"
    assert int(said[1]) == SFTConfig().demo_draws
    assert int(said[2]) == MULTI_TURN_DEFAULTS["demo_draws"]


def test_options_a_task_file_overrides_are_refused_with_it(tmp_path):
    """QA finding 8: `--task-file pool.jsonl --tasks 60` silently ignored --tasks."""
    pool = tmp_path / "pool.jsonl"
    pool.write_text("")
    for name, flag in (("tasks", "--tasks"), ("heldout_fraction", "--heldout-fraction")):
        with pytest.raises(ConfigError) as e:
            experiment_config({"task_file": str(pool), name: 60 if name == "tasks" else 0.3})
        assert str(e.value).startswith(f"{flag} cannot apply with --task-file"), e.value


def test_budget_options_make_the_runs_budget():
    cfg = experiment_config({"budget_tokens": 5000, "budget_wall": 60.0})
    assert cfg.grpo.budget is not None
    assert (cfg.grpo.budget.tokens, cfg.grpo.budget.wall_s, cfg.grpo.budget.cpu_hours) == (
        5000, 60.0, None,
    )  # fmt: skip
    assert cfg.options()["budget_tokens"] == 5000
    assert experiment_config({}).grpo.budget is None
