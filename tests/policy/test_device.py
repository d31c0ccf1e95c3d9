"""issue 14: the device is chosen in one place (referee.policy.device.pick_device) and the
places that load, train or generate follow it: CUDA in bf16 (fp16 on older GPUs) where torch
sees one, the CPU in float32 with one thread otherwise. CUDA is faked here (no GPU on this
machine); the one test that needs a real GPU skips without one."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
import torch

from referee.errors import ConfigError
from referee.experiments.listops import process
from referee.policy.device import Device, pick_device

from . import tiny_lm


def fake_cuda(monkeypatch: pytest.MonkeyPatch, *, bf16: bool = True, count: int = 1) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)


def test_without_cuda_auto_is_the_cpu_in_float32_with_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for asked in (None, "auto", "AUTO", "cpu"):
        d = pick_device(asked)
        assert (d.device, d.dtype, d.threads) == ("cpu", torch.float32, 1)
        assert (d.use_cpu, d.bf16, d.fp16) == (True, False, False)


def test_with_cuda_auto_is_cuda_in_bf16_where_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cuda(monkeypatch, bf16=True)
    d = pick_device()
    assert (d.device, d.dtype, d.threads, d.use_cpu, d.bf16) == (
        "cuda", torch.bfloat16, None, False, True,
    )  # fmt: skip
    assert pick_device("cpu").device == "cpu"  # the CPU can still be forced


def test_an_older_gpu_gets_fp16(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cuda(monkeypatch, bf16=False)
    d = pick_device("cuda")
    assert (d.dtype, d.fp16, d.bf16) == (torch.float16, True, False)


def test_cuda_asked_without_one_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        pick_device("cuda")
    fake_cuda(monkeypatch, count=1)
    assert pick_device("cuda:0").device == "cuda:0"
    with pytest.raises(ConfigError, match="1 CUDA devices"):
        pick_device("cuda:3")


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "tpu", ""])
def test_an_unknown_device_is_a_config_error(bad: str) -> None:
    if bad == "":  # empty means auto, like None
        assert pick_device(bad).device in ("cpu", "cuda")
        return
    with pytest.raises(ConfigError, match="expected auto, cpu, cuda"):
        pick_device(bad)


def test_the_trainers_precision_and_placement_follow_the_run_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(process, "_device", Device("cuda", torch.bfloat16))
    assert process.trainer_device_args() == {"use_cpu": False, "bf16": True, "fp16": False}
    monkeypatch.setattr(process, "_device", Device("cuda", torch.float16))
    assert process.trainer_device_args() == {"use_cpu": False, "bf16": False, "fp16": True}
    monkeypatch.setattr(process, "_device", Device("cpu", torch.float32))
    assert process.trainer_device_args() == {"use_cpu": True, "bf16": False, "fp16": False}
    moved: list[Any] = []
    monkeypatch.setattr(process, "_device", Device("cuda", torch.bfloat16))
    monkeypatch.setattr(torch.nn.Module, "to", lambda self, *a, **k: moved.append(a) or self)
    model = torch.nn.Linear(2, 2)
    assert process.place(model) is model
    assert moved == [("cuda",)]


def test_prepare_process_pins_one_thread_only_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", threads.append)
    monkeypatch.setattr(process, "quiet_libraries", lambda: None)
    monkeypatch.setattr(process, "_device", None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert process.prepare_process().device == "cpu"
    assert threads == [1]
    fake_cuda(monkeypatch)
    assert process.prepare_process("auto").device == "cuda"
    assert threads == [1]  # torch's own thread count with a GPU


def test_no_stage_hard_codes_the_cpu() -> None:
    """The trainers' arguments come from trainer_device_args in both stages."""
    import referee.experiments.listops.grpo as grpo
    import referee.experiments.listops.sft as sft

    for module in (sft, grpo):
        source = inspect.getsource(module)
        assert "use_cpu=True" not in source and "bf16=False" not in source, module.__name__
        assert "**trainer_device_args()" in source, module.__name__


def test_a_model_loaded_from_a_path_goes_to_the_picked_device_in_its_dtype(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from referee.policy import local

    tok = tiny_lm.tokenizer()
    folder = tmp_path / "m"
    tiny_lm.model(tok).save_pretrained(folder)
    tok.save_pretrained(folder)
    fake_cuda(monkeypatch, bf16=True)
    moved: list[Any] = []
    real_to = torch.nn.Module.to
    monkeypatch.setattr(
        torch.nn.Module, "to", lambda self, *a, **k: moved.append(a) or real_to(self, "cpu")
    )
    policy = local.TransformersPolicy(str(folder))
    assert moved == [("cuda",)]
    assert policy.device == "cuda" and policy.num_threads is None
    assert next(policy.model.parameters()).dtype == torch.bfloat16
    assert policy._rng_devices == [0]
    policy.close()


def test_a_loaded_model_stays_on_its_device(monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.policy.local import TransformersPolicy

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    tok = tiny_lm.tokenizer()
    policy = TransformersPolicy(tiny_lm.model(tok), tok)
    assert policy.device == "cpu" and policy.num_threads == 1
    policy.close()
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        TransformersPolicy(tiny_lm.model(tok), tok, device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA on this machine")
def test_generation_runs_on_a_real_gpu() -> None:  # pragma: no cover - needs a GPU
    import asyncio

    from referee.policy import Sampling
    from referee.policy.local import TransformersPolicy

    tok = tiny_lm.tokenizer()
    policy = TransformersPolicy(tiny_lm.model(tok).to("cuda"), tok)
    assert policy.device.startswith("cuda")
    g = asyncio.run(
        policy.generate([{"role": "user", "content": "hi"}], sampling=Sampling(max_tokens=4))
    )
    assert 1 <= g.completion_tokens <= 4
    policy.close()


@pytest.mark.parametrize(
    "args",
    [
        ["train", "--device", "cuda", "--steps", "1"],
        ["eval", "--device", "cuda", "--policy", "local:/no/such", "--tasks", "x.jsonl"],
        ["train", "--device", "gpu"],
    ],
)
def test_the_commands_refuse_a_device_they_cannot_have(
    args: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from referee.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    r = CliRunner().invoke(app, args, prog_name="referee")
    assert r.exit_code == 2, r.output
    assert "device" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "runs").exists()  # refused before any work


def test_train_passes_the_device_to_the_experiment() -> None:
    from referee.experiments.listops import experiment_config

    assert experiment_config({"run_dir": "r"}, env="code-single").model.device == "auto"
    assert experiment_config({"device": "cpu", "run_dir": "r"}, env="code").model.device == "cpu"
